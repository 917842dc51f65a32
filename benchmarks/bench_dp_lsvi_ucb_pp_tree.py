"""Speed of tree-aggregated DP-LSVI-UCB++ against the fresh-noise variant, per episode, on one core.

    taskset -c 0 python benchmarks/bench_dp_lsvi_ucb_pp_tree.py [--episodes K] [--repeats R] [--epsilon E]

Both variants (``aggregation="fresh"``, Sahu 2025 Algorithm 1; ``aggregation="tree"``) on the Min et al.
MDP (rescaled, H = 20, |A| = 100, d = 10) with the same seeds: the time per episode of what
``dpverify run`` does (plan, exact regret, rollout, statistics update and releases), as the median over
``--repeats`` runs, the first and last 10% of the first run's episodes (flat in k when the cost does not
grow with the data), and the ratio tree / fresh. Target: ratio ≤ 1.5. The machine may be shared: the
figures are medians and still noisy; the two variants alternate so that load affects both alike.
BLAS threads are pinned to 1.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# BLAS threads are pinned (above) before numpy is imported.
import argparse  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from bench_private_agents import LINEAR_ENV as ENV  # noqa: E402  (min2021, H = 20, |A| = 100)
from bench_private_agents import per_episode_seconds as run_seconds  # noqa: E402


def per_episode_seconds(aggregation: str, epsilon: float, episodes: int) -> tuple[np.ndarray, float, Any]:
    """(wall seconds of every episode, CPU seconds per episode, the agent) of one run."""
    return run_seconds("dp-lsvi-ucb++", {"epsilon": epsilon, "aggregation": aggregation}, ENV, episodes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=10.0)
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {"fresh": [], "tree": []}
    cpu: dict[str, list[float]] = {"fresh": [], "tree": []}
    first: dict[str, np.ndarray] = {}
    releases: dict[str, int] = {}
    for _ in range(args.repeats):
        for aggregation in ("fresh", "tree"):
            seconds, cpu_per_episode, agent = per_episode_seconds(aggregation, args.epsilon, args.episodes)
            times[aggregation].append(float(np.median(seconds)))
            cpu[aggregation].append(cpu_per_episode)
            first.setdefault(aggregation, seconds)
            releases[aggregation] = agent.ledger.n_releases
    tenth = max(1, args.episodes // 10)
    print(f"DP-LSVI-UCB++ on min2021 (H = 20, |A| = 100), K = {args.episodes}, ε = {args.epsilon:g}, "
          f"{args.repeats} repeats (median per-episode time of each run, then the median over runs)")
    for aggregation in ("fresh", "tree"):
        s = first[aggregation]
        print(f"  {aggregation:<5}  {1e3 * np.median(times[aggregation]):7.3f} ms/episode   "
              f"first 10% {1e3 * np.median(s[:tenth]):6.3f} ms, last 10% {1e3 * np.median(s[-tenth:]):6.3f} ms   "
              f"CPU {1e3 * np.median(cpu[aggregation]):7.3f} ms/episode   releases {releases[aggregation]}")
    ratio = np.median(times["tree"]) / np.median(times["fresh"])
    cpu_ratio = np.median(cpu["tree"]) / np.median(cpu["fresh"])
    print(f"  ratio tree / fresh = {ratio:.2f} (wall), {cpu_ratio:.2f} (CPU)  (target ≤ 1.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
