"""Stochastic bandits with a finite set of contexts, each round one user, with exact regret.

A :class:`Bandit` is what a bandit learner faces (Lattimore & Szepesvári 2020, "Bandit Algorithms", §4.1
and §19): at round t a user arrives with a context c_t drawn from ``context_distribution`` (the arm set of
the round: arm a of context c has the feature vector x_{c,a} ∈ ℝ^d, ‖x‖ ≤ ``feature_norm_bound``), the
learner pulls one arm a_t, and the user's reward r_t ∈ [0, 1] is drawn from the outcome distribution of
(c_t, a_t): reward ``levels[j]`` with probability ``outcome_probabilities[c, a, j]``. The mean reward of an
arm is m(c, a) = Σ_j P(j | c, a)·levels[j]; the **regret of a round** is max_a m(c_t, a) − m(c_t, a_t) in
expectation over c_t — the mean reward gap of the arm chosen, never a realised reward. A finite-armed
bandit is the case of one context with one-hot features (x_a = e_a, so d = A); a linear contextual bandit
has m(c, a) = ⟨θ, x_{c,a}⟩ (:func:`dpverify.agents.envs.bandit_instances.linear_bandit`).

Why a round is represented as an episode of horizon 1 — and why that is not a disguise
--------------------------------------------------------------------------------------
Everything dpverify checks about an agent — exact regret (:mod:`dpverify.agents.core.planning`), the runner,
the no-data control, the users as response tapes (:mod:`dpverify.agents.core.tapes`) on which the audits,
the white-box replays and the contract build their neighbouring datasets — is written for a finite MDP
given by its tensors. A bandit round is exactly a finite MDP of horizon H = 1, with nothing added:

* **states** are the C contexts (states 0 … C − 1) and the L reward outcomes (states C … C + L − 1); a
  round starts in its context (``initial_distribution`` = the context distribution, 0 on the outcomes);
* **actions** are the arms; the **transition** from context c under arm a goes to outcome j with
  probability P(j | c, a), so the user's realised reward is read from the state the round ends in
  (:meth:`Bandit.round_of`), never from ``rewards``;
* the **reward** of (c, a) is the arm's mean m(c, a), so backward induction over one stage gives
  V*(c) = max_a m(c, a), and ρᵀ(V* − V^π) is exactly the expected regret of the round: the planner's
  exact regret needs no bandit code. (An outcome state is never a starting state; its reward is 0 and it
  moves to outcome 0.)
* a user's **response tape** (initial state and next-state table) is the user's context and the reward
  each arm *would* have given: precisely the user's data in the bandit privacy literature (the context
  and the reward vector of Shariff & Sheffet 2018; the reward sequence of Mishra & Thakurta 2015). A
  replace-one neighbour replaces one user's context and rewards; an empty slot is the user absent. So
  the audits, the white-box replays and the contract apply as they are.

The user-facing shape stays a bandit: agents see contexts, arms and rewards (:meth:`Bandit.round_of`), the
environment's canaries are users with reward 1 or 0 on every arm (:meth:`Bandit.canary_tape`), and its
audit environment is a bandit whose contexts fix the features whatever arm is pulled
(:meth:`Bandit.audit_environment`). The one thing of an MDP that does not carry over is a *known* reward:
in an MDP of :mod:`dpverify.agents.envs.linear_mdp` the agents know r_h(s, a), here ``rewards`` holds the means
the agents must learn, so :attr:`Bandit.rewards_known` is False (the no-data control then compares with the
uniformly random policy, not a known-reward greedy one) and no agent of :mod:`dpverify.agents.bandits` reads
``rewards``.

Validation on construction (:class:`~dpverify.errors.InvalidParameterError` naming the array and the rule):
finite entries, feature norms within the declared bound, distributions summing to 1, levels increasing in
[0, 1]. Every array is a read-only float64 copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from dpverify import _validate
from dpverify.errors import InvalidParameterError

from .linear_mdp import (
    _check_distributions,
    _check_norms,
    _check_rewards,
    _check_shape,
    _frozen_array,
    _TabularDynamics,
)

if TYPE_CHECKING:  # naming the environments imports no agent code
    from ..core.base import Trajectory
    from ..core.tapes import UserTape

#: Largest |⟨θ, x⟩ − m(c, a)| accepted when a linear bandit declares its θ (rounding of the outcome law).
LINEAR_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class Bandit(_TabularDynamics):
    """A stochastic bandit with C contexts, A arms per context, d-dimensional features (module docstring).

    Attributes:
        features: x_{c,a}, shape (C, A, d).
        outcome_probabilities: P(reward = levels[j] | c, a), shape (C, A, L).
        levels: the reward values, shape (L,), strictly increasing in [0, 1].
        context_distribution: the law of a round's context, shape (C,).
        feature_norm_bound: declared F with ‖x_{c,a}‖₂ ≤ F (checked); private agents calibrate to it.
        theta: the parameter θ of a linear bandit (shape (d,)), or None; when given, ⟨θ, x_{c,a}⟩ must equal
            the mean m(c, a) within :data:`LINEAR_TOLERANCE`.
        name: a label used in results.
        means, transitions, rewards, initial_distribution: derived (the tabular view of horizon 1).
    """

    features: np.ndarray
    outcome_probabilities: np.ndarray
    levels: np.ndarray
    context_distribution: np.ndarray
    feature_norm_bound: float = 1.0
    theta: np.ndarray | None = None
    name: str = "bandit"
    means: np.ndarray = field(init=False, repr=False)
    transitions: np.ndarray = field(init=False, repr=False)
    rewards: np.ndarray = field(init=False, repr=False)
    initial_distribution: np.ndarray = field(init=False, repr=False)

    #: The rewards of the tabular view are the means the agents must learn (module docstring).
    rewards_known: ClassVar[bool] = False
    #: What one episode of the tabular view is, for reports.
    unit: ClassVar[str] = "round"

    def __post_init__(self) -> None:
        features = _frozen_array("features", self.features, 3)
        contexts, arms, dim = features.shape
        bound = _validate.positive("feature_norm_bound", self.feature_norm_bound)
        _check_norms("features", np.linalg.norm(features, axis=-1), bound)
        levels = _frozen_array("levels", self.levels, 1)
        _check_rewards("levels", levels)
        if np.any(np.diff(levels) <= 0):
            raise InvalidParameterError("levels", "must be strictly increasing", levels.tolist())
        outcomes = _frozen_array("outcome_probabilities", self.outcome_probabilities, 3)
        _check_shape("outcome_probabilities", outcomes, (contexts, arms, len(levels)))
        _check_distributions("outcome_probabilities", outcomes)
        context = _frozen_array("context_distribution", self.context_distribution, 1)
        _check_shape("context_distribution", context, (contexts,))
        _check_distributions("context_distribution", context)
        means = outcomes @ levels
        means.setflags(write=False)
        if self.theta is not None:
            theta = _frozen_array("theta", self.theta, 1)
            _check_shape("theta", theta, (dim,))
            gap = float(np.max(np.abs(features @ theta - means)))
            if gap > LINEAR_TOLERANCE:
                raise InvalidParameterError("theta", f"must give the mean rewards ⟨θ, x⟩ within {LINEAR_TOLERANCE:g}",
                                            gap)
            object.__setattr__(self, "theta", theta)
        for name, value in (("features", features), ("levels", levels), ("outcome_probabilities", outcomes),
                            ("context_distribution", context), ("feature_norm_bound", bound), ("means", means)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "initial_distribution", np.concatenate([context, np.zeros(len(levels))]))
        self._adopt_tabular(*self._tabular_view())

    def _tabular_view(self) -> tuple[np.ndarray, np.ndarray]:
        """(transitions (1, S, A, S), rewards (1, S, A)) of the horizon-1 MDP (module docstring)."""
        C, A, L = self.num_contexts, self.num_arms, self.num_levels
        S = C + L
        transitions = np.zeros((1, S, A, S))
        transitions[0, :C, :, C:] = self.outcome_probabilities
        transitions[0, C:, :, C] = 1.0  # an outcome state (never a starting state) moves to outcome 0
        rewards = np.zeros((1, S, A))
        rewards[0, :C] = self.means
        return transitions, rewards

    # ---- the bandit's own shape -------------------------------------------------------------------------

    @property
    def num_contexts(self) -> int:
        """C, the number of contexts (arm sets)."""
        return int(self.features.shape[0])

    @property
    def num_arms(self) -> int:
        """A, the arms of every context (the actions of the tabular view)."""
        return int(self.features.shape[1])

    @property
    def num_levels(self) -> int:
        """L, the number of reward values."""
        return int(self.levels.shape[0])

    @property
    def dim(self) -> int:
        """d, the feature dimension."""
        return int(self.features.shape[-1])

    def round_of(self, trajectory: Trajectory) -> tuple[int, int, float]:
        """(context, arm, reward) of one user's round: the state it started in, the arm pulled, and the reward
        of the outcome state it ended in."""
        context, arm, outcome = int(trajectory.states[0]), int(trajectory.actions[0]), int(trajectory.states[1])
        return context, arm, float(self.reward_of(np.array([outcome]))[0])

    def realised_rewards(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """The reward the user realised in a round (states: its context, then its outcome): what an agent is shown
        (:func:`dpverify.agents.core.base.rewards_seen`), never the arm's mean."""
        return self.reward_of(np.asarray(states)[1:])

    def reward_of(self, outcomes: np.ndarray) -> np.ndarray:
        """The rewards of end states (any shape): ``levels[state − C]``; a state that is not an outcome is
        refused (a tape's next state must be one)."""
        index = np.asarray(outcomes, dtype=np.int64) - self.num_contexts
        if np.any((index < 0) | (index >= self.num_levels)):
            raise InvalidParameterError("state", f"must be an outcome state {self.num_contexts}..."
                                        f"{self.num_contexts + self.num_levels - 1} at the end of a round",
                                        np.asarray(outcomes).tolist())
        return self.levels[index]

    def gaps(self) -> np.ndarray:
        """max_a m(c, a) − m(c, a) for every (context, arm), shape (C, A): the regret of each pull."""
        return self.means.max(axis=1, keepdims=True) - self.means

    # ---- users chosen by an auditor ---------------------------------------------------------------------

    def user(self, context: int, reward: str, label: str) -> UserTape:
        """A user who arrives with ``context`` and gets the highest (``reward="high"``) or lowest (``"low"``)
        reward on every arm, whatever the learner pulls (a canary need not follow the outcome law: a privacy
        claim holds for every user)."""
        from ..core.tapes import UserTape

        outcome = self.num_contexts + (self.num_levels - 1 if reward == "high" else 0)
        table = np.full((1, self.num_states, self.num_arms), outcome, dtype=np.int64)
        return UserTape(int(context), table, label)

    def canary_tape(self, kind: str = "high") -> UserTape:
        """The environment's canaries (:func:`dpverify.agents.core.tapes.canary_tape`): the high one gets the
        top reward on every arm, the low one the bottom reward, both in the context whose shortest feature is
        longest (the lowest such index), so that a pull moves a sum by as much as this environment allows."""
        if kind not in ("high", "low"):
            raise InvalidParameterError("canary", "must be one of ('high', 'low')", kind)
        shortest = np.linalg.norm(self.features, axis=-1).min(axis=1)
        return self.user(int(np.argmax(shortest)), kind, f"canary-{kind}")

    def audit_environment(self) -> Bandit:
        """The audit bandit of this one's dimensions (:func:`audit_bandit`), for the worst-case canary design."""
        return audit_bandit(self.dim, self.num_arms, self.levels)


