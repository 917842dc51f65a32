"""LDP-UCRL-VTR (dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr): per-user accounting = claim, local messages,
learning, settings.

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

from dpverify.agents.core.base import rollout, run_episodes
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.core.noise_bounds import goe_norm_bound
from dpverify.agents.envs.linear_mdp import LinearMixtureMDP
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp
from dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr import (
    NAMED_SCHEDULE,
    SENSITIVITY_MODELS,
    LdpUcrlVtr,
    LdpUcrlVtrConfig,
    ldp_ucrl_vtr_schedule,
    paper_beta,
    user_plan,
    user_statistics,
)
from dpverify.agents.registry import AGENTS
from dpverify.errors import InvalidParameterError


def small_mdp():
    return zhou2021_mixture_mdp(dim=3, horizon=3, num_episodes=1)


make = functools.partial(make_agent, LdpUcrlVtr, LdpUcrlVtrConfig)


@pytest.mark.parametrize("model", SENSITIVITY_MODELS)
def test_ledger_accounts_to_the_claim_after_a_run(model: str) -> None:
    # 2H messages per user (standard) or 2(H − 1) (staged: stage H sends nothing)
    mdp = small_mdp()
    agent = make(mdp, 25, 0, epsilon=0.5, delta=1e-6, sensitivity_model=model)
    run_episodes(mdp, agent, 25, np.random.default_rng(1))
    claim = agent.claimed_guarantee()
    assert agent.ledger.guarantee(1e-6, "exact").epsilon == pytest.approx(claim.epsilon, rel=1e-12)
    assert claim.epsilon == pytest.approx(0.5, rel=1e-9) and claim.epsilon <= 0.5
    messages = 2 * mdp.horizon if model == "standard" else 2 * (mdp.horizon - 1)
    assert agent.ledger.n_releases == messages * 25 == agent.calibration.total_releases
    per_user = agent.ledger.per_user_rho()
    assert per_user.shape == (25,)
    np.testing.assert_allclose(per_user, messages * agent.calibration.rho0, rtol=1e-12)
    assert {b.users.kind for b in agent.ledger.blocks} == {"current"}
    # the ledger of the run is the calibrated schedule's, block for block
    expected = ldp_ucrl_vtr_schedule(mdp.horizon, 25, mdp.dim, feature_norm=mdp.horizon,
                                     sensitivity_model=model)
    assert agent.schedule == expected
    assert agent.ledger == agent.calibration.ledger()


@pytest.mark.parametrize("model", SENSITIVITY_MODELS)
def test_messages_depend_only_on_the_users_data_and_the_broadcast(model: str) -> None:
    mdp = small_mdp()
    K = 20
    billboard = Billboard("replace-one", keep_history=True, keep_noise=True)
    agent = make(mdp, K, 4, billboard=billboard, epsilon=5.0, sensitivity_model=model)
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
        gram_raw, target_raw = user_statistics(values, features, trajectories[k - 1],
                                               agent.target_caps)
        messages = billboard.messages_of(k)
        assert len(messages) == 2 * len(agent.released_stages)
        for message in messages:
            raw = gram_raw if message.family == "gram" else target_raw
            np.testing.assert_allclose(message.value - message.noise, raw[message.stage - 1], atol=1e-9)
            (gram_total if message.family == "gram" else target_total)[message.stage - 1] += message.value
    # the server holds only the sum of the messages
    np.testing.assert_allclose(agent.server.gram_sums, gram_total, atol=1e-9)
    np.testing.assert_allclose(agent.server.target_sums, target_total, atol=1e-9)
    if model == "staged":  # stage H sent nothing: its sums are exactly 0
        assert len(agent.released_stages) == mdp.horizon - 1
        assert not agent.server.gram_sums[-1].any() and not agent.server.target_sums[-1].any()


@pytest.mark.parametrize(("seed", "model"), [(0, "standard"), (1, "standard"), (2, "standard"),
                                           (3, "standard"), (0, "staged")])
def test_learns_at_generous_epsilon(seed: int, model: str) -> None:
    # Local DP noise is per user (no aggregation before noising), so at K = 400 "generous" means ε ~ 1e5.
    mdp = small_mdp()
    K = 400
    config = LdpUcrlVtrConfig(K, epsilon=1e5, sensitivity_model=model)
    _, regret = assert_learns(mdp, LdpUcrlVtr, config, seed)
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


@pytest.mark.parametrize("model", SENSITIVITY_MODELS)
def test_the_no_data_control_sends_noise_only_messages_on_the_users_schedule(model: str) -> None:
    """users=False: every user sends the messages of zero statistics — drawn and recorded as a user's (same
    ledger, same noise draws), so the only difference from a run with users is the data in the messages."""
    mdp = small_mdp()
    with_users, without = (make(mdp, 12, 3, epsilon=1.0, sensitivity_model=model,
                                billboard=Billboard(keep_history=True, keep_noise=True))
                           for _ in range(2))
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


def test_staged_noise_is_the_standard_noise_scaled_by_each_stage_s_range() -> None:
    # Stage h (1-based) has F_h = (H − h)·L and targets in [0, H − h], so both sensitivities are
    # ((H − h)/H)² of the standard ones; every release gets the same ρ0, H/(H − 1) times larger with
    # 2(H − 1) messages per user instead of 2H.
    mdp = zhou2021_mixture_mdp(dim=3, horizon=5, num_episodes=1)
    H = mdp.horizon
    standard = make(mdp, 30, 0, sensitivity_model="standard").calibration
    staged = make(mdp, 30, 0, sensitivity_model="staged").calibration
    assert staged.rho0 == pytest.approx(standard.rho0 * H / (H - 1), rel=1e-6)
    scale = math.sqrt(standard.rho0 / staged.rho0)
    assert staged.released_stages("gram") == staged.released_stages("target") == tuple(range(1, H))
    for h in range(1, H):
        for family in ("gram", "target"):
            expected = standard.mechanism(family).noise_scale * ((H - h) / H) ** 2 * scale
            assert staged.mechanism(family, h).noise_scale == pytest.approx(expected, rel=1e-6)
    with pytest.raises(InvalidParameterError, match="stage"):
        staged.mechanism("gram")  # calibrated stage by stage: the stage must be named
    with pytest.raises(InvalidParameterError, match="stage"):
        staged.mechanism("target", H)  # stage H sends nothing


@pytest.mark.parametrize("relation", ["replace-one", "add-remove-one"])
def test_the_staged_schedule_s_sensitivities(relation: str) -> None:
    # √2·F_h² and 2·F_h·(H − h) under replace-one, F_h² and F_h·(H − h) under add/remove (one
    # term), with F_h = (H − h)·F/H: at F = 2H (L = 2), F_h = 2(H − h).
    H, L = 4, 2.0
    schedule = ldp_ucrl_vtr_schedule(H, 10, 3, relation, feature_norm=H * L,
                                     sensitivity_model="staged")
    replace = relation == "replace-one"
    by_key = {s.key: s.sensitivity for s in schedule.statistics}
    assert list(by_key) == [f"{f}@{h}" for h in range(1, H) for f in ("gram", "target")]
    for h in range(1, H):
        F_h = (H - h) * L
        assert by_key[f"gram@{h}"] == pytest.approx((math.sqrt(2) if replace else 1.0) * F_h**2)
        assert by_key[f"target@{h}"] == pytest.approx((2.0 if replace else 1.0) * F_h * (H - h))
    assert schedule.release_counts() == (2 * (H - 1), 2 * (H - 1) * 10)
    standard = ldp_ucrl_vtr_schedule(H, 10, 3, relation, feature_norm=H * L)
    assert [s.key for s in standard.statistics] == ["gram", "target"]
    assert standard.release_counts()[0] == 2 * H
    assert NAMED_SCHEDULE.models == SENSITIVITY_MODELS
    assert NAMED_SCHEDULE.default_model == "standard"
    assert NAMED_SCHEDULE.build(H, 10, 3, "staged", relation) == ldp_ucrl_vtr_schedule(
        H, 10, 3, relation, sensitivity_model="staged")


def test_the_staged_model_is_validated() -> None:
    with pytest.raises(InvalidParameterError, match="sensitivity_model"):
        LdpUcrlVtrConfig(10, epsilon=1.0, sensitivity_model="paper")
    with pytest.raises(InvalidParameterError, match="must be >= 2 under the staged") as info:
        ldp_ucrl_vtr_schedule(1, 10, 3, sensitivity_model="staged")  # at H = 1 every message is 0
    assert info.value.parameter == "horizon"


def test_each_stage_s_shift_is_the_norm_bound_of_its_own_noise() -> None:
    # r_{k,h} = multiplier · goe_norm_bound(s_h√k): the staged model's smaller noise at later
    # stages gets a smaller shift, the silent stage H none (its Gram sum stays 0)
    mdp = small_mdp()
    H, K = mdp.horizon, 12
    p = 0.01 / (2 * H * K)
    for model in SENSITIVITY_MODELS:
        agent = make(mdp, K, 1, sensitivity_model=model, shift_multiplier=0.5)
        run_episodes(mdp, agent, 5, np.random.default_rng(2))
        stds = [0.0 if m is None else m.entry_std for m in agent.gram_mechanisms]
        # at user 5's broadcast: 4 messages summed
        expected = [0.5 * goe_norm_bound(s * math.sqrt(4), mdp.dim, p) for s in stds]
        assert agent.server.shift.tolist() == expected
        beta = agent.nonprivate_beta(5)
        assert beta.shape == (H,)
        if model == "standard":
            assert len(set(beta.tolist())) == 1 and len(set(expected)) == 1
        else:
            assert expected[-1] == 0.0
            assert all(a > b for a, b in zip(expected, expected[1:], strict=False))
            assert all(a > b for a, b in zip(beta.tolist(), beta.tolist()[1:], strict=False))
            settings = agent.settings()
            assert settings["value_feature_bound"] == [2.0, 1.0, 0.0]  # (H − h)·L, 1-based h
            assert settings["shift_final"] == pytest.approx(agent.server.shift_for(5).tolist())


def test_the_staged_agent_clips_targets_to_each_stage_s_range_and_refuses_larger_features() -> None:
    mdp = small_mdp()
    H = mdp.horizon
    agent = make(mdp, 5, 0, sensitivity_model="staged")
    assert agent.target_caps.tolist() == [2.0, 1.0, 0.0]
    assert agent.value_feature_bounds.tolist() == [2.0, 1.0, 0.0]
    policy = agent.begin_episode()
    trajectory = rollout(mdp, policy, np.random.default_rng(0))
    # targets above a stage's range are clipped to it (the plan's values already lie in it)
    values = np.full_like(agent.values, float(H))
    _, target = user_statistics(values, agent.value_features, trajectory, agent.target_caps)
    x = agent.value_features[np.arange(H), trajectory.states[:-1], trajectory.actions]
    np.testing.assert_array_equal(target, x * agent.target_caps[:, None])
    # a value feature within the standard bound H·L = 3 but above stage 2's (H − 2)·L = 1 is
    # refused, not clipped, and nothing is sent
    visited = (1, trajectory.states[1], trajectory.actions[1])
    agent.value_features[visited] = [1.5] + [0.0] * (mdp.dim - 1)
    with pytest.raises(InvalidParameterError, match="stage 2 must be <= 1") as info:
        agent.end_episode(trajectory)
    assert info.value.parameter == "value features φ_V" and agent.ledger.n_releases == 0
