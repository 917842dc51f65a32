"""Validation and sampling of dpverify.agents.envs.linear_mdp (FiniteMDP, LinearMDP, LinearMixtureMDP)."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.envs.linear_mdp import FiniteMDP, LinearMDP, LinearMixtureMDP, mixture_feature_norm
from dpverify.agents.envs.random_mdps import random_linear_mdp, random_linear_mixture_mdp
from dpverify.errors import InvalidParameterError


def tiny_tabular() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    transitions = np.zeros((2, 2, 2, 2))
    transitions[..., 0] = 0.25
    transitions[..., 1] = 0.75
    rewards = np.full((2, 2, 2), 0.5)
    return transitions, rewards, np.array([0.5, 0.5])


def test_finite_mdp_accepts_valid_and_freezes_arrays() -> None:
    mdp = FiniteMDP(*tiny_tabular())
    assert (mdp.horizon, mdp.num_states, mdp.num_actions) == (2, 2, 2)
    with pytest.raises(ValueError):
        mdp.transitions[0, 0, 0, 0] = 1.0
    source = tiny_tabular()
    mdp = FiniteMDP(*source)
    source[0][0, 0, 0, 0] = 99.0  # the instance holds a copy
    assert mdp.transitions[0, 0, 0, 0] == 0.25


@pytest.mark.parametrize(
    "mutate, parameter, words",
    [
        (lambda t, r, i: t.__setitem__((0, 1, 0, 0), -0.25) or t.__setitem__((0, 1, 0, 1), 1.25),
         "transitions", "non-negative"),
        (lambda t, r, i: t.__setitem__((1, 0, 1, 0), 0.3), "transitions", "sum to 1"),
        (lambda t, r, i: t.__setitem__((1, 0, 1, 0), 0.25 + 1e-11), "transitions", "sum to 1"),
        (lambda t, r, i: r.__setitem__((0, 0, 0), 1.5), "rewards", "[0, 1]"),
        (lambda t, r, i: r.__setitem__((0, 0, 0), -0.1), "rewards", "[0, 1]"),
        (lambda t, r, i: i.__setitem__(0, 0.7), "initial_distribution", "sum to 1"),
        (lambda t, r, i: t.__setitem__((0, 0, 0, 0), np.nan), "transitions", "finite"),
    ],
)
def test_finite_mdp_rejects_invalid(mutate, parameter: str, words: str) -> None:
    transitions, rewards, initial = tiny_tabular()
    mutate(transitions, rewards, initial)
    with pytest.raises(InvalidParameterError) as info:
        FiniteMDP(transitions, rewards, initial)
    assert info.value.parameter == parameter
    assert words in str(info.value)


def test_finite_mdp_accepts_rounding_within_tolerance() -> None:
    transitions, rewards, initial = tiny_tabular()
    transitions[0, 0, 0, 0] += 5e-13
    FiniteMDP(transitions, rewards, initial)


def test_finite_mdp_rejects_bad_shapes() -> None:
    transitions, rewards, initial = tiny_tabular()
    with pytest.raises(InvalidParameterError, match="rewards must have shape"):
        FiniteMDP(transitions, rewards[:1], initial)
    with pytest.raises(InvalidParameterError, match="transitions must have 4 dimensions"):
        FiniteMDP(transitions[0], rewards, initial)
    with pytest.raises(InvalidParameterError, match="initial_distribution must have shape"):
        FiniteMDP(transitions, rewards, np.ones(3) / 3)


def linear_parts() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    features = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5], [0.0, 1.0]]])  # (S=2, A=2, d=2)
    mu = np.array([[[1.0, 0.0], [0.0, 1.0]]] * 3)  # (H=3, d, S): coordinate i leads to state i
    theta = np.array([[1.0, 0.0]] * 3)
    return features, mu, theta, np.array([1.0, 0.0])


def test_linear_mdp_derives_transitions_and_rewards() -> None:
    features, mu, theta, initial = linear_parts()
    mdp = LinearMDP(features, mu, theta, initial)
    assert mdp.features.shape == (3, 2, 2, 2) and mdp.dim == 2 and mdp.stage_independent_features
    np.testing.assert_allclose(mdp.transitions[0, 1, 0], [0.5, 0.5])
    np.testing.assert_allclose(mdp.rewards[2, 1, 0], 0.5)
    assert mdp.feature_norm_bound == 1.0


def test_linear_mdp_checks_declared_feature_norm() -> None:
    features, mu, theta, initial = linear_parts()
    with pytest.raises(InvalidParameterError) as info:
        LinearMDP(features * 2, mu / 2, theta / 2, initial, feature_norm_bound=1.0)
    assert info.value.parameter == "features" and "feature_norm_bound" in str(info.value)
    LinearMDP(features * 2, mu / 2, theta / 2, initial, feature_norm_bound=2.0)


def test_linear_mdp_rejects_invalid_kernel_and_rewards() -> None:
    features, mu, theta, initial = linear_parts()
    bad_mu = mu.copy()
    bad_mu[1, 0] = [0.5, 0.2]
    with pytest.raises(InvalidParameterError, match="transitions must sum to 1"):
        LinearMDP(features, bad_mu, theta, initial)
    with pytest.raises(InvalidParameterError, match="rewards must lie in"):
        LinearMDP(features, mu, theta * 2, initial)
    with pytest.raises(InvalidParameterError, match="features must have shape"):
        LinearMDP(features[:, :, :1], mu, theta, initial)
    with pytest.raises(InvalidParameterError, match="feature_norm_bound must be > 0"):
        LinearMDP(features, mu, theta, initial, feature_norm_bound=0.0)


def test_mixture_norm_exact_matches_enumeration_and_bound_is_checked() -> None:
    mixture = random_linear_mixture_mdp(np.random.default_rng(3), num_states=4, num_actions=2, dim=3, horizon=2)
    assert mixture.feature_norm_bound <= 1.0 + 1e-12
    rng = np.random.default_rng(0)
    for _ in range(200):  # no V in [0,1]^S exceeds the computed supremum
        values = rng.random(4)
        for h in range(2):
            norms = np.linalg.norm(mixture.value_features(h, values), axis=-1)
            assert norms.max() <= mixture.feature_norm_bound + 1e-12
    with pytest.raises(InvalidParameterError) as info:
        LinearMixtureMDP(mixture.basis, mixture.theta, mixture.rewards, mixture.initial_distribution,
                         feature_norm_bound=0.5 * mixture.feature_norm_bound)
    assert info.value.parameter == "basis"


def test_mixture_norm_coordinate_bound_is_an_upper_bound() -> None:
    rng = np.random.default_rng(1)
    basis = rng.normal(size=(1, 13, 2, 13, 3))
    bound = mixture_feature_norm(basis)  # S = 13: coordinatewise bound
    for _ in range(100):
        values = rng.integers(0, 2, size=13).astype(float)
        assert np.linalg.norm(np.einsum("hsatd,t->hsad", basis, values), axis=-1).max() <= bound + 1e-12


def test_step_samples_the_kernel() -> None:
    mdp = random_linear_mdp(np.random.default_rng(5), num_states=3, num_actions=2, dim=3, horizon=2, concentration=1.0)
    rng = np.random.default_rng(11)
    n = 40_000
    counts = np.bincount([mdp.step(1, 2, 1, rng)[1] for _ in range(n)], minlength=3)
    expected = mdp.transitions[1, 2, 1] * n
    # binomial standard deviation <= sqrt(n)/2 = 100: 5 sigma margin
    assert np.all(np.abs(counts - expected) < 500)
    reward, _ = mdp.step(1, 2, 1, rng)
    assert reward == mdp.rewards[1, 2, 1]


def test_sampling_never_returns_zero_probability_states() -> None:
    transitions, rewards, initial = tiny_tabular()
    transitions[0, 0, 0] = [1.0 - 1e-13, 0.0]  # sums to 1 within tolerance; state 1 impossible
    transitions[0, 0, 0, 1] = 0.0
    mdp = FiniteMDP(transitions, rewards, initial)
    assert mdp.sample_next_state(0, 0, 0, 1.0 - 1e-16) == 0
    assert mdp.sample_next_state(0, 0, 0, 0.0) == 0
