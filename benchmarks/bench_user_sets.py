"""Explicit user sets in the ledger: the per-arm tree-counter bandit's ε, and the cost of accounting ≥ 10⁵ set releases.

Run:  python benchmarks/bench_user_sets.py [fixture|scale|all] [--seeds 5] [--rounds 1000] [--arms 3]
        [--scale-rounds 65536]
Prints figures; asserts nothing.

``fixture`` runs ``audits/third_party/tree_ucb_adapter.py:make_agent`` (ε = 1, its defaults) on the Bernoulli
bandit for K rounds, seed by seed, and prints the ledger's pure ε (each round charged for exactly the counter nodes
that read it) against the true ε of the mechanism: over all possible runs a round lies in at most L = ⌊log₂ K⌋ + 1
nodes of ε0 = ε/L each, so the true ε is L·ε0 = the calibrated ε; a run reaches it when some arm is pulled
2^(L−1) times. It also prints the ε of the same releases recorded as ``"prefix"`` (the node of round t recorded at
episode t + 1, reading users 1..t: what an adapter without sets must record) and how much that overstates.

``scale`` records the nodes of per-arm tree counters over random pulls (A arms, K rounds: about 2K releases, each
reading the scattered rounds of its arm's block) and prints the time and the peak memory of recording them and of
accounting them (the worst user, ``pure_epsilon`` and every route), with the ledger's ranges per release.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from pathlib import Path

import numpy as np

from dpverify.accounting import epsilon_routes, pure_epsilon, tightest
from dpverify.agents.core.base import run_episodes
from dpverify.agents.registry import agent_factory, build_environment
from dpverify.ledger import PrivacyLedger, UserSet
from dpverify.mechanisms import LaplaceMechanism

ADAPTER = Path(__file__).resolve().parents[1] / "audits" / "third_party" / "tree_ucb_adapter.py"


def as_prefix(ledger: PrivacyLedger) -> PrivacyLedger:
    """The same releases, each node of round t recorded at episode t + 1 as reading users 1..t."""
    out = PrivacyLedger(ledger.relation)
    for b in ledger.blocks:
        for k in range(b.episodes[0], b.episodes[1] + 1):
            out.record_block(b.family, (k + 1, k + 1), b.stages, b.mechanism, "prefix")
    return out


def fixture(seeds: int, rounds: int, arms: int) -> None:
    env = build_environment("bernoulli-bandit", rounds, {"num_arms": arms})
    factory = agent_factory(f"{ADAPTER}:make_agent")
    levels = rounds.bit_length()
    print(f"tree-counter UCB bandit, K = {rounds}, {arms} arms, ε = 1: L = {levels} levels, ε0 = 1/{levels}")
    print(f"{'seed':>4} {'releases':>8} {'ledger ε':>10} {'true ε':>7} {'ratio':>6} {'prefix ε':>9} {'overstated':>10} "
          f"{'account s':>9}")
    for seed in range(seeds):
        agent = factory(env, rounds, np.random.default_rng(seed), epsilon=1.0)
        run_episodes(env, agent, rounds, np.random.default_rng(seed + 1000))
        start = time.perf_counter()
        epsilon, _ = pure_epsilon(agent.ledger)
        seconds = time.perf_counter() - start
        prefix, _ = pure_epsilon(as_prefix(agent.ledger))
        print(f"{seed:>4} {agent.ledger.n_releases:>8} {epsilon:>10.6f} {1.0:>7.3f} {epsilon / 1.0:>6.3f} "
              f"{prefix:>9.2f} {prefix / epsilon:>9.1f}× {seconds:>9.3f}")


def counter_nodes(rng: np.random.Generator, rounds: int, arms: int) -> list[tuple[str, int, int, np.ndarray]]:
    """(family, round, level + 1, the rounds read) of every node of per-arm tree counters over random pulls."""
    pulled: list[list[int]] = [[] for _ in range(arms)]
    out = []
    for t, arm in enumerate(rng.integers(arms, size=rounds).tolist(), start=1):
        pulled[arm].append(t)
        n = len(pulled[arm])
        level = 0
        while n % (1 << level) == 0:
            out.append((f"arm{arm}", t, level + 1, np.array(pulled[arm][-(1 << level):], dtype=np.int64)))
            level += 1
    return out


def record(nodes: list[tuple[str, int, int, np.ndarray]], laplace: LaplaceMechanism) -> PrivacyLedger:
    ledger = PrivacyLedger()
    for family, t, stage, users in nodes:
        ledger.record(family, t, stage, laplace, UserSet(users))
    ledger.blocks  # noqa: B018 (the blocks, built once)
    return ledger


def scale(rounds: int, arms: int) -> None:
    """Times in one pass, peak memory (tracemalloc, which slows Python several times) in a second."""
    nodes = counter_nodes(np.random.default_rng(0), rounds, arms)
    laplace = LaplaceMechanism(1.0, float(rounds.bit_length()))
    start = time.perf_counter()
    ledger = record(nodes, laplace)
    record_s = time.perf_counter() - start
    worst = ledger.worst_user()
    worst_s = time.perf_counter() - start - record_s
    epsilon, _ = pure_epsilon(ledger)
    pure_s = time.perf_counter() - start - record_s - worst_s
    best = tightest(epsilon_routes(ledger, 1e-5))
    routes_s = time.perf_counter() - start - record_s - worst_s - pure_s
    blocks = ledger.blocks
    ranges = sum(b.users.ranges.shape[0] for b in blocks)
    members = sum(b.users.size for b in blocks)
    del ledger
    tracemalloc.start()
    again = record(nodes, laplace)
    held, record_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    pure_epsilon(again)
    _, account_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"per-arm tree counters over random pulls: K = {rounds} rounds, {arms} arms")
    print(f"  {again.n_releases} set releases in {len(blocks)} blocks, {ranges} ranges for {members} memberships "
          f"({ranges / len(blocks):.1f} ranges per release), {again.n_users} users")
    print(f"  record (UserSet, ledger.record, blocks): {record_s:.2f} s ({record_s / len(nodes) * 1e6:.0f} µs per "
          f"release); the ledger holds {held / 2**20:.1f} MiB ({held / len(nodes):.0f} B per release), "
          f"peak {record_peak / 2**20:.1f} MiB")
    print(f"  worst user {worst[0]} (ρ = {worst[1]:.6g}): {worst_s:.2f} s")
    print(f"  pure ε = {epsilon:.6g} (the calibrated ε = 1 if some arm fills all {rounds.bit_length()} levels): "
          f"{pure_s:.2f} s, peak {(account_peak - held) / 2**20:.1f} MiB above the ledger")
    print(f"  every route, least {best.route} ε = {best.epsilon:.6g}: {routes_s:.2f} s")
    print(f"  (one float per block and user would be {len(blocks) * again.n_users * 8 / 2**30:.1f} GiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", nargs="?", default="all", choices=("fixture", "scale", "all"))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--arms", type=int, default=3)
    parser.add_argument("--scale-rounds", type=int, default=65536)
    args = parser.parse_args()
    if args.part in ("fixture", "all"):
        fixture(args.seeds, args.rounds, args.arms)
    if args.part in ("scale", "all"):
        scale(args.scale_rounds, 4)


if __name__ == "__main__":
    main()
