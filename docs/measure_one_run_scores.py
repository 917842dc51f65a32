"""Does the one-run route's slot score overfit its pilot, and would choosing it on held-out slots help?

    python docs/measure_one_run_scores.py [--seeds 3]
    python docs/measure_one_run_scores.py --render-only      # the results page again from the JSON

For three one-run agent audits (K = 400, m = 200 canary slots, billboard, window 1: the visit-count example's
bug, DP-LSVI-UCB++ with reused noise, the correct DP-LSVI-UCB++), per seed: the pilot run and the audited run
(independent coins, as ``dpverify.agent_audit.one_run`` draws them), then the rank statistic (AUC) of

* the route's rule (the candidate feature with the best AUC on the whole pilot): on the pilot itself, and on
  the audited run;
* a cross-fitted rule (candidates fitted on one half of the pilot's slots, chosen by their AUC on the other
  half, both ways): on the audited run.

It prints one line per case and writes docs/results/one_run_scores.json and its results page
docs/results/one_run_scores.md (docs/one_run_audits.md reads it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

DOCS = Path(__file__).resolve().parent
if str(DOCS) not in sys.path:
    sys.path.insert(0, str(DOCS))

from results_page import provenance, recorded, write_page  # noqa: E402

from dpverify.agent_audit import one_run as route  # noqa: E402
from dpverify.agent_audit.runs import agent_setup, probe_agent  # noqa: E402
from dpverify.agent_audit.spec import AgentAuditSpec  # noqa: E402
from dpverify.audit import one_run  # noqa: E402
from dpverify.audit.distinguishers import propose_features  # noqa: E402
from dpverify.audits.agent_zoo import BatchedVariant  # noqa: E402

EXAMPLE = DOCS / "examples" / "visit_count_agent.py"
OUT = DOCS / "results" / "one_run_scores.json"
PAGE = DOCS / "results" / "one_run_scores.md"
LINEAR = (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))


def _best(fit: np.ndarray, fit_in: np.ndarray, test: np.ndarray, test_in: np.ndarray) -> tuple[float, Any, float]:
    best: tuple[float, Any, float] = (-1.0, None, 1.0)
    for feature in propose_features(fit[~fit_in], fit[fit_in]):
        scores = np.asarray(feature.scores(test), dtype=float)
        if np.all(np.isfinite(scores)):
            auc = route._auc(scores, test_in)
            if abs(auc - 0.5) > best[0]:
                best = (abs(auc - 0.5), feature, 1.0 if auc >= 0.5 else -1.0)
    return best


def cross_fitted(pilot: np.ndarray, inclusion: np.ndarray) -> route.SlotScorer:
    halves = np.arange(len(pilot)) % 2 == 0
    one = _best(pilot[halves], inclusion[halves], pilot[~halves], inclusion[~halves])
    two = _best(pilot[~halves], inclusion[~halves], pilot[halves], inclusion[halves])
    _, feature, sign = max(one, two, key=lambda c: c[0])
    return route.SlotScorer(feature, sign)


def render(source: Path = OUT, page: Path | None = None) -> Path:
    """The results page of ``source``."""
    document = json.loads(source.read_text(encoding="utf-8"))
    lines = ["| case | seed | AUC of the route's rule on its pilot | on the audited run | cross-fitted rule on the "
             "audited run |", "|---|---|---|---|---|"]
    for row in document["rows"]:
        for seed, (pilot, audited, crossed) in enumerate(row["auc"]):
            lines.append(f"| {row['case']} | {seed} | {pilot:.3f} | {audited:.3f} | {crossed:.3f} |")
    body = ("Does the one-run route's slot score overfit its pilot, and would choosing it on held-out slots help? "
            "Three one-run agent audits (K = 400, m = 200 canary slots, billboard view, window 1): the visit-count "
            "example's bug, DP-LSVI-UCB++ with reused noise, the correct DP-LSVI-UCB++. Per seed, a pilot run and "
            "the audited run with independent coins; the rank statistic (AUC) of the route's rule (the candidate "
            "feature of best AUC on the whole pilot) on the pilot and on the audited run, and of a cross-fitted "
            "rule (candidates fitted on one half of the pilot's slots, chosen on the other) on the audited run "
            "(docs/one_run_audits.md).\n\n" + "\n".join(lines) + "\n")
    return write_page(page or PAGE, "One-run audits: does the slot score overfit its pilot?", body,
                      reproduce="python docs/measure_one_run_scores.py",
                      render="python docs/measure_one_run_scores.py --render-only", figures=[source],
                      runs=[recorded(document)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--render-only", action="store_true", help="write the page from the JSON, run nothing")
    args = parser.parse_args(argv)
    if args.render_only:
        print(render())
        return 0
    record = provenance(argv)
    found = []
    common = {"route": "one-run", "trials": 1, "canaries": 200, "window": 1}
    cases = {
        "visit-count example, bug": (AgentAuditSpec(f"{EXAMPLE}:make_agent", "min2021", 400, "billboard", 1.0,
                                                    env_options=(("horizon", 2), ("num_actions", 2)), **common), None),
        "DP-LSVI-UCB++, reused noise": (AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 400, "billboard", 1.0,
                                                       env_options=LINEAR, **common), BatchedVariant("noise-reused")),
        "DP-LSVI-UCB++, correct": (AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 400, "billboard", 1.0,
                                                  env_options=LINEAR, **common), None),
    }
    for name, (spec, batch) in cases.items():
        setup = agent_setup(spec)
        _, width, mdp = probe_agent(spec, setup)
        slots = route.canary_slots(spec.episodes, spec.canary_count)
        canaries = route.slot_canaries(spec, setup, mdp)[:2]  # (excluded, included) tapes: the environment's
        rows = []
        for seed in range(args.seeds):
            pilot_seq, audit_seq = np.random.SeedSequence(seed).spawn(2)
            runs = []
            for seq in (pilot_seq, audit_seq):
                coins, noise = (np.random.default_rng(s) for s in seq.spawn(2))
                inclusion = one_run.draw_inclusion(len(slots), coins)
                features = route._one_run_features(spec, setup, mdp, width, slots, inclusion, noise, batch, canaries)
                runs.append((features, inclusion))
            (pilot, pilot_in), (audited, audited_in) = runs
            chosen = route.learn_scorer(pilot, pilot_in)
            rows.append((route._auc(chosen(pilot), pilot_in), route._auc(chosen(audited), audited_in),
                         route._auc(cross_fitted(pilot, pilot_in)(audited), audited_in)))
        r = np.array(rows)
        print(f"{name}: route's rule AUC on its pilot {np.round(r[:, 0], 3).tolist()}, on the audited run "
              f"{np.round(r[:, 1], 3).tolist()}; cross-fitted rule on the audited run {np.round(r[:, 2], 3).tolist()}",
              flush=True)
        found.append({"case": name, "auc": r.tolist()})
    OUT.write_text(json.dumps({"provenance": record, "rows": found}, indent=1) + "\n", encoding="utf-8")
    print(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
