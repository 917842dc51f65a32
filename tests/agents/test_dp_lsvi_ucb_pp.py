"""DP-LSVI-UCB++ (dpverify.agents.dp_lsvi_ucb_pp): accounting = claim (4HK releases), learning, sensitivities.

Fresh noise, the billboard structure, refusal of oversized features and of episodes past the cap are
the private-agent contract's (tests/dpverify/testing/test_registered_agents_contract.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_lsvi_ucb_pp_runs import (
    altered,
    assert_accounts_to_the_claim,
    assert_learns,
    env_rng,
    feed,
    make_agent,
    record_run,
)

from dpverify.agents.base import rollout, run_episodes
from dpverify.agents.dp_lsvi_ucb_pp import DpLsviUcbPlusPlus, DpLsviUcbPlusPlusConfig
from dpverify.agents.dp_lsvi_ucb_pp_schedule import dp_lsvi_ucbpp_schedule
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.lsvi_ucb_pp import LsviUcbPlusPlus
from dpverify.agents.runner import RunSpec, run
from dpverify.errors import InvalidParameterError


@pytest.mark.parametrize("model", ["derived", "paper"])
@pytest.mark.parametrize("conversion", ["exact", "bun-steinke"])
def test_ledger_accounts_to_the_claim_with_4hk_releases(model: str, conversion: str) -> None:
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


class StageByStage(DpLsviUcbPlusPlus):
    """DP-LSVI-UCB++ that computes the bonuses of every (h, s, a) in every episode and makes its vector releases
    stage by stage (LSVI-UCB++'s backward pass)."""

    def plan(self) -> np.ndarray:
        self._bonus_norm[:] = np.sqrt(self.statistics.bonus_squared_all())
        self._bonus_current = True
        return LsviUcbPlusPlus.plan(self)


@pytest.mark.parametrize(("epsilon", "switches", "aggregation"),
                         [(1.0, False, "fresh"), (1e8, True, "fresh"), (1.0, False, "tree"), (1e8, True, "tree")])
def test_pass_without_switch_releases_all_stages_at_once_with_identical_results(
        epsilon: float, switches: bool, aggregation: str) -> None:
    # When rare switching keeps the policy, the agent releases (tree: reads) and regresses every stage at
    # once (regress_all) and computes the bonuses at the visited pairs only; the published values, noise,
    # ledger, weights and policies are bit-identical to the stage-by-stage pass with every bonus.
    mdp = min2021_mdp(horizon=4, num_actions=5)
    episodes = 60
    agent_seed, _ = np.random.SeedSequence(4).spawn(2)
    options = {"epsilon": epsilon, "keep_history": True, "keep_noise": True, "aggregation": aggregation}
    config = DpLsviUcbPlusPlusConfig(episodes, **options)
    fast = make_agent(mdp, episodes, 4, **options)
    slow = StageByStage(mdp, config, np.random.default_rng(agent_seed))
    _, fast_policies = record_run(fast, mdp, episodes, env_rng(4))
    _, slow_policies = record_run(slow, mdp, episodes, env_rng(4))
    assert fast.num_switches < episodes and (fast.num_switches > 0) == switches  # (at ε = 10⁸ both passes run)
    assert fast.num_switches == slow.num_switches
    for a, b in zip(fast_policies, slow_policies, strict=True):
        np.testing.assert_array_equal(a, b)
    for name in ("_w_hat", "_w_check", "_w_bar", "q_hat", "q_check"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))
    assert fast.billboard.ledger == slow.billboard.ledger
    assert fast.billboard.n_published == slow.billboard.n_published
    assert fast.billboard.n_published == (4 if aggregation == "fresh" else 2) * mdp.horizon * episodes
    for x, y in zip(fast.billboard.history(), slow.billboard.history(), strict=True):
        assert (x.family, x.episode, x.stage) == (y.family, y.episode, y.stage)
        np.testing.assert_array_equal(x.value, y.value)
        np.testing.assert_array_equal(x.noise, y.noise)


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


def test_bonuses_at_visited_pairs_equal_those_of_every_pair() -> None:
    mdp = min2021_mdp(horizon=4, num_actions=5)
    agent = make_agent(mdp, 20, 1, epsilon=1.0)
    feed(agent, record_run(make_agent(mdp, 20, 2, epsilon=1.0), mdp, 10, env_rng(2))[0])
    agent.begin_episode()
    rng = np.random.default_rng(0)
    states, actions = rng.integers(mdp.num_states, size=4), rng.integers(mdp.num_actions, size=4)
    rows = agent.statistics.bonus_squared_at(states, actions)  # summed from the projections' rows
    every = agent.statistics.bonus_squared_all()[np.arange(4), states, actions]
    np.testing.assert_array_equal(rows, every)
    np.testing.assert_array_equal(agent.statistics.bonus_squared_at(states, actions), every)  # now from the cache
