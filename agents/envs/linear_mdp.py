"""Finite-horizon MDPs with finite state and action spaces, in tabular, linear and linear-mixture form.

Conventions (used by every environment, planner and agent of :mod:`agents`):

* stages are 0-indexed, ``h = 0, ..., H-1``; the paper's stage ``h`` is our ``h - 1``;
* ``transitions[h, s, a, s']`` = P_h(s' | s, a), shape ``(H, S, A, S)``;
* ``rewards[h, s, a]`` = r_h(s, a) in [0, 1], deterministic and known to the agents (as in Jin et al. 2020
  and Sahu 2025 §3, where Q̂ = r_h + ŵᵀφ + bonus);
* ``initial_distribution[s]`` = probability that an episode starts in s.

Model classes:

* :class:`FiniteMDP` — the tabular model itself.
* :class:`LinearMDP` — a linear MDP (Jin et al. 2020, Definition 2.2; Sahu 2025 §2):
  P_h(s'|s,a) = ⟨φ_h(s,a), μ_h(s')⟩ and r_h(s,a) = ⟨φ_h(s,a), θ_h⟩, with features
  ``features[h, s, a, :]`` (d-vectors), ``mu[h, :, s']`` and ``theta[h, :]``. Transitions and rewards are
  computed from (φ, μ, θ), so the linear structure holds exactly.
* :class:`LinearMixtureMDP` — a linear mixture MDP (Ayoub et al. 2020; Jia et al. 2020; Liao et al. 2021
  Definition 3.1): P_h(s'|s,a) = ⟨ψ(s'|s,a), θ_h⟩ with a known basis ``basis[h, s, a, s', :]``.

Validation on construction (:class:`~dpverify.errors.InvalidParameterError` naming the array, the rule
and the first offending index): every entry finite; probabilities non-negative, each distribution
summing to 1 within :data:`PROBABILITY_TOLERANCE`; rewards in [0, 1]; feature norms within the declared
``feature_norm_bound`` (relative slack :data:`NORM_TOLERANCE`). Every array is stored as a read-only
float64 copy, so a constructed instance cannot change.

Sampling uses only the ``numpy.random.Generator`` passed in by the caller.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, field

import numpy as np

from dpverify import _validate
from dpverify.errors import InvalidParameterError
from dpverify.limits import require_memory

#: Tolerance on |Σ_s' P(s'|s,a) − 1| and on |Σ_s ρ(s) − 1|.
PROBABILITY_TOLERANCE = 1e-12
#: Relative slack allowed on feature norms, to absorb rounding (e.g. ‖φ/3‖ computed as 1 + 1e-16).
NORM_TOLERANCE = 1e-12
#: Largest S for which the mixture feature-norm bound is computed exactly by enumerating V ∈ {0,1}^S.
_EXACT_MIXTURE_NORM_MAX_STATES = 12


# ----------------------------------------------------------------------------------------------------
# array validation helpers
# ----------------------------------------------------------------------------------------------------


def require_environment_memory(sizes: dict[str, int], nbytes: float, what: str) -> None:
    """Refuse an environment whose arrays (``nbytes``, the builder's estimate) cannot fit in memory, before they
    are made; the error names the largest of ``sizes`` (option name → value), the size that made it so."""
    name = max(sizes, key=lambda key: sizes[key])
    shown = ", ".join(f"{key} = {value}" for key, value in sizes.items())
    require_memory(name, sizes[name], nbytes, f"{what} ({shown})")


def _frozen_array(name: str, value: object, ndim: int) -> np.ndarray:
    """A read-only float64 copy of ``value`` with ``ndim`` dimensions and finite entries."""
    try:
        array = np.array(value, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(name, "must be an array of real numbers", type(value).__name__) from exc
    if array.ndim != ndim:
        raise InvalidParameterError(name, f"must have {ndim} dimensions", f"shape {array.shape}")
    if array.size == 0:
        raise InvalidParameterError(name, "must not be empty", f"shape {array.shape}")
    if not np.all(np.isfinite(array)):
        index = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        raise InvalidParameterError(name, f"must be finite (entry {index})", float(array[index]))
    array.setflags(write=False)
    return array


def _check_distributions(name: str, array: np.ndarray) -> None:
    """Every slice along the last axis is a probability vector."""
    if np.any(array < 0):
        index = tuple(int(i) for i in np.argwhere(array < 0)[0])
        raise InvalidParameterError(name, f"must be non-negative (entry {index})", float(array[index]))
    sums = array.sum(axis=-1)
    bad = np.abs(sums - 1.0) > PROBABILITY_TOLERANCE
    if np.any(bad):
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidParameterError(
            name, f"must sum to 1 within {PROBABILITY_TOLERANCE:g} over its last axis (slice {index})",
            float(sums[index]),
        )


def _check_rewards(name: str, rewards: np.ndarray) -> None:
    bad = (rewards < 0) | (rewards > 1)
    if np.any(bad):
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidParameterError(name, f"must lie in [0, 1] (entry {index})", float(rewards[index]))


def _check_norms(name: str, norms: np.ndarray, bound: float) -> None:
    bad = norms > bound * (1.0 + NORM_TOLERANCE)
    if np.any(bad):
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InvalidParameterError(
            name, f"norm must be <= feature_norm_bound = {bound:g} (entry {index})", float(norms[index])
        )


def _check_shape(name: str, array: np.ndarray, expected: tuple[int, ...]) -> None:
    if array.shape != expected:
        raise InvalidParameterError(name, f"must have shape {expected}", f"shape {array.shape}")


# ----------------------------------------------------------------------------------------------------
# common tabular behaviour
# ----------------------------------------------------------------------------------------------------


class _TabularDynamics:
    """Shape accessors and sampling shared by the three model classes.

    Subclasses provide ``transitions`` (H, S, A, S), ``rewards`` (H, S, A), ``initial_distribution`` (S,),
    a ``name`` and call :meth:`_prepare_sampling` at the end of validation.
    """

    transitions: np.ndarray
    rewards: np.ndarray
    initial_distribution: np.ndarray
    name: str

    @property
    def horizon(self) -> int:
        """H, the number of stages of an episode."""
        return int(self.transitions.shape[0])

    @property
    def num_states(self) -> int:
        return int(self.transitions.shape[1])

    @property
    def num_actions(self) -> int:
        return int(self.transitions.shape[2])

    def _adopt_tabular(self, transitions: np.ndarray, rewards: np.ndarray) -> None:
        """Validate (transitions, rewards, initial distribution) as a :class:`FiniteMDP` and store the
        validated read-only arrays: the linear models derive their dynamics and then call this."""
        tabular = FiniteMDP(transitions, rewards, self.initial_distribution, self.name)
        object.__setattr__(self, "transitions", tabular.transitions)
        object.__setattr__(self, "rewards", tabular.rewards)
        object.__setattr__(self, "initial_distribution", tabular.initial_distribution)
        self._prepare_sampling()

    def _prepare_sampling(self) -> None:
        object.__setattr__(self, "_cumulative", _sampling_cdf(self.transitions))
        object.__setattr__(self, "_initial_cumulative", _sampling_cdf(self.initial_distribution))

    def sample_initial_state(self, rng: np.random.Generator) -> int:
        """Draw s_1 from the initial distribution with the caller's generator."""
        return self._inverse_cdf(self._initial_cumulative, rng.random())  # type: ignore[attr-defined]

    def sample_next_state(self, h: int, s: int, a: int, uniform: float) -> int:
        """The next state for a given uniform number in [0, 1) (inverse-CDF sampling)."""
        return self._inverse_cdf(self._cumulative[h, s, a], uniform)  # type: ignore[attr-defined]

    def step(self, h: int, s: int, a: int, rng: np.random.Generator) -> tuple[float, int]:
        """Take action ``a`` in state ``s`` at stage ``h``: returns (r_h(s, a), s' ~ P_h(·|s, a))."""
        return float(self.rewards[h, s, a]), self.sample_next_state(h, s, a, rng.random())

    @staticmethod
    def _inverse_cdf(cumulative: np.ndarray, uniform: float) -> int:
        # = np.searchsorted(cumulative, uniform, side="right") on the non-decreasing CDF, without the
        # numpy call overhead (a rollout samples H next states one by one).
        return bisect.bisect_right(cumulative, uniform)


def _sampling_cdf(probabilities: np.ndarray) -> np.ndarray:
    """Cumulative sums along the last axis, set to exactly 1 from the last positive entry on.

    With ``searchsorted(cdf, u, side="right")`` and u in [0, 1) this returns s' with probability
    P(s') and never a zero-probability state, even when the float sum ends at 1 - 1e-16.
    """
    cdf = np.cumsum(probabilities, axis=-1)
    positive = probabilities > 0
    last = probabilities.shape[-1] - 1 - np.argmax(positive[..., ::-1], axis=-1)
    after_last = np.arange(probabilities.shape[-1]) >= last[..., None]
    cdf[after_last] = 1.0
    cdf.setflags(write=False)
    return cdf


@dataclass(frozen=True, eq=False)
class FiniteMDP(_TabularDynamics):
    """A finite-horizon tabular MDP (validated; arrays read-only).

    Attributes:
        transitions: P_h(s'|s,a), shape (H, S, A, S).
        rewards: r_h(s,a) in [0, 1], shape (H, S, A).
        initial_distribution: shape (S,).
        name: a label used in results.
    """

    transitions: np.ndarray
    rewards: np.ndarray
    initial_distribution: np.ndarray
    name: str = "finite-mdp"

    def __post_init__(self) -> None:
        transitions = _frozen_array("transitions", self.transitions, 4)
        h, s, a, s2 = transitions.shape
        if s2 != s:
            raise InvalidParameterError("transitions", "must have shape (H, S, A, S)", f"shape {transitions.shape}")
        _check_distributions("transitions", transitions)
        rewards = _frozen_array("rewards", self.rewards, 3)
        _check_shape("rewards", rewards, (h, s, a))
        _check_rewards("rewards", rewards)
        initial = _frozen_array("initial_distribution", self.initial_distribution, 1)
        _check_shape("initial_distribution", initial, (s,))
        _check_distributions("initial_distribution", initial)
        object.__setattr__(self, "transitions", transitions)
        object.__setattr__(self, "rewards", rewards)
        object.__setattr__(self, "initial_distribution", initial)
        self._prepare_sampling()


@dataclass(frozen=True, eq=False)
class LinearMDP(_TabularDynamics):
    """A finite linear MDP: P_h(s'|s,a) = ⟨φ_h(s,a), μ_h(s')⟩, r_h(s,a) = ⟨φ_h(s,a), θ_h⟩.

    Definition 2.2 of Jin et al. 2020 ("Provably efficient RL with linear function approximation");
    Sahu 2025 §2. ``transitions`` and ``rewards`` are derived from the linear parameters and validated
    as a tabular MDP.

    Attributes:
        features: φ, shape (H, S, A, d), or (S, A, d) for stage-independent features (stored broadcast
            to (H, S, A, d) once H is known from ``mu``).
        mu: μ, shape (H, d, S): column ``mu[h, :, s']`` is μ_h(s').
        theta: θ, shape (H, d).
        initial_distribution: shape (S,).
        feature_norm_bound: declared L with ‖φ_h(s,a)‖₂ ≤ L for every (h, s, a); checked here. Privacy
            code calibrates sensitivities to this value (the private agents refuse an environment whose
            declared bound exceeds the bound they assume).
        name: a label used in results.
        transitions, rewards: derived (not constructor arguments).
    """

    features: np.ndarray
    mu: np.ndarray
    theta: np.ndarray
    initial_distribution: np.ndarray
    feature_norm_bound: float = 1.0
    name: str = "linear-mdp"
    transitions: np.ndarray = field(init=False, repr=False)
    rewards: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        mu = _frozen_array("mu", self.mu, 3)
        horizon, dim, num_states = mu.shape
        features = np.asarray(self.features, dtype=np.float64)
        if features.ndim == 3:
            features = np.broadcast_to(features, (horizon,) + features.shape)
        features = _frozen_array("features", features, 4)
        if features.shape[0] != horizon or features.shape[1] != num_states or features.shape[3] != dim:
            raise InvalidParameterError(
                "features", f"must have shape (H, S, A, d) = ({horizon}, {num_states}, A, {dim}) to match mu",
                f"shape {features.shape}",
            )
        theta = _frozen_array("theta", self.theta, 2)
        _check_shape("theta", theta, (horizon, dim))
        bound = _validate.positive("feature_norm_bound", self.feature_norm_bound)
        _check_norms("features", np.linalg.norm(features, axis=-1), bound)
        transitions = np.einsum("hsad,hdt->hsat", features, mu)
        rewards = np.einsum("hsad,hd->hsa", features, theta)
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "feature_norm_bound", bound)
        self._adopt_tabular(transitions, rewards)

    @property
    def dim(self) -> int:
        """d, the feature dimension."""
        return int(self.features.shape[-1])

    @property
    def stage_independent_features(self) -> bool:
        """True when φ_h does not depend on h (agents may then share work across stages)."""
        return bool(np.all(self.features == self.features[0]))

    def as_finite_mdp(self) -> FiniteMDP:
        return FiniteMDP(self.transitions, self.rewards, self.initial_distribution, self.name)


