"""Did the private agents learn from their users? Each agent against its no-data control, per budget.

Run:  python docs/make_learning_controls.py [--episodes 3000] [--seeds 10] [--workers 2] [--quick]
Writes docs/results/learning_controls.json and prints the table docs/results.md quotes. Every cell runs the
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
import time
from pathlib import Path

from dpverify.agents.core import runner
from dpverify.agents.core.learning import compare_learning

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--kstar", action="store_true", help="the K* grid: four agents × ε ∈ {1, 10, 100, 1000}")
    parser.add_argument("--only", default=None, help="one variant label (e.g. 'DP-LSVI-UCB++ tree')")
    parser.add_argument("--epsilons", default=None, help="comma-separated ε values for --only")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "learning_controls.json"))
    args = parser.parse_args()
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
    Path(args.out).write_text(json.dumps({"rows": rows}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
