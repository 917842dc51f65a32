"""Accounting benchmarks: the DP-LSVI-UCB++ ledger at scale, and calibration speed.

Run:  python benchmarks/bench_accounting.py
Prints wall times (best of several repeats) and peak traced memory; asserts nothing about time.

1. Ledger for the DP-LSVI-UCB++ schedule at H = 20, K = 10⁵ (8×10⁶ releases): build, query the naive
   and per-user ρ, (ε, δ) by every conversion. Targets: < 1 s and < 100 MB.
2. Calibration of DP-LSVI-UCB++ at H = 20, K = 10⁴ with the exact method. Target: < 10 ms
   (Google's dp-accounting PLD calibration takes ~0.6 s for the same question
   on this kind of machine).
3. Agent-style recording: 4·H·K single `record` calls at H = 20, K = 10⁴, merged into blocks.
"""

from __future__ import annotations

import time
import tracemalloc

from dpverify.agents.dp_lsvi_ucb_pp.schedule import dp_lsvi_ucbpp_schedule
from dpverify.calibration import calibrate
from dpverify.conversions import CONVERSIONS
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import GaussianMechanism, GOEMechanism


def best_of(fn, repeats: int = 5) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def ledger_at_scale(H: int = 20, K: int = 100_000) -> dict[str, float]:
    vec = GaussianMechanism(0.1, 100.0, 10)
    gram = GOEMechanism(0.0035, 2.6, 10)

    def build_and_query():
        ledger = PrivacyLedger()
        for family in ("w_hat", "w_check", "w_bar"):
            ledger.record_block(family, (1, K), (1, H), vec, "prefix")
        ledger.record_block("gram", (1, K), (1, H), gram, "prefix")
        naive, worst = ledger.naive_rho(), ledger.worst_user_rho()
        eps = {c: ledger.guarantee(1e-5, c).epsilon for c in CONVERSIONS}
        return ledger.n_releases, naive, worst, eps

    seconds, (n, naive, worst, eps) = best_of(build_and_query)
    tracemalloc.start()
    build_and_query()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"ledger H={H} K={K}: {n:,} releases; build+query {seconds * 1e3:.1f} ms; "
        f"peak traced memory {peak / 2**20:.1f} MiB"
    )
    print(
        f"  naive ρ = {naive:.6g}, worst-user ρ = {worst:.6g}; ε at δ=1e-5: "
        + ", ".join(f"{c} {e:.4f}" for c, e in eps.items())
    )
    return {"seconds": seconds, "peak_mib": peak / 2**20}


def calibration_speed(H: int = 20, K: int = 10_000) -> float:
    schedule = dp_lsvi_ucbpp_schedule(H, K, 10)
    seconds, cal = best_of(lambda: calibrate(schedule, 1.0, 1e-5, "exact"), repeats=20)
    print(
        f"calibrate DP-LSVI-UCB++ H={H} K={K} exact: {seconds * 1e3:.2f} ms "
        f"(ρ = {cal.rho:.6g}, accounted ε = {cal.accounted_epsilon!r})"
    )
    for conversion in ("cks", "bun-steinke"):
        s, _ = best_of(lambda c=conversion: calibrate(schedule, 1.0, 1e-5, c), repeats=5)
        print(f"  {conversion}: {s * 1e3:.2f} ms")
    return seconds


def recording_speed(H: int = 20, K: int = 10_000) -> float:
    vec = GaussianMechanism(0.1, 100.0, 10)

    def record_all():
        ledger = PrivacyLedger()
        for k in range(1, K + 1):
            for h in range(H, 0, -1):
                for family in ("w_hat", "w_check", "w_bar", "gram"):
                    ledger.record(family, k, h, vec, "prefix")
        return ledger

    seconds, ledger = best_of(record_all, repeats=1)
    print(
        f"record() x {4 * H * K:,} (H={H}, K={K}): {seconds:.2f} s, {seconds / (4 * H * K) * 1e6:.2f} µs per release, "
        f"{len(ledger.blocks)} blocks"
    )
    return seconds


if __name__ == "__main__":
    ledger_at_scale()
    calibration_speed()
    recording_speed()
