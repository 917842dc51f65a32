"""The batched tree agents are the reference algorithms: identical outputs for identical seeds, trial by trial."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.batching import SPAWNED_STREAMS, BatchRandomness, PerTrialRandomness, run_batch
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.core.tapes import canary_tape, ordinary_tapes, replace, run_on_tapes, tape_arrays
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.envs.random_mdps import random_linear_mdp
from dpverify.agents.tree_lsvi.batched import BatchedLuyo, BatchedNgo, build_luyo_twin, covers
from dpverify.agents.tree_lsvi.luyo import LuyoAgent, LuyoConfig
from dpverify.agents.tree_lsvi.ngo import NgoAgent, NgoConfig
from dpverify.errors import InvalidParameterError


def _mdp(env: str):
    return (min2021_mdp(horizon=3, num_actions=4) if env == "min2021"
            else random_linear_mdp(np.random.default_rng(3), num_states=3, num_actions=2, dim=3, horizon=3))


def _assert_same_runs(batched, reference_factory, mdp, tapes, seeds, episodes):
    initial, table = tape_arrays(tapes)
    policies = run_batch(batched, initial, table)
    for i, seed in enumerate(seeds):
        board = Billboard("replace-one", keep_history=True)
        agent = reference_factory(np.random.default_rng(seed), board)
        reference = run_on_tapes(agent, mdp, tapes)
        for k in range(episodes):
            assert np.array_equal(reference[k], policies[k + 1][i])
        assert np.array_equal(agent.q, batched.q[i])  # the planner's values too, not only its argmax
        history = board.history()
        assert len(history) == len(batched.releases)
        for release, (family, episode, stage, value) in zip(history, batched.releases, strict=True):
            assert (release.family, release.episode, release.stage) == (family, episode, stage)
            assert np.array_equal(release.value, value[i])  # bit for bit


@pytest.mark.parametrize(("env", "episodes", "options"), [
    ("min2021", 9, {"epsilon": 1.0}),
    ("min2021", 12, {"epsilon": 1e6, "batch_length": 2}),       # re-plans often, data dominate the noise
    ("random", 8, {"epsilon": 1e9, "batch_length": 1, "beta_multiplier": 1.0}),
    ("random", 7, {"epsilon": 3.0, "shift_multiplier": 0.0}),   # unshifted: eigenvalues floored (fallback path)
])
def test_luyo_identical_to_the_reference_agent_trial_by_trial(env: str, episodes: int, options: dict) -> None:
    mdp = _mdp(env)
    config = LuyoConfig(episodes, **options)
    tapes = replace(ordinary_tapes(mdp, episodes, 1), 2, canary_tape(mdp, "high"))
    seeds = [21, 22, 23, 24, 25]
    batched = BatchedLuyo(mdp, config, PerTrialRandomness([np.random.default_rng(s) for s in seeds], SPAWNED_STREAMS))
    _assert_same_runs(batched, lambda rng, board: LuyoAgent(mdp, config, rng, billboard=board), mdp, tapes, seeds,
                      episodes)


def test_luyo_twin_is_on_the_card_for_both_relations() -> None:
    from dpverify.agents.registry import AGENTS

    twin = AGENTS["luyo"].batched
    assert twin is not None and twin.applies({"epsilon": 1.0}) and twin.applies({"relation": "add-remove-one"})
    assert covers({}) and covers({"relation": "add-remove-one"})
    mdp = _mdp("min2021")
    randomness = BatchRandomness(np.random.default_rng(0), 3)
    agent = build_luyo_twin(mdp, 4, {"epsilon": 1.0, "keep_history": True}, randomness, (1, 2))
    initial, table = tape_arrays(ordinary_tapes(mdp, 4, 0))
    run_batch(agent, initial, table)
    assert {e for _, e, _, _ in agent.releases} == {1, 2} and agent.releases[0][3].shape[0] == 3
    with pytest.raises(InvalidParameterError, match="--agent-option"):
        build_luyo_twin(mdp, 4, {"colour": 1}, BatchRandomness(np.random.default_rng(0), 3), None)
    with pytest.raises(InvalidParameterError, match="episodes"):
        agent.begin_episode()


@pytest.mark.parametrize(("env", "episodes", "options"), [
    ("min2021", 9, {"epsilon": 1.0}),
    ("min2021", 12, {"epsilon": 1e6}),                         # data dominate: updates at different episodes
    ("random", 10, {"epsilon": 1e9, "beta_multiplier": 1.0, "max_updates": 2}),   # the budget runs out
    ("random", 7, {"epsilon": 3.0, "shift_multiplier": 0.0}),   # unshifted: eigenvalues floored (fallback path)
])
def test_ngo_identical_to_the_reference_agent_trial_by_trial(env: str, episodes: int, options: dict) -> None:
    mdp = _mdp(env)
    config = NgoConfig(episodes, **options)
    tapes = replace(ordinary_tapes(mdp, episodes, 1), 2, canary_tape(mdp, "high"))
    seeds = [31, 32, 33, 34, 35, 36]
    batched = BatchedNgo(mdp, config, PerTrialRandomness([np.random.default_rng(s) for s in seeds], SPAWNED_STREAMS))
    references = []

    def reference(rng, board):
        references.append(NgoAgent(mdp, config, rng, billboard=board))
        return references[-1]

    initial, table = tape_arrays(tapes)
    policies = run_batch(batched, initial, table)
    for i, seed in enumerate(seeds):
        board = Billboard("replace-one", keep_history=True)
        agent = reference(np.random.default_rng(seed), board)
        assert [np.array_equal(p, policies[k + 1][i]) for k, p in enumerate(run_on_tapes(agent, mdp, tapes))] == [
            True] * episodes
        mine = [(f, e, s, v[i]) for f, e, s, v, *made in batched.releases if not made or made[0][i]]
        assert [(r.family, r.episode, r.stage) for r in board.history()] == [(f, e, s) for f, e, s, _ in mine]
        for release, (_, _, _, value) in zip(board.history(), mine, strict=True):
            assert np.array_equal(release.value, value)  # bit for bit
        assert agent.policy_updates == batched.policy_updates[i] and np.array_equal(agent.q, batched.q[i])
    updates = {tuple(a.update_episodes) for a in references}
    if options["epsilon"] >= 1e6:
        assert len(updates) > 1 or options.get("max_updates") == 2  # the trials update at their own episodes


@pytest.mark.parametrize("agent", ["luyo", "ngo", "dp-lsvi-ucb++"])
def test_add_remove_with_empty_slots_is_the_reference_agent_trial_by_trial(agent: str) -> None:
    """An add/remove neighbour (user 2 absent, user 4 absent) runs batched exactly as the reference agent runs
    ``end_episode(None)``: the same policies and the same releases, bit for bit."""
    from dpverify.agents.core.batching import CHILD_NOISE_STREAMS
    from dpverify.agents.core.tapes import empty_slots
    from dpverify.agents.dp_lsvi_ucb_pp.batched import BatchedDpLsviUcbPlusPlus
    from dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp import DpLsviUcbPlusPlus, DpLsviUcbPlusPlusConfig

    mdp, episodes = _mdp("min2021"), 9
    twins = {"luyo": (LuyoConfig, BatchedLuyo, LuyoAgent, SPAWNED_STREAMS), "ngo": (NgoConfig, BatchedNgo, NgoAgent,
             SPAWNED_STREAMS), "dp-lsvi-ucb++": (DpLsviUcbPlusPlusConfig, BatchedDpLsviUcbPlusPlus, DpLsviUcbPlusPlus,
                                             CHILD_NOISE_STREAMS)}
    config_class, twin, reference_class, streams = twins[agent]
    config = config_class(episodes, epsilon=1e6, relation="add-remove-one")
    tapes = replace(replace(ordinary_tapes(mdp, episodes, 1), 2, None), 4, None)
    assert empty_slots(tapes) == (1, 3)
    seeds = [51, 52, 53]
    batched = twin(mdp, config, PerTrialRandomness([np.random.default_rng(s) for s in seeds], streams))
    initial, table = tape_arrays(tapes)
    policies = run_batch(batched, initial, table, empty=empty_slots(tapes))
    for i, seed in enumerate(seeds):
        board = Billboard("add-remove-one", keep_history=True)
        reference = reference_class(mdp, config, np.random.default_rng(seed), billboard=board)
        assert all(np.array_equal(p, policies[k + 1][i]) for k, p in enumerate(run_on_tapes(reference, mdp, tapes)))
        mine = [(r[0], r[1], r[2], r[3][i]) for r in batched.releases if len(r) < 5 or r[4][i]]
        history = board.history()
        assert [(r.family, r.episode, r.stage) for r in history] == [m[:3] for m in mine]
        assert all(np.array_equal(r.value, m[3]) for r, m in zip(history, mine, strict=True))
