"""Wall and CPU time of ``dpverify verify --budget quick`` for each reference agent at its default K.

    python benchmarks/bench_verify.py [--budget quick] [--episodes 1000]

Prints one line per agent: verdict, wall seconds, CPU seconds of this process and its workers, and the
time of each part. Figures depend on the machine and on what else runs on it: quote medians of a few
runs on a quiet machine.
"""

from __future__ import annotations

import argparse
import resource
import time

from dpverify.verify import verify

AGENTS = (("dp-lsvi-ucb++", "min2021"), ("luyo", "min2021"), ("ngo", "min2021"), ("ldp-ucrl-vtr", "zhou2021"))


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="quick", choices=("quick", "standard", "thorough"))
    parser.add_argument("--episodes", type=int, default=1000)
    args = parser.parse_args()
    for agent, env in AGENTS:
        wall, cpu = time.perf_counter(), cpu_seconds()
        report = verify(agent, env, 1.0, 1e-5, args.episodes, args.budget)
        wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
        parts = ", ".join(f"{name.split(':')[0]} {seconds:.1f}" for name, seconds in report.timings.items())
        print(f"{agent:14s} {report.verdict.verdict:17s} wall {wall:6.1f} s  cpu {cpu:6.1f} s  ({parts})")


if __name__ == "__main__":
    main()
