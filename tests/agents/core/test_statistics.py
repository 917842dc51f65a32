"""Sufficient statistics (dpverify.agents.core.statistics) against a direct replay over all data."""

from __future__ import annotations

import numpy as np

from dpverify.agents.core.base import rollout
from dpverify.agents.core.statistics import RidgeStatistics, ValueTargetStatistics
from dpverify.agents.envs.random_mdps import random_linear_mdp


def test_ridge_statistics_equal_replay() -> None:
    rng = np.random.default_rng(0)
    mdp = random_linear_mdp(rng, num_states=4, num_actions=3, dim=3, horizon=3, stage_independent_features=False)
    lam = 0.7
    stats = RidgeStatistics(mdp.features, mdp.rewards, lam)
    episodes, weights = [], []
    for _ in range(60):
        trajectory = rollout(mdp, rng.integers(0, 3, size=(3, 4)), rng)
        w = rng.random(3) + 0.1
        stats.add_episode(trajectory.states, trajectory.actions, w)
        episodes.append(trajectory)
        weights.append(w)
    values = rng.random(4) * 3
    for h in range(3):
        phis = np.array([mdp.features[h, t.states[h], t.actions[h]] for t in episodes])
        w = np.array([ws[h] for ws in weights])
        gram = lam * np.eye(3) + (w[:, None] * phis).T @ phis
        np.testing.assert_allclose(stats.gram_matrix(h), gram, rtol=1e-10)
        np.testing.assert_allclose(stats.gram_inverse(h), np.linalg.inv(gram), rtol=1e-8, atol=1e-10)
        assert stats.log_determinant(h) == np.linalg.slogdet(gram)[1] or np.isclose(
            stats.log_determinant(h), np.linalg.slogdet(gram)[1], rtol=1e-9)
        targets = np.array([values[t.states[h + 1]] for t in episodes])
        rewards = np.array([mdp.rewards[h, t.states[h], t.actions[h]] for t in episodes])
        np.testing.assert_allclose(stats.weighted_sum(h, values), (w * targets) @ phis, rtol=1e-10)
        np.testing.assert_allclose(stats.weighted_sum(h, values, include_rewards=True),
                                   (w * (targets + rewards)) @ phis, rtol=1e-10)
        direct = np.einsum("sad,de,sae->sa", mdp.features[h], np.linalg.inv(gram), mdp.features[h])
        np.testing.assert_allclose(stats.bonus_squared(h), direct, rtol=1e-7, atol=1e-10)


def test_value_target_statistics_equal_replay() -> None:
    rng = np.random.default_rng(1)
    stats = ValueTargetStatistics(horizon=2, dim=3, regularization=2.0)
    xs, ys = rng.normal(size=(50, 2, 3)), rng.random((50, 2))
    for x, y in zip(xs, ys, strict=True):
        stats.add_episode(x, y)
    for h in range(2):
        gram = 2.0 * np.eye(3) + xs[:, h].T @ xs[:, h]
        np.testing.assert_allclose(stats.gram_inverse(h), np.linalg.inv(gram), rtol=1e-8)
        np.testing.assert_allclose(stats.target_sum(h), ys[:, h] @ xs[:, h], rtol=1e-10)


def test_statistics_do_not_grow_with_episodes() -> None:
    # per-episode cost independent of k: every array keeps its shape however many episodes are added
    rng = np.random.default_rng(2)
    mdp = random_linear_mdp(rng, num_states=3, num_actions=2, dim=2, horizon=2)
    stats = RidgeStatistics(mdp.features, mdp.rewards, 1.0)
    shapes = {name: np.shape(value) for name, value in vars(stats).items() if isinstance(value, np.ndarray)}
    for _ in range(100):
        trajectory = rollout(mdp, rng.integers(0, 2, size=(2, 3)), rng)
        stats.add_episode(trajectory.states, trajectory.actions)
    assert {name: np.shape(value) for name, value in vars(stats).items() if isinstance(value, np.ndarray)} == shapes
    assert stats.count == 100
