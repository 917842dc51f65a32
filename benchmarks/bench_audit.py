"""Figures of the audit engine (issue 6; DESIGN.md §5). Prints, never asserts.

    .venv/bin/python benchmarks/bench_audit.py            # full run (a few minutes on 2 cores)
    .venv/bin/python benchmarks/bench_audit.py --quick    # smaller counts, for a smoke test

1. Tightness: a scalar Gaussian mechanism calibrated to exactly (ε, δ) = (1, 1e-5) (the largest μ by the
   exact profile), audited at its worst-case neighbours; mean over many audits of the Clopper–Pearson
   ε lower bound and of the μ-GDP ε, as fractions of ε. Targets at 10⁶ trials per side: ≥ 0.70, ≥ 0.95.
2. Throughput: trials per second of a whole audit (selection + evaluation, both sides) of a vectorised
   scalar Gaussian on one core (SerialExecutor). Target ≥ 5×10⁶.
3. False alarms: VIOLATION verdicts over many audits of correct mechanisms (the zoo's twins and the
   exactly calibrated Gaussian) at 95% confidence. Target ≤ 5%.
4. The zoo at 10⁵ trials per side.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from dpverify.audit import VIOLATION, AuditSpec, ReleaseOf, SerialExecutor, run_audit, worst_case_pair
from dpverify.audit.executors import ProcessExecutor
from dpverify.audits.zoo import cases, run_zoo
from dpverify.cli._output import format_table
from dpverify.conversions import mu_for_epsilon_delta
from dpverify.mechanisms import GaussianMechanism

EPS, DELTA = 1.0, 1e-5


def calibrated() -> GaussianMechanism:
    return GaussianMechanism(1.0, 1.0 / mu_for_epsilon_delta(EPS, DELTA))


def tightness(trials: int, audits: int, executor, seed0: int) -> dict[str, float]:
    mech = calibrated()
    cp, gdp = [], []
    for i in range(audits):
        spec = AuditSpec(EPS, DELTA, trials=trials, seed=seed0 + i, gaussian_claim=True)
        r = run_audit(ReleaseOf(mech), worst_case_pair(mech), spec, executor=executor)
        cp.append(r.clopper_pearson.epsilon_lower / EPS)
        gdp.append(r.gaussian.epsilon_lower / EPS)
    return {
        "trials": trials, "audits": audits,
        "cp_mean": float(np.mean(cp)), "cp_sd": float(np.std(cp)), "cp_min": float(np.min(cp)),
        "gdp_mean": float(np.mean(gdp)), "gdp_sd": float(np.std(gdp)), "gdp_min": float(np.min(gdp)),
    }


def throughput(trials: int, repeats: int = 3) -> float:
    mech = calibrated()
    spec = AuditSpec(EPS, DELTA, trials=trials, seed=1, gaussian_claim=True)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run_audit(ReleaseOf(mech), worst_case_pair(mech), spec, executor=SerialExecutor())
        best = min(best, time.perf_counter() - start)
    return 2 * trials / best  # both sides


def false_alarms(per_twin: int, gaussian_audits: int, trials: int, executor) -> tuple[int, int]:
    twins = [c for c in cases() if not c.broken]
    alarms = total = 0
    for j, case in enumerate(twins):
        for i in range(per_twin):
            r = run_audit(case.mechanism, case.neighbours, case.spec(trials, 50_000 + 1000 * j + i, 0.95), executor=executor)
            alarms += r.verdict == VIOLATION
            total += 1
    mech = calibrated()
    for i in range(gaussian_audits):
        spec = AuditSpec(EPS, DELTA, trials=trials, seed=90_000 + i, gaussian_claim=True)
        alarms += run_audit(ReleaseOf(mech), worst_case_pair(mech), spec, executor=executor).verdict == VIOLATION
        total += 1
    return alarms, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--audits", type=int, default=40, help="audits per tightness size (default 40)")
    args = parser.parse_args()
    audits = 5 if args.quick else args.audits
    sizes = (10**4, 10**5) if args.quick else (10**4, 10**5, 10**6)
    print(f"# dpverify audit benchmark (numpy {np.__version__}, {os.cpu_count()} cores)")

    print("\n## 1. Tightness: scalar Gaussian calibrated to exactly (1, 1e-5), fraction of epsilon")
    rows = []
    with ProcessExecutor() as ex:
        for n in sizes:
            t = tightness(n, audits, SerialExecutor() if n >= 10**6 else ex, seed0=1000)
            rows.append((n, t["audits"], t["cp_mean"], t["cp_sd"], t["cp_min"], t["gdp_mean"], t["gdp_sd"], t["gdp_min"]))
    print(format_table(("trials/side", "audits", "CP mean", "CP sd", "CP min", "GDP mean", "GDP sd", "GDP min"), rows))

    print("\n## 2. Throughput (one core, SerialExecutor, whole audit, both sides)")
    n = 10**6 if args.quick else 10**7
    rate = throughput(n)
    print(f"{n} trials per side: {rate:.3e} trials/s")

    print("\n## 3. False alarms at 95% confidence (correct mechanisms)")
    per_twin, gauss = (3, 10) if args.quick else (30, 200)
    with ProcessExecutor() as ex:
        alarms, total = false_alarms(per_twin, gauss, 20_000, ex)
    print(f"{alarms} VIOLATION verdicts in {total} audits ({100 * alarms / total:.2f}%), 2x10^4 trials per side each")

    print("\n## 4. Zoo at 1e5 trials per side")
    with ProcessExecutor() as ex:
        outcomes = run_zoo(trials=10**5, seed=0, executor=ex)
    table = [(o.case.name, o.case.variant, o.result.clopper_pearson.epsilon_lower, o.result.gaussian.epsilon_lower,
              o.result.verdict, "yes" if o.as_expected else "NO") for o in outcomes]
    print(format_table(("bug", "variant", "CP eps_lb", "GDP eps_lb", "verdict", "expected?"), table))


if __name__ == "__main__":
    main()
