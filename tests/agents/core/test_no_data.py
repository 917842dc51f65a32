"""The no-data control of a step-level agent: data-free users, the same seeds, an unbiased regret estimate."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.no_data import data_free_law
from dpverify.agents.core.planning import DeterministicPolicyEvaluator
from dpverify.agents.envs import min2021_mdp
from dpverify.agents.envs.bandit_instances import linear_bandit


class Fixed:
    """A step-level agent following a fixed policy table, recording what it was told."""

    def __init__(self, policy: np.ndarray) -> None:
        self.policy, self.seen = policy, []

    def act(self, h: int, state: int) -> int:
        return int(self.policy[h, state])

    def end_episode(self, trajectory: Any) -> None:
        self.seen.append((trajectory.states.tolist(), trajectory.rewards.tolist()))


def test_the_control_s_users_move_alike_whatever_the_agent_does() -> None:
    mdp = min2021_mdp(horizon=3)
    law = data_free_law(mdp)
    assert law.shape == (3, mdp.num_states, mdp.num_states) and np.allclose(law.sum(axis=-1), 1.0)
    a, b = (Fixed(np.full((3, mdp.num_states), action)) for action in (0, mdp.num_actions - 1))
    for agent in (a, b):
        run_episodes(mdp, agent, 20, np.random.default_rng(3), users=False)
    assert [s for s, _ in a.seen] == [s for s, _ in b.seen]  # the states: the same users whatever the actions


def test_the_control_s_regret_estimate_is_unbiased_for_the_real_environment() -> None:
    mdp = min2021_mdp(horizon=3)
    policy = np.random.default_rng(0).integers(mdp.num_actions, size=(3, mdp.num_states))
    exact = DeterministicPolicyEvaluator(mdp).regret(policy)
    regret, _ = run_episodes(mdp, Fixed(policy), 8000, np.random.default_rng(1), users=False)
    assert regret.mean() == pytest.approx(exact, abs=4 * regret.std() / np.sqrt(len(regret)) + 1e-9)


def test_a_bandit_s_data_free_rewards_say_nothing_of_arm_or_context() -> None:
    bandit = linear_bandit(dim=3, num_arms=4, num_contexts=5)
    law = data_free_law(bandit)
    rows = law[0, : bandit.num_contexts]
    assert np.allclose(rows, rows[0])  # one outcome law for every context (and, by construction, every arm)
    agent = Fixed(np.zeros((1, bandit.num_states), dtype=np.int64))
    regret, _ = run_episodes(bandit, agent, 200, np.random.default_rng(2), users=False)
    gaps = bandit.gaps()[:, 0]
    contexts = [s[0] for s, _ in agent.seen]
    np.testing.assert_allclose(regret, gaps[contexts])  # horizon 1: the round's exact regret, no weight
