"""Speed of the reference agents (prints figures; never asserted in tests).

LSVI-UCB and LSVI-UCB++ on the Min et al. 2021 MDP at H = 20, d = 10, |A| = 100, K = 10⁴, and UCRL-VTR on
the Zhou et al. 2021 mixture MDP at d = 5, H = 6, K = 10⁴: total seconds, episodes per second, and the
mean time per episode over the first and the last 10% of episodes (flat in k when the per-episode cost
does not grow with the data). Each timed episode includes planning, the exact regret of the deployed
policy, the rollout and the statistics update — exactly what ``dpverify run`` does per episode.

Targets on one core: LSVI-UCB ≤ 0.3 ms per episode (3 s at K = 10⁴), LSVI-UCB++ ≤ 30 s.

    python benchmarks/bench_agents.py [--episodes K] [--only lsvi-ucb,lsvi-ucb++,ucrl-vtr]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpverify.agents.core.base import Agent, rollout
from dpverify.agents.core.planning import DeterministicPolicyEvaluator
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp
from dpverify.agents.nonprivate.lsvi_ucb import LsviUcb, LsviUcbConfig
from dpverify.agents.nonprivate.lsvi_ucb_pp import LsviUcbPlusPlus, LsviUcbPlusPlusConfig
from dpverify.agents.nonprivate.ucrl_vtr import UcrlVtr, UcrlVtrConfig


def timed_run(mdp, agent: Agent, episodes: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    evaluator = DeterministicPolicyEvaluator(mdp)
    seconds = np.empty(episodes)
    regret = np.empty(episodes)
    cpu = time.process_time()
    for k in range(episodes):
        start = time.perf_counter()
        policy = agent.begin_episode()
        regret[k] = evaluator.regret(policy)
        agent.end_episode(rollout(mdp, policy, rng))
        seconds[k] = time.perf_counter() - start
    return seconds, regret, time.process_time() - cpu


def report(name: str, seconds: np.ndarray, regret: np.ndarray, cpu: float, target: float | None) -> None:
    k = len(seconds)
    tenth = max(k // 10, 1)
    total = seconds.sum()
    first, last = seconds[:tenth].mean() * 1e3, seconds[-tenth:].mean() * 1e3
    target_text = f" (target <= {target:g} s)" if target is not None else ""
    print(f"{name:<12} K={k}: {total:6.2f} s{target_text}, {k / total:7.0f} episodes/s, "
          f"ms/episode first 10% {first:.3f}, last 10% {last:.3f} (ratio {last / first:.2f}); "
          f"CPU {1e3 * cpu / k:.3f} ms/episode; cumulative regret {regret.sum():.1f}, mean regret first/last 10% "
          f"{regret[:tenth].mean():.3f}/{regret[-tenth:].mean():.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--only", default="lsvi-ucb,lsvi-ucb++,ucrl-vtr")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    agent_seed, env_seed = np.random.SeedSequence(args.seed).spawn(2)
    k = args.episodes
    min_mdp = min2021_mdp(horizon=20, num_actions=100)
    print(f"Min et al. 2021: H={min_mdp.horizon}, S={min_mdp.num_states}, A={min_mdp.num_actions}, d={min_mdp.dim}")
    if "lsvi-ucb" in wanted:
        agent = LsviUcb(min_mdp, LsviUcbConfig(k), np.random.default_rng(agent_seed))
        report("lsvi-ucb", *timed_run(min_mdp, agent, k, np.random.default_rng(env_seed)), 3.0)
    if "lsvi-ucb++" in wanted:
        agent = LsviUcbPlusPlus(min_mdp, LsviUcbPlusPlusConfig(k), np.random.default_rng(agent_seed))
        seconds, regret, cpu = timed_run(min_mdp, agent, k, np.random.default_rng(env_seed))
        report("lsvi-ucb++", seconds, regret, cpu, 30.0)
        print(f"{'':<12} policy switches: {agent.num_switches}")
    if "ucrl-vtr" in wanted:
        mixture = zhou2021_mixture_mdp(dim=5, horizon=6, num_episodes=k)
        print(f"Zhou et al. 2021: H={mixture.horizon}, S={mixture.num_states}, A={mixture.num_actions}, "
              f"d={mixture.dim}")
        agent = UcrlVtr(mixture, UcrlVtrConfig(k), np.random.default_rng(agent_seed))
        report("ucrl-vtr", *timed_run(mixture, agent, k, np.random.default_rng(env_seed)), None)


if __name__ == "__main__":
    main()