def mixture_feature_norm(basis: np.ndarray) -> float:
    """sup over (h, s, a) and V: S → [0, 1] of ‖Σ_s' ψ_h(s'|s,a) V(s')‖₂.

    This is the bound assumed on the regression features φ_V = Σ_s' ψ(s'|s,a)V(s') of UCRL-VTR (Ayoub et
    al. 2020, Assumption on ‖φ_V‖; Liao et al. 2021 Definition 3.1) for V with values in [0, 1]; with values in
    [0, H] the bound scales by H. The map V ↦ ‖ΨV‖ is convex, so its maximum over the cube [0, 1]^S is
    attained at a vertex: exact by enumeration for S ≤ 12; above that the coordinatewise upper bound
    ‖(max(Σ_s' ψ_i⁺, Σ_s' ψ_i⁻))_i‖₂ is returned (never below the truth).
    """
    basis = np.asarray(basis, dtype=np.float64)
    num_states = basis.shape[-2]
    if num_states <= _EXACT_MIXTURE_NORM_MAX_STATES:
        vertices = np.array(list(itertools.product((0.0, 1.0), repeat=num_states)))  # (2^S, S)
        best = 0.0
        stages = basis.reshape((-1,) + basis.shape[-4:])
        if np.all(stages == stages[:1]):  # stage-independent basis: one stage suffices
            stages = stages[:1]
        for stage in stages:  # (S, A, S, d)
            values = np.einsum("satd,vt->savd", stage, vertices)
            best = max(best, float(np.sqrt(np.max(np.sum(values**2, axis=-1)))))
        return best
    positive = np.clip(basis, 0, None).sum(axis=-2)
    negative = np.clip(-basis, 0, None).sum(axis=-2)
    return float(np.max(np.linalg.norm(np.maximum(positive, negative), axis=-1)))


