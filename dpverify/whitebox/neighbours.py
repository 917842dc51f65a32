"""Neighbour search: users and environments built to realise the sensitivity a calibration assumes.

A privacy claim holds for every sequence of users and every environment in the agent's class (linear MDPs
with ‖φ‖ ≤ the declared bound, rewards in [0, 1]), so an auditor may choose both. The sensitivity replay
(:mod:`.sensitivity_replay`) then measures, per statistic family, the largest change one user causes —
and the closer the chosen pairs come to the recorded sensitivity, the smaller a sensitivity error that
can hide (the realised fraction is the tightness figure of the audit).

Two sources of pairs:

* **the environment's own canaries** (:func:`dpverify.agents.core.tapes.canary_tape`): users who always move
  to the state of highest or lowest optimal value, so the regression targets move from one end of their
  range to the other;
* **an audit linear MDP** (:func:`audit_linear_mdp`) of the agent's dimensions, whose features depend on
  the state only — so a user's tape fixes its features whatever the agent's policy — of three types:
  φ₊ = (c, s, 0, …) and φ₋ = (c, −s, 0, …) at an angle of 2·80° (‖φ₊ − φ₋‖ = 2 sin 80° = 1.97, nearly
  opposite), and φ⊥ = e₂ orthogonal to both (d ≥ 3). Type-+ states lead to type-+ states with reward 1
  (V* = H − h, the top of the target range), type-− states to type-− states with reward 0. A vector sum
  Σ φ·V(s′) then changes by nearly 2H between a user on φ₋ with high targets and one on φ₊ with high
  targets (replace-one), and a Gram sum Σ φφᵀ by √2 between users on orthogonal features.

It is a valid linear MDP (P_h(s′|s,a) = ⟨φ(s,a), μ_h(s′)⟩ with c·μ₀ = (u₊ + u₋)/2, s·μ₁ = (u₊ − u₋)/2 for the
uniform distributions u₊, u₋ over the type-+ and type-− states, μ₂ uniform over all states; r = ⟨φ, θ⟩ with
θ = (1/(2c), 1/(2s), ½, 0, …)), checked by :class:`~dpverify.agents.envs.linear_mdp.LinearMDP` itself.

* **an oversized audit linear MDP** (``oversized=True``): the same dynamics with φ₊ = (1, 1, …, 1) and
  φ₋ = (1, −1, …, −1), every coordinate in [−1, 1] but ‖φ‖ = √d, and its declared ``feature_norm_bound`` √d.
  An agent whose sensitivities assume ‖φ‖ ≤ F must refuse it (the contract checks that); an agent that
  accepts it claims privacy on it — one that clips features coordinate by coordinate, say — and is audited
  there.
* **an isolation linear MDP** (:func:`isolation_linear_mdp`) for the contract's billboard isolation check: the
  type-± states of the audit MDP on two coordinates (a user's path moves the raw sums by its type) and a code of
  the action on the others, which sets part of the reward — so that the greedy choice between actions turns on
  the regression's action coordinates, which every user's targets move, and a planner that reads raw sums changes
  its choices where an agent of the environment's own, whose actions barely move the sums, would not.
* **an audit linear mixture MDP** (:mod:`.mixture_neighbours`) for agents of linear mixture MDPs
  (LDP-UCRL-VTR): value features of full norm at chosen angles, values at their caps, and path
  canaries that stay in one state. :func:`audit_environment`, :func:`audit_tapes` and
  :func:`candidate_pairs` pick it for a :class:`~dpverify.agents.envs.linear_mdp.LinearMixtureMDP`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.agents.core.tapes import UserTape, canary_tape
from dpverify.agents.envs.linear_mdp import LinearMDP, LinearMixtureMDP
from dpverify.errors import InvalidParameterError
from dpverify.whitebox.mixture_neighbours import PIVOT, audit_mixture_mdp, mixture_tapes

#: Half the angle between φ₊ and φ₋ (degrees): close to 90° makes them nearly opposite.
HALF_ANGLE_DEGREES = 80.0
#: Fewest states of the audit environment (room for every feature type).
MIN_AUDIT_STATES = 6


@dataclass(frozen=True)
class CandidatePair:
    """A neighbouring pair at one position: the user in the recorded run (``base``; None: an empty slot)
    and the user who replaces it (``replacement``; None: the slot emptied)."""

    base: str | None
    replacement: str | None

    @property
    def label(self) -> str:
        return f"{self.base or 'absent'} -> {self.replacement or 'absent'}"


def _types(num_states: int, dim: int, oversized: bool = False) -> list[str]:
    kinds = ["+", "-", "o"] if dim >= 3 and not oversized else ["+", "-"]
    return [kinds[s % len(kinds)] for s in range(num_states)]


def audit_linear_mdp(horizon: int, num_states: int, num_actions: int, dim: int,
                     oversized: bool = False) -> LinearMDP | None:
    """The audit linear MDP of the module docstring (at least :data:`MIN_AUDIT_STATES` states), or its oversized
    variant; None for d = 1 (a one-dimensional linear MDP has a single feature direction, nothing to choose)."""
    if dim < 2:
        return None
    num_states = max(num_states, MIN_AUDIT_STATES)
    types = _types(num_states, dim, oversized)
    c, s = math.cos(math.radians(HALF_ANGLE_DEGREES)), math.sin(math.radians(HALF_ANGLE_DEGREES))
    vectors = {"+": np.zeros(dim), "-": np.zeros(dim), "o": np.zeros(dim)}
    vectors["+"][:2] = (c, s)
    vectors["-"][:2] = (c, -s)
    if dim >= 3:
        vectors["o"][2] = 1.0
    if oversized:
        return _oversized(horizon, num_states, num_actions, dim, types)
    features = np.stack([np.broadcast_to(vectors[t], (num_actions, dim)) for t in types])  # (S, A, d)
    plus = np.array([t == "+" for t in types], dtype=float)
    minus = np.array([t == "-" for t in types], dtype=float)
    u_plus, u_minus = plus / plus.sum(), minus / minus.sum()
    mu = np.full((dim, num_states), 1.0 / num_states)  # unused directions: any distribution
    mu[0] = (u_plus + u_minus) / (2.0 * c)
    mu[1] = (u_plus - u_minus) / (2.0 * s)
    theta = np.zeros(dim)
    theta[:2] = (1.0 / (2.0 * c), 1.0 / (2.0 * s))
    if dim >= 3:
        theta[2] = 0.5
    rewards_ok = np.clip(features @ theta, 0.0, 1.0)
    if not np.allclose(rewards_ok, features @ theta, atol=1e-12):
        return None
    initial = np.full(num_states, 1.0 / num_states)
    return LinearMDP(features, np.broadcast_to(mu, (horizon, dim, num_states)), np.broadcast_to(theta, (horizon, dim)),
                     initial, feature_norm_bound=1.0, name="audit-linear")


def _oversized(horizon: int, num_states: int, num_actions: int, dim: int, types: list[str]) -> LinearMDP:
    """The oversized variant (module docstring): φ± = (1, ±1, …, ±1), μ₀ = (u₊ + u₋)/2, μ₁ = (u₊ − u₋)/2, the other
    rows 0 (their features' contributions cancel: P(·|φ±) = μ₀ ± μ₁), θ = (½, ½, 0, …)."""
    plus = np.array([t == "+" for t in types], dtype=float)
    minus = np.array([t == "-" for t in types], dtype=float)
    u_plus, u_minus = plus / plus.sum(), minus / minus.sum()
    vectors = {"+": np.ones(dim), "-": -np.ones(dim)}
    vectors["-"][0] = 1.0
    features = np.stack([np.broadcast_to(vectors[t], (num_actions, dim)) for t in types])
    mu = np.zeros((dim, num_states))
    mu[0] = (u_plus + u_minus) / 2.0
    mu[1] = (u_plus - u_minus) / 2.0
    theta = np.zeros(dim)
    theta[:2] = 0.5
    initial = np.full(num_states, 1.0 / num_states)
    return LinearMDP(features, np.broadcast_to(mu, (horizon, dim, num_states)), np.broadcast_to(theta, (horizon, dim)),
                     initial, feature_norm_bound=math.sqrt(dim), name="audit-linear-oversized")


#: The isolation MDP's feature weights: the constant, the state's type, the action code (squares sum to 0.94 ≤ 1).
ISOLATION_WEIGHTS = (0.3, 0.7, 0.6)


def isolation_linear_mdp(horizon: int, num_states: int, num_actions: int, dim: int) -> LinearMDP | None:
    """The isolation linear MDP of the module docstring, or None for d < 3 (no coordinate left for the actions).

    φ(s, a) = (c, ±t, r·u_a/√m) for a state of type ± (types alternate over at least :data:`MIN_AUDIT_STATES`
    states), u_a ∈ {−1, +1}^m the binary code of a (m = d − 2); μ₀ = (u₊ + u₋)/(2c), μ₁ = (u₊ − u₋)/(2t) and
    the action rows 0, so a type-± state leads to a uniform state of its own type; θ = (½/c, ¼/t, ¼/(r√m)·𝟙),
    so r(s, a) = ½ ± ¼ + ¼·mean(u_a) ∈ [0, 1]."""
    if dim < 3:
        return None
    c, t, r = ISOLATION_WEIGHTS
    num_states = max(num_states, MIN_AUDIT_STATES)
    m = dim - 2
    signs = np.array([1.0 if s % 2 == 0 else -1.0 for s in range(num_states)])
    bits = (np.arange(num_actions)[:, None] >> np.arange(m)[None, :]) & 1
    codes = r * (2.0 * bits - 1.0) / math.sqrt(m)  # (A, m)
    features = np.zeros((num_states, num_actions, dim))
    features[..., 0] = c
    features[..., 1] = t * signs[:, None]
    features[..., 2:] = codes[None, :, :]
    plus, minus = (signs > 0).astype(float), (signs < 0).astype(float)
    mu = np.zeros((dim, num_states))
    mu[0] = (plus / plus.sum() + minus / minus.sum()) / (2.0 * c)
    mu[1] = (plus / plus.sum() - minus / minus.sum()) / (2.0 * t)
    theta = np.full(dim, 0.25 / (r * math.sqrt(m)))
    theta[:2] = (0.5 / c, 0.25 / t)
    initial = np.full(num_states, 1.0 / num_states)
    return LinearMDP(features, np.broadcast_to(mu, (horizon, dim, num_states)),
                     np.broadcast_to(theta, (horizon, dim)), initial, feature_norm_bound=1.0, name="isolation-linear")


def path_tape(mdp: Any, states: Sequence[int], label: str) -> UserTape:
    """A user who visits ``states`` (s₀ … s_H) whatever the agent does: T[h, s, a] = s_{h+1}."""
    horizon = int(mdp.horizon)
    num_states, num_actions = int(mdp.num_states), int(mdp.num_actions)
    path = np.asarray(states, dtype=np.int64)
    table = np.broadcast_to(path[1:, None, None], (horizon, num_states, num_actions))
    return UserTape(int(path[0]), table, label)


def audit_tapes(mdp: LinearMDP | LinearMixtureMDP, oversized: bool = False) -> dict[str, UserTape]:
    """The audit environment's canaries, by the feature types of their path (module docstring):
    ``plus``, ``minus``, ``alt-pm`` (+ − + …), ``alt-mp`` (− + − …) and ``orth`` (d ≥ 3, not
    oversized); in an audit mixture MDP its path canaries
    (:func:`~.mixture_neighbours.mixture_tapes`)."""
    if isinstance(mdp, LinearMixtureMDP):
        return mixture_tapes(mdp)
    own = getattr(mdp, "audit_tapes", None)
    if callable(own):  # an environment with canaries of its own (the audit bandit, dpverify.agents.envs.bandit)
        return dict(own())
    types = _types(mdp.num_states, mdp.dim, oversized)
    first = {t: types.index(t) for t in set(types)}
    steps = mdp.horizon + 1
    patterns = {"plus": ["+"] * steps, "minus": ["-"] * steps,
                "alt-pm": ["+" if h % 2 == 0 else "-" for h in range(steps)],
                "alt-mp": ["-" if h % 2 == 0 else "+" for h in range(steps)]}
    if "o" in first:
        patterns["orth"] = ["o"] * steps
    return {name: path_tape(mdp, [first[t] for t in pattern], f"canary-{name}") for name, pattern in patterns.items()}


def own_tapes(mdp: object) -> dict[str, UserTape]:
    """The environment's own canaries: ``high`` and ``low`` optimal value (:func:`canary_tape`)."""
    return {"high": canary_tape(mdp, "high"), "low": canary_tape(mdp, "low")}


def candidate_pairs(names: Sequence[str], relation: str, audit: bool) -> list[CandidatePair]:
    """The pairs replayed at each position: for replace-one, bases that realise the low end (the environment's
    ``low``; ``minus`` and ``alt-mp`` in the audit environment; the ``pivot`` of the audit mixture
    MDP) against every other canary; for add/remove-one, an empty slot against every canary."""
    if relation == "add-remove-one":
        return [CandidatePair(None, name) for name in names]
    bases = [b for b in (("minus", "alt-mp", PIVOT) if audit else ("low", "high")) if b in names]
    if not bases:
        bases = list(names[:1])
    return [CandidatePair(base, other) for base in bases for other in names if other != base]


def audit_environment(mdp: Any) -> Any:
    """The audit environment of ``mdp``'s dimensions — the audit linear MDP
    (:func:`audit_linear_mdp`) of a linear MDP, the audit linear mixture MDP
    (:func:`~.mixture_neighbours.audit_mixture_mdp`, with the bound ``mdp`` declares) of a linear
    mixture MDP, the environment's own (``mdp.audit_environment()``: a bandit's audit bandit,
    :mod:`dpverify.agents.envs.bandit`) — or a one-line error naming the worst-case canary design that asked for it."""
    own = getattr(mdp, "audit_environment", None)
    if callable(own):
        return own()
    if isinstance(mdp, LinearMixtureMDP):
        bound = mdp.feature_norm_bound
        mixture = audit_mixture_mdp(mdp.horizon, mdp.num_actions, mdp.dim, bound)
        if mixture is None:
            raise InvalidParameterError("canary_design", "worst-case needs dimension d >= 2",
                                        mdp.dim)
        return mixture
    if not all(hasattr(mdp, a) for a in ("horizon", "num_states", "num_actions", "dim", "features")):
        raise InvalidParameterError("canary_design", "worst-case needs an environment that is a "
                                    "linear MDP or a linear mixture MDP (the audit environment is "
                                    "one of its kind, of its dimensions)", type(mdp).__name__)
    audit = audit_linear_mdp(mdp.horizon, mdp.num_states, mdp.num_actions, mdp.dim)
    if audit is None:
        raise InvalidParameterError("canary_design", "worst-case needs feature dimension >= 2", mdp.dim)
    return audit
