"""DP-LSVI-UCB++ (dpverify.agents.dp_lsvi_ucb_pp): accounting = claim, fresh noise, billboard structure, learning."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.agents.base import Trajectory, rollout, run_episodes
from dpverify.agents.billboard import Billboard, ReplayBillboard
from dpverify.agents.dp_lsvi_ucb_pp import DpLsviUcbPlusPlus, DpLsviUcbPlusPlusConfig
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.runner import RunSpec, run
from dpverify.calibration import calibrate, dp_lsvi_ucbpp_schedule
from dpverify.errors import InvalidParameterError


def make_agent(mdp, episodes: int, seed: int, billboard: Billboard | None = None, **options) -> DpLsviUcbPlusPlus:
    options.setdefault("epsilon", 100.0)
    config = DpLsviUcbPlusPlusConfig(episodes, **options)
    agent_seed, _ = np.random.SeedSequence(seed).spawn(2)
    return DpLsviUcbPlusPlus(mdp, config, np.random.default_rng(agent_seed), billboard=billboard)


def env_rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[1])


@pytest.mark.parametrize("model", ["derived", "paper"])
@pytest.mark.parametrize("conversion", ["exact", "bun-steinke"])
def test_ledger_accounts_to_the_claim_with_4hk_releases(model: str, conversion: str) -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 25
    agent = make_agent(mdp, episodes, 0, epsilon=1.0, delta=1e-5, sensitivity_model=model, conversion=conversion)
    run_episodes(mdp, agent, episodes, env_rng(0))
    H = mdp.horizon
    assert agent.ledger.n_releases == 4 * H * episodes
    account = agent.ledger.account(1e-5)
    assert {f.family: f.n_releases for f in account.families} == {f: H * episodes for f in ("gram", "w_hat", "w_check", "w_bar")}
    claim = agent.claimed_guarantee()
    accounted = agent.ledger.guarantee(1e-5, conversion)
    assert claim.delta == accounted.delta == 1e-5
    assert accounted.epsilon == pytest.approx(claim.epsilon, rel=1e-12)
    assert accounted.epsilon <= 1.0 and accounted.epsilon >= 1.0 * (1 - 1e-9)
    # The noise is the calibrator's, for the schedule of this run.
    expected = calibrate(dp_lsvi_ucbpp_schedule(H, episodes, mdp.dim, model), 1.0, 1e-5, conversion)
    for family in ("gram", "w_hat", "w_check", "w_bar"):
        assert agent.calibration.mechanism(family) == expected.mechanism(family)


def test_refuses_more_episodes_than_budgeted() -> None:
    mdp = min2021_mdp(horizon=2, num_actions=3)
    agent = make_agent(mdp, 3, 0)
    run_episodes(mdp, agent, 3, env_rng(0))
    with pytest.raises(InvalidParameterError, match="num_episodes"):
        agent.begin_episode()


def test_fresh_noise_at_every_release() -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 15
    agent = make_agent(mdp, episodes, 1, keep_history=True, keep_noise=True)
    run_episodes(mdp, agent, episodes, env_rng(1))
    history = agent.billboard.history()
    assert len(history) == 4 * 3 * episodes
    draws = [r.noise for r in history]
    assert all(n is not None and np.all(np.isfinite(n)) for n in draws)
    # No two releases share a noise draw (not even up to sign or a scalar factor of one coordinate).
    fingerprints = {tuple(np.round(np.abs(n).ravel()[:3], 12)) for n in draws}
    assert len(fingerprints) == len(draws)
    # Consecutive releases of the same (family, stage) are not noise-free differences of each other.
    by_key: dict[tuple[str, int], list[np.ndarray]] = {}
    for r in history:
        by_key.setdefault((r.family, r.stage), []).append(r.noise)
    for noises in by_key.values():
        for a, b in zip(noises, noises[1:]):
            assert np.max(np.abs(a - b)) > 0


def altered(trajectory: Trajectory, mdp) -> Trajectory:
    """Another user's data: flip every state and take a different action at every stage."""
    states = (trajectory.states + 1) % mdp.num_states
    actions = (trajectory.actions + 1) % mdp.num_actions
    return Trajectory(states, actions, mdp.rewards[np.arange(mdp.horizon), states[:-1], actions])


