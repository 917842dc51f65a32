"""Speed of the private agents on one core, each side by side with its non-private counterpart.

    taskset -c 0 python benchmarks/bench_private_agents.py [--episodes K] [--repeats R] [--only NAME ...]

For every private agent and its non-private counterpart (DP-LSVI-UCB++ → LSVI-UCB++; Luyo et al. and
Ngo et al. → LSVI-UCB; LDP-UCRL-VTR → UCRL-VTR) on the same environment and seeds: the time per episode
of what ``dpverify run`` does per episode (plan, exact regret, rollout, statistics update), wall-clock and
process CPU time (less sensitive to other jobs on a shared machine), each the median over ``--repeats``
runs, the first and last 10% of episodes of the first run (flat in k when the cost
does not grow with the data), and the ratio private / non-private. Target: ratio ≤ 1.5 at K = 10⁴.
The machine may be shared: quote medians. BLAS threads are pinned to 1.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

# BLAS threads are pinned (above) before numpy is imported.
import argparse  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from dpverify.agents.core.base import run_episodes  # noqa: E402
from dpverify.agents.core.runner import RunSpec, build_agent, build_environment  # noqa: E402
from dpverify.agents.registry import AGENTS  # noqa: E402

EPISODES = 10_000
LINEAR_ENV = ("min2021", {"horizon": 20, "num_actions": 100})
MIXTURE_ENV = ("zhou2021", {"horizon": 6, "dim": 5})

# (private agent, its options, non-private counterpart, environment)
BENCHMARKS: list[tuple[str, dict[str, Any], str, tuple[str, dict[str, Any]]]] = [
    ("dp-lsvi-ucb++", {"epsilon": 1.0, "sensitivity_model": "derived"}, "lsvi-ucb++", LINEAR_ENV),
    ("luyo", {"epsilon": 1.0}, "lsvi-ucb", LINEAR_ENV),
    ("ngo", {"epsilon": 1.0}, "lsvi-ucb", LINEAR_ENV),
    ("ldp-ucrl-vtr", {"epsilon": 1.0}, "ucrl-vtr", MIXTURE_ENV),
]


def per_episode_seconds(agent: str, options: dict[str, Any], env: tuple[str, dict[str, Any]],
                        episodes: int) -> tuple[np.ndarray, float, Any]:
    """(wall seconds of every episode, CPU seconds per episode, the agent) of one run, seeds from
    ``SeedSequence(0)`` (bench_dp_lsvi_ucb_pp_tree.py times its two variants with it too)."""
    spec = RunSpec(agent, env[0], episodes, num_seeds=1, agent_options=options, env_options=env[1])
    mdp = build_environment(spec)
    seed_agent, seed_env = np.random.SeedSequence(0).spawn(2)
    built = build_agent(spec, mdp, np.random.default_rng(seed_agent))
    stamps = np.empty(episodes + 1)

    def tick(k: int) -> None:
        stamps[k + 1] = time.perf_counter()

    stamps[0] = time.perf_counter()
    cpu = time.process_time()
    run_episodes(mdp, built, episodes, np.random.default_rng(seed_env), tick)
    return np.diff(stamps), (time.process_time() - cpu) / episodes, built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=EPISODES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=None, help="private agent names to run (default: all)")
    args = parser.parse_args(argv)
    print(f"{'agent':<15}{'counterpart':<12}{'K':>7}{'ms/ep':>8}{'first10%':>10}{'last10%':>9}"
          f"{'counterpart':>12}{'ratio':>7}{'cpu ms/ep':>10}{'counterpart':>12}{'ratio':>7}{'releases':>10}")
    tenth = max(args.episodes // 10, 1)
    for private, options, counterpart, env in BENCHMARKS:
        if args.only is not None and private not in args.only:
            continue
        if private not in AGENTS:
            print(f"{private:<15}(not registered — skipped)")
            continue
        runs, base_runs, cpu, base_cpu, built = [], [], [], [], None
        for _ in range(args.repeats):
            seconds, cpu_seconds, built = per_episode_seconds(private, options, env, args.episodes)
            runs.append(seconds)
            cpu.append(cpu_seconds)
            seconds, cpu_seconds, _ = per_episode_seconds(counterpart, {}, env, args.episodes)
            base_runs.append(seconds)
            base_cpu.append(cpu_seconds)
        ms = 1e3 * float(np.median([r.mean() for r in runs]))
        base_ms = 1e3 * float(np.median([r.mean() for r in base_runs]))
        cpu_ms, base_cpu_ms = 1e3 * float(np.median(cpu)), 1e3 * float(np.median(base_cpu))
        first, last = 1e3 * float(runs[0][:tenth].mean()), 1e3 * float(runs[0][-tenth:].mean())
        releases = getattr(getattr(built, "ledger", None), "n_releases", None)
        print(f"{private:<15}{counterpart:<12}{args.episodes:>7}{ms:>8.3f}{first:>10.3f}{last:>9.3f}"
              f"{base_ms:>12.3f}{ms / base_ms:>7.2f}{cpu_ms:>10.3f}{base_cpu_ms:>12.3f}{cpu_ms / base_cpu_ms:>7.2f}"
              f"{str(releases):>10}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