@dataclass(frozen=True, eq=False)
class LinearMixtureMDP(_TabularDynamics):
    """A finite linear mixture MDP: P_h(s'|s,a) = ⟨ψ_h(s'|s,a), θ_h⟩ with known basis ψ and rewards.

    Ayoub et al. 2020 ("Model-based RL with value-targeted regression"), Jia et al. 2020; Liao et al. 2021
    Definition 3.1 (there θ_h is per stage, as here).

    Attributes:
        basis: ψ, shape (H, S, A, S, d), or (S, A, S, d) when stage-independent.
        theta: θ_h, shape (H, d).
        rewards: r_h(s,a) in [0, 1], shape (H, S, A) (known to the agent).
        initial_distribution: shape (S,).
        feature_norm_bound: declared L with ‖Σ_s' ψ_h(s'|s,a)V(s')‖₂ ≤ L for every V: S → [0, 1];
            checked with :func:`mixture_feature_norm`.
        name: a label used in results.
        transitions: derived.
    """

    basis: np.ndarray
    theta: np.ndarray
    rewards: np.ndarray
    initial_distribution: np.ndarray
    feature_norm_bound: float = 1.0
    name: str = "linear-mixture-mdp"
    transitions: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        theta = _frozen_array("theta", self.theta, 2)
        horizon, dim = theta.shape
        basis = np.asarray(self.basis, dtype=np.float64)
        if basis.ndim == 4:
            basis = np.broadcast_to(basis, (horizon,) + basis.shape)
        basis = _frozen_array("basis", basis, 5)
        h, s, a, s2, d = basis.shape
        if h != horizon or d != dim or s2 != s:
            raise InvalidParameterError(
                "basis", f"must have shape (H, S, A, S, d) with H = {horizon}, d = {dim} to match theta",
                f"shape {basis.shape}",
            )
        bound = _validate.positive("feature_norm_bound", self.feature_norm_bound)
        norm = mixture_feature_norm(basis)
        _check_norms("basis", np.array(norm), bound)
        transitions = np.einsum("hsatd,hd->hsat", basis, theta)
        object.__setattr__(self, "basis", basis)
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "feature_norm_bound", bound)
        self._adopt_tabular(transitions, self.rewards)

    @property
    def dim(self) -> int:
        """d, the dimension of θ_h."""
        return int(self.theta.shape[-1])

    def value_features(self, h: int, values: np.ndarray) -> np.ndarray:
        """φ_V(s, a) = Σ_s' ψ_h(s'|s,a) V(s') for every (s, a): shape (S, A, d) (Liao et al. 2021 eq. for φ_V)."""
        return np.einsum("satd,t->sad", self.basis[h], values)

    def as_finite_mdp(self) -> FiniteMDP:
        return FiniteMDP(self.transitions, self.rewards, self.initial_distribution, self.name)
