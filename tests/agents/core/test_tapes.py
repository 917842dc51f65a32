"""User response tapes: ordinary tapes follow the environment's law, canaries differ, rollouts are fixed."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.tapes import (
    UserTape,
    canary_tape,
    ordinary_tapes,
    position_index,
    random_tape,
    replace,
    tape_arrays,
    tape_rollout,
)
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.envs.random_mdps import random_linear_mdp
from dpverify.errors import InvalidParameterError


def _mdp():
    return random_linear_mdp(np.random.default_rng(3), num_states=3, num_actions=2, dim=3, horizon=2)


def test_random_tape_entries_follow_the_transition_law() -> None:
    mdp = _mdp()
    rng = np.random.default_rng(0)
    n = 4000
    counts = np.zeros((mdp.horizon, mdp.num_states, mdp.num_actions, mdp.num_states))
    for _ in range(n):
        t = random_tape(mdp, rng)
        counts[np.arange(2)[:, None, None], np.arange(3)[None, :, None], np.arange(2)[None, None, :],
               t.next_states] += 1
    freq = counts / n
    se = np.sqrt(mdp.transitions * (1 - mdp.transitions) / n)
    assert np.all(np.abs(freq - mdp.transitions) <= 5 * se + 1e-12)
    # never a zero-probability state
    assert np.all(counts[mdp.transitions == 0] == 0)


def test_same_env_uniform_gives_the_env_next_state() -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    t = random_tape(mdp, np.random.default_rng(1))
    for h in range(3):
        for s in range(2):
            for a in range(4):  # deterministic transitions: the tape must agree with the MDP
                assert t.next_states[h, s, a] == int(np.argmax(mdp.transitions[h, s, a]))


def test_canaries_differ_and_rollouts_are_deterministic() -> None:
    mdp = _mdp()
    high, low = canary_tape(mdp, "high"), canary_tape(mdp, "low")
    assert high.initial_state != low.initial_state
    policy = np.zeros((mdp.horizon, mdp.num_states), dtype=int)
    a, b = tape_rollout(mdp, policy, high), tape_rollout(mdp, policy, high)
    assert np.array_equal(a.states, b.states) and np.array_equal(a.actions, b.actions)
    assert not np.array_equal(a.states, tape_rollout(mdp, policy, low).states)


def test_replace_one_and_positions() -> None:
    mdp = _mdp()
    tapes = ordinary_tapes(mdp, 5, 0)
    assert all(np.array_equal(x.next_states, y.next_states) for x, y in zip(tapes, ordinary_tapes(mdp, 5, 0),
                                                                             strict=True))
    other = replace(tapes, 3, canary_tape(mdp))
    assert [t is u for t, u in zip(tapes, other, strict=True)] == [True, True, False, True, True]
    assert (position_index("first", 5), position_index("middle", 5), position_index("last", 5)) == (1, 3, 5)
    initial, table = tape_arrays(other)
    assert initial.shape == (5,) and table.shape == (5, 2, 3, 2)
    with pytest.raises(InvalidParameterError):
        position_index("end", 5)
    with pytest.raises(InvalidParameterError):
        replace(tapes, 6, canary_tape(mdp))


def test_tape_validation() -> None:
    with pytest.raises(InvalidParameterError, match="next_states"):
        UserTape(0, np.zeros((2, 3)))
    with pytest.raises(InvalidParameterError, match="initial_state"):
        UserTape(5, np.zeros((2, 3, 2)))
    with pytest.raises(InvalidParameterError, match="next_states"):
        UserTape(0, np.full((2, 3, 2), 3))
    with pytest.raises(InvalidParameterError, match="canary"):
        canary_tape(_mdp(), "medium")
