"""DP-LSVI-UCB++ (dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp): accounting = claim (4HK releases), learning,
sensitivities.

Fresh noise, the billboard structure, refusal of oversized features and of episodes past the cap are
the private-agent contract's (tests/dpverify/testing/test_registered_agents_contract.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.agents.core.base import rollout, run_episodes
from dpverify.agents.core.runner import RunSpec, run
from dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp import DpLsviUcbPlusPlus, DpLsviUcbPlusPlusConfig
from dpverify.agents.dp_lsvi_ucb_pp.schedule import dp_lsvi_ucbpp_schedule
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.envs.random_mdps import random_linear_mdp
from dpverify.errors import InvalidParameterError

from .runs import (
    altered,
    assert_accounts_to_the_claim,
    assert_learns,
    env_rng,
    feed,
    make_agent,
    record_run,
)


@pytest.mark.parametrize("model", ["derived", "paper", "staged"])
@pytest.mark.parametrize("conversion", ["exact", "bun-steinke"])
def test_ledger_accounts_to_the_claim_with_4hk_releases(model: str, conversion: str) -> None:
    # (staged: 4HK − 3K releases, stage H releasing its Gram matrix only)
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 25
    agent = make_agent(mdp, episodes, 0, epsilon=1.0, delta=1e-5, sensitivity_model=model, conversion=conversion)
    run_episodes(mdp, agent, episodes, env_rng(0))
    # 4HK releases; the noise is the calibrator's, for the schedule of this run.
    assert_accounts_to_the_claim(agent, dp_lsvi_ucbpp_schedule(mdp.horizon, episodes, mdp.dim, model),
                                 ("gram", "w_hat", "w_check", "w_bar"), conversion, 1.0, 1e-5)


def test_a_users_data_reaches_later_releases_on_a_live_billboard() -> None:
    # Control for the contract's billboard_structure property (replaying the billboard with a user's data
    # replaced leaves the other users' policies unchanged): with the same noise draws but a live billboard,
    # the changed data does reach the published values of later episodes, so that property is not vacuous.
    mdp = min2021_mdp(horizon=4, num_actions=5)
    episodes, changed_user = 40, 3
    original = make_agent(mdp, episodes, 2, keep_history=True)
    trajectories, _ = record_run(original, mdp, episodes, env_rng(2))
    modified = list(trajectories)
    modified[changed_user - 1] = altered(trajectories[changed_user - 1], mdp)
    live = make_agent(mdp, episodes, 2, keep_history=True)
    feed(live, modified)
    pairs = list(zip(original.billboard.history(), live.billboard.history(), strict=True))
    assert all(np.array_equal(a.value, b.value) for a, b in pairs if a.episode <= changed_user)
    assert any(not np.allclose(a.value, b.value) for a, b in pairs if a.episode > changed_user)


@pytest.mark.parametrize(("switching", "model"), [(True, "derived"), (False, "derived"), (True, "staged")])
def test_an_episode_releases_as_algorithm_1_orders_them(switching: bool, model: str) -> None:
    # Per episode k: the H Gram matrices (line 26's Λ̃_{k,h}, read by the switching test of line 10) first, then
    # the backward pass h = H..1 with lines 6–8's three vectors per stage, each release read by users 1..k−1.
    # The staged model releases no vector at stage H, whose targets V_{H+1} are 0.
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 5
    agent = make_agent(mdp, episodes, 3, keep_history=True, switching=switching, sensitivity_model=model)
    record_run(agent, mdp, episodes, env_rng(3))
    labels = [(r.family, r.episode, r.stage, r.users) for r in agent.billboard.history()]
    stages = (2, 1) if model == "staged" else (3, 2, 1)
    expected = [(family, k, h, "prefix") for k in range(1, episodes + 1)
                for family, h in [("gram", 1), ("gram", 2), ("gram", 3)]
                + [(f, h) for h in stages for f in ("w_hat", "w_check", "w_bar")]]
    assert labels == expected


@pytest.mark.parametrize(("model", "aggregation"),
                         [("derived", "fresh"), ("paper", "fresh"), ("staged", "fresh"), ("derived", "tree")])
def test_a_whole_pass_at_once_releases_what_the_stage_by_stage_pass_releases(model: str, aggregation: str) -> None:
    # An episode whose line 10 keeps Q̂ and Q̌ publishes lines 6–8 of every stage in one block (release_all_sums):
    # bit for bit the values, noise draws, labels and ledger of the pass stage by stage (release_sums, h = H..1).
    mdp = min2021_mdp(horizon=4, num_actions=5)
    H, S, A = mdp.horizon, mdp.num_states, mdp.num_actions
    rng = np.random.default_rng(5)
    users = [(rng.integers(0, S, H + 1), rng.integers(0, A, H), rng.uniform(0.0, 1.0 / H**2, H)) for _ in range(6)]
    v_hat, v_check = rng.uniform(0.0, H, (H, S)), rng.uniform(0.0, H, (H, S))
    at_once, by_stage = (make_agent(mdp, 10, 4, keep_history=True, keep_noise=aggregation == "fresh",
                                    sensitivity_model=model, aggregation=aggregation) for _ in range(2))
    for agent in (at_once, by_stage):
        for states, actions, weights in users:
            agent.statistics.add_user(states, actions, weights)
        agent.statistics.release_grams()
    whole_pass = at_once.statistics.release_all_sums(v_hat, v_check)
    for h in range(H - 1, -1, -1):
        for all_stages, one_stage in zip(whole_pass, by_stage.statistics.release_sums(h, v_hat[h], v_check[h]),
                                         strict=True):
            assert np.array_equal(all_stages[h], one_stage)
    for a, b in zip(at_once.billboard.history(), by_stage.billboard.history(), strict=True):
        assert (a.family, a.episode, a.stage, a.mechanism) == (b.family, b.episode, b.stage, b.mechanism)
        assert np.array_equal(a.value, b.value) and (a.noise is None or np.array_equal(a.noise, b.noise))
    assert at_once.ledger.to_json() == by_stage.ledger.to_json()


def test_staged_noise_is_the_derived_noise_scaled_by_each_stage_s_target_range() -> None:
    # Stage h's targets lie in [0, H − h] (1-based), so its vector noise is (H − h)/H of the derived model's
    # (w̄: ((H − h)/H)²), up to the larger ρ0 of a schedule with 3K fewer releases; the Gram noise only by ρ0.
    mdp = min2021_mdp(horizon=4, num_actions=4)
    derived = make_agent(mdp, 30, 0, sensitivity_model="derived").calibration
    staged = make_agent(mdp, 30, 0, sensitivity_model="staged").calibration
    scale = math.sqrt(derived.rho0 / staged.rho0)
    assert staged.released_stages("w_hat") == (1, 2, 3)
    for h in (1, 2, 3):
        for family, power in (("w_hat", 1), ("w_check", 1), ("w_bar", 2)):
            expected = derived.mechanism(family).noise_scale * ((4 - h) / 4) ** power * scale
            assert staged.mechanism(family, h).noise_scale == pytest.approx(expected, rel=1e-6)
    assert staged.mechanism("gram").noise_scale == pytest.approx(derived.mechanism("gram").noise_scale * scale,
                                                                 rel=1e-6)
    with pytest.raises(InvalidParameterError, match="stage"):
        staged.mechanism("w_hat")  # calibrated stage by stage: the stage must be named
    with pytest.raises(InvalidParameterError, match="stage"):
        staged.mechanism("w_hat", 4)  # stage H releases no vector


def test_staged_sensitivities_apply_to_fresh_noise_only() -> None:
    with pytest.raises(InvalidParameterError, match="staged"):
        DpLsviUcbPlusPlusConfig(10, epsilon=1.0, sensitivity_model="staged", aggregation="tree")
    # at H = 1 the staged model releases no vector at all: nothing to evaluate the radii's noise bound L on
    one_stage = random_linear_mdp(np.random.default_rng(0), num_states=2, num_actions=2, dim=2, horizon=1)
    with pytest.raises(InvalidParameterError, match="horizon"):
        DpLsviUcbPlusPlus(one_stage, DpLsviUcbPlusPlusConfig(5, epsilon=1.0, sensitivity_model="staged"),
                          np.random.default_rng(0))


def test_the_statistics_offer_no_raw_read() -> None:
    # Every method of the statistics object is a release or post-processing of one (the protocol's), so no
    # code path of the planner can read a raw sum by mistake.
    mdp = min2021_mdp(horizon=3, num_actions=4)
    for aggregation in ("fresh", "tree"):
        stats = make_agent(mdp, 5, 0, aggregation=aggregation).statistics
        public = {name for name in dir(stats) if not name.startswith("_") and callable(getattr(stats, name))}
        assert public == {"release_grams", "release_sums", "release_all_sums", "add_user", "skip_user"}, aggregation


@pytest.mark.parametrize("seed", range(3))
def test_learns_on_small_min2021_at_generous_epsilon(seed: int) -> None:
    mdp = min2021_mdp(horizon=5, num_actions=10)
    episodes = 300
    assert_learns(mdp, lambda: make_agent(mdp, episodes, seed, epsilon=100.0), episodes, seed)


def test_features_of_norm_3_accepted_when_calibrated_to_the_real_norm() -> None:
    # (refusal above the assumed norm is the contract's refuses_oversized_features property)
    raw = min2021_mdp(horizon=3, num_actions=4, rescaled=False)
    agent = make_agent(raw, 10, 0, feature_norm_bound=3.0)
    assert agent.schedule.assumptions[1].startswith("‖φ(s,a)‖₂ ≤ 3")


def test_sensitivity_assumptions_enforced_on_the_raw_sums() -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    agent = make_agent(mdp, 5, 0)
    trajectory = rollout(mdp, agent.begin_episode(), np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="weights"):
        agent.statistics.add_user(trajectory.states, trajectory.actions, np.full(3, 1.0))  # > 1/H²
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
