"""Did the private agents learn from their users? Each agent against its no-data control, per budget.

Run:  python docs/make_learning_controls.py [--episodes 3000] [--seeds 10] [--workers 2] [--quick]
      python docs/make_learning_controls.py --render-only     # the results page again from the JSON files
Writes docs/results/learning_controls.json and the results page docs/results/learning_controls.md (with the
K* grid's files, learning_controls_k*.json, written with --kstar/--only and --out). Every cell runs the
agent and the same agent with every user slot empty (dpverify.agents.core.learning), with the same seeds
(SeedSequence(20250).spawn(seeds), the seeds of docs/results.md), on the paper's benchmark (min2021:
H = 20, d = 10, |A| = 100, δ = 1e-5), and
reports the regret per episode over the last 20% of the episodes for both, the one-sided paired t-test over
the seeds, and the exact regret of the known-reward greedy policy (2.45) and of the uniform policy (12.14).
``--quick`` runs a handful of cells only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

DOCS = Path(__file__).resolve().parent
if str(DOCS) not in sys.path:
    sys.path.insert(0, str(DOCS))

from results_page import provenance, recorded, write_page  # noqa: E402

from dpverify.agents.core import runner  # noqa: E402
from dpverify.agents.core.learning import compare_learning, paired_p_value  # noqa: E402

OUT = DOCS / "results" / "learning_controls.json"
#: The files the page shows: the K = 3000 table, then the K* grid's (docs/make_kstar.py reuses them).
SOURCES = (OUT, *(DOCS / "results" / f"learning_controls_k{k}.json" for k in ("1000", "10000", "100000_tree_eps10")))
PAGE = DOCS / "results" / "learning_controls.md"

#: The seeds of docs/results.md and the frontier: seed i = SeedSequence(20250).spawn(seeds)[i].
BASE_SEED = 20250
#: (label, agent, options) of each agent variant.
VARIANTS = {
    "DP-LSVI-UCB++ (fresh)": ("dp-lsvi-ucb++", {}),
    "DP-LSVI-UCB++ tree": ("dp-lsvi-ucb++", {"aggregation": "tree"}),
    "DP-LSVI-UCB++ tree, c_Λ = 0.25": ("dp-lsvi-ucb++", {"aggregation": "tree", "shift_multiplier": 0.25}),
    "DP-LSVI-UCB++ Honaker": ("dp-lsvi-ucb++", {"aggregation": "honaker"}),
    "DP-LSVI-UCB++ factorised": ("dp-lsvi-ucb++", {"aggregation": "factorised"}),
    "Luyo et al.": ("luyo", {}),
    "Ngo et al.": ("ngo", {}),
}
EPSILONS = {
    "DP-LSVI-UCB++ (fresh)": (10.0, 1000.0),
    "DP-LSVI-UCB++ tree": (10.0, 100.0, 1e9, 1e10),
    "DP-LSVI-UCB++ tree, c_Λ = 0.25": (1.0, 10.0, 100.0, 1e9),
    "Luyo et al.": (10.0, 1000.0),
    "Ngo et al.": (10.0, 1000.0),
}
QUICK = {"DP-LSVI-UCB++ tree, c_Λ = 0.25": (10.0,), "Ngo et al.": (10.0,)}
#: The grid of the K* question (docs/results.md, "Where learning starts"): four agents × four budgets.
KSTAR = {label: (1.0, 10.0, 100.0, 1000.0) for label in
         ("DP-LSVI-UCB++ (fresh)", "DP-LSVI-UCB++ tree", "Luyo et al.", "Ngo et al.")}


def cell(label: str, epsilon: float, episodes: int, seeds: int, workers: int, executor: object = None) -> dict:
    """One variant at one ε: the agent and its no-data control over the same seeds (on ``executor`` when given, a
    Dask cluster's for instance, else ``workers`` local processes; identical results either way)."""
    agent, options = VARIANTS[label]
    spec = runner.RunSpec(agent, "min2021", episodes, seeds, BASE_SEED, workers,
                          agent_options={**options, "epsilon": epsilon, "delta": 1e-5})
    start = time.perf_counter()
    mdp = runner.build_environment(spec)
    with_users, without = runner.run_many([spec, dataclasses.replace(spec, users=False)], executor, None, [mdp, mdp])
    comparison = compare_learning(with_users.regret, without.regret, mdp)
    return {"variant": label, "epsilon": epsilon, "episodes": episodes, "seeds": seeds,
            "total_with_users": float(with_users.cumulative_regret()[:, -1].mean()),
            "total_without_users": float(without.cumulative_regret()[:, -1].mean()),
            **comparison.to_dict(), "seconds": time.perf_counter() - start}


def _p(p: float | None) -> str:
    return "cannot tell" if p is None else f"{'yes' if p < 0.05 else 'no'} ({p:.2g})"


def _spread(values: np.ndarray) -> str:
    return f"{values.mean():.3g} ± {values.std(ddof=1):.2g}" if len(values) > 1 else f"{values.mean():.3g}"


def table(rows: list[dict[str, Any]]) -> str:
    """Each cell with and without its users; "below the greedy" is the same one-sided test against the
    known-reward greedy policy's exact regret (computed from the per-seed values where a file predates it)."""
    lines = ["| agent | ε | K | seeds | final regret, with users | with no user data | last 20%, per episode: "
             "with users | with no user data | beat its control (p) | below the known-reward greedy (p) | s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a, c = np.asarray(r["agent_last_per_episode"]), np.asarray(r["control_last_per_episode"])
        greedy = r.get("greedy_p_value") if "greedy_p_value" in r else paired_p_value(
            a, np.full_like(a, r["known_reward_greedy_per_episode"]))
        lines.append(f"| {r['variant']} | {r['epsilon']:g} | {r['episodes']} | {r['seeds']} | "
                     f"{r['total_with_users']:.0f} | {r['total_without_users']:.0f} | {_spread(a)} | {_spread(c)} | "
                     f"{_p(r['p_value'])} | {_p(greedy)} | {r['seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def reproduce(path: Path, rows: list[dict[str, Any]]) -> str:
    """The command that reruns the cells of ``path``."""
    if path == OUT:
        return "python docs/make_learning_controls.py"
    variants = sorted({r["variant"] for r in rows})
    epsilons = ",".join(f"{r['epsilon']:g}" for r in rows)
    grid = f'--only "{variants[0]}" --epsilons {epsilons}' if len(variants) == 1 else "--kstar"
    return (f"python docs/make_learning_controls.py {grid} --episodes {rows[0]['episodes']} --seeds "
            f"{rows[0]['seeds']} --out docs/results/{path.name}")


def render(sources: tuple[Path, ...] = SOURCES, page: Path | None = None) -> Path:
    """The results page of every file of ``sources`` that exists."""
    found = [(p, json.loads(p.read_text(encoding="utf-8"))) for p in sources if p.exists()]
    body = ("Each private agent against its no-data control: the same agent, options and seeds "
            "(`SeedSequence(20250).spawn(seeds)`) with every user slot empty, on the paper's benchmark (min2021: "
            "H = 20, d = 10, |A| = 100, δ = 1e-5, replace-one). \"beat its control\": one-sided paired t-test over "
            "the seeds on the regret per episode over the last 20% of the episodes, level 0.05; \"below the "
            "known-reward greedy\": the same test against that data-free policy's exact regret (2.45 per "
            "episode; uniformly random policy 12.14). s: seconds for the agent and its control (docs/results.md, "
            "\"The no-data control\").\n\n")
    for path, document in found:
        body += f"### `{path.name}`\n\n" + table(document["rows"]) + "\n"
    return write_page(page or PAGE, "Private agents against their no-data controls", body,
                      reproduce=[reproduce(p, d["rows"]) for p, d in found],
                      render="python docs/make_learning_controls.py --render-only",
                      figures=[p for p, _ in found], runs=[recorded(d) for _, d in found])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--kstar", action="store_true", help="the K* grid: four agents × ε ∈ {1, 10, 100, 1000}")
    parser.add_argument("--only", default=None, help="one variant label (e.g. 'DP-LSVI-UCB++ tree')")
    parser.add_argument("--epsilons", default=None, help="comma-separated ε values for --only")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--render-only", action="store_true", help="write the page from the JSON, run nothing")
    args = parser.parse_args(argv)
    if args.render_only:
        print(render())
        return
    rows = []
    grid = QUICK if args.quick else (KSTAR if args.kstar else EPSILONS)
    if args.only is not None:
        chosen = grid[args.only] if args.epsilons is None else tuple(float(e) for e in args.epsilons.split(","))
        grid = {args.only: chosen}
    for label, epsilons in grid.items():
        for epsilon in epsilons:
            row = cell(label, epsilon, args.episodes, args.seeds, args.workers)
            rows.append(row)
            answer = {True: "yes", False: "no", None: "cannot tell"}[row["learned"]]
            a, c = row["agent_last_per_episode"], row["control_last_per_episode"]
            print(f"| {label} | {epsilon:g} | {row['total_with_users']:.0f} | {row['total_without_users']:.0f} | "
                  f"{sum(a) / len(a):.3g} | {sum(c) / len(c):.3g} | {row['p_value']:.2g} | {answer} | "
                  f"{row['seconds']:.0f} s |", flush=True)
    Path(args.out).write_text(json.dumps({"provenance": provenance(argv), "rows": rows}, indent=1) + "\n",
                              encoding="utf-8")
    if Path(args.out).resolve() in {p.resolve() for p in SOURCES}:
        print(render())


if __name__ == "__main__":
    main()
