"""Exact planning on finite MDPs: V*, the optimal action sets, exact policy values and exact regret.

Everything is backward induction on the tabular model (``transitions`` (H, S, A, S), ``rewards``
(H, S, A), ``initial_distribution`` (S,)) that every environment of :mod:`dpverify.agents.envs` exposes:

    Q*_h(s, a) = r_h(s, a) + Σ_s' P_h(s'|s, a) V*_{h+1}(s'),   V*_h(s) = max_a Q*_h(s, a),   V*_H = 0,

(Puterman 1994, §4.5), and for a (possibly stochastic) policy π_h(a|s)

    V^π_h(s) = Σ_a π_h(a|s) [r_h(s, a) + Σ_s' P_h(s'|s, a) V^π_{h+1}(s')].

The per-episode regret reported by the runner is ρᵀ(V*_0 − V^{π_k}_0) with ρ the initial distribution:
exact, not estimated from realised returns.

Ties: :func:`maximizing_actions` returns the full set of actions within ``tolerance`` of the maximum,
and :func:`sample_greedy_actions` picks one of them uniformly at random with the caller's generator
(never "the first", which favours action 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dpverify import _validate
from dpverify.errors import InvalidParameterError

#: Default absolute tolerance deciding that two action values are tied.
TIE_TOLERANCE = 1e-9


class TabularModel(Protocol):
    transitions: np.ndarray
    rewards: np.ndarray
    initial_distribution: np.ndarray


def maximizing_actions(q: np.ndarray, tolerance: float = TIE_TOLERANCE) -> np.ndarray:
    """Boolean mask of the actions (last axis) whose value is within ``tolerance`` of the maximum."""
    return q >= q.max(axis=-1, keepdims=True) - tolerance


def sample_greedy_actions(q: np.ndarray, rng: np.random.Generator, tolerance: float = TIE_TOLERANCE) -> np.ndarray:
    """One maximising action per leading index of ``q`` (shape (..., A)), uniform among the ties.

    Draws one uniform key per entry and takes the largest key among the maximisers: each maximiser is
    chosen with probability 1/(number of maximisers).
    """
    keys = rng.random(q.shape)
    keys[~maximizing_actions(q, tolerance)] = -1.0
    return np.argmax(keys, axis=-1)


def uniform_greedy_policy(q: np.ndarray, tolerance: float = TIE_TOLERANCE) -> np.ndarray:
    """The stochastic policy uniform over the maximisers of ``q`` (shape (..., A) → same shape)."""
    mask = maximizing_actions(q, tolerance).astype(np.float64)
    return mask / mask.sum(axis=-1, keepdims=True)


@dataclass(frozen=True, eq=False)
class OptimalSolution:
    """V*, Q* and the optimal action sets of a finite MDP.

    Attributes:
        q: Q*_h(s, a), shape (H, S, A).
        values: V*_h(s), shape (H + 1, S) (last row 0).
        optimal_actions: mask of argmax_a Q*_h(s, a) within ``tolerance``, shape (H, S, A).
        value: ρᵀ V*_0, the optimal expected return.
        tolerance: the tie tolerance used.
    """

    q: np.ndarray
    values: np.ndarray
    optimal_actions: np.ndarray
    value: float
    tolerance: float

    def policy(self) -> np.ndarray:
        """An optimal deterministic policy π*_h(s), the lowest-index optimal action (for display only)."""
        return np.argmax(self.optimal_actions, axis=-1)


def _check_model(mdp: TabularModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    try:
        return mdp.transitions, mdp.rewards, mdp.initial_distribution
    except AttributeError as exc:
        raise InvalidParameterError("mdp", "must provide transitions, rewards and initial_distribution",
                                    type(mdp).__name__) from exc


def optimal_values(mdp: TabularModel, tolerance: float = TIE_TOLERANCE) -> OptimalSolution:
    """V*, Q* and the full optimal action sets by backward induction (module docstring)."""
    tolerance = _validate.non_negative("tolerance", tolerance)
    transitions, rewards, initial = _check_model(mdp)
    horizon, num_states, num_actions, _ = transitions.shape
    values = np.zeros((horizon + 1, num_states))
    q = np.zeros((horizon, num_states, num_actions))
    for h in range(horizon - 1, -1, -1):
        q[h] = rewards[h] + transitions[h] @ values[h + 1]
        values[h] = q[h].max(axis=-1)
    optimal = maximizing_actions(q, tolerance)
    for array in (q, values, optimal):
        array.setflags(write=False)
    return OptimalSolution(q, values, optimal, float(initial @ values[0]), tolerance)


def _as_stochastic(policy: np.ndarray, horizon: int, num_states: int, num_actions: int) -> np.ndarray:
    policy = np.asarray(policy)
    if policy.shape == (horizon, num_states):
        if not np.issubdtype(policy.dtype, np.integer):
            raise InvalidParameterError("policy", "a deterministic policy must hold integer actions", policy.dtype)
        if np.any((policy < 0) | (policy >= num_actions)):
            raise InvalidParameterError("policy", f"actions must lie in 0..{num_actions - 1}", policy)
        return np.eye(num_actions)[policy]
    if policy.shape == (horizon, num_states, num_actions):
        probabilities = policy.astype(np.float64)
        if np.any(probabilities < 0) or np.any(np.abs(probabilities.sum(axis=-1) - 1) > 1e-9):
            raise InvalidParameterError("policy", "action probabilities must be non-negative and sum to 1", "")
        return probabilities
    raise InvalidParameterError(
        "policy", f"must have shape (H, S) = {(horizon, num_states)} (deterministic) or (H, S, A) (stochastic)",
        f"shape {policy.shape}",
    )


def policy_values(mdp: TabularModel, policy: np.ndarray) -> np.ndarray:
    """V^π_h(s) for h = 0..H (shape (H + 1, S)) of a deterministic (H, S) or stochastic (H, S, A) policy."""
    transitions, rewards, _ = _check_model(mdp)
    horizon, num_states, num_actions, _ = transitions.shape
    probabilities = _as_stochastic(policy, horizon, num_states, num_actions)
    values = np.zeros((horizon + 1, num_states))
    for h in range(horizon - 1, -1, -1):
        q = rewards[h] + transitions[h] @ values[h + 1]
        values[h] = np.sum(probabilities[h] * q, axis=-1)
    return values


def policy_value(mdp: TabularModel, policy: np.ndarray) -> float:
    """ρᵀ V^π_0: the exact expected return of ``policy`` from the initial distribution."""
    return float(mdp.initial_distribution @ policy_values(mdp, policy)[0])


def regret(mdp: TabularModel, policy: np.ndarray, optimal: OptimalSolution | None = None) -> float:
    """Exact per-episode regret ρᵀ(V*_0 − V^π_0) of the policy deployed in one episode.

    ``optimal`` may be passed to avoid recomputing V*. Rounding may leave values of order −1e-15 for an
    optimal policy; they are returned as computed, not clipped.
    """
    if optimal is None:
        optimal = optimal_values(mdp)
    return optimal.value - policy_value(mdp, policy)


class DeterministicPolicyEvaluator:
    """Fast exact evaluation of many deterministic policies on one MDP (used once per episode by the runner).

    Pre-computes V* once; :meth:`regret` then costs H gathers of size S·S (no (H, S, A) one-hot).
    """

    def __init__(self, mdp: TabularModel) -> None:
        self.transitions, self.rewards, self.initial = _check_model(mdp)
        self.optimal = optimal_values(mdp)
        self._states = np.arange(self.transitions.shape[1])
        self._stages = np.arange(self.transitions.shape[0])

    def value(self, policy: np.ndarray) -> float:
        """ρᵀ V^π_0 for a deterministic policy of shape (H, S)."""
        horizon = self.transitions.shape[0]
        stages = self._stages[:, None]
        rewards = self.rewards[stages, self._states, policy]  # r_h(s, π_h(s)), gathered for every stage at once
        transitions = self.transitions[stages, self._states, policy]
        values = np.zeros(self.transitions.shape[1])
        for h in range(horizon - 1, -1, -1):
            values = rewards[h] + transitions[h] @ values
        return float(self.initial @ values)

    def regret(self, policy: np.ndarray) -> float:
        """ρᵀ(V*_0 − V^π_0) for a deterministic policy of shape (H, S)."""
        return self.optimal.value - self.value(policy)
