"""Speed of the private agents on one core (issue 5 "Speed"): total time and per-episode time vs k.

    .venv/bin/python benchmarks/bench_private_agents.py [--episodes K] [--only NAME ...]

Targets: DP-LSVI-UCB++ at H = 20, d = 10, |A| = 100, K = 10⁴ ≤ 30 s; Luyo et al., Ngo et al. and
LDP-UCRL-VTR (at the paper's settings) ≤ 30 s each; per-episode time flat in k (the first and last 10%
of episodes are printed). Agents another module has not registered (yet) are skipped with a note.
Runs in this process (one core); pin BLAS threads to 1 for a fair single-core figure.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import time
from typing import Any

import numpy as np

from dpverify.agents.base import run_episodes
from dpverify.agents.registry import AGENTS
from dpverify.agents.runner import RunSpec, build_agent, build_environment

EPISODES = 10_000

# ---------------------------------------------------------------------------------------------------------
# The benchmarked configurations: (agent name, environment name, agent options, environment options).
# DP-LSVI-UCB++ is ours; the other private agents (agents/luyo.py, agents/ngo.py, agents/ldp_ucrl_vtr.py,
# registered by agents/private_registry_b.py) are benchmarked when registered. Add new agents here.
BENCHMARKS: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    ("dp-lsvi-ucb++", "min2021", {"epsilon": 1.0, "sensitivity_model": "derived"}, {"horizon": 20, "num_actions": 100}),
    ("luyo", "min2021", {"epsilon": 1.0}, {"horizon": 20, "num_actions": 100}),
    ("ngo", "min2021", {"epsilon": 1.0}, {"horizon": 20, "num_actions": 100}),
    ("ldp-ucrl-vtr", "zhou2021", {"epsilon": 1.0}, {"horizon": 6, "dim": 5}),
]
# ---------------------------------------------------------------------------------------------------------


def bench(agent: str, env: str, agent_options: dict[str, Any], env_options: dict[str, Any], episodes: int) -> dict[str, Any]:
    spec = RunSpec(agent, env, episodes, num_seeds=1, agent_options=agent_options, env_options=env_options)
    mdp = build_environment(spec)
    seed_agent, seed_env = np.random.SeedSequence(0).spawn(2)
    built = build_agent(spec, mdp, np.random.default_rng(seed_agent))
    stamps = np.empty(episodes + 1)
    stamps[0] = time.perf_counter()

    def tick(k: int) -> None:
        stamps[k + 1] = time.perf_counter()

    regret, _ = run_episodes(mdp, built, episodes, np.random.default_rng(seed_env), tick)
    per_episode = np.diff(stamps)
    tenth = max(episodes // 10, 1)
    return {
        "agent": agent, "env": env, "H": mdp.horizon, "d": mdp.dim, "A": mdp.num_actions, "K": episodes,
        "total_s": float(stamps[-1] - stamps[0]),
        "first_10pct_ms": 1e3 * float(per_episode[:tenth].mean()),
        "last_10pct_ms": 1e3 * float(per_episode[-tenth:].mean()),
        "releases": getattr(getattr(built, "ledger", None), "n_releases", None),
        "cumulative_regret": float(regret.sum()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=EPISODES)
    parser.add_argument("--only", nargs="*", default=None, help="agent names to run (default: all registered)")
    args = parser.parse_args(argv)
    print(f"{'agent':<15}{'env':<10}{'H':>4}{'d':>4}{'|A|':>5}{'K':>7}{'total s':>10}"
          f"{'first10% ms/ep':>16}{'last10% ms/ep':>15}{'releases':>10}")
    for agent, env, agent_options, env_options in BENCHMARKS:
        if args.only is not None and agent not in args.only:
            continue
        if agent not in AGENTS:
            print(f"{agent:<15}(not registered — skipped)")
            continue
        r = bench(agent, env, agent_options, env_options, args.episodes)
        print(f"{r['agent']:<15}{r['env']:<10}{r['H']:>4}{r['d']:>4}{r['A']:>5}{r['K']:>7}{r['total_s']:>10.1f}"
              f"{r['first_10pct_ms']:>16.2f}{r['last_10pct_ms']:>15.2f}{str(r['releases']):>10}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
