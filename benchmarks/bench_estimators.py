"""The running-sum counters of DP-LSVI-UCB++ side by side: noise they leave in what the planner reads, and cost.

    python benchmarks/bench_estimators.py [--K 1000 10000 100000] [--epsilon 10] [--episodes 1000]

For each K: the error factor sensitivity² × worst prefix variance (units of one release's noise variance
per unit ρ: what sets the noise std the planner reads, squared) of the binary tree (⌊log₂K⌋ + 1 levels × the
largest popcount), the full dyadic tree with Honaker's estimator (levels × the worst Σ r_l), the square-root
BLT factorisation (Σ c_j² × the worst Σ b_j²) and the exact square root ((Σ c_j²)²); then, on the paper's
benchmark (min2021, H = 20, |A| = 100, δ = 1e-5) at ``--epsilon``, the Gram noise std the agent reads, its
shift 2λ̃_Λ, and the median wall time per episode of a ``--episodes``-episode run (3 repetitions; the machine
may be shared, so read ratios, not absolutes).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from dpverify.agents.core.dyadic_tree import max_prefix_variance_factor
from dpverify.agents.core.factorised_sum import max_prefix_noise_factor, square_root_blt, square_root_coefficients
from dpverify.agents.core.runner import RunSpec, build_agent, build_environment, run
from dpverify.agents.dp_lsvi_ucb_pp.tree import max_prefix_nodes, tree_noise_stds

AGGREGATIONS = {"tree": "binary", "honaker": "dyadic", "factorised": "factorised"}
MIN2021 = {"horizon": 20, "num_actions": 100}


def error_factors(K: int) -> dict[str, float]:
    levels = K.bit_length()
    factor = square_root_blt(K)
    exact = float((square_root_coefficients(K) ** 2).sum())
    return {"binary tree": float(levels * max_prefix_nodes(K)),
            "dyadic tree + Honaker": levels * max_prefix_variance_factor(K),
            "square-root BLT": float((factor.coefficients(K) ** 2).sum()) * max_prefix_noise_factor(factor, K),
            "exact square root": exact * exact}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--K", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--epsilon", type=float, default=10.0)
    parser.add_argument("--episodes", type=int, default=1000)
    args = parser.parse_args()
    print("error factor = sensitivity² × worst prefix variance (lower is better)")
    for K in args.K:
        row = error_factors(K)
        shown = ", ".join(f"{name} {value:.1f}" for name, value in row.items())
        print(f"  K = {K}: {shown}; binary / BLT = {row['binary tree'] / row['square-root BLT']:.1f}")
    print(f"\nDP-LSVI-UCB++ on min2021 (H = 20, |A| = 100), ε = {args.epsilon:g}, δ = 1e-5")
    for K in args.K:
        for aggregation, counter in AGGREGATIONS.items():
            spec = RunSpec("dp-lsvi-ucb++", "min2021", K, num_seeds=1, env_options=MIN2021,
                           agent_options={"epsilon": args.epsilon, "delta": 1e-5, "aggregation": aggregation})
            mdp = build_environment(spec)
            agent = build_agent(spec, mdp, np.random.default_rng(0))
            s, _ = tree_noise_stds(agent.calibration, mdp.horizon, mdp.num_states, K, counter)
            print(f"  K = {K:<7} {aggregation:<11} Gram noise std read {s:.4g}, shift 2λ̃_Λ {agent.shift:.4g}")
    print(f"\nwall time per episode, {args.episodes} episodes (median of 3)")
    for aggregation in ("fresh", *AGGREGATIONS):
        times = []
        for repeat in range(3):
            spec = RunSpec("dp-lsvi-ucb++", "min2021", args.episodes, num_seeds=1, base_seed=repeat,
                           env_options=MIN2021, agent_options={"epsilon": args.epsilon, "aggregation": aggregation})
            start = time.perf_counter()
            run(spec)
            times.append((time.perf_counter() - start) / args.episodes)
        print(f"  {aggregation:<11} {1e3 * statistics.median(times):.2f} ms/episode")


if __name__ == "__main__":
    main()
