"""Wall time of the white-box release checks that ``dpverify verify`` runs first, at its budget's sizes.

    python benchmarks/bench_whitebox.py [--agent dp-lsvi-ucb++] [--env min2021] [--episodes 1000]
                                        [--budget quick] [--workers 2] [--repeats 3]
    python benchmarks/bench_whitebox.py --all [--repeats 1]

Runs :func:`dpverify.verify.whitebox.whitebox_section` exactly as ``verify`` does (the same plan, the same
executor: local worker processes) and prints each repeat's wall time, their median, the checks' outcome and
the realised fraction of each family's recorded sensitivity (the tightness figure); ``--all`` does it for
every registered private agent on its paper's environment.
The target (docs/auditing.md): at most 10 s added to ``verify --budget quick`` for DP-LSVI-UCB++ at K = 1000
(H = 20) on 2 cores. The machine is shared: quote medians, and the load average printed with them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from dpverify.audit.executors import make_executor
from dpverify.verify.target import prepare
from dpverify.verify.whitebox import whitebox_section

REFERENCE = (("dp-lsvi-ucb++", "min2021"), ("luyo", "min2021"), ("ngo", "min2021"), ("ldp-ucrl-vtr", "zhou2021"))


def bench(agent: str, env: str, episodes: int, budget_name: str, workers: int, repeats: int) -> None:
    run, _ = prepare(agent, env, 1.0, 1e-5, episodes, budget_name, workers=workers)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        with make_executor(None, workers) as executor:
            section = whitebox_section(run, executor)
        times.append(time.perf_counter() - start)
        print(f"{agent} K = {section.episodes}, search K = {section.search_episodes}: {times[-1]:.1f} s "
              f"({section.status}; load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"median {statistics.median(times):.1f} s over {repeats} repeats, workers = {workers}")
    for check in section.checks:
        print(f"  [{check.status}] {check.name}: {check.reason[:110]}")
    for f in section.sensitivity:
        print(f"  {f.family:12s} realised fraction {f.ratio:.3f}  ({f.pair})")
    if section.epsilon_lower is not None:
        print(f"  witnessed ε at K = {section.episodes}: {section.epsilon_lower:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--agent", default="dp-lsvi-ucb++")
    parser.add_argument("--env", default="min2021")
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--budget", default="quick")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--all", action="store_true")
    args = parser.parse_args()
    for agent, env in (REFERENCE if args.all else ((args.agent, args.env),)):
        bench(agent, env, args.episodes, args.budget, args.workers, args.repeats)


if __name__ == "__main__":
    main()