def test_billboard_structure_other_users_data_reaches_policies_only_through_the_billboard() -> None:
    mdp = min2021_mdp(horizon=4, num_actions=5)
    episodes, changed_user = 40, 3
    original = make_agent(mdp, episodes, 2, keep_history=True)
    rng = env_rng(2)
    trajectories, policies = [], []
    for _ in range(episodes):
        policy = original.begin_episode()
        policies.append(policy.copy())
        trajectory = rollout(mdp, policy, rng)
        trajectories.append(trajectory)
        original.end_episode(trajectory)
    modified = list(trajectories)
    modified[changed_user - 1] = altered(trajectories[changed_user - 1], mdp)

    # Billboard held fixed: user k's policy (hence action at its own state) is unchanged for every k.
    replay = make_agent(mdp, episodes, 2, billboard=ReplayBillboard(original.billboard.history(), "replace-one"))
    for k in range(episodes):
        assert np.array_equal(replay.begin_episode(), policies[k]), f"episode {k + 1}"
        replay.end_episode(modified[k])
    assert replay.ledger == original.ledger

    # Control: with the same noise draws but a live billboard, the changed data does reach the
    # published values of later episodes (so the test above is not vacuous).
    live = make_agent(mdp, episodes, 2, keep_history=True)
    for k in range(episodes):
        live.begin_episode()
        live.end_episode(modified[k])
    later = [(a.value, b.value) for a, b in zip(original.billboard.history(), live.billboard.history())
             if a.episode > changed_user]
    earlier = [(a.value, b.value) for a, b in zip(original.billboard.history(), live.billboard.history())
               if a.episode <= changed_user]
    assert all(np.array_equal(a, b) for a, b in earlier)
    assert any(not np.allclose(a, b) for a, b in later)


@pytest.mark.parametrize("seed", range(3))
def test_learns_on_small_min2021_at_generous_epsilon(seed: int) -> None:
    mdp = min2021_mdp(horizon=5, num_actions=10)
    episodes = 300
    agent = make_agent(mdp, episodes, seed, epsilon=100.0)
    regret, changed = run_episodes(mdp, agent, episodes, env_rng(seed))
    fifth = episodes // 5
    assert regret[-fifth:].mean() <= 0.5 * regret[:fifth].mean()
    assert changed.sum() >= 5
    assert agent.num_switches >= 1


def test_refuses_features_above_the_assumed_norm() -> None:
    raw = min2021_mdp(horizon=3, num_actions=4, rescaled=False)
    with pytest.raises(InvalidParameterError, match=r"feature_norm_bound = 3"):
        make_agent(raw, 10, 0)
    agent = make_agent(raw, 10, 0, feature_norm_bound=3.0)  # calibrated to the real norm instead
    assert agent.schedule.assumptions[1].startswith("‖φ(s,a)‖₂ ≤ 3")


def test_sensitivity_assumptions_enforced_on_the_raw_sums() -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    agent = make_agent(mdp, 5, 0)
    trajectory = rollout(mdp, agent.begin_episode(), np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="weights"):
        agent.statistics.add_episode(trajectory.states, trajectory.actions, np.full(3, 1.0))  # > 1/H²
    with pytest.raises(InvalidParameterError, match="weighted_sum"):
        agent.statistics.weighted_sum(0, np.ones(mdp.num_states))  # raw reads are refused
    weights = agent.variance_weights(trajectory)
    assert np.all(weights <= 1 / 9 + 1e-15)


def test_settings_and_runner_registration() -> None:
    result = run(RunSpec("dp-lsvi-ucb++", "min2021", 6, num_seeds=1,
                         agent_options={"epsilon": 2.0, "sensitivity_model": "paper", "beta_hat_multiplier": 2e-5},
                         env_options={"horizon": 3, "num_actions": 4}))
    settings = result.seeds[0].agent_settings
    assert settings["agent"] == "dp-lsvi-ucb++"
    assert settings["epsilon"] == 2.0 and settings["sensitivity_model"] == "paper"
    expected = (settings["privacy_radius_multiplier"] * settings["theory_beta_hat_privacy"]
                + 2e-5 * settings["theory_beta_hat_statistical"])
    assert settings["beta_hat"] == pytest.approx(expected)
    assert settings["theory_beta_hat"] == pytest.approx(settings["theory_beta_hat_privacy"]
                                                        + settings["theory_beta_hat_statistical"])
    assert settings["gram_shift"] == pytest.approx(2 * settings["lambda_tilde"])
    assert settings["accounted_epsilon"] <= 2.0
    assert math.isfinite(settings["L"]) and settings["noise_std"]["w_bar"] > settings["noise_std"]["w_hat"]


def test_invalid_config() -> None:
    with pytest.raises(InvalidParameterError, match="epsilon"):
        DpLsviUcbPlusPlusConfig(10, epsilon=0.0)
    with pytest.raises(InvalidParameterError, match="sensitivity_model"):
        DpLsviUcbPlusPlusConfig(10, epsilon=1.0, sensitivity_model="loose")
    with pytest.raises(InvalidParameterError, match="shift_multiplier"):
        DpLsviUcbPlusPlusConfig(10, epsilon=1.0, shift_multiplier=-1.0)
