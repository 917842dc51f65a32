"""The Gymnasium view of the environments (dpverify.agents.envs.gym); skipped without gymnasium."""

import subprocess
import sys

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
env_checker = pytest.importorskip("gymnasium.utils.env_checker")

from dpverify.agents.core.planning import optimal_values, regret  # noqa: E402
from dpverify.agents.envs import armed_bandit  # noqa: E402
from dpverify.agents.envs.gym import TabularEnv, env_id, register  # noqa: E402
from dpverify.errors import InvalidParameterError  # noqa: E402

CASES = [
    ("min2021", {"horizon": 3, "num_actions": 10}),
    ("zhou2021", {"num_episodes": 1000}),
    ("bernoulli-bandit", {"num_arms": 4}),
    ("linear-bandit", {"dim": 3, "num_arms": 4, "num_contexts": 5}),
    ("random-linear", {"seed": 2}),
    ("random-mixture", {"seed": 2}),
]


@pytest.mark.parametrize(("name", "options"), CASES)
def test_make_passes_gymnasiums_checker(name, options):
    env = gymnasium.make(env_id(name), **options)
    env_checker.check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=7)
    assert env.observation_space.contains(obs) and info["stage"] == 0
    steps, terminated = 0, False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        steps += 1
        assert not truncated and env.observation_space.contains(obs) and info["regret"] >= -1e-12
    assert steps == env.unwrapped.model.horizon


def test_module_colon_id_imports_and_registers():
    code = ("import gymnasium; e = gymnasium.make('dpverify.agents.envs.gym:dpverify/bernoulli-bandit-v0', "
            "num_arms=3); print(e.action_space.n)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "3"


def test_seeding_is_reproducible_and_register_idempotent():
    assert register() == register()
    runs = []
    for _ in range(2):
        env = gymnasium.make(env_id("random-linear"), seed=1)
        obs, _ = env.reset(seed=3)
        trace = [int(obs)]
        for _ in range(env.unwrapped.model.horizon):
            obs, reward, *_ = env.step(0)
            trace += [int(obs), reward]
        runs.append(trace)
    assert runs[0] == runs[1]


def test_bandit_rewards_follow_the_outcome_law_and_regret_is_the_gap():
    bandit = armed_bandit(num_arms=3, means=[0.2, 0.5, 0.8])
    env = TabularEnv(bandit)
    env.reset(seed=0)
    rewards, gaps = [], set()
    for _ in range(4000):
        env.reset()
        _, reward, terminated, _, info = env.step(0)
        assert terminated
        rewards.append(reward)
        gaps.add(round(info["regret"], 12))
    assert gaps == {0.6} and abs(np.mean(rewards) - 0.2) < 0.03  # 4.7 standard errors
    assert set(rewards) <= set(bandit.levels.tolist())


def test_expected_sum_of_regret_is_the_policys_exact_regret():
    env = TabularEnv("min2021", horizon=3, num_actions=5)
    model = env.unwrapped.model
    policy = np.zeros((model.horizon, model.num_states), dtype=np.int64)  # always action 0
    exact = regret(model, policy, optimal_values(model))
    totals = []
    env.reset(seed=11)
    for _ in range(3000):
        obs, _ = env.reset()
        total, terminated, h = 0.0, False, 0
        while not terminated:
            obs, _, terminated, _, info = env.step(int(policy[h, obs]))
            total += info["regret"]
            h += 1
        totals.append(total)
    assert abs(np.mean(totals) - exact) < 4 * np.std(totals) / np.sqrt(len(totals)) + 1e-12


def test_bad_use_is_refused():
    env = TabularEnv("bernoulli-bandit", num_arms=2)
    with pytest.raises(InvalidParameterError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(InvalidParameterError, match="action"):
        env.step(5)
    with pytest.raises(InvalidParameterError, match="render_mode"):
        TabularEnv("bernoulli-bandit", render_mode="human")


def test_dpverify_does_not_import_gymnasium_unless_asked():
    code = ("import sys, dpverify, dpverify.agents.registry, dpverify.agents.envs; "
            "print('gymnasium' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
