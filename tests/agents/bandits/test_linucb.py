"""LinUCB: the scores, the radius, and that the rule learns."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.agents.bandits.linucb import LinUcb, LinUcbConfig, confidence_radius, ucb_scores
from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.learning import uniform_policy_regret
from dpverify.agents.envs.bandit_instances import linear_bandit
from dpverify.errors import InvalidParameterError


def test_scores_are_theta_hat_times_x_plus_beta_times_the_elliptical_norm() -> None:
    rng = np.random.default_rng(0)
    features = rng.normal(size=(3, 4, 5))
    a = rng.normal(size=(2, 5, 5))
    gram = a @ np.swapaxes(a, -1, -2) + np.eye(5)
    target = rng.normal(size=(2, 5))
    scores, corrections = ucb_scores(features, gram, target, 0.5, 0.7)
    assert corrections == 0 and scores.shape == (2, 3, 4)
    for i in range(2):
        inverse = np.linalg.inv(gram[i])
        expected = features @ (inverse @ target[i]) + 0.7 * np.sqrt(np.einsum("cad,de,cae->ca", features, inverse,
                                                                               features))
        assert np.allclose(scores[i], expected, rtol=1e-10)


def test_the_radius_is_abbasi_yadkori_et_al_theorem_2() -> None:
    d, t, L, lam, S, p = 4, 100, 1.0, 2.0, 3.0, 0.05
    expected = 0.5 * math.sqrt(2 * math.log(1 / p) + d * math.log(1 + t * L**2 / (d * lam))) + S * math.sqrt(lam)
    assert confidence_radius(t, d, L, lam, lam, S, p) == pytest.approx(expected)
    assert confidence_radius(t, d, L, lam, 3 * lam, S, p) > expected  # the shifted regulariser widens it


def test_linucb_learns() -> None:
    bandit = linear_bandit(dim=3, num_arms=5, num_contexts=4, seed=1)
    K = 600
    agent = LinUcb(bandit, LinUcbConfig(K), np.random.default_rng(0))
    regret, _ = run_episodes(bandit, agent, K, np.random.default_rng(1))
    assert regret[-100:].mean() < 0.25 * uniform_policy_regret(bandit)
    assert agent.settings()["beta"] > 0


def test_config_validation() -> None:
    with pytest.raises(InvalidParameterError) as info:
        LinUcbConfig(10, regularization=0.0)
    assert info.value.parameter == "regularization"
