"""The slowest single call of a correct third-party agent's code during ``dpverify verify``: the figure behind the
default per-call limit (``--call-timeout``, ``DPVERIFY_CALL_TIMEOUT``: 60 s, :mod:`dpverify.limits`).

    python benchmarks/bench_call_times.py [--budget quick] [--episodes 1000] [--only noisy-lsvi ...]

Runs ``verify`` on every correct agent of the third-party zoo (audits/third_party_zoo.py) with one worker, so that
every call of the agent's code (its module's import, its factory, each protocol method) is a guarded call in
this process, and prints per agent the number of calls, the slowest (and where it was) and the run's wall time.
A closed loop's stretches between hand-offs are timed by its adapter, not here. Figures depend on the machine
and its load.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from dpverify import usercode
from dpverify.audits.third_party_zoo import CASES
from dpverify.verify import verify

TIMES: dict[str, list[float]] = defaultdict(list)
SLOWEST: dict[str, tuple[float, str]] = {}


def _timed(guarded: Callable[..., Any]) -> Callable[..., Any]:
    def call(agent: str, where: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return guarded(agent, where, fn, *args, **kwargs)
        finally:
            seconds = time.perf_counter() - start
            TIMES[agent].append(seconds)
            if seconds > SLOWEST.get(agent, (0.0, ""))[0]:
                SLOWEST[agent] = (seconds, where)

    return call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="quick", choices=("quick", "standard", "thorough"))
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    usercode.guarded_call = _timed(usercode.guarded_call)  # the module's own callers look it up at call time
    print(f"budget {args.budget}, K = {args.episodes}, default per-call limit {usercode.call_timeout():g} s")
    for case in CASES:
        if case.bug or case.expected != "CLAIM CONSISTENT" or (args.only and case.name not in args.only):
            continue
        wall = time.perf_counter()
        report = verify(case.agent, "min2021", 1.0, 1e-5, args.episodes, args.budget, workers=1)
        wall = time.perf_counter() - wall
        slowest, where = SLOWEST.get(case.agent, (0.0, "-"))
        print(f"{case.name:22s} {report.verdict.verdict:17s} {len(TIMES[case.agent]):8d} calls; slowest "
              f"{slowest:7.3f} s ({where}); run {wall:6.1f} s")


if __name__ == "__main__":
    main()
