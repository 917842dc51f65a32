"""JDP-LinUCB (Shariff & Sheffet 2018): its schedule, its ledger, its releases and the private-agent contract."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.agents.bandits.jdp_linucb import JdpLinUcb, JdpLinUcbConfig, jdp_linucb_schedule
from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.envs.bandit_instances import linear_bandit
from dpverify.calibration import calibrate
from dpverify.errors import InvalidParameterError
from dpverify.testing import check_private_agent


def test_schedule_one_augmented_gram_node_per_round() -> None:
    schedule = jdp_linucb_schedule(1000, 5)
    (spec,) = schedule.statistics
    assert (spec.family, spec.kind, spec.dim, spec.users.kind) == ("gram", "symmetric-matrix", 6, "tree")
    assert spec.sensitivity == pytest.approx(math.sqrt(2) * 2)  # ‖z zᵀ − z′z′ᵀ‖_F ≤ √2(F² + 1)
    assert jdp_linucb_schedule(1000, 5, "add-remove-one").statistics[0].sensitivity == pytest.approx(2.0)
    calibration = calibrate(schedule, 1.0, 1e-5)
    assert calibration.releases_counted == 10 and calibration.total_releases == 1000  # ⌊log₂K⌋ + 1 per user


def test_the_ledger_accounts_to_the_claim_and_every_release_is_a_tree_node() -> None:
    bandit = linear_bandit(dim=3, num_arms=4, num_contexts=3, seed=0)
    K = 50
    board = Billboard("replace-one", keep_history=True, keep_noise=True)
    agent = JdpLinUcb(bandit, JdpLinUcbConfig(K, epsilon=1.0), np.random.default_rng(0), board)
    run_episodes(bandit, agent, K, np.random.default_rng(1))
    claim = agent.claimed_guarantee()
    assert agent.ledger.guarantee(1e-5, "exact").epsilon == pytest.approx(claim.epsilon, rel=1e-9)
    history = board.history()
    assert [r.episode for r in history] == list(range(1, K + 1))
    assert {(r.family, r.stage, r.users) for r in history} == {("gram", 1, "tree")}
    assert all(np.array_equal(r.value, r.value.T) for r in history)
    settings = agent.settings()
    assert settings["gram_shift"] > 0 and settings["tree_levels"] == 6 and settings["psd_corrections"] >= 0


def test_features_beyond_the_bound_are_refused() -> None:
    bandit = linear_bandit(dim=3, num_arms=2, num_contexts=2, seed=0)
    with pytest.raises(InvalidParameterError) as info:
        JdpLinUcb(bandit, JdpLinUcbConfig(5, epsilon=1.0, feature_norm_bound=0.5), np.random.default_rng(0))
    assert info.value.parameter == "feature_norm_bound"


def test_the_contract_holds() -> None:
    bandit = linear_bandit(dim=3, num_arms=3, num_contexts=3, seed=0)
    for relation in ("replace-one", "add-remove-one"):
        result = check_private_agent(JdpLinUcb.from_options, bandit, num_episodes=12,
                                     options={"epsilon": 1.0, "relation": relation}, whitebox=False)
        assert result.passed, result.summary()


@pytest.mark.slow
def test_the_contract_holds_with_its_white_box_checks() -> None:
    bandit = linear_bandit(dim=3, num_arms=3, num_contexts=3, seed=0)
    for relation in ("replace-one", "add-remove-one"):
        result = check_private_agent(JdpLinUcb.from_options, bandit, num_episodes=24,
                                     options={"epsilon": 1.0, "relation": relation})
        assert result.passed, result.summary()
