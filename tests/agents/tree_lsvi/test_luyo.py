"""Luyo et al. 2021 agent (dpverify.agents.tree_lsvi.luyo): accounting = claim, tree nodes, learning, settings.

Fresh noise, the billboard structure, refusal of oversized features and of episodes past the cap are
the private-agent contract's (tests/dpverify/testing/test_registered_agents_contract.py).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from private_agent_runs import assert_learns, assert_only_later_q_tables_move, drive, make_agent, record_live_run

from dpverify.agents.core.base import rollout, run_episodes
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.core.private import check_term_norms
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.registry import AGENTS
from dpverify.agents.tree_lsvi.luyo import LuyoAgent, LuyoConfig, luyo_schedule
from dpverify.agents.tree_lsvi.tree_lsvi import BinaryTreeSum
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism


def small_mdp():
    return min2021_mdp(horizon=4, num_actions=6)


make = functools.partial(make_agent, LuyoAgent, LuyoConfig)


def test_ledger_accounts_to_the_claim_after_a_run() -> None:
    mdp = small_mdp()
    K = 37
    agent = make(mdp, K, 0, epsilon=2.0, delta=1e-6)
    run_episodes(mdp, agent, K, np.random.default_rng(1))
    claim = agent.claimed_guarantee()
    accounted = agent.ledger.guarantee(1e-6, "exact")
    assert accounted.epsilon == pytest.approx(claim.epsilon, rel=1e-12)
    assert claim.epsilon <= 2.0 and claim.epsilon == pytest.approx(2.0, rel=1e-9)
    # every user lies in at most ⌊log2 K⌋ + 1 nodes per stage and family: 3H(⌊log2 K⌋ + 1) releases at ρ0
    rho0 = agent.calibration.rho0
    levels = math.floor(math.log2(K)) + 1
    assert agent.ledger.worst_user_rho() == pytest.approx(3 * mdp.horizon * levels * rho0, rel=1e-9)
    assert agent.ledger.n_releases == 3 * mdp.horizon * K
    assert {b.users.kind for b in agent.ledger.blocks} == {"tree"}


def test_tree_prefix_is_the_sum_of_released_nodes() -> None:
    billboard = Billboard("replace-one", keep_history=True, keep_noise=True)
    mechanism = GaussianMechanism(1.0, 0.5, 2)
    tree = BinaryTreeSum(billboard, "x", mechanism, 1, (2,), 16, np.random.default_rng(0))
    terms = np.random.default_rng(1).normal(size=(11, 1, 2))
    for k in range(11):
        tree.add(terms[k])
    # k = 11 = 8 + 2 + 1: nodes (0, 8], (8, 10], (10, 11] released at episodes 8, 10, 11
    released = {r.episode: r for r in billboard.history()}
    expected = sum(released[e].value for e in (8, 10, 11))
    np.testing.assert_allclose(tree.prefix[0], expected)
    np.testing.assert_allclose(tree.prefix[0] - sum(released[e].noise for e in (8, 10, 11)), terms.sum(axis=0)[0])


def test_a_users_data_reaches_later_q_tables_on_a_live_billboard() -> None:
    # Control for the contract's billboard_structure property (replaying the billboard with a user's data
    # replaced leaves the other users' policies unchanged): on a live billboard the replacement does move
    # the later users' Q tables, so that property is not vacuous for this agent.
    mdp = small_mdp()
    K, changed_user = 24, 5
    env_rng = np.random.default_rng(7)
    trajectories, base_q = record_live_run(make(mdp, K, 4, epsilon=50.0, batch_length=3), mdp, K, env_rng)
    other = rollout(mdp, np.zeros((mdp.horizon, mdp.num_states), dtype=np.int64), np.random.default_rng(99))
    assert not np.array_equal(other.actions, trajectories[changed_user - 1].actions) or not np.array_equal(
        other.states, trajectories[changed_user - 1].states)
    modified = list(trajectories)
    modified[changed_user - 1] = other
    _, live_q = drive(make(mdp, K, 4, epsilon=50.0, batch_length=3), modified)
    assert_only_later_q_tables_move(live_q, base_q, changed_user)


@pytest.mark.parametrize("seed", range(4))
def test_learns_at_generous_epsilon(seed: int) -> None:
    mdp = min2021_mdp(horizon=5, num_actions=10)
    K = 400
    agent, regret = assert_learns(mdp, LuyoAgent, LuyoConfig(K, epsilon=1000.0), seed)
    assert agent.policy_updates == math.ceil(K / agent.batch_length)
    assert np.all(regret >= -1e-12)


def test_features_of_norm_3_accepted_when_calibrated_to_the_real_norm() -> None:
    # (refusal above the assumed norm is the contract's refuses_oversized_features property)
    raw = min2021_mdp(horizon=3, num_actions=4, rescaled=False)  # ‖φ‖ = 3
    agent = make(raw, 10, 0, feature_norm_bound=3.0)
    assert agent.calibration.mechanism("gram").frobenius_sensitivity == pytest.approx(math.sqrt(2) * 9)
    with pytest.raises(InvalidParameterError, match="features"):
        check_term_norms(np.array([0.5, 1.5]), 1.0, "features")


def test_settings_schedule_and_registration() -> None:
    mdp = small_mdp()
    agent = make(mdp, 100, 0, epsilon=3.0, beta_multiplier=0.02, privacy_beta_multiplier=0.5)
    settings = agent.settings()
    assert settings["agent"] == "luyo" and settings["epsilon"] == 3.0
    assert settings["batch_length_used"] == math.ceil(100 ** 0.4)
    assert settings["beta"] == pytest.approx(0.02 * settings["theory_beta"] + 0.5 * settings["privacy_beta"])
    assert settings["sensitivity"] == pytest.approx({"gram": math.sqrt(2), "next_state": 2.0, "reward": 2.0})
    add_remove = luyo_schedule(4, 100, 10, 2, "add-remove-one")
    assert [s.sensitivity for s in add_remove.statistics] == pytest.approx([1.0, 1.0, 1.0])
    with pytest.raises(InvalidParameterError, match="batch_length"):
        LuyoConfig(10, epsilon=1.0, batch_length=0)
    with pytest.raises(TypeError):
        LuyoConfig(10)  # no default privacy budget
    assert AGENTS["luyo"].env_kind == "linear"
