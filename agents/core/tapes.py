"""User response tapes: a user's data as an explicit table, so that neighbouring user sequences are data.

Differential privacy for episodic RL is stated over *sequences of users* (Vietri et al. 2020, "Private
reinforcement learning with PAC and regret guarantees"; Sahu 2025 §2): user k's data is everything the
user would do in response to whatever the learner deploys. With a finite MDP that is a **response
tape**: the initial state s_0 and a next-state table s_{h+1} = T[h, s, a] for every stage, state and
action. A tape determines the user's whole trajectory for *any* policy, so two runs of an agent on the
same tapes differ only through the agent's own randomness, and a neighbouring sequence is the same
tapes with the tape at one position j replaced (replace-one). Rewards r_h(s, a) are known to the agents
(Jin et al. 2020; Sahu 2025 §3) and are not part of a tape.

* :func:`random_tape` samples an *ordinary* tape from the environment's dynamics: s_0 from the initial
  distribution and, for every (h, s, a) independently, T[h, s, a] ~ P_h(·|s, a) (inverse-CDF of one
  uniform per entry). Followed under any policy, the trajectory has the environment's law.
* :func:`canary_tape` is a worst-case style user: it starts in, and always moves to, the state of
  highest (``"high"``) or lowest (``"low"``) optimal value V*_{h+1} (ties: the smallest index for
  "high", the largest for "low"). The
  pair (low, high) at one position moves the regression targets V(s') from one end of their range to
  the other and the visited features with them. A canary need not follow the environment's dynamics:
  the privacy claims hold for every user sequence, not only for those the model generates.
* :func:`tape_rollout` follows a deterministic policy (H, S) on a tape; :func:`play_on_tape` plays one
  episode of an agent on a tape, whichever way it acts; :func:`run_on_tapes` runs an agent over a sequence
  of tapes and returns what it deployed.

**Two ways to act.** A *table* agent returns its deployed policy from ``begin_episode()`` as an (H, S)
table. A *step-level* agent (one with an ``act`` method; :func:`acts_step_by_step`) is asked for each action
as the user reaches a state, ``act(h, state) -> action``, and told what followed, ``observe(h, state, action,
reward, next_state)`` when it has that method; ``begin_episode()`` is optional for it and returns None. Both
end with ``end_episode(trajectory)``. What a step-level agent deployed in an episode is the *partial policy*
of the actions it chose at the states the user visited, :data:`UNSEEN` elsewhere: an (H, S) table like a
table agent's, so that every consumer (the JDP view's one-hot rows, the replays' comparisons) treats both
alike, a step-level agent being seen only where it acted. Large state spaces need no table at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.errors import InvalidParameterError

from .base import (
    UNSEEN,
    Trajectory,
    acts_step_by_step,
    begin_step_episode,
    checked_policy,
    play_step_by_step,
    rewards_seen,
)
from .planning import optimal_values

CANARY_KINDS: tuple[str, ...] = ("high", "low")
POSITIONS: tuple[str, ...] = ("first", "middle", "last")


@dataclass(frozen=True, eq=False)
class UserTape:
    """One user's responses: ``initial_state`` and ``next_states[h, s, a]`` (shape (H, S, A), ints)."""

    initial_state: int
    next_states: np.ndarray
    label: str = "ordinary"

    def __post_init__(self) -> None:
        table = np.array(self.next_states, dtype=np.int64, copy=True)
        if table.ndim != 3:
            raise InvalidParameterError("next_states", "must have shape (H, S, A)", table.shape)
        if not 0 <= int(self.initial_state) < table.shape[1]:
            raise InvalidParameterError("initial_state", f"must lie in [0, {table.shape[1]})", self.initial_state)
        if np.any(table < 0) or np.any(table >= table.shape[1]):
            raise InvalidParameterError("next_states", f"entries must lie in [0, {table.shape[1]})", "out of range")
        table.setflags(write=False)
        object.__setattr__(self, "initial_state", int(self.initial_state))
        object.__setattr__(self, "next_states", table)

    @property
    def horizon(self) -> int:
        return int(self.next_states.shape[0])


def _check_shape(mdp: Any, tape: UserTape) -> None:
    expected = (mdp.horizon, mdp.num_states, mdp.num_actions)
    if tape.next_states.shape != expected:
        raise InvalidParameterError("tape", f"must have a next-state table of shape {expected}", tape.next_states.shape)


def random_tape(mdp: Any, rng: np.random.Generator) -> UserTape:
    """An ordinary tape drawn from the environment: s_0 ~ ρ, T[h, s, a] ~ P_h(·|s, a) independently."""
    H, S, A = mdp.horizon, mdp.num_states, mdp.num_actions
    initial = mdp.sample_initial_state(rng)
    uniforms = rng.random((H, S, A))
    # the environment's inverse-CDF table (set to exactly 1 after the last positive entry), vectorised:
    # searchsorted(cdf, u, side="right") = #{cdf entries <= u}
    cumulative = getattr(mdp, "_cumulative", None)
    if cumulative is None:
        cumulative = np.cumsum(np.asarray(mdp.transitions), axis=-1)
    table = np.minimum((uniforms[..., None] >= cumulative).sum(axis=-1), S - 1)
    return UserTape(initial, table, "ordinary")


