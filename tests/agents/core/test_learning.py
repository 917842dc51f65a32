"""The no-data control (dpverify.agents.core.learning): the data-free policies' exact regret, the paired test, the
control run (every user slot empty) through run_episodes, the runner and the CLI."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import numpy as np
import pytest

import dpverify.cli
from dpverify.agents.core import planning, runner
from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.learning import (
    LearningComparison,
    compare_learning,
    known_reward_greedy_policy,
    known_reward_greedy_regret,
    last_regret_per_episode,
    paired_p_value,
    uniform_policy_regret,
)
from dpverify.agents.envs import min2021_mdp
from dpverify.errors import InvalidParameterError


def test_the_known_reward_greedy_policy_is_the_documented_data_free_policy() -> None:
    mdp = min2021_mdp(horizon=20)
    policy = known_reward_greedy_policy(mdp)
    assert policy.shape == (20, mdp.num_states) and np.all(policy[:, 0] == 0)  # "a = 0 in state 0"
    assert known_reward_greedy_regret(mdp) == pytest.approx(2.45, abs=1e-9)  # the regret the issue measured
    assert known_reward_greedy_regret(min2021_mdp(horizon=5)) == pytest.approx(0.0, abs=1e-12)


def test_the_uniform_policy_regret_agrees_with_a_direct_evaluation() -> None:
    mdp = min2021_mdp(horizon=4, num_actions=5)
    rng = np.random.default_rng(0)
    # the uniform policy's value is the mean over deterministic policies drawn uniformly, stage by stage
    draws = [planning.regret(mdp, rng.integers(0, 5, size=(4, mdp.num_states))) for _ in range(4000)]
    assert uniform_policy_regret(mdp) == pytest.approx(np.mean(draws), abs=4 * np.std(draws) / np.sqrt(4000))


def test_the_paired_test_is_exact_where_it_can_be_and_refuses_nan() -> None:
    assert paired_p_value(np.array([1.0, 2.0]), np.array([2.0, 3.0])) == 0.0  # a constant gain: certain
    assert paired_p_value(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == 1.0  # no difference at all
    assert paired_p_value(np.array([1.0]), np.array([2.0])) is None  # one seed cannot tell
    rounded = np.array([36415.0, 36398.0, 36420.0])
    tiny = np.array([-1e-11, -3e-11, -2e-11])  # rounding of sums, not a gain
    assert paired_p_value(rounded + tiny, rounded) == 1.0
    assert paired_p_value(rounded - 1.0 + tiny, rounded) == 0.0  # a constant gain of 1 up to rounding
    rng = np.random.default_rng(1)
    control = rng.normal(10.0, 1.0, 8)
    assert paired_p_value(control - 2.0 + rng.normal(0, 0.1, 8), control) < 1e-6
    assert paired_p_value(control + 2.0 + rng.normal(0, 0.1, 8), control) > 0.99
    with pytest.raises(InvalidParameterError, match="finite"):
        paired_p_value(np.array([np.nan, 1.0]), np.array([1.0, 1.0]))


def test_the_tail_statistic_and_the_comparison_line() -> None:
    regret = np.array([[5.0] * 8 + [1.0, 1.0], [5.0] * 8 + [3.0, 1.0]])
    assert list(last_regret_per_episode(regret)) == [1.0, 2.0]  # the last 20% of 10 episodes
    mdp = min2021_mdp(horizon=5)
    comparison = compare_learning(regret, regret + 1.0, mdp)
    assert comparison.learned is True and comparison.seeds == 2
    assert comparison.line().startswith("learned from users: yes (regret per episode over the last 20% of episodes")
    assert "with no user data" in comparison.line() and "known-reward greedy policy's 0" in comparison.line()
    assert comparison.beats_greedy is False and "not below the data-free" in comparison.line()
    assert compare_learning(regret, regret, mdp).learned is False
    assert compare_learning(regret[:1], regret[:1] + 1.0, mdp).learned is None
    with pytest.raises(InvalidParameterError, match="control_regret"):
        compare_learning(regret, regret[:, :5], mdp)
    with pytest.raises(InvalidParameterError, match="control_last"):
        LearningComparison((1.0,), (), None, 0.0, 1.0)


class Recorder:
    """A table agent that deploys the known-reward greedy policy until it has seen a user, then the optimal
    policy: it learns from data, and its no-data control cannot."""

    def __init__(self, mdp: Any) -> None:
        self.mdp, self.seen, self.slots = mdp, 0, []

    def begin_episode(self) -> np.ndarray:
        if self.seen:
            return np.argmax(planning.optimal_values(self.mdp).q, axis=-1)
        return known_reward_greedy_policy(self.mdp)

    def end_episode(self, trajectory: Any) -> None:
        self.slots.append(trajectory)
        self.seen += trajectory is not None


def test_the_control_empties_every_user_slot_and_tells_a_learner_from_a_data_free_policy() -> None:
    mdp = min2021_mdp(horizon=20, num_actions=4)
    runs = {}
    for users in (True, False):
        rows = []
        for seed in range(3):
            agent = Recorder(mdp)
            regret, _ = run_episodes(mdp, agent, 10, np.random.default_rng(seed), users=users)
            assert all((slot is None) != users for slot in agent.slots)
            rows.append(regret)
        runs[users] = np.stack(rows)
    comparison = compare_learning(runs[True], runs[False], mdp)
    assert comparison.learned is True and comparison.beats_greedy is True
    assert comparison.control_last == pytest.approx((comparison.greedy,) * 3)  # the control stays data-free
    # an agent whose data only lead it to the data-free greedy policy beats its control, not that policy
    reached_greedy = compare_learning(runs[False], runs[False] + 5.0, mdp)
    assert reached_greedy.learned is True and reached_greedy.beats_greedy is False


def test_the_runner_runs_the_control_with_the_same_seeds_serially_and_in_workers() -> None:
    base = dict(agent="ngo", env="min2021", num_episodes=6, num_seeds=2, env_options={"horizon": 3},
                agent_options={"epsilon": 1.0, "delta": 1e-5}, users=False)
    serial = runner.run(runner.RunSpec(**base, workers=1))
    pooled = runner.run(runner.RunSpec(**base, workers=2))
    np.testing.assert_array_equal(serial.regret, pooled.regret)
    assert runner.result_payload(serial)["settings"]["users"].startswith("none: the no-data control")
    with pytest.raises(InvalidParameterError, match="users"):
        runner.RunSpec("ngo", "min2021", 3, users="no")  # type: ignore[arg-type]


def _cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = dpverify.cli.main(argv)
    return code, out.getvalue()


def test_dpverify_run_says_whether_a_private_agent_learned_from_its_users(tmp_path) -> None:
    common = ["run", "--agent", "ngo", "--env", "min2021", "--env-option", "horizon=3", "--episodes", "10",
              "--seeds", "2", "--workers", "1", "--agent-option", "epsilon=1", "--agent-option", "delta=1e-5",
              "--no-plot"]
    code, out = _cli([*common, "--out", str(tmp_path / "a")])
    assert code == 0 and "learned from users: " in out
    document = json.loads((tmp_path / "a" / "no_data_control.json").read_text())
    assert document["comparison"]["seeds"] == 2 and len(document["control"]["seeds"]) == 2
    code, out = _cli([*common, "--out", str(tmp_path / "b"), "--no-data-control", "no"])
    assert code == 0 and "learned from users" not in out and not (tmp_path / "b" / "no_data_control.json").exists()
    code, out = _cli(["run", "--agent", "lsvi-ucb", "--env", "min2021", "--env-option", "horizon=3", "--episodes",
                      "5", "--seeds", "1", "--workers", "1", "--no-plot", "--out", str(tmp_path / "c")])
    assert code == 0 and "learned from users" not in out  # auto: only the private agents
