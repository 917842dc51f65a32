"""The batched tree-aggregated DP-LSVI-UCB++ is the reference algorithm: identical outputs, trial by trial."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.batching import BatchRandomness, PerTrialRandomness, run_batch
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.core.tapes import canary_tape, empty_slots, ordinary_tapes, replace, run_on_tapes, tape_arrays
from dpverify.agents.dp_lsvi_ucb_pp.batched import BatchedDpLsviUcbPlusPlus
from dpverify.agents.dp_lsvi_ucb_pp.batched_tree import BatchedDpLsviUcbPlusPlusTree, build_twin, covers
from dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp import DpLsviUcbPlusPlus, DpLsviUcbPlusPlusConfig
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.envs.random_mdps import random_linear_mdp


def _mdp(env: str):
    return (min2021_mdp(horizon=3, num_actions=4) if env == "min2021"
            else random_linear_mdp(np.random.default_rng(3), num_states=3, num_actions=2, dim=3, horizon=3))


@pytest.mark.parametrize(("env", "episodes", "options", "absent"), [
    ("min2021", 9, {"epsilon": 1.0}, ()),
    ("min2021", 12, {"epsilon": 1e6}, ()),                            # switching fires at different episodes
    ("random", 8, {"epsilon": 1e9, "switching": False}, ()),
    ("random", 7, {"epsilon": 2.0, "sensitivity_model": "paper"}, ()),
    ("min2021", 9, {"epsilon": 1e6, "relation": "add-remove-one"}, (2, 5)),   # empty slots
])
def test_identical_to_the_reference_agent_trial_by_trial(env: str, episodes: int, options: dict,
                                                         absent: tuple[int, ...]) -> None:
    mdp = _mdp(env)
    config = DpLsviUcbPlusPlusConfig(episodes, aggregation="tree", **options)
    tapes = replace(ordinary_tapes(mdp, episodes, 1), 2, canary_tape(mdp, "high"))
    for j in absent:
        tapes = replace(tapes, j, None)
    seeds = [61, 62, 63, 64, 65]
    batched = BatchedDpLsviUcbPlusPlusTree(mdp, config, PerTrialRandomness([np.random.default_rng(s) for s in seeds]))
    initial, table = tape_arrays(tapes)
    policies = run_batch(batched, initial, table, empty=empty_slots(tapes))
    switches = []
    for i, seed in enumerate(seeds):
        board = Billboard(config.relation, keep_history=True)
        agent = DpLsviUcbPlusPlus(mdp, config, np.random.default_rng(seed), billboard=board)
        reference = run_on_tapes(agent, mdp, tapes)
        assert all(np.array_equal(p, policies[k + 1][i]) for k, p in enumerate(reference))
        assert np.array_equal(agent.q_hat, batched.q_hat[i]) and np.array_equal(agent.q_check, batched.q_check[i])
        history = board.history()
        assert [(r.family, r.episode, r.stage) for r in history] == [r[:3] for r in batched.releases]
        assert all(np.array_equal(r.value, b[3][i]) for r, b in zip(history, batched.releases, strict=True))
        assert agent.num_switches == batched.num_switches[i]
        switches.append(agent.num_switches)
    if options["epsilon"] == 1e6 and not absent:
        assert len(set(switches)) > 1 or max(switches) > 1


def test_the_card_runs_fresh_and_tree_batched_and_the_other_counters_not() -> None:
    from dpverify.agents.registry import AGENTS

    twin = AGENTS["dp-lsvi-ucb++"].batched
    assert twin is not None and twin.applies({}) and twin.applies({"aggregation": "tree"})
    assert not covers({"aggregation": "honaker"}) and not covers({"aggregation": "factorised"})
    mdp = _mdp("random")
    randomness = BatchRandomness(np.random.default_rng(0), 3)
    assert type(build_twin(mdp, 3, {"epsilon": 1.0, "aggregation": "tree"}, randomness, None)) is \
        BatchedDpLsviUcbPlusPlusTree
    assert type(build_twin(mdp, 3, {"epsilon": 1.0}, randomness, None)) is BatchedDpLsviUcbPlusPlus
