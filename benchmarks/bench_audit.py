"""Figures of the audit engine (docs/auditing.md). Prints, never asserts.

    .venv/bin/python benchmarks/bench_audit.py            # full run (a few minutes on 2 cores)
    .venv/bin/python benchmarks/bench_audit.py --quick    # smaller counts, for a smoke test
    .venv/bin/python benchmarks/bench_audit.py --engine-only [--repeats 15]   # only figure 2b

1. Tightness: a scalar Gaussian mechanism calibrated to exactly (ε, δ) = (1, 1e-5) (the largest μ by the
   exact profile), audited at its worst-case neighbours; mean over many audits of the Clopper–Pearson
   ε lower bound and of the μ-GDP ε, as fractions of ε. Targets at 10⁶ trials per side: ≥ 0.70, ≥ 0.95.
2. Throughput: trials per second of a whole audit (selection + evaluation, both sides) of a vectorised
   scalar Gaussian on one core (SerialExecutor). Target ≥ 5×10⁶.
2b. Engine overhead: the serial audit at 10⁶ trials per side against a minimal numpy baseline that draws
   the same samples and makes the same counts, and the default executor against serial, measured in one
   run (interleaved repeats, medians). Targets: serial ≤ 1.2× baseline; default ≤ serial.
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

from dpverify.audit import VIOLATION, AuditSpec, ReleaseOf, SerialExecutor, run_audit, trials, worst_case_pair
from dpverify.audit.executors import ProcessExecutor
from dpverify.audit.selection import ThresholdTest, candidate_ranks
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


def numpy_baseline(spec: AuditSpec, sigma: float, values: tuple[float, float],
                   thresholds: tuple[float, ...]) -> tuple[list[np.ndarray], np.ndarray]:
    """The floor of a scalar Gaussian audit: the same samples (the same chunk generators and draws) and
    the same counts (each side's count above every candidate threshold of the selection split, and above
    the chosen thresholds on the evaluation split), in plain numpy; no bounds, no checks."""
    sel = trials.chunk_sizes(spec.selection_trials, spec.chunk_size)
    ev = trials.chunk_sizes(spec.evaluation_trials, spec.chunk_size)
    sides = []
    for side in (0, 1):
        x = np.concatenate([
            values[side] + trials.generator(spec.seed, (trials.SELECTION, 0, side, c)).normal(0.0, sigma, n)
            for c, n in enumerate(sel)
        ])
        x.sort()
        sides.append(x)
    pooled = np.concatenate(sides)
    pooled.sort(kind="stable")  # two sorted runs: merged in one pass
    distinct = np.empty(pooled.shape, dtype=bool)
    distinct[0] = True
    np.not_equal(pooled[1:], pooled[:-1], out=distinct[1:])
    if not distinct.all():
        pooled = pooled[distinct]
    ranks = candidate_ranks(len(pooled))
    cut = pooled[ranks] / 2.0 + pooled[np.minimum(ranks + 1, len(pooled) - 1)] / 2.0
    selection_counts = [len(x) - np.searchsorted(x, cut, side="right") for x in sides]
    evaluation_counts = np.zeros((2, len(thresholds)), dtype=np.int64)
    for side in (0, 1):
        for c, n in enumerate(ev):
            x = values[side] + trials.generator(spec.seed, (trials.EVALUATION, 0, side, c)).normal(0.0, sigma, n)
            evaluation_counts[side] += [np.count_nonzero(x > t) for t in thresholds]
    return selection_counts, evaluation_counts


def engine_overhead(trials_per_side: int, repeats: int) -> dict[str, float]:
    """Serial audit and default-executor audit against the numpy baseline, interleaved; medians."""
    mech = calibrated()
    spec = AuditSpec(EPS, DELTA, trials=trials_per_side, seed=1, gaussian_claim=True)
    pair = worst_case_pair(mech)

    def serial():
        return run_audit(ReleaseOf(mech), pair, spec, executor=SerialExecutor())

    def default():
        return run_audit(ReleaseOf(mech), pair, spec)

    values = (float(np.ravel(pair.first)[0]), float(np.ravel(pair.second)[0]))
    ref = serial()
    chosen = (ref.clopper_pearson.threshold, ref.gaussian.threshold)
    counts = numpy_baseline(spec, mech.sigma, values, chosen)[1]
    # The baseline counts what the audit counted (a check that it is the same work): its counts above
    # each chosen threshold give the audit's false-positive and false-negative counts for some event/null.
    m = spec.evaluation_trials
    same = True
    for j, report in enumerate((ref.clopper_pearson, ref.gaussian)):
        above = (int(counts[0, j]), int(counts[1, j]))
        possible = {ThresholdTest(None, 0.0, event, null).errors(above, m)  # type: ignore[arg-type]
                    for event in ("above", "at-or-below") for null in (0, 1)}
        same = same and (report.false_positives, report.false_negatives) in possible
    print(f"(the baseline's evaluation counts reproduce the audit's: {'yes' if same else 'NO'})")
    walls: dict[str, list[float]] = {"baseline": [], "serial": [], "default": []}
    cpus: dict[str, list[float]] = {"baseline": [], "serial": [], "default": []}
    jobs = {"baseline": lambda: numpy_baseline(spec, mech.sigma, values, chosen),
            "serial": serial, "default": default}
    for _ in range(repeats):
        for name, job in jobs.items():
            w, c = time.perf_counter(), time.process_time()
            job()
            walls[name].append(time.perf_counter() - w)
            cpus[name].append(time.process_time() - c)
    out = {f"{k}_wall": float(np.median(v)) for k, v in walls.items()}
    out.update({f"{k}_cpu": float(np.median(v)) for k, v in cpus.items()})
    out["serial_ratio_wall"] = float(np.median(np.array(walls["serial"]) / np.array(walls["baseline"])))
    out["serial_ratio_cpu"] = float(np.median(np.array(cpus["serial"]) / np.array(cpus["baseline"])))
    out["default_vs_serial_wall"] = float(np.median(np.array(walls["default"]) / np.array(walls["serial"])))
    return out


def false_alarms(per_twin: int, gaussian_audits: int, trials: int, executor) -> tuple[int, int]:
    twins = [c for c in cases() if not c.broken]
    alarms = total = 0
    for j, case in enumerate(twins):
        for i in range(per_twin):
            spec = case.spec(trials, 50_000 + 1000 * j + i, 0.95)
            r = run_audit(case.mechanism, case.neighbours, spec, executor=executor)
            alarms += r.verdict == VIOLATION
            total += 1
    mech = calibrated()
    for i in range(gaussian_audits):
        spec = AuditSpec(EPS, DELTA, trials=trials, seed=90_000 + i, gaussian_claim=True)
        alarms += run_audit(ReleaseOf(mech), worst_case_pair(mech), spec, executor=executor).verdict == VIOLATION
        total += 1
    return alarms, total


def print_engine_overhead(repeats: int) -> None:
    print("\n## 2b. Engine overhead: a whole audit at 10^6 trials per side vs a numpy baseline that draws the")
    print("same samples and makes the same counts (medians of interleaved runs; wall and CPU time)")
    o = engine_overhead(10**6, repeats)
    print(format_table(("", "baseline", "serial", "default executor"), [
        ("wall ms", 1e3 * o["baseline_wall"], 1e3 * o["serial_wall"], 1e3 * o["default_wall"]),
        ("cpu ms", 1e3 * o["baseline_cpu"], 1e3 * o["serial_cpu"], 1e3 * o["default_cpu"]),
    ]))
    print(f"serial / baseline: {o['serial_ratio_wall']:.2f} (wall), {o['serial_ratio_cpu']:.2f} (cpu)   "
          f"[target <= 1.2];  default / serial: {o['default_vs_serial_wall']:.2f} (wall) [target <= 1]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--audits", type=int, default=40, help="audits per tightness size (default 40)")
    parser.add_argument("--repeats", type=int, default=15, help="interleaved repeats of the overhead figure")
    parser.add_argument("--engine-only", action="store_true", help="only the engine-overhead figure (2b)")
    args = parser.parse_args()
    audits = 5 if args.quick else args.audits
    sizes = (10**4, 10**5) if args.quick else (10**4, 10**5, 10**6)
    print(f"# dpverify audit benchmark (numpy {np.__version__}, {os.cpu_count()} cores)")
    if args.engine_only:
        print_engine_overhead(args.repeats)
        return

    print("\n## 1. Tightness: scalar Gaussian calibrated to exactly (1, 1e-5), fraction of epsilon")
    rows = []
    with ProcessExecutor() as ex:
        for n in sizes:
            t = tightness(n, audits, SerialExecutor() if n >= 10**6 else ex, seed0=1000)
            rows.append((n, t["audits"], t["cp_mean"], t["cp_sd"], t["cp_min"],
                         t["gdp_mean"], t["gdp_sd"], t["gdp_min"]))
    print(format_table(("trials/side", "audits", "CP mean", "CP sd", "CP min", "GDP mean", "GDP sd", "GDP min"), rows))

    print("\n## 2. Throughput (one core, SerialExecutor, whole audit, both sides)")
    n = 10**6 if args.quick else 10**7
    rate = throughput(n)
    print(f"{n} trials per side: {rate:.3e} trials/s")

    print_engine_overhead(5 if args.quick else args.repeats)

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
