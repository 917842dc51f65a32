"""The batched DP-LSVI-UCB++ is the reference algorithm: identical outputs for identical seeds, trial by trial."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.batching import BatchRandomness, PerTrialRandomness, run_batch
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.core.tapes import canary_tape, ordinary_tapes, replace, run_on_tapes, tape_arrays
from dpverify.agents.dp_lsvi_ucb_pp.batched import BatchedDpLsviUcbPlusPlus
from dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp import DpLsviUcbPlusPlus, DpLsviUcbPlusPlusConfig
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.envs.random_mdps import random_linear_mdp
from dpverify.errors import InvalidParameterError


@pytest.mark.parametrize(("env", "episodes", "options"), [
    ("min2021", 8, {"epsilon": 1.0}),
    ("min2021", 10, {"epsilon": 1e6}),                     # switching fires (several switches per run)
    ("random", 8, {"epsilon": 1e9, "switching": False}),
    ("random", 6, {"epsilon": 2.0, "sensitivity_model": "paper", "variance_floor_multiplier": 1e-3}),
    ("min2021", 8, {"epsilon": 1.0, "sensitivity_model": "staged"}),   # stage by stage; no release at stage H
    ("min2021", 10, {"epsilon": 1e6, "sensitivity_model": "staged"}),
])
def test_identical_to_the_reference_agent_trial_by_trial(env: str, episodes: int, options: dict) -> None:
    mdp = (min2021_mdp(horizon=3, num_actions=4) if env == "min2021"
           else random_linear_mdp(np.random.default_rng(3), num_states=3, num_actions=2, dim=3, horizon=3))
    config = DpLsviUcbPlusPlusConfig(episodes, **options)
    tapes = replace(ordinary_tapes(mdp, episodes, 1), 2, canary_tape(mdp, "high"))
    seeds = [11, 12, 13, 14]
    batched = BatchedDpLsviUcbPlusPlus(mdp, config, PerTrialRandomness([np.random.default_rng(s) for s in seeds]))
    initial, table = tape_arrays(tapes)
    policies = run_batch(batched, initial, table)
    switches = 0
    for i, seed in enumerate(seeds):
        board = Billboard(config.relation, keep_history=True)
        agent = DpLsviUcbPlusPlus(mdp, config, np.random.default_rng(seed), billboard=board)
        reference = run_on_tapes(agent, mdp, tapes)
        for k in range(episodes):
            assert np.array_equal(reference[k], policies[k + 1][i])
        history = board.history()
        assert len(history) == len(batched.releases)
        for release, (family, episode, stage, value) in zip(history, batched.releases, strict=True):
            assert (release.family, release.episode, release.stage) == (family, episode, stage)
            assert np.array_equal(release.value, value[i])  # bit for bit
        switches += agent.num_switches
        assert agent.num_switches == batched.num_switches[i]
    if options["epsilon"] == 1e6:
        assert switches > 0


def test_batch_randomness_is_fresh_per_release_and_reproducible() -> None:
    mdp = min2021_mdp(horizon=2, num_actions=2)
    config = DpLsviUcbPlusPlusConfig(4, epsilon=1.0)
    initial, table = tape_arrays(ordinary_tapes(mdp, 4, 0))

    def run(seed: int) -> list:
        agent = BatchedDpLsviUcbPlusPlus(mdp, config, BatchRandomness(np.random.default_rng(seed), 64))
        run_batch(agent, initial, table)
        return agent.releases

    a, b = run(5), run(5)
    assert all(np.array_equal(x[3], y[3]) for x, y in zip(a, b, strict=True))
    # episode 1 reads no user: its releases are pure noise, at the calibrated scale, and no two share a draw
    first = [(f, v) for f, e, s, v in a if e == 1]
    agent = BatchedDpLsviUcbPlusPlus(mdp, config, BatchRandomness(np.random.default_rng(0), 1))
    for family, value in first:
        if family == "gram":
            assert abs(value[:, 0, 1].std() / agent.gram_mechanism.entry_std - 1) < 0.35
        else:
            assert abs(value.std() / agent.vector_mechanisms[family][0].sigma - 1) < 0.35
    assert len({v.tobytes() for _, v in first}) == len(first)


def test_episode_budget_is_enforced() -> None:
    mdp = min2021_mdp(horizon=2, num_actions=2)
    agent = BatchedDpLsviUcbPlusPlus(mdp, DpLsviUcbPlusPlusConfig(2, epsilon=1.0),
                                     BatchRandomness(np.random.default_rng(0), 3))
    initial, table = tape_arrays(ordinary_tapes(mdp, 2, 0))
    run_batch(agent, initial, table)
    with pytest.raises(InvalidParameterError, match="episodes"):
        agent.begin_episode()
