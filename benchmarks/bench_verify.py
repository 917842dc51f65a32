"""Wall and CPU time of ``dpverify verify``, and of each of its sections, for the reference agents.

    python benchmarks/bench_verify.py [--agent dp-lsvi-ucb++] [--budget quick] [--episodes 1000]
                                      [--workers 2] [--repeats 3] [--all] [--sections] [--assume-idle]

Runs :func:`dpverify.verify.verify` with the process settings of ``dpverify verify`` and prints, per
repeat, the verdict, the wall seconds, the CPU seconds (user + system of this process and of every worker
process it started, as ``/usr/bin/time`` counts them) and the CPU seconds of this process alone, then the
report's timings (sections overlap: dpverify.verify.core). The projected wall time on idle cores is at least
the CPU seconds over the workers. ``--sections`` runs the sections one after the other instead and prints each
one's wall seconds, CPU seconds, CPU seconds of this process (the part the workers cannot take) and projected
idle wall, max(this process, CPU / workers). Without ``--agent`` the README's quick start runs
(DP-LSVI-UCB++ on min2021, K = 1000); ``--all`` runs every reference agent. ``--assume-idle`` makes an
adaptive executor decide as on an idle machine (it runs a map here when the load average says the cores are
busy; verify's own executor is not adaptive).

CPU seconds are steadier than wall seconds on a shared machine (the load average is printed with them);
``psutil`` (installed with dask's distributed, a test dependency) reads the CPU of the live workers.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

import psutil

# the process settings of `dpverify verify` (dpverify/cli/verify_command.py): one BLAS thread per process (before
# numpy loads BLAS), glibc keeping freed memory for reuse
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
for _option, _value in ((-1, 1 << 28), (-2, 1 << 28), (-3, 1 << 25)):
    getattr(ctypes.CDLL(None), "mallopt", lambda option, value: 0)(_option, _value)

from dpverify.audit import executors  # noqa: E402  (after the BLAS threads are set)
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


#: verify's sections as core.verify calls them, timed one at a time by --sections.
SECTIONS = ("whitebox_section", "_run_and_account", "structure_section", "audit_section", "utility_section")


def timed(name: str, fn: Callable[..., Any], figures: dict[str, tuple[float, float, float]]) -> Callable[..., Any]:
    """``fn``, recording its wall seconds, CPU seconds (every process) and CPU seconds of this process."""
    def call(*args: Any, **kwargs: Any) -> Any:
        wall, cpu, here = time.perf_counter(), cpu_seconds(), main_seconds()
        try:
            return fn(*args, **kwargs)
        finally:
            figures[name] = (time.perf_counter() - wall, cpu_seconds() - cpu, main_seconds() - here)
    return call


def bench(agent: str, env: str, args: argparse.Namespace) -> None:
    workers = args.workers or min(2, os.cpu_count() or 1)
    walls, cpus, heres = [], [], []
    for _ in range(args.repeats):
        wall, cpu, here = time.perf_counter(), cpu_seconds(), main_seconds()
        report = verify(agent, env, 1.0, 1e-5, args.episodes, args.budget, workers=workers)
        walls.append(time.perf_counter() - wall)
        cpus.append(cpu_seconds() - cpu)
        heres.append(main_seconds() - here)
        print(f"{agent:14s} {report.verdict.verdict:17s} wall {walls[-1]:6.1f} s  cpu {cpus[-1]:6.1f} s  "
              f"(this process {heres[-1]:5.1f} s; load {os.getloadavg()[0]:.1f})", flush=True)
        if args.sections:
            for name in SECTIONS:
                seconds, total, mine = FIGURES.get(name, (0.0, 0.0, 0.0))
                print(f"    {name:20s} wall {seconds:6.1f} s  cpu {total:6.1f} s  (this process {mine:5.1f} s)  "
                      f"idle wall {max(mine, total / workers):5.1f} s", flush=True)
        else:
            print("    " + ", ".join(f"{k.split(':')[0]} {v:.1f} s" for k, v in report.timings.items()))
    print(f"{agent:14s} median of {args.repeats}: wall {statistics.median(walls):.1f} s, cpu "
          f"{statistics.median(cpus):.1f} s (this process {statistics.median(heres):.1f} s); projected idle wall "
          f">= {statistics.median(cpus) / workers:.1f} s (cpu / {workers} workers)", flush=True)


#: The figures of the sections timed by --sections (the last repeat's).
FIGURES: dict[str, tuple[float, float, float]] = {}


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
    parser.add_argument("--sections", action="store_true",
                        help="run the sections one at a time and print the wall and CPU seconds of each")
    args = parser.parse_args()
    if args.sections:
        core.REGISTERED = "none"  # no agent's sections wait in threads: they run one after the other
        for name in SECTIONS:
            setattr(core, name, timed(name, getattr(core, name), FIGURES))
    if args.assume_idle:
        executors._free_cpus = lambda: float(os.cpu_count() or 1)
        executors._cpu_times = lambda: None  # (the idle time read, too: the load average's answer decides)
    if args.all:
        cases = list(AGENTS)
    else:
        agent = args.agent or AGENTS[0][0]
        cases = [(agent, args.env or dict(AGENTS).get(agent, "min2021"))]
    for agent, env in cases:
        bench(agent, env, args)


if __name__ == "__main__":
    main()
