"""The bandit environment: its tabular view of horizon 1, exact regret, users and canaries, the audit bandit."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.base import Trajectory
from dpverify.agents.core.learning import known_reward_greedy_regret, uniform_policy_regret
from dpverify.agents.core.planning import DeterministicPolicyEvaluator, optimal_values
from dpverify.agents.core.tapes import canary_tape, random_tape, tape_rollout
from dpverify.agents.envs.bandit import AuditBandit, Bandit, audit_bandit
from dpverify.agents.envs.bandit_instances import armed_bandit, linear_bandit
from dpverify.errors import InvalidParameterError
from dpverify.whitebox.neighbours import audit_environment, audit_tapes


def test_a_round_is_an_episode_of_one_stage_starting_in_its_context() -> None:
    bandit = linear_bandit(dim=3, num_arms=4, num_contexts=5, seed=1)
    C, L = 5, 2
    assert (bandit.horizon, bandit.num_states, bandit.num_actions) == (1, C + L, 4)
    assert np.allclose(bandit.initial_distribution, np.r_[np.full(C, 0.2), np.zeros(L)])
    assert np.allclose(bandit.transitions[0, :C, :, C:], bandit.outcome_probabilities)
    assert np.all(bandit.transitions[0, :C, :, :C] == 0)
    assert np.array_equal(bandit.rewards[0, :C], bandit.means) and np.all(bandit.rewards[0, C:] == 0)
    assert np.allclose(bandit.means, bandit.features @ bandit.theta)


def test_regret_is_the_mean_gap_of_the_arm_pulled() -> None:
    bandit = linear_bandit(dim=3, num_arms=4, num_contexts=5, seed=2)
    evaluator = DeterministicPolicyEvaluator(bandit)
    rng = np.random.default_rng(0)
    for _ in range(5):
        policy = np.zeros((1, bandit.num_states), dtype=np.int64)
        arms = rng.integers(4, size=5)
        policy[0, :5] = arms
        expected = float(bandit.context_distribution @ bandit.gaps()[np.arange(5), arms])
        assert evaluator.regret(policy) == pytest.approx(expected, abs=1e-15)
    assert optimal_values(bandit).value == pytest.approx(bandit.context_distribution @ bandit.means.max(axis=1))


def test_a_users_reward_is_read_from_the_outcome_it_ends_in() -> None:
    bandit = armed_bandit(num_arms=3, seed=0)
    assert bandit.round_of(Trajectory(np.array([0, 2]), np.array([1]), np.array([0.3]))) == (0, 1, 1.0)
    assert bandit.round_of(Trajectory(np.array([0, 1]), np.array([2]), np.array([0.3]))) == (0, 2, 0.0)
    with pytest.raises(InvalidParameterError, match="outcome state") as info:
        bandit.reward_of(np.array([0]))
    assert info.value.parameter == "state"
    tape = random_tape(bandit, np.random.default_rng(0))
    assert set(tape.next_states[0, 0].tolist()) <= {1, 2}  # outcomes only


def test_outcomes_follow_the_reward_law() -> None:
    bandit = armed_bandit(num_arms=2, means=[0.2, 0.7])
    rng = np.random.default_rng(5)
    rewards = [bandit.reward_of(np.array([random_tape(bandit, rng).next_states[0, 0, 1]]))[0] for _ in range(4000)]
    assert abs(np.mean(rewards) - 0.7) < 4 * np.sqrt(0.21 / 4000)


def test_validation_names_the_array_and_the_rule() -> None:
    good = armed_bandit(num_arms=2, means=[0.2, 0.7])
    args = dict(features=good.features, outcome_probabilities=good.outcome_probabilities, levels=good.levels,
                context_distribution=good.context_distribution)
    for change, parameter in ((dict(features=2 * good.features), "features"),
                              (dict(levels=np.array([1.0, 0.0])), "levels"),
                              (dict(levels=np.array([0.0, 2.0])), "levels"),
                              (dict(outcome_probabilities=0.5 * good.outcome_probabilities), "outcome_probabilities"),
                              (dict(context_distribution=np.array([0.5])), "context_distribution")):
        with pytest.raises(InvalidParameterError) as info:
            Bandit(**{**args, **change})
        assert info.value.parameter == parameter
    with pytest.raises(InvalidParameterError, match="mean rewards") as info:
        Bandit(**args, theta=np.array([0.3, 0.7]))
    assert info.value.parameter == "theta"


def test_the_rewards_are_not_known_so_the_data_free_reference_is_the_uniform_policy() -> None:
    bandit = armed_bandit(num_arms=4, seed=3)
    assert not bandit.rewards_known
    assert known_reward_greedy_regret(bandit) == uniform_policy_regret(bandit) > 0


def test_canaries_get_the_top_or_bottom_reward_on_every_arm() -> None:
    bandit = linear_bandit(dim=3, num_arms=4, num_contexts=5, seed=1)
    high, low = canary_tape(bandit, "high"), canary_tape(bandit, "low")  # the environment's own, via the hook
    assert high.initial_state == low.initial_state < 5
    for tape, reward in ((high, 1.0), (low, 0.0)):
        for arm in range(4):
            policy = np.full((1, bandit.num_states), arm, dtype=np.int64)
            trajectory = tape_rollout(bandit, policy, tape)
            assert bandit.round_of(trajectory)[2] == reward
    with pytest.raises(InvalidParameterError):
        bandit.canary_tape("middle")


def test_the_audit_bandit_fixes_each_users_feature_whatever_the_arm() -> None:
    bandit = linear_bandit(dim=4, num_arms=3, seed=0)
    audit = audit_environment(bandit)  # the whitebox's hook asks the environment
    assert isinstance(audit, AuditBandit) and audit.audit_environment() is audit
    assert (audit.dim, audit.num_arms, audit.num_contexts) == (4, 3, 3)
    assert np.array_equal(audit.features[0], np.tile(np.eye(4)[0], (3, 1)))
    assert np.array_equal(audit.features[1], -audit.features[0]) and audit.features[2, 0, 1] == 1.0
    tapes = audit_tapes(audit)
    assert set(tapes) == {"plus", "minus", "orth", "plus-zero"}
    assert (tapes["minus"].initial_state, tapes["plus-zero"].initial_state) == (1, 0)
    assert len(audit_bandit(1, 2).audit_tapes()) == 3  # no orthogonal direction at d = 1


def test_run_files_say_rounds(tmp_path) -> None:
    from dpverify.agents.core import runner

    result = runner.run(runner.RunSpec("ucb", "bernoulli-bandit", 5, 2, env_options={"num_arms": 3}))
    assert result.environment["unit"] == "round"
    assert "mean reward of the best arm" in runner.result_payload(result)["settings"]["regret"]
    paths = runner.save_results(result, tmp_path, plot=False)
    assert paths["csv"].read_text().startswith("round,seed_0,seed_1")
