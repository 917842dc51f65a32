"""LDP-UCRL-VTR (dpverify.agents.ldp_ucrl_vtr): per-user accounting = claim, local messages, learning, settings.

Fresh noise, the billboard structure (other users' data reach a user only through the published
messages), refusal of oversized features and of episodes past the cap are the private-agent contract's
(tests/dpverify/testing/test_registered_agents_contract.py).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from private_agent_runs import assert_learns, make_agent

from dpverify.agents.base import rollout, run_episodes
from dpverify.agents.billboard import Billboard
from dpverify.agents.envs.linear_mdp import LinearMixtureMDP
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp
from dpverify.agents.ldp_ucrl_vtr import LdpUcrlVtr, LdpUcrlVtrConfig, paper_beta, user_plan, user_statistics
from dpverify.agents.registry import AGENTS
from dpverify.errors import InvalidParameterError


def small_mdp():
    return zhou2021_mixture_mdp(dim=3, horizon=3, num_episodes=1)


make = functools.partial(make_agent, LdpUcrlVtr, LdpUcrlVtrConfig)


def test_ledger_accounts_to_the_claim_after_a_run() -> None:
    mdp = small_mdp()
    agent = make(mdp, 25, 0, epsilon=0.5, delta=1e-6)
    run_episodes(mdp, agent, 25, np.random.default_rng(1))
    claim = agent.claimed_guarantee()
    assert agent.ledger.guarantee(1e-6, "exact").epsilon == pytest.approx(claim.epsilon, rel=1e-12)
    assert claim.epsilon == pytest.approx(0.5, rel=1e-9) and claim.epsilon <= 0.5
    per_user = agent.ledger.per_user_rho()
    assert per_user.shape == (25,)
    np.testing.assert_allclose(per_user, 2 * mdp.horizon * agent.calibration.rho0, rtol=1e-12)  # 2H messages each
    assert {b.users.kind for b in agent.ledger.blocks} == {"current"}


def test_messages_depend_only_on_the_users_data_and_the_broadcast() -> None:
    mdp = small_mdp()
    K = 20
    billboard = Billboard("replace-one", keep_history=True, keep_noise=True)
    agent = make(mdp, K, 4, billboard=billboard, epsilon=5.0)
    env_rng = np.random.default_rng(5)
    broadcasts, trajectories = [], []
    for _ in range(K):
        policy = agent.begin_episode()
        broadcasts.append(agent.broadcast)
        trajectory = rollout(mdp, policy, env_rng)
        trajectories.append(trajectory)
        agent.end_episode(trajectory)
    gram_total = np.zeros((mdp.horizon, mdp.dim, mdp.dim))
    target_total = np.zeros((mdp.horizon, mdp.dim))
    for k in range(1, K + 1):
        # what user k sent = its raw statistics, computed from (the broadcast it received, its trajectory)
        # alone, plus noise
        _, values, features = user_plan(mdp, broadcasts[k - 1])
        gram_raw, target_raw = user_statistics(values, features, trajectories[k - 1])
        messages = billboard.messages_of(k)
        assert len(messages) == 2 * mdp.horizon
        for message in messages:
            raw = gram_raw if message.family == "gram" else target_raw
            np.testing.assert_allclose(message.value - message.noise, raw[message.stage - 1], atol=1e-9)
            (gram_total if message.family == "gram" else target_total)[message.stage - 1] += message.value
    # the server holds only the sum of the messages
    np.testing.assert_allclose(agent.server.gram_sums, gram_total, atol=1e-9)
    np.testing.assert_allclose(agent.server.target_sums, target_total, atol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_learns_at_generous_epsilon(seed: int) -> None:
    # Local DP noise is per user (no aggregation before noising), so at K = 400 "generous" means ε ~ 1e5.
    mdp = small_mdp()
    K = 400
    _, regret = assert_learns(mdp, LdpUcrlVtr, LdpUcrlVtrConfig(K, epsilon=1e5), seed)
    assert np.all(regret >= -1e-12)


def test_features_of_norm_2_accepted_when_calibrated_to_the_declared_norm() -> None:
    # (refusal above the assumed norm is the contract's refuses_oversized_features property)
    base = small_mdp()
    loose = LinearMixtureMDP(base.basis, base.theta, base.rewards, base.initial_distribution, feature_norm_bound=2.0)
    agent = make(loose, 10, 0, feature_norm_bound=2.0)
    H = base.horizon
    assert agent.calibration.mechanism("gram").frobenius_sensitivity == pytest.approx(math.sqrt(2) * (2.0 * H) ** 2)
    assert agent.calibration.mechanism("target").sensitivity == pytest.approx(2 * (2.0 * H) * H)


def test_settings_radius_and_registration() -> None:
    mdp = small_mdp()
    agent = make(mdp, 100, 0, epsilon=2.0, beta_multiplier=0.3, privacy_beta_multiplier=0.01)
    run_episodes(mdp, agent, 5, np.random.default_rng(0))
    settings = agent.settings()
    assert settings["agent"] == "ldp-ucrl-vtr" and settings["privacy_beta_multiplier"] == 0.01
    expected = 0.3 * agent.nonprivate_beta(5) + 0.01 * paper_beta(5, 3, 3, 100, 2.0, 1e-5, 0.01)
    np.testing.assert_allclose(settings["beta_final"], expected)
    assert settings["value_feature_bound"] == pytest.approx(3.0)
    beta = paper_beta(16, 5, 6, 10_000, 1.0, 1e-5, 0.01)
    assert beta[0] == pytest.approx(5**0.75 * 6**1.5 * 2 * math.log(5 * 60_000 / 0.01) * math.log(6 / 1e-5) ** 0.25)
    assert np.all(np.diff(beta) < 0)  # (H − h + 1)^{3/2} shrinks with the stage
    with pytest.raises(InvalidParameterError, match="epsilon"):
        LdpUcrlVtrConfig(10, epsilon=0.0)
    assert AGENTS["ldp-ucrl-vtr"].env_kind == "mixture"


def test_the_no_data_control_sends_noise_only_messages_on_the_users_schedule() -> None:
    """users=False: every user sends the messages of zero statistics — drawn and recorded as a user's (same
    ledger, same noise draws), so the only difference from a run with users is the data in the messages."""
    mdp = small_mdp()
    with_users = make(mdp, 12, 3, epsilon=1.0, billboard=Billboard(keep_history=True, keep_noise=True))
    without = make(mdp, 12, 3, epsilon=1.0, billboard=Billboard(keep_history=True, keep_noise=True))
    run_episodes(mdp, with_users, 12, np.random.default_rng(4))
    run_episodes(mdp, without, 12, np.random.default_rng(4), users=False)
    assert without.ledger == with_users.ledger
    pairs = list(zip(with_users.billboard.history(), without.billboard.history(), strict=True))
    # the randomizer's draws, untouched (a record's noise is value − raw: equal up to the rounding of the sum)
    assert all(np.allclose(a.noise, b.noise, rtol=1e-12, atol=1e-12) for a, b in pairs)
    assert all(np.array_equal(b.value, b.noise) for _, b in pairs)  # nothing but noise in the control's messages
    assert any(not np.array_equal(a.value, a.noise) for a, _ in pairs)
    with pytest.raises(InvalidParameterError, match="no empty slot"):
        without.end_episode(None)  # the add/remove empty slot stays refused
