"""DP-UCB (Mishra & Thakurta 2015): Laplace tree counters, the (ε, δ) claim through a conversion for Laplace
releases, public pull counts, and the private-agent contract."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.accounting import pure_epsilon
from dpverify.agent_audit import AgentAuditSpec, agent_setup, probe_agent
from dpverify.agents.bandits.dp_ucb import DpUcb, DpUcbConfig, dp_ucb_schedule
from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.envs.bandit_instances import armed_bandit
from dpverify.calibration import calibrate
from dpverify.claims import PrivacyClaim
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import LaplaceMechanism
from dpverify.testing import check_private_agent


def test_schedule_one_reward_vector_node_per_round() -> None:
    (spec,) = dp_ucb_schedule(1000, 6).statistics
    assert (spec.family, spec.kind, spec.dim, spec.sensitivity, spec.users.kind) == ("rewards", "l1-vector", 6, 1.0,
                                                                                    "tree")


def test_the_claim_is_pure_epsilon_by_basic_composition_of_the_tree_nodes() -> None:
    """The papers' claim: ε0 = ε/(⌊log₂K⌋ + 1) per node, b = 1/ε0 — at K = 100, 7 levels, b = 7."""
    bandit = armed_bandit(num_arms=3, seed=0)
    agent = DpUcb(bandit, DpUcbConfig(100, epsilon=1.0), np.random.default_rng(0))
    claim = agent.claimed_guarantee()
    assert isinstance(claim, PrivacyClaim) and claim.measure == "pure" and 1.0 - 1e-9 <= claim.value <= 1.0
    mechanism = agent.calibration.mechanism("rewards")
    assert isinstance(mechanism, LaplaceMechanism) and mechanism.scale == pytest.approx(7.0, rel=1e-12)
    assert mechanism.scale >= 7.0  # rounded on the safe side
    # the weaker (ε, δ) claim through a zCDP conversion needs more noise
    weaker = DpUcb(bandit, DpUcbConfig(100, epsilon=1.0, conversion="cks"), np.random.default_rng(0))
    assert weaker.claimed_guarantee().conversion == "cks"
    assert weaker.calibration.mechanism("rewards").scale > mechanism.scale
    with pytest.raises(InvalidParameterError, match="Gaussian") as info:  # no exact route for Laplace noise
        DpUcb(bandit, DpUcbConfig(100, epsilon=1.0, conversion="exact"), np.random.default_rng(0))
    assert info.value.parameter == "conversion"
    spec = AgentAuditSpec("dp-ucb", "bernoulli-bandit", 8, "billboard", 1.0, 1e-5, trials=10)
    probed = probe_agent(spec, agent_setup(spec))[0]
    assert not probed.gaussian and (probed.epsilon, probed.delta) == (pytest.approx(1.0), 1e-5)  # at the audit δ


def test_the_pure_calibration_refuses_gaussian_statistics() -> None:
    from dpverify.agents.bandits.jdp_linucb import jdp_linucb_schedule

    with pytest.raises(InvalidParameterError, match="Laplace") as info:
        calibrate(jdp_linucb_schedule(100, 4), 1.0, 1e-5, "pure")
    assert info.value.parameter == "conversion"


def test_pull_counts_follow_the_deployed_arms_even_in_an_empty_slot() -> None:
    bandit = armed_bandit(num_arms=3, seed=0)
    board = Billboard("add-remove-one", keep_history=True)
    agent = DpUcb(bandit, DpUcbConfig(6, epsilon=1.0, relation="add-remove-one"), np.random.default_rng(0), board)
    run_episodes(bandit, agent, 6, np.random.default_rng(1), users=False)
    assert agent.rule.pulls.sum() == 6 and len(board.history()) == 6
    assert pure_epsilon(agent.ledger)[0] == pytest.approx(agent.claimed_guarantee().value)  # 3 nodes at K = 6


def test_the_contract_holds() -> None:
    bandit = armed_bandit(num_arms=3, seed=0)
    for relation in ("replace-one", "add-remove-one"):
        result = check_private_agent(DpUcb.from_options, bandit, num_episodes=12,
                                     options={"epsilon": 1.0, "relation": relation}, whitebox=False)
        assert result.passed, result.summary()


@pytest.mark.slow
def test_the_contract_holds_with_its_white_box_checks() -> None:
    bandit = armed_bandit(num_arms=3, seed=0)
    for relation in ("replace-one", "add-remove-one"):
        result = check_private_agent(DpUcb.from_options, bandit, num_episodes=24,
                                     options={"epsilon": 1.0, "relation": relation})
        assert result.passed, result.summary()


def test_calibrate_offers_the_conversions_that_apply_to_laplace_noise() -> None:
    from dpverify.agents.bandits.dp_ucb import NAMED_SCHEDULE
    from dpverify.calibration_report import calibration_report, validate_settings

    report = calibration_report(validate_settings(1.0, 1e-5, 1, 1000, 10, NAMED_SCHEDULE, conversion="cks"))
    assert set(report.by_conversion) == {"bun-steinke", "cks", "pure"}
    assert report.headline.statistics[0].mechanism.kind == "laplace"
    assert report.headline.accounted_epsilon <= 1.0
