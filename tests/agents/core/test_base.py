"""Tests of dpverify.agents.core.base: what an agent is shown of an episode."""

from __future__ import annotations

import numpy as np

from dpverify.agents.core.base import expected_rewards, rewards_seen, rollout, run_episodes
from dpverify.agents.envs.bandit_instances import armed_bandit
from dpverify.agents.envs.min2021 import min2021_mdp


class _Recorder:
    """A step-level agent that pulls arms in turn and records every reward it is shown."""

    def __init__(self, num_arms: int) -> None:
        self.num_arms, self.t, self.observed, self.ended = num_arms, 0, [], []

    def act(self, h: int, state: int) -> int:
        return self.t % self.num_arms

    def observe(self, h: int, s: int, a: int, r: float, s_next: int) -> None:
        self.observed.append(r)

    def end_episode(self, trajectory) -> None:
        self.ended.extend(trajectory.rewards.tolist())
        self.t += 1


def test_a_bandit_shows_its_agents_realised_rewards_never_the_arms_means() -> None:
    bandit = armed_bandit(num_arms=3, seed=1)
    agent = _Recorder(3)
    run_episodes(bandit, agent, 60, np.random.default_rng(0))
    levels = set(np.asarray(bandit.levels).tolist())
    means = set(np.asarray(bandit.rewards).ravel().tolist()) - levels
    assert agent.observed == agent.ended and len(agent.observed) == 60
    assert set(agent.observed) <= levels and not set(agent.observed) & means
    trajectory = rollout(bandit, np.zeros((1, bandit.num_states), dtype=np.int64), np.random.default_rng(2))
    assert rewards_seen(bandit, trajectory.states, trajectory.actions)[0] in levels
    expected = expected_rewards(bandit, trajectory.states, trajectory.actions)[0]
    assert expected == bandit.rewards[0, trajectory.states[0], 0]


def test_an_mdp_with_known_rewards_shows_them() -> None:
    mdp = min2021_mdp(horizon=3)
    trajectory = rollout(mdp, np.zeros((3, mdp.num_states), dtype=np.int64), np.random.default_rng(0))
    np.testing.assert_array_equal(trajectory.rewards, expected_rewards(mdp, trajectory.states, trajectory.actions))
