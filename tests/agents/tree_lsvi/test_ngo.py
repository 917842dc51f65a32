"""Ngo et al. 2022 agent (dpverify.agents.tree_lsvi.ngo): accounting = claim, rare updates, learning, settings.

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
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.registry import AGENTS
from dpverify.agents.tree_lsvi.ngo import NgoAgent, NgoConfig, ngo_schedule
from dpverify.calibration import calibrate
from dpverify.errors import InvalidParameterError


def small_mdp():
    return min2021_mdp(horizon=4, num_actions=6)


make = functools.partial(make_agent, NgoAgent, NgoConfig)


def test_ledger_accounts_to_the_claim_when_the_update_budget_is_used() -> None:
    mdp = small_mdp()
    K = 60
    agent = make(mdp, K, 0, epsilon=100.0, delta=1e-6, max_updates=2)
    run_episodes(mdp, agent, K, np.random.default_rng(1))
    assert agent.policy_updates == 2 and agent.update_budget_exhausted
    claim = agent.claimed_guarantee()
    assert agent.ledger.guarantee(1e-6, "exact").epsilon == pytest.approx(claim.epsilon, rel=1e-12)
    assert claim.epsilon == pytest.approx(100.0, rel=1e-9) and claim.epsilon <= 100.0
    kinds = {(b.family, b.users.kind) for b in agent.ledger.blocks}
    assert kinds == {("gram", "tree"), ("target", "prefix")}
    targets = sum(b.n_releases for b in agent.ledger.blocks if b.family == "target")
    assert targets == 2 * mdp.horizon


def test_fewer_updates_account_to_less_than_the_claim() -> None:
    mdp = small_mdp()
    K = 50
    agent = make(mdp, K, 3, epsilon=2.0)
    run_episodes(mdp, agent, K, np.random.default_rng(4))
    assert 0 <= agent.policy_updates < agent.max_updates
    H, levels, rho0 = mdp.horizon, math.floor(math.log2(K)) + 1, agent.calibration.rho0
    expected = H * levels * rho0 + H * agent.policy_updates * rho0
    assert agent.ledger.worst_user_rho() == pytest.approx(expected, rel=1e-9)
    assert agent.ledger.guarantee(1e-5).epsilon <= agent.claimed_guarantee().epsilon


def test_a_users_data_reaches_later_q_tables_on_a_live_billboard() -> None:
    # Control for the contract's billboard_structure property (replaying the billboard with a user's data
    # replaced leaves the other users' policies unchanged): on a live billboard the replacement does move
    # the Q tables after the next update, so that property is not vacuous for this agent.
    mdp = small_mdp()
    K, changed_user = 40, 4
    env_rng = np.random.default_rng(8)
    agent = make(mdp, K, 5, epsilon=500.0)
    trajectories, base_q = record_live_run(agent, mdp, K, env_rng)
    assert agent.policy_updates >= 1 and agent.update_episodes[-1] > changed_user
    modified = list(trajectories)
    modified[changed_user - 1] = rollout(mdp, np.full((mdp.horizon, mdp.num_states), 3, dtype=np.int64),
                                         np.random.default_rng(99))
    _, live_q = drive(make(mdp, K, 5, epsilon=500.0), modified)
    assert_only_later_q_tables_move(live_q, base_q, changed_user)


@pytest.mark.parametrize("seed", range(4))
def test_learns_at_generous_epsilon_with_few_updates(seed: int) -> None:
    mdp = min2021_mdp(horizon=5, num_actions=10)
    K = 400
    agent, _ = assert_learns(mdp, NgoAgent, NgoConfig(K, epsilon=1000.0), seed)
    # rare switching: a handful of data-dependent updates, far below K, within the budget
    assert 2 <= agent.policy_updates <= min(agent.max_updates, K // 20)


def test_features_of_norm_3_accepted_when_calibrated_to_the_real_norm() -> None:
    # (refusal above the assumed norm is the contract's refuses_oversized_features property)
    raw = min2021_mdp(horizon=3, num_actions=4, rescaled=False)
    assert make(raw, 10, 0, feature_norm_bound=3.0).calibration.mechanism("target").sensitivity == pytest.approx(
        2 * 3.0 * 3)


def test_schedule_settings_and_registration() -> None:
    schedule = ngo_schedule(horizon=4, episodes=100, dim=10, max_updates=7)
    worst, total = schedule.release_counts()
    assert worst == 4 * (math.floor(math.log2(100)) + 1) + 4 * 7
    assert total == 4 * 100 + 4 * 7
    calibration = calibrate(schedule, 1.0, 1e-5)
    assert calibration.accounted_epsilon == pytest.approx(1.0, rel=1e-9)
    agent = make(small_mdp(), 100, 0, epsilon=3.0)
    settings = agent.settings()
    assert settings["agent"] == "ngo" and settings["max_updates_used"] == math.ceil(10 * math.log2(1 + 100 / 10))
    assert settings["sensitivity"] == pytest.approx({"gram": math.sqrt(2), "target": 2 * 4})
    with pytest.raises(InvalidParameterError, match="max_updates"):
        NgoConfig(10, epsilon=1.0, max_updates=0)
    assert AGENTS["ngo"].env_kind == "linear"
