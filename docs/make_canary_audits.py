"""Two-world agent audits by canary design: how much of each agent's sensitivity its canaries realise, the
pair's μ, and the bounds the audit reaches (docs/auditing.md, "Canaries that realise the sensitivity").

    .venv/bin/python docs/make_canary_audits.py [--scale 1]

Every case is a two-world audit of the claim (1, 1e-5), Gaussian, replace-one, of the first user in a small
random linear MDP (H = 2, d = 3, |A| = 2, K = 3; the LDP agent in a linear mixture MDP), the billboard view over
every later release (window K), once with the environment's own canaries and once with the worst-case design
(``canary_design="worst-case"``). Every agent runs through the batched twin on its registry card
(bit-identical to the reference agent trial by trial), at 10⁵ to 3·10⁶ trials per side, and each agent's
half-sensitivity bug (``audits/agent_zoo.py``: noise for half the true sensitivity, the ledger still meeting
the claim) beside it. LDP-UCRL-VTR runs in the random linear mixture MDP at H = 2 and at H = 6 (the worst-case
design in the audit linear mixture MDP of its dimensions), with the twin whose noise is for a quarter of the
sensitivity as well, and at H = 6 under its staged sensitivity model (``sensitivity_model="staged"``: each
stage calibrated for its own range), correct and with noise for half the staged sensitivity; its rows carry
the ceilings the value caps leave (realised vs realisable,
:func:`dpverify.whitebox.mixture_neighbours.stage_caps`), printed as a second table. ``--scale`` multiplies
every trial count; ``--only LABEL`` runs the cases of one label and keeps the other rows of the JSON (each row
records the provenance of its own run). Writes docs/results/canary_audits.json and the results page
docs/results/canary_audits.md (with ``--reach``'s table from docs/results/canary_reach.json);
``--render-only`` writes the page again from the two JSON files, running nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "docs"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from results_page import provenance, recorded, write_page  # noqa: E402

from dpverify.agent_audit import AgentAuditSpec, audit_agent  # noqa: E402
from dpverify.agent_audit.canaries import family_reach, measured_candidates  # noqa: E402
from dpverify.agent_audit.runs import agent_setup  # noqa: E402
from dpverify.audits.agent_zoo import BatchedVariant  # noqa: E402
from dpverify.whitebox.mixture_neighbours import mu_ceilings, stage_caps  # noqa: E402

OUT = ROOT / "docs" / "results" / "canary_audits.json"
REACH_OUT = ROOT / "docs" / "results" / "canary_reach.json"
PAGE = ROOT / "docs" / "results" / "canary_audits.md"
LINEAR = (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))
MIXTURE = (("dim", 3), ("horizon", 2), ("num_actions", 1), ("num_states", 3), ("seed", 3))
MIXTURE_H6 = (("dim", 3), ("horizon", 6), ("num_actions", 1), ("num_states", 3), ("seed", 3))
#: (label, agent, batch variant or None, environment, notion, designs, trials per side)
CASES: tuple[tuple[str, str, str | None, str, str, tuple[str, ...], int], ...] = (
    ("DP-LSVI-UCB++", "dp-lsvi-ucb++", "correct", "random-linear", "billboard", ("environment", "worst-case"),
     100_000),
    ("DP-LSVI-UCB++", "dp-lsvi-ucb++", "correct", "random-linear", "billboard", ("worst-case",), 1_000_000),
    ("DP-LSVI-UCB++, half sensitivity (bug)", "dp-lsvi-ucb++", "half-sensitivity", "random-linear", "billboard",
     ("worst-case",), 100_000),
    ("DP-LSVI-UCB++, half sensitivity (bug)", "dp-lsvi-ucb++", "half-sensitivity", "random-linear", "billboard",
     ("worst-case",), 1_000_000),
    ("Luyo et al.", "luyo", None, "random-linear", "billboard", ("environment", "worst-case"), 100_000),
    ("Luyo et al.", "luyo", None, "random-linear", "billboard", ("worst-case",), 3_000_000),
    ("Luyo et al., half sensitivity (bug)", "luyo", "luyo-half-sensitivity", "random-linear", "billboard",
     ("worst-case",), 1_000_000),
    ("Ngo et al.", "ngo", None, "random-linear", "billboard", ("environment", "worst-case"), 100_000),
    ("Ngo et al.", "ngo", None, "random-linear", "billboard", ("worst-case",), 1_000_000),
    ("Ngo et al., half sensitivity (bug)", "ngo", "ngo-half-sensitivity", "random-linear", "billboard",
     ("worst-case",), 1_000_000),
    ("LDP-UCRL-VTR", "ldp-ucrl-vtr", None, "random-mixture", "ldp", ("environment", "worst-case"), 1_000_000),
    ("LDP-UCRL-VTR, half sensitivity", "ldp-ucrl-vtr", "ldp-half-sensitivity", "random-mixture", "ldp",
     ("worst-case",), 1_000_000),
    ("LDP-UCRL-VTR (H = 6)", "ldp-ucrl-vtr", None, "random-mixture", "ldp", ("worst-case",), 1_000_000),
    ("LDP-UCRL-VTR (H = 6), half sensitivity", "ldp-ucrl-vtr", "ldp-half-sensitivity", "random-mixture", "ldp",
     ("worst-case",), 1_000_000),
    ("LDP-UCRL-VTR (H = 6), quarter sensitivity (bug)", "ldp-ucrl-vtr", "ldp-quarter-sensitivity",
     "random-mixture", "ldp", ("worst-case",), 100_000),
    ("LDP-UCRL-VTR (H = 6), quarter sensitivity (bug)", "ldp-ucrl-vtr", "ldp-quarter-sensitivity",
     "random-mixture", "ldp", ("worst-case",), 1_000_000),
    ("DP-LSVI-UCB++ tree", "dp-lsvi-ucb++", None, "random-linear", "billboard", ("worst-case",), 1_000_000),
    ("DP-LSVI-UCB++ staged", "dp-lsvi-ucb++", "correct", "random-linear", "billboard", ("worst-case",), 1_000_000),
    ("DP-LSVI-UCB++ staged", "dp-lsvi-ucb++", "correct", "random-linear", "billboard", ("worst-case",), 3_000_000),
    ("DP-LSVI-UCB++ staged, half sensitivity (bug)", "dp-lsvi-ucb++", "half-sensitivity", "random-linear",
     "billboard", ("worst-case",), 100_000),
    ("LDP-UCRL-VTR (H = 6), staged", "ldp-ucrl-vtr", None, "random-mixture", "ldp", ("worst-case",),
     1_000_000),
    ("LDP-UCRL-VTR (H = 6), staged, half sensitivity (bug)", "ldp-ucrl-vtr", "ldp-half-sensitivity",
     "random-mixture", "ldp", ("worst-case",), 100_000),
    ("LDP-UCRL-VTR (H = 6), staged, half sensitivity (bug)", "ldp-ucrl-vtr", "ldp-half-sensitivity",
     "random-mixture", "ldp", ("worst-case",), 1_000_000),
)
STAGED = (("sensitivity_model", "staged"),)
#: Agent options of the cases that need them (the tree-aggregated variant runs through the same card's twin).
AGENT_OPTIONS: dict[str, tuple[tuple[str, Any], ...]] = {
    "DP-LSVI-UCB++ tree": (("aggregation", "tree"),),
    "DP-LSVI-UCB++ staged": (("sensitivity_model", "staged"),),
    "DP-LSVI-UCB++ staged, half sensitivity (bug)": (("sensitivity_model", "staged"),),
    "LDP-UCRL-VTR (H = 6), staged": STAGED,
    "LDP-UCRL-VTR (H = 6), staged, half sensitivity (bug)": STAGED,
}


def env_options(label: str, env: str) -> tuple[tuple[str, Any], ...]:
    """The environment of a case: the random linear MDP, or the random mixture MDP at H = 2 (H = 6 if the label
    says so)."""
    if env == "random-linear":
        return LINEAR
    return MIXTURE_H6 if "(H = 6)" in label else MIXTURE


def ceilings(horizon: int, claimed_mu: float, model: str = "standard") -> dict[str, Any]:
    """What the value caps leave realisable to LDP-UCRL-VTR's canaries (docs/auditing.md): per family the
    largest realised fraction (the first stage's cap) and its μ with every stage at its cap, and the pair's μ
    with both families at their caps, under the sensitivity model ``model``."""
    family_mu, pair_mu = mu_ceilings(horizon, claimed_mu, model)
    cap = float(stage_caps(horizon, model)[0])
    return {"horizon": horizon, "sensitivity_model": model, "fractions": {"gram": cap, "target": cap},
            "family_mu": {"gram": family_mu, "target": family_mu}, "pair_mu": pair_mu}


def run_case(label: str, agent: str, variant: str | None, env: str, notion: str, design: str,
             trials: int) -> dict[str, Any]:
    options = env_options(label, env)
    spec = AgentAuditSpec(agent, env, 3, notion, 1.0, 1e-5, trials=trials, env_options=options,
                          positions=("first",), window=3, canary_design=design, gaussian_claim=True,
                          agent_options=AGENT_OPTIONS.get(label, ()))
    start = time.perf_counter()
    result = audit_agent(spec, progress=False, batch_factory=None if variant is None else BatchedVariant(variant))
    pair = result.measured_pairs[0]
    row = {"label": label, "agent": agent, "variant": variant, "design": design, "trials": trials,
           "batched": result.batched, "verdict": result.verdict, "verdict_by": list(result.verdict_by),
           "epsilon_lower_bound": result.epsilon_lower_bound, "mu_lower_bound": result.mu_lower_bound,
           "claimed_mu": result.claimed_mu, "pair": pair.to_dict(),
           "pairs": [p.to_dict() for p in result.measured_pairs], "seconds": time.perf_counter() - start,
           "provenance": provenance()}
    if notion == "ldp":
        model = dict(AGENT_OPTIONS.get(label, ())).get("sensitivity_model", "standard")
        row["ceiling"] = ceilings(dict(options)["horizon"], result.claimed_mu, model)
    return row


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| agent | canaries | trials/side | realised fraction per family | pair μ | μ lower bound (claim μ) | "
             "(ε, δ) lower bound | verdict | s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        pair = r["pair"]
        fractions = ", ".join(f"{k} {v:.2f}" for k, v in pair["fractions"].items()) or pair["note"]
        mu = "—" if pair["mu"] is None else f"{pair['mu']:.3f}"
        lines.append(f"| {r['label']} | {r['design']} | {r['trials']:.0e} | {fractions} | {mu} | "
                     f"{r['mu_lower_bound'] or 0:.3f} ({r['claimed_mu']:.3f}) | {r['epsilon_lower_bound']:.3f} | "
                     f"{r['verdict']} | {r['seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def ceiling_table(rows: list[dict[str, Any]]) -> str:
    """LDP-UCRL-VTR's rows: realised (the pair of largest μ the audit measured) against realisable."""
    lines = ["| agent | canaries | family | realised fraction (ceiling) | family μ (ceiling) | pair μ (ceiling) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        if "ceiling" not in r or r["variant"] is not None:
            continue
        best = max(r.get("pairs", [r["pair"]]), key=lambda p: p["mu"] or 0.0)
        ceiling = r["ceiling"]
        for family in ("gram", "target"):
            lines.append(f"| {r['label']} | {r['design']} | {family} | {best['fractions'].get(family, 0.0):.3f} "
                         f"({ceiling['fractions'][family]:.3f}) | {best['family_mu'].get(family, 0.0):.4f} "
                         f"({ceiling['family_mu'][family]:.4f}) | {best['mu']:.4f} ({ceiling['pair_mu']:.4f}) |")
    return "\n".join(lines) + "\n"


#: The agents whose candidate pairs the reach table measures: (label, agent, environment, H, agent options).
REACH: tuple[tuple[str, str, str, int, tuple[tuple[str, Any], ...]], ...] = (
    ("DP-LSVI-UCB++", "dp-lsvi-ucb++", "random-linear", 2, ()),
    ("DP-LSVI-UCB++ staged", "dp-lsvi-ucb++", "random-linear", 2, (("sensitivity_model", "staged"),)),
    ("DP-LSVI-UCB++ tree", "dp-lsvi-ucb++", "random-linear", 2, (("aggregation", "tree"),)),
    ("Luyo et al.", "luyo", "random-linear", 2, ()),
    ("Ngo et al.", "ngo", "random-linear", 2, ()),
    ("LDP-UCRL-VTR", "ldp-ucrl-vtr", "random-mixture", 2, ()),
    ("LDP-UCRL-VTR (H = 6)", "ldp-ucrl-vtr", "random-mixture", 6, ()),
)


def reach_rows() -> list[dict[str, Any]]:
    """Per agent and family, the largest fraction of the recorded sensitivity that any candidate pair of the
    worst-case design realises (first user, the same measurement runs as the audits': no trials)."""
    rows = []
    for label, agent, env, horizon, agent_options in REACH:
        options = tuple((k, horizon if k == "horizon" else v) for k, v in
                        (LINEAR if env == "random-linear" else MIXTURE))
        spec = AgentAuditSpec(agent, env, 3, "ldp" if env == "random-mixture" else "billboard", 1.0, 1e-5,
                              trials=1000, env_options=options, positions=("first",), window=3,
                              canary_design="worst-case", agent_options=agent_options)
        setup = agent_setup(spec)  # (in the audit environment: the worst-case design)
        pairs = measured_candidates(spec, setup, setup.environment())
        rows.append({"label": label, "pairs": len(pairs), "reach": family_reach(pairs),
                     "best_pair": pairs[0].label, "best_pair_fractions": {
                         f.family: f.fraction for f in pairs[0].fractions}})
    return rows


def reach_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| agent | candidate pairs | largest realised fraction per family (any pair) |", "|---|---|---|"]
    for r in rows:
        reach = ", ".join(f"{family} {value:.2f}" for family, value in r["reach"].items())
        lines.append(f"| {r['label']} | {r['pairs']} | {reach} |")
    return "\n".join(lines)


def render(source: Path = OUT, reach: Path = REACH_OUT, page: Path | None = None) -> Path:
    """The results page: the audits of ``source``, LDP-UCRL-VTR's realised fractions against their ceilings, and
    the candidate pairs' reach of ``reach`` (when it exists)."""
    document = json.loads(source.read_text(encoding="utf-8"))
    rows = document["rows"]
    body = ("Two-world audits of the claim (1, 1e-5), Gaussian (claimed μ = 0.268), replace-one, of the first user, "
            "the view over every later release: DP-LSVI-UCB++, Luyo et al. and Ngo et al. in a random linear MDP "
            "with d = 3, H = 2, |A| = 2, K = 3; LDP-UCRL-VTR in the random linear mixture MDP with d = 3, |A| = 1, "
            "S = 3 (seed 3) at H = 2 and H = 6, its user's own messages. Every agent runs through the batched twin "
            "on its registry card; each bug is the agent's twin with noise for a fraction of its true sensitivity "
            "(`audits/agent_zoo.py`). The seconds are wall time (docs/auditing.md, \"Canaries that realise the "
            "sensitivity\").\n\n" + table(rows)
            + "\n### LDP-UCRL-VTR: realised against realisable\n\nThe pair of largest μ each audit measured, "
            "against the ceilings its value caps leave (`stage_caps`, `mu_ceilings`; docs/auditing.md, "
            "\"LDP-UCRL-VTR in the audit linear mixture MDP\").\n\n" + ceiling_table(rows))
    figures, runs = [source], [recorded(r) for r in rows]
    if reach.exists():
        reached = json.loads(reach.read_text(encoding="utf-8"))
        body += ("\n### Every candidate pair of the worst-case design\n\nThe largest fraction of each family's "
                 "recorded sensitivity that any candidate pair realises, first user, d = 3, H = 2 (H = 6 where "
                 "stated), K = 3: measurement runs only, no trials (`--reach`).\n\n" + reach_table(reached["rows"]))
        figures.append(reach)
        runs.append(recorded(reached))
    return write_page(page or PAGE, "Agent audits by canary design", body,
                      reproduce=["python docs/make_canary_audits.py", "python docs/make_canary_audits.py --reach"]
                      [:len(figures)], render="python docs/make_canary_audits.py --render-only", figures=figures,
                      runs=runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every trial count")
    parser.add_argument("--only", action="append", default=None, help="run the cases of this label only")
    parser.add_argument("--reach", action="store_true",
                        help="only measure every candidate pair's realised fractions (docs/results/canary_reach.json)")
    parser.add_argument("--render-only", action="store_true", help="write the page from the JSON, run nothing")
    args = parser.parse_args(argv)
    if args.render_only:
        print(render())
        return 0
    if args.reach:
        reach = reach_rows()
        REACH_OUT.write_text(json.dumps({"description": reach_rows.__doc__, "provenance": provenance(argv),
                                         "rows": reach}, indent=1) + "\n")
        print(reach_table(reach))
        print(render())
        return 0
    rows = []
    if args.only and OUT.exists():  # keep the rows of the other cases
        rows = [r for r in json.loads(OUT.read_text())["rows"] if r["label"] not in args.only]
    for label, agent, variant, env, notion, designs, trials in CASES:
        if args.only and label not in args.only:
            continue
        for design in designs:
            rows.append(run_case(label, agent, variant, env, notion, design, max(20, int(trials * args.scale))))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    OUT.write_text(json.dumps({"description": __doc__.splitlines()[0], "rows": rows}, indent=1) + "\n")
    print(table(rows))
    print(ceiling_table(rows))
    print(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
