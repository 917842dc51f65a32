"""Bandit instances: finite-armed and linear, seed-fixed, Bernoulli and bounded Gaussian rewards."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.envs.bandit import AuditBandit
from dpverify.agents.envs.bandit_instances import armed_bandit, discretised_gaussian, linear_bandit
from dpverify.agents.registry import build_environment
from dpverify.errors import InvalidParameterError


def test_armed_bandit_is_one_context_with_one_hot_arms() -> None:
    bandit = armed_bandit(num_arms=6, seed=4)
    assert (bandit.num_contexts, bandit.num_arms, bandit.dim) == (1, 6, 6)
    assert np.array_equal(bandit.features[0], np.eye(6)) and np.array_equal(bandit.theta, bandit.means[0])
    assert np.all((bandit.means >= 0.1) & (bandit.means <= 0.9))
    assert np.array_equal(armed_bandit(num_arms=6, seed=4).means, bandit.means)
    assert not np.array_equal(armed_bandit(num_arms=6, seed=5).means, bandit.means)


def test_hard_and_audit_instances() -> None:
    hard = armed_bandit(num_arms=5, instance="hard", gap=0.05, seed=1).means[0]
    assert sorted(hard.tolist()) == [0.5] * 4 + [0.55]
    assert isinstance(armed_bandit(num_arms=3, instance="audit"), AuditBandit)
    assert isinstance(linear_bandit(dim=3, instance="audit"), AuditBandit)
    with pytest.raises(InvalidParameterError) as info:
        armed_bandit(instance="easy")
    assert info.value.parameter == "instance"


def test_gaussian_rewards_are_bounded_and_keep_the_mean() -> None:
    levels = np.linspace(0.0, 1.0, 11)
    for mean in (0.0, 0.03, 0.5, 0.87, 1.0):
        law = discretised_gaussian(mean, 0.2, levels)
        assert law.sum() == pytest.approx(1.0) and law @ levels == pytest.approx(mean, abs=1e-12)
    bandit = linear_bandit(dim=3, num_arms=4, num_contexts=3, seed=2, rewards="gaussian", noise_std=0.1)
    assert bandit.num_levels == 11 and np.allclose(bandit.means, bandit.features @ bandit.theta, atol=1e-12)
    armed = armed_bandit(num_arms=3, means=[0.1, 0.5, 0.9], rewards="gaussian")
    assert np.allclose(armed.means, [[0.1, 0.5, 0.9]], atol=1e-12)


def test_linear_bandit_has_unit_features_and_means_in_the_unit_interval() -> None:
    bandit = linear_bandit(dim=5, num_arms=7, num_contexts=9, seed=3)
    assert np.allclose(np.linalg.norm(bandit.features, axis=-1), 1.0)
    assert np.all((bandit.means >= 0) & (bandit.means <= 1)) and bandit.feature_norm_bound == 1.0
    assert np.array_equal(linear_bandit(dim=5, num_arms=7, num_contexts=9, seed=3).features, bandit.features)


@pytest.mark.parametrize(("options", "parameter"), [
    ({"num_arms": 1}, "num_arms"), ({"means": [0.5, 2.0]}, "means"), ({"rewards": "poisson"}, "rewards"),
    ({"gap": 0.7, "instance": "hard"}, "gap"), ({"noise_std": 0.0, "rewards": "gaussian"}, "noise_std")])
def test_bad_options_name_the_parameter(options: dict, parameter: str) -> None:
    options.setdefault("num_arms", 2)
    with pytest.raises(InvalidParameterError) as info:
        armed_bandit(**options)
    assert info.value.parameter == parameter


def test_registered_names() -> None:
    assert build_environment("bernoulli-bandit", 10, {"num_arms": 3}).num_arms == 3
    assert build_environment("linear-bandit", 10, {"dim": 3, "num_contexts": 2}).num_contexts == 2
    with pytest.raises(InvalidParameterError, match="--env-option is not accepted by linear-bandit"):
        build_environment("linear-bandit", 10, {"horizon": 2})
    with pytest.raises(InvalidParameterError) as info:
        linear_bandit(dim=1)
    assert info.value.parameter == "dim"
