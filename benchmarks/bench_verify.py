"""Wall and CPU time of ``dpverify verify``, per section, for the reference agents at their default K.

    python benchmarks/bench_verify.py [--agent dp-lsvi-ucb++] [--budget quick] [--episodes 1000]
                                      [--workers 2] [--repeats 3] [--all] [--assume-idle]

Runs :func:`dpverify.verify.verify` as ``dpverify verify`` does (one BLAS thread per process) and prints, per
repeat, the verdict, the wall seconds and the CPU seconds (user + system of this process and of every worker
process it started, as ``/usr/bin/time`` counts them), then one line per section: its wall seconds (the
report's timings), its CPU seconds, the CPU seconds of this process alone (the part that does not run on the
workers) and the section's projected wall time on idle cores, max(this process, all / workers). Without
``--agent`` the README's quick start runs (DP-LSVI-UCB++ on min2021); ``--all`` runs every reference agent.
``--assume-idle`` makes the executors decide as on an idle machine (they run small maps here when the load
average says the cores are busy), so that a shared machine measures the work an idle one would do.

CPU seconds are steadier than wall seconds on a shared machine (the load average is printed with them);
``psutil`` (installed with dask's distributed, a test dependency) reads the CPU of the live workers.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time

import psutil

from dpverify._pools import one_blas_thread

one_blas_thread()  # as the command line does, before numpy is imported

from dpverify.audit import executors  # noqa: E402
from dpverify.verify import core, verify  # noqa: E402

AGENTS = (("dp-lsvi-ucb++", "min2021"), ("luyo", "min2021"), ("ngo", "min2021"), ("ldp-ucrl-vtr", "zhou2021"))


def main_seconds() -> float:
    """CPU seconds of this process."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def cpu_seconds() -> float:
    """CPU seconds of this process, of its finished children and of its live worker processes so far."""
    gone = resource.getrusage(resource.RUSAGE_CHILDREN)
    live = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:  # it ended meanwhile: its time is in RUSAGE_CHILDREN now
            continue
        live += times.user + times.system
    return main_seconds() + gone.ru_utime + gone.ru_stime + live


class TimedStages(core.Stages):
    """verify's stages, with the CPU seconds of each (all processes, this one) next to its wall seconds."""

    cpu: dict[str, tuple[float, float]] = {}

    def begin(self, label: str) -> None:
        self._cpu = (cpu_seconds(), main_seconds())
        super().begin(label)

    def end(self, outcome: str = "") -> None:
        super().end(outcome)
        TimedStages.cpu[self._label] = (cpu_seconds() - self._cpu[0], main_seconds() - self._cpu[1])


def bench(agent: str, env: str, args: argparse.Namespace) -> None:
    workers = args.workers or min(2, os.cpu_count() or 1)
    walls, cpus, projected = [], [], []
    for _ in range(args.repeats):
        TimedStages.cpu = {}
        wall, cpu = time.perf_counter(), cpu_seconds()
        report = verify(agent, env, 1.0, 1e-5, args.episodes, args.budget, workers=workers)
        walls.append(time.perf_counter() - wall)
        cpus.append(cpu_seconds() - cpu)
        idle = 0.0
        lines = []
        for name, seconds in report.timings.items():
            total, here = TimedStages.cpu.get(name, (0.0, 0.0))
            idle += max(here, total / workers)
            lines.append(f"    {name.split(':')[0][:44]:44s} wall {seconds:6.1f} s  cpu {total:6.1f} s  "
                         f"(here {here:5.1f} s)  idle wall {max(here, total / workers):5.1f} s")
        projected.append(idle)
        print(f"{agent:14s} {report.verdict.verdict:17s} wall {walls[-1]:6.1f} s  cpu {cpus[-1]:6.1f} s  "
              f"projected idle wall {idle:5.1f} s  (load {os.getloadavg()[0]:.1f})", flush=True)
        print("\n".join(lines), flush=True)
    print(f"{agent:14s} median of {args.repeats}: wall {statistics.median(walls):.1f} s, "
          f"cpu {statistics.median(cpus):.1f} s, projected idle wall {statistics.median(projected):.1f} s "
          f"on {workers} workers", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--agent", default=None, help="one agent (default: DP-LSVI-UCB++ on min2021)")
    parser.add_argument("--env", default=None, help="its environment (default: its paper's)")
    parser.add_argument("--all", action="store_true", help="every reference agent")
    parser.add_argument("--budget", default="quick", choices=("quick", "standard", "thorough"))
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--assume-idle", action="store_true", help="executors decide as on idle cores")
    args = parser.parse_args()
    core.Stages = TimedStages  # type: ignore[misc]
    if args.assume_idle:
        executors._free_cpus = lambda: float(os.cpu_count() or 1)
    if args.all:
        cases = list(AGENTS)
    else:
        agent = args.agent or AGENTS[0][0]
        cases = [(agent, args.env or dict(AGENTS).get(agent, "min2021"))]
    for agent, env in cases:
        bench(agent, env, args)


if __name__ == "__main__":
    main()
