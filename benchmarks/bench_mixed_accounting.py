"""Mixed-ledger accounting against Google's dp-accounting on random ledgers of ≥ 10⁵ releases.

Run:  python benchmarks/bench_mixed_accounting.py [--seeds 5] [--delta 1e-5]
Prints, per ledger, our ε (the least route, and the PLD route), dp-accounting's pessimistic and optimistic PLD ε
of the worst user's events, and both wall times; asserts nothing.

Each ledger mixes Gaussian sums over every past user (prefix: early users pay most), Laplace counters as
binary-mechanism trees and as full dyadic levels, and k-ary randomized responses of each episode's own user,
so users have different weights and different release sets. Targets: ours within 1% of dp-accounting's
pessimistic ε, never below its optimistic ε, and ≥ 10× faster on the same ledger.

"Ours" is the whole accounting: the users' maximal profiles over the ledger's blocks and every route
(:func:`dpverify.accounting.epsilon_routes`). "dp-accounting" composes the worst user's events
(:func:`dpverify.accounting.dp_event`: the Gaussian releases as one event, each pure pair self-composed) with its
own PLDs on its default grid (1e-4), timed without finding the worst user.
"""

from __future__ import annotations

import argparse
import logging
import time

import numpy as np

from dpverify.accounting import dp_event, epsilon_routes, tightest, user_profiles
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import GaussianMechanism, LaplaceMechanism, RandomizedResponse
from dpverify.pld import dp_accounting_epsilon


def random_ledger(rng: np.random.Generator, episodes: int = 4096, stages: int = 10) -> PrivacyLedger:
    """Gaussian prefix sums (user u is read by every later episode), Laplace binary-mechanism counters and a
    dyadic level, and randomized responses of each episode's own user in the second half only: the early users
    pay most for the sums, the later ones alone for the reports, so the worst user is not one user."""
    ledger = PrivacyLedger()
    ledger.record_block("sum", (2, episodes), (1, stages),
                        GaussianMechanism(1.0, float(rng.uniform(200.0, 600.0)), 5), "prefix")
    ledger.record_block("count", (1, episodes), (1, stages),
                        LaplaceMechanism(1.0, float(rng.uniform(100.0, 300.0))), "tree")
    ledger.record_block("level", (2, episodes), (1, stages // 2),
                        LaplaceMechanism(1.0, float(rng.uniform(50.0, 150.0))), "dyadic-1")
    k = int(rng.integers(2, 5))
    ledger.record_block("report", (episodes // 2, episodes), (1, 4),
                        RandomizedResponse(1, float(rng.uniform(0.3, 0.8)), 1, k), "current")
    return ledger


def timed(fn, repeats: int = 7) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--delta", type=float, default=1e-5)
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.ERROR)  # dp-accounting warns about its optimistic Laplace PLD
    delta = args.delta
    # warm the imports (scipy.stats, dp-accounting) outside the timings
    warm = random_ledger(np.random.default_rng(0), 64, 2)
    epsilon_routes(warm, delta)
    dp_accounting_epsilon(dp_event(warm, delta), delta)
    print(f"δ = {delta:g}; times are the best of 7 runs")
    header = (f"{'seed':>4} {'releases':>9} {'users':>6} {'profiles':>8} {'ours':>9} {'route':>6} {'ours pld':>9} "
              f"{'dpa pess':>9} {'dpa opt':>9} {'ours/pess':>9} {'t ours':>8} {'t dpa':>8} {'speed-up':>8}")
    print(header)
    for seed in range(args.seeds):
        ledger = random_ledger(np.random.default_rng(seed))
        ours_time, routes = timed(lambda ledger=ledger: epsilon_routes(ledger, delta))
        best = tightest(routes)
        pld = next(r for r in routes if r.route == "pld")
        event = dp_event(ledger, delta)
        their_time, pessimistic = timed(lambda event=event: dp_accounting_epsilon(event, delta))
        optimistic = dp_accounting_epsilon(event, delta, pessimistic=False)
        profiles = len(user_profiles(ledger))
        print(f"{seed:>4} {ledger.n_releases:>9,} {ledger.n_users:>6} {profiles:>8} {best.epsilon:>9.5f} "
              f"{best.route:>6} {pld.epsilon:>9.5f} {pessimistic:>9.5f} {optimistic:>9.5f} "
              f"{best.epsilon / pessimistic:>9.5f} {ours_time * 1e3:>6.0f}ms {their_time * 1e3:>6.0f}ms "
              f"{their_time / ours_time:>7.1f}×")
        if not optimistic <= best.epsilon <= 1.01 * pessimistic:
            print("      ^ outside [dp-accounting optimistic, 1.01 × pessimistic]")


if __name__ == "__main__":
    main()
