"""The Zhou et al. 2021 hard linear mixture MDP of Liao et al. 2021."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.planning import optimal_values
from dpverify.agents.envs.zhou2021_mixture import (
    hypercube_actions,
    optimal_actions,
    zhou2021_constants,
    zhou2021_mixture_mdp,
)
from dpverify.errors import InvalidParameterError


def test_defaults_and_constants() -> None:
    mdp = zhou2021_mixture_mdp()
    assert (mdp.dim, mdp.horizon, mdp.num_states, mdp.num_actions) == (5, 6, 8, 16)
    c = zhou2021_constants(5, 6, 10_000)
    assert c["alpha"] ** 2 + 4 * c["beta"] ** 2 == pytest.approx(1.0)
    assert c["Delta"] == pytest.approx(np.sqrt(1 / 6 / 10_000) / (4 * np.sqrt(2)))
    assert mdp.feature_norm_bound == 1.0
    np.testing.assert_array_equal(mdp.initial_distribution, np.eye(8)[0])


def test_transition_probabilities() -> None:
    mdp = zhou2021_mixture_mdp(dim=4, horizon=5, num_episodes=100)
    c = zhou2021_constants(4, 5, 100)
    actions = hypercube_actions(4)
    mus = mdp.theta[:, 1:] * c["beta"]
    good, dead = 6, 5
    for h in range(5):
        for a in range(actions.shape[0]):
            p_good = c["delta"] + actions[a] @ mus[h]
            assert mdp.transitions[h, h, a, good] == pytest.approx(p_good)
            following = h + 1 if h < 4 else dead
            assert mdp.transitions[h, h, a, following] == pytest.approx(1 - p_good)
        assert mdp.transitions[h, good, 0, good] == pytest.approx(1.0)
        assert mdp.transitions[h, dead, 0, dead] == pytest.approx(1.0)
    assert np.all(mdp.rewards[:, good, :] == 1.0) and mdp.rewards[:, :good, :].sum() == 0


def test_optimal_action_is_sign_of_mu() -> None:
    mdp = zhou2021_mixture_mdp()
    best = optimal_actions(np.sign(mdp.theta[:, 1:]))
    solution = optimal_values(mdp)
    for h in range(mdp.horizon - 1):  # at the last stage the action has no effect on the reward
        assert np.flatnonzero(solution.optimal_actions[h, h]).tolist() == [best[h]]


def test_invalid_parameters() -> None:
    with pytest.raises(InvalidParameterError, match="signs"):
        zhou2021_mixture_mdp(dim=3, horizon=2, signs=[[1, 0], [1, 1]])
    with pytest.raises(InvalidParameterError, match="dim"):
        zhou2021_mixture_mdp(dim=1)