def audit_bandit(dim: int, num_arms: int, levels: np.ndarray | None = None) -> Bandit:
    """The audit bandit of dimension d with A arms: contexts +e₁, −e₁ and (d ≥ 2) e₂, every arm of a context
    having the same feature (so a user's context fixes the feature whatever the learner pulls), mean reward 0
    (θ = 0; the audit's canaries choose their rewards), reward levels ``levels`` (default {0, 1})."""
    dim = _validate.integer("dim", dim, minimum=1)
    num_arms = _validate.integer("num_arms", num_arms, minimum=1)
    values = np.array([0.0, 1.0]) if levels is None else np.asarray(levels, dtype=float)
    directions = [np.eye(dim)[0], -np.eye(dim)[0]] + ([np.eye(dim)[1]] if dim >= 2 else [])
    features = np.stack([np.broadcast_to(x, (num_arms, dim)) for x in directions])
    outcomes = np.zeros((len(directions), num_arms, len(values)))
    outcomes[..., 0] = 1.0
    if values[0] != 0.0:
        raise InvalidParameterError("levels", "must start at 0 for the audit bandit (mean reward 0)", values[0])
    contexts = np.full(len(directions), 1.0 / len(directions))
    return AuditBandit(features, outcomes, values, contexts, 1.0, np.zeros(dim), name="audit-bandit")


