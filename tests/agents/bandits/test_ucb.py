"""UCB1: the index, and that it learns."""

from __future__ import annotations

import math

import numpy as np

from dpverify.agents.bandits.ucb import Ucb, UcbConfig, ucb_index
from dpverify.agents.core.base import run_episodes
from dpverify.agents.envs.bandit_instances import armed_bandit


def test_index_is_the_mean_plus_the_width_and_infinite_for_an_unpulled_arm() -> None:
    sums, pulls = np.array([[3.0, 0.0, 1.0]]), np.array([[4.0, 0.0, 2.0]])
    index = ucb_index(sums, pulls, 6, 1.0, noise_width=2.0)
    assert index[0, 1] == np.inf
    assert index[0, 0] == 3 / 4 + math.sqrt(2 * math.log(6) / 4) + 2 / 4


def test_ucb_learns_and_deploys_one_arm_for_every_context() -> None:
    bandit = armed_bandit(num_arms=4, means=[0.2, 0.4, 0.5, 0.8])
    agent = Ucb(bandit, UcbConfig(800), np.random.default_rng(0))
    regret, _ = run_episodes(bandit, agent, 800, np.random.default_rng(1))
    assert regret[-200:].mean() < 0.1 < regret[:8].mean()
