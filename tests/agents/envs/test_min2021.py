"""The Min et al. 2021 linear MDP."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.planning import optimal_values
from dpverify.agents.envs.min2021 import action_codes, default_alphas, min2021_mdp, optimal_gap_recursion
from dpverify.errors import InvalidParameterError


def test_feature_norms_raw_and_rescaled() -> None:
    raw = min2021_mdp(rescaled=False)
    scaled = min2021_mdp()
    np.testing.assert_allclose(np.linalg.norm(raw.features, axis=-1), 3.0)
    np.testing.assert_allclose(np.linalg.norm(scaled.features, axis=-1), 1.0)
    assert (raw.feature_norm_bound, scaled.feature_norm_bound) == (3.0, 1.0)
    np.testing.assert_array_equal(raw.transitions, scaled.transitions)
    np.testing.assert_allclose(raw.rewards, scaled.rewards, atol=1e-15)
    assert scaled.dim == 10 and scaled.num_actions == 100 and scaled.horizon == 20


def test_action_codes_are_binary_codes() -> None:
    codes = action_codes(100)
    assert codes.shape == (100, 8) and set(np.unique(codes)) == {-1.0, 1.0}
    assert len({tuple(c) for c in codes}) == 100
    np.testing.assert_array_equal(codes[5], [1, -1, 1, -1, -1, -1, -1, -1])


def test_transitions_and_rewards_as_defined() -> None:
    alphas = (0, 1, 1, 0)
    mdp = min2021_mdp(horizon=4, num_actions=6, alphas=alphas, reward=0.9)
    for h, alpha in enumerate(alphas):
        assert mdp.transitions[h, 0, 0, alpha] == 1.0
        for s in range(2):
            for a in range(6):
                if (s, a) != (0, 0):
                    assert mdp.transitions[h, s, a, 1 - alpha] == 1.0
                    assert mdp.rewards[h, s, a] == pytest.approx(0.1)
        assert mdp.rewards[h, 0, 0] == pytest.approx(0.9)


@pytest.mark.parametrize("reward", [0.99, 0.7, 0.5, 0.3])
@pytest.mark.parametrize("seed", [0, 1, 2021])
def test_optimal_gap_recursion_matches_backward_induction(reward: float, seed: int) -> None:
    alphas = default_alphas(12, seed)
    mdp = min2021_mdp(horizon=12, num_actions=4, reward=reward, alphas=alphas)
    solution = optimal_values(mdp)
    np.testing.assert_allclose(solution.values[:12, 0] - solution.values[:12, 1],
                               optimal_gap_recursion(alphas, reward), atol=1e-12)
    # in state 1 every action is optimal (ties); in state 0 action 0 is optimal iff D-recursion says so
    assert np.all(solution.optimal_actions[:, 1, :])


def test_default_initial_distribution_and_alphas() -> None:
    mdp = min2021_mdp()
    np.testing.assert_array_equal(mdp.initial_distribution, [0.5, 0.5])
    assert default_alphas(20) == default_alphas(20, 2021)
    assert set(default_alphas(20)) == {0, 1}


@pytest.mark.parametrize(
    "kwargs, parameter",
    [
        ({"num_actions": 300}, "num_actions"),
        ({"reward": 1.5}, "reward"),
        ({"horizon": 3, "alphas": (0, 1)}, "alphas"),
        ({"horizon": 2, "alphas": (0, 2)}, "alphas"),
        ({"initial_distribution": (0.2, 0.2)}, "initial_distribution"),
        ({"horizon": 0}, "horizon"),
    ],
)
def test_invalid_parameters(kwargs: dict, parameter: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        min2021_mdp(**kwargs)
    assert info.value.parameter == parameter