@dataclass(frozen=True, eq=False)
class AuditBandit(Bandit):
    """The audit bandit (:func:`audit_bandit`): it is its own audit environment."""

    #: How verify's report names the worst-case canary environment.
    audit_label: ClassVar[str] = "audit bandit"

    def audit_environment(self) -> Bandit:
        return self

    def audit_tapes(self) -> dict[str, UserTape]:
        """The audit canaries: a user in the context whose every arm has the feature +e₁ (``plus``), −e₁
        (``minus``) or e₂ (``orth``, d ≥ 2), with the top reward, and ``plus-zero`` (+e₁, the bottom reward).
        ``minus`` against ``plus`` moves a target sum Σ x·r by 2 (its full replace-one sensitivity) and the
        augmented sum Σ z zᵀ, z = (x, r), by √8 (its full sensitivity); against ``orth`` it moves a Gram sum
        Σ x xᵀ by √2 (full); ``plus`` against ``plus-zero`` moves a reward sum by 1 (full)."""
        contexts = {"plus": 0, "minus": 1, "orth": 2, "plus-zero": 0}
        return {name: self.user(c, "low" if name == "plus-zero" else "high", f"canary-{name}")
                for name, c in contexts.items() if c < self.num_contexts}


__all__ = ["AuditBandit", "Bandit", "audit_bandit"]