def canary_tape(mdp: Any, kind: str = "high") -> UserTape:
    """A worst-case style canary (module docstring): always in the state of highest/lowest V*; an environment that
    defines its own canaries (``mdp.canary_tape(kind)``: a bandit's users with the top or bottom reward on every
    arm, :mod:`dpverify.agents.envs.bandit`) gives them."""
    if kind not in CANARY_KINDS:
        raise InvalidParameterError("canary", f"must be one of {CANARY_KINDS}", kind)
    own = getattr(mdp, "canary_tape", None)
    if callable(own):
        return own(kind)

    values = optimal_values(mdp).values  # (H + 1, S)
    def pick(v: np.ndarray) -> int:
        # high: smallest index among the maxima; low: largest index among the minima (so that the two
        # canaries differ even where V* ties)
        return int(np.argmax(v)) if kind == "high" else int(len(v) - 1 - np.argmin(v[::-1]))

    H, S, A = mdp.horizon, mdp.num_states, mdp.num_actions
    targets = np.array([pick(values[h + 1]) if h + 1 < H else pick(values[h]) for h in range(H)])
    table = np.broadcast_to(targets[:, None, None], (H, S, A))
    return UserTape(pick(values[0]), table, f"canary-{kind}")


def ordinary_tapes(mdp: Any, count: int, seed: int) -> tuple[UserTape, ...]:
    """``count`` ordinary tapes from ``numpy.random.default_rng(seed)`` (a fixed, reproducible dataset)."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    return tuple(random_tape(mdp, rng) for _ in range(count))


def position_index(position: str | int, num_episodes: int) -> int:
    """The 1-based episode of a named position ("first" = 1, "middle" = ⌈K/2⌉, "last" = K) or a number."""
    if isinstance(position, str):
        if position not in POSITIONS:
            raise InvalidParameterError("position", f"must be one of {POSITIONS} or an episode number", position)
        return {"first": 1, "middle": (num_episodes + 1) // 2, "last": num_episodes}[position]
    if isinstance(position, bool) or not 1 <= int(position) <= num_episodes:
        raise InvalidParameterError("position", f"must lie in [1, {num_episodes}]", position)
    return int(position)


def replace(tapes: Sequence[UserTape | None], position: int,
            tape: UserTape | None) -> tuple[UserTape | None, ...]:
    """The sequence with the tape of 1-based ``position`` replaced (the replace-one neighbour); ``None`` makes
    the slot empty (the user is absent: the add/remove-one neighbour, the episode still happens)."""
    out = list(tapes)
    if not 1 <= position <= len(out):
        raise InvalidParameterError("position", f"must lie in [1, {len(out)}]", position)
    out[position - 1] = tape
    return tuple(out)


def tape_rollout(mdp: Any, policy: np.ndarray, tape: UserTape) -> Trajectory:
    """Follow the deterministic policy (H, S) on the tape (no randomness)."""
    _check_shape(mdp, tape)
    H = mdp.horizon
    states = np.empty(H + 1, dtype=np.int64)
    actions = np.empty(H, dtype=np.int64)
    states[0] = tape.initial_state
    for h in range(H):
        a = int(policy[h, states[h]])
        actions[h] = a
        states[h + 1] = tape.next_states[h, states[h], a]
    return Trajectory(states, actions, rewards_seen(mdp, states, actions))


def play_on_tape(agent: Any, mdp: Any, tape: UserTape | None, episode: int) -> tuple[np.ndarray, Trajectory | None]:
    """One episode of ``agent`` on ``tape`` (None: an empty slot, the agent plans and gets ``end_episode(None)``);
    returns (what it deployed: the policy, or a step-level agent's partial policy; the trajectory)."""
    if not acts_step_by_step(agent):
        policy = checked_policy(agent.begin_episode(), mdp, episode)
        trajectory = None if tape is None else tape_rollout(mdp, policy, tape)
        agent.end_episode(trajectory)
        return policy, trajectory
    if tape is not None:
        _check_shape(mdp, tape)
        table = tape.next_states
        return play_step_by_step(agent, mdp, tape.initial_state, lambda h, s, a: int(table[h, s, a]), episode)
    begin_step_episode(agent, episode)
    agent.end_episode(None)
    return np.full((int(mdp.horizon), int(mdp.num_states)), UNSEEN, dtype=np.int64), None


def run_on_tapes(agent: Any, mdp: Any, tapes: Sequence[UserTape | None]) -> list[np.ndarray]:
    """Run ``agent`` for one episode per tape (:func:`play_on_tape`); return what it deployed π_1..π_K (each
    (H, S): a policy, or a step-level agent's partial policy). A ``None`` tape is an empty slot: the agent
    still plans episode k, then gets ``end_episode(None)`` (no user data)."""
    return [play_on_tape(agent, mdp, tape, k)[0] for k, tape in enumerate(tapes, start=1)]


def tape_arrays(tapes: Sequence[UserTape | None]) -> tuple[np.ndarray, np.ndarray]:
    """(initial states (K,), next-state tables (K, H, S, A)) of a sequence, for batched rollouts; an empty slot
    (None) has zeros in its place (:func:`empty_slots` lists them)."""
    present = [t for t in tapes if t is not None]
    if not present:
        raise InvalidParameterError("tapes", "must hold at least one user (every slot is empty)", len(tapes))
    shape = present[0].next_states.shape
    return (np.array([0 if t is None else t.initial_state for t in tapes], dtype=np.int64),
            np.stack([np.zeros(shape, dtype=np.int64) if t is None else t.next_states for t in tapes]).astype(np.int64))


def empty_slots(tapes: Sequence[UserTape | None]) -> tuple[int, ...]:
    """The 0-based episodes whose slot is empty (None: no user), for :func:`dpverify.agents.core.batching.run_batch`."""
    return tuple(k for k, t in enumerate(tapes) if t is None)
