"""Immutable descriptions of the noise mechanisms the papers use, with their privacy and sampling.

Each mechanism is a frozen, validated dataclass that reports its ρ-zCDP (:attr:`rho`), its Rényi
curve ε(α) (:meth:`renyi_epsilon`) and, where a closed form exists, its exact privacy profile δ(ε)
(:meth:`delta_for_epsilon`). :meth:`release` adds freshly drawn noise from an explicit
``numpy.random.Generator``; there is no other way to obtain noise from this module.

- :class:`GaussianMechanism` — x + N(0, σ²I) for an ℓ2 sensitivity Δ: ρ = Δ²/(2σ²) (Bun & Steinke
  2016, Proposition 1.6; Sahu 2025 Lemma 2.3), μ-GDP with μ = Δ/σ (Dong, Roth & Su 2019, Theorem 2.7).
- :class:`GOEMechanism` — G + (Z + Zᵀ)/√2 with Z_ij ~ N(0, s²) for a symmetric matrix G with Frobenius
  sensitivity Δ_F (Sahu 2025, Algorithm 1 line 1; Redberg & Wang 2021). It is exactly a Gaussian
  mechanism with sensitivity Δ_F and std √2·s, so ρ = Δ_F²/(4s²) and μ = Δ_F/(√2·s): the derivation is
  in docs/derivations.md (the map M ↦ (M_ii, √2·M_ij for i<j) is a Frobenius isometry that turns the
  GOE noise into iid N(0, 2s²)).
- :class:`LaplaceMechanism` — x + Lap(b)^d for an ℓ1 sensitivity Δ: pure ε = Δ/b (Dwork et al. 2006),
  hence ε²/2-zCDP (Bun & Steinke 2016, Proposition 1.4); Rényi curve from Mironov 2017, Proposition 6.
- :class:`RandomizedResponse` — k-ary randomized response of each of d categorical coordinates (Warner 1965
  for k = 2; k-RR of Kairouz, Oh & Viswanath 2016): a coordinate is kept with probability e^ε/(e^ε + k − 1),
  else replaced by one of the other k − 1 categories uniformly; neighbours differ in at most Δ₀ coordinates
  (the Hamming sensitivity), so a release is the composition of Δ₀ k-RR pairs: pure Δ₀ε, and an exact profile
  (:func:`dpverify.composition.rr_delta`).

Each mechanism also states its :class:`DominatingPair`: the pair of output laws whose privacy loss dominates
the release's on every pair of neighbours (Zhu, Dong & Wang 2022), which the accounting of mixed ledgers
composes (:mod:`dpverify.accounting`).

Every mechanism class derives from :class:`NoiseMechanism` and is entered in :data:`MECHANISMS` by the
:func:`register_mechanism` class decorator. Everything that handles "any mechanism" — JSON round trips
(:func:`mechanism_from_dict`), calibration (:mod:`dpverify.calibration`), audits
(:mod:`dpverify.audit.adapters`), the ``dpverify audit mechanism`` command and the hypothesis strategies —
reads the registry and the class's declared fields, so a new mechanism is one registered class (plus its
tests), with no switch to extend elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, is_dataclass
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

import numpy as np

from dpverify import _validate
from dpverify.composition import MAX_KARY_COMPOSITIONS, rr_delta, rr_epsilon
from dpverify.errors import InvalidParameterError
from dpverify.neighbouring import Neighbouring
from dpverify.numerics import gaussian_log_delta, round_down, round_up


def _check_generator(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError(
            "rng", "must be a numpy.random.Generator (no global RNG state is ever used)", type(rng).__name__
        )
    return rng


def _check_value(value: object, shape: tuple[int, ...], name: str = "value") -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != shape:
        raise InvalidParameterError(name, f"must have shape {shape}", arr.shape)
    if not np.all(np.isfinite(arr)):
        raise InvalidParameterError(name, "must be finite (no NaN or inf)", "non-finite entries")
    return arr


def _check_alpha(alpha: float) -> float:
    alpha = _validate.real("alpha", alpha)
    if alpha <= 1.0:
        raise InvalidParameterError("alpha", "must be > 1 (Rényi order)", alpha)
    return alpha


_M = TypeVar("_M", bound="NoiseMechanism")

#: The laws of :class:`DominatingPair`.
PAIR_LAWS: tuple[str, ...] = ("gaussian", "laplace", "randomized-response")


@dataclass(frozen=True)
class DominatingPair:
    """The pair of output laws (P, Q) whose privacy loss dominates one release's on every pair of neighbours.

    - ``"gaussian"``: N(0, 1) vs N(μ, 1), ``parameter`` = μ (μ-GDP, Dong, Roth & Su 2019);
    - ``"laplace"``: Lap(0, 1) vs Lap(ε0, 1), ``parameter`` = ε0 (pure ε0-DP);
    - ``"randomized-response"``: ``copies`` independent k-ary randomized responses (k = ``categories``) of
      two different inputs, ``parameter`` = the ε of each (pure copies·ε-DP). Binary randomized response with
      parameter ε dominates *every* ε-DP release (Kairouz, Oh & Viswanath 2015, Theorem 3.3), which is how a
      pure mechanism without a sharper pair is accounted.

    ``tight``: the worst-case neighbours of the release attain the pair, so a lower bound on the pair's
    privacy is one on the release's (False for a pair that only bounds the release).
    """

    law: str
    parameter: float
    categories: int = 2
    copies: int = 1
    tight: bool = True

    def __post_init__(self) -> None:
        _validate.one_of("law", self.law, PAIR_LAWS)
        object.__setattr__(self, "parameter", _validate.positive("parameter", self.parameter))
        object.__setattr__(self, "categories", _validate.integer("categories", self.categories, minimum=2))
        object.__setattr__(self, "copies", _validate.integer("copies", self.copies, minimum=1))

    @property
    def pure_epsilon(self) -> float:
        """The pure ε of the pair: ∞ for a Gaussian, ε0, or copies·ε (rounded up); exact for tight pairs."""
        if self.law == "gaussian":
            return math.inf
        return self.parameter if self.copies == 1 else round_up(self.copies * self.parameter, 1)

    def renyi_divergence(self, alpha: float) -> float:
        """D_α(P‖Q) of the pair, evaluated in log space and rounded up (never above the pure ε):

        - Gaussian: αμ²/2 (Mironov 2017, Proposition 7);
        - Laplace: 1/(α−1)·log(α/(2α−1)·e^{(α−1)ε0} + (α−1)/(2α−1)·e^{−αε0}) (Mironov 2017, Proposition 6);
        - randomized response: copies/(α−1)·log[(e^{αε} + e^{(1−α)ε} + k − 2)/(e^ε + k − 1)] (the outputs are the
          input, the neighbour's input, or one of the k − 2 others; for k = 2 the tight Rényi curve of ε-DP).
        """
        alpha = _check_alpha(alpha)
        eps = self.parameter
        if self.law == "gaussian":
            return round_up(alpha * eps * eps / 2.0, 3)
        if self.law == "laplace":
            terms = [math.log(alpha / (2 * alpha - 1)) + (alpha - 1) * eps,
                     math.log((alpha - 1) / (2 * alpha - 1)) - alpha * eps]
            log_norm = 0.0
        else:
            k = self.categories
            terms = [alpha * eps, (1.0 - alpha) * eps] + ([math.log(k - 2)] if k > 2 else [])
            log_norm = float(np.logaddexp(eps, math.log(k - 1)))
        log_sum = float(np.logaddexp.reduce(terms))
        # the logs carry a few ulps of their magnitudes each: 16 ulps of the largest cover the difference
        error = 16.0 * 2.0**-52 * max(abs(log_sum), abs(log_norm), max(abs(t) for t in terms))
        divergence = self.copies * (log_sum - log_norm + error) / (alpha - 1.0)
        return min(self.pure_epsilon, round_up(max(divergence, 0.0), 4))


class NoiseMechanism:
    """What every registered mechanism provides (the subclasses are frozen, validated dataclasses).

    Class attributes a subclass sets:
        kind: the registry name (``"gaussian"``), also the ``"kind"`` of its JSON form.
        sensitivity_field, noise_field: the names of its sensitivity and noise-scale fields; with
            ``dim`` and ``relation`` they are the constructor's arguments (:meth:`build`).
        sensitivity_norm: the norm of its sensitivity ("l2", "l1", "Frobenius").
        noise_help: one line describing the noise-scale field (command-line help).
        statistic_kind: the kind of statistic a release schedule calibrates it for ("vector",
            "symmetric-matrix"), or ``None`` when no schedule uses it.
        default_dim: the dimension an audit uses when none is given.
        max_profile_dim: the largest ``dim`` for which :meth:`delta_for_epsilon` has a closed form at
            every ε (``None``: every dim).
        extra_fields: (name, help) of further integer fields, with defaults (command-line options).

    Instances provide :attr:`rho`, :attr:`is_gaussian`, :meth:`renyi_epsilon`,
    :meth:`delta_for_epsilon`, :meth:`release` and :attr:`output_shape`, and the hooks below.
    """

    kind: ClassVar[str]
    sensitivity_field: ClassVar[str]
    noise_field: ClassVar[str]
    sensitivity_norm: ClassVar[str]
    noise_help: ClassVar[str]
    statistic_kind: ClassVar[str | None] = None
    default_dim: ClassVar[int] = 1
    max_profile_dim: ClassVar[int | None] = None
    #: Whether the mechanism is exactly Gaussian (μ-GDP), so that a Gaussian claim describes it.
    is_gaussian: ClassVar[bool] = False
    #: The label of :meth:`worst_case_inputs`.
    worst_case_label: ClassVar[str] = "0 vs Delta e1"
    #: The law of the standardised noise coordinates (:meth:`standardised_noise`): "normal" or "laplace";
    #: ``None`` when the mechanism declares none (its releases cannot be checked from behaviour).
    noise_law: ClassVar[str | None] = None
    extra_fields: ClassVar[tuple[tuple[str, str], ...]] = ()

    dim: int
    relation: Neighbouring

    # ---- validation and construction from the declared fields

    def __post_init__(self) -> None:
        """Validate the declared fields: sensitivity and noise scale > 0, dim an integer ≥ 1, a relation."""
        for name in (self.sensitivity_field, self.noise_field):
            object.__setattr__(self, name, _validate.positive(name, getattr(self, name)))
        object.__setattr__(self, "dim", _validate.integer("dim", self.dim, minimum=1))
        object.__setattr__(self, "relation", Neighbouring.parse(self.relation))

    @classmethod
    def build(
        cls: type[_M],
        sensitivity: float,
        noise: float,
        dim: int,
        relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
        **extra: int,
    ) -> _M:
        """The mechanism with this sensitivity, noise scale, dimension and relation (and :attr:`extra_fields`)."""
        return cls(**{cls.sensitivity_field: sensitivity, cls.noise_field: noise, "dim": dim, "relation": relation},
                   **extra)

    @classmethod
    def noise_for_rho(cls, sensitivity: float, rho: float) -> float:
        """The noise scale at which one release costs exactly ρ (before any rounding)."""
        raise NotImplementedError(f"{cls.__name__} cannot be calibrated to a zCDP budget")

    @property
    def sensitivity_value(self) -> float:
        """The declared sensitivity (in :attr:`sensitivity_norm`)."""
        return float(getattr(self, self.sensitivity_field))

    @property
    def noise_scale(self) -> float:
        """The noise scale (σ, the GOE entry std s, or the Laplace b)."""
        return float(getattr(self, self.noise_field))

    # ---- privacy (implemented by every subclass)

    @property
    def output_shape(self) -> tuple[int, ...]:
        """The shape of one release: (dim,) (a matrix mechanism overrides it)."""
        return (self.dim,)

    @property
    def rho(self) -> float:
        raise NotImplementedError

    def renyi_epsilon(self, alpha: float) -> float:
        raise NotImplementedError

    def delta_for_epsilon(self, epsilon: float) -> float:
        raise NotImplementedError

    @property
    def dominating_pair(self) -> DominatingPair:
        """The :class:`DominatingPair` the accounting of mixed ledgers composes for one release."""
        raise NotImplementedError

    def release(self, value: object, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
        """value + fresh noise; with ``n``, an (n, *output_shape) array of n independent releases."""
        rng = _check_generator(rng)
        x = self._checked_value(value)
        return x + (self._draw(rng, self.output_shape) if n is None else self.noise(rng, n))

    def noise(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """The noise of n releases, shape (n, *output_shape): ``release(value, rng, n) − value``, drawn as
        :meth:`release` draws it (the same draws from ``rng``)."""
        size = (_validate.integer("n", n, minimum=1), *self.output_shape)
        return self._draw(_check_generator(rng), size)

    def _draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        """Fresh noise of shape ``size`` (…, *output_shape) from ``rng``."""
        raise NotImplementedError

    def _checked_value(self, value: object) -> np.ndarray:
        """The value to release, checked: finite, of :attr:`output_shape`."""
        return _check_value(value, self.output_shape)

    def claimed_epsilon(self, delta: float) -> float:
        """The ε this mechanism's own accounting claims for one release at δ."""
        raise NotImplementedError

    # ---- audits

    def standardised_noise(self, noise: np.ndarray) -> np.ndarray:
        """The noise of releases (published value minus raw value; shape (*lead, *output_shape)) as their
        independent coordinates in units of :attr:`noise_law`, shape (*lead, m): iid N(0, 1) or Lap(1) when the
        noise is the mechanism's. Linear, so the difference of two independent releases of one value maps to
        the difference of two such vectors. The default divides every coordinate by :attr:`noise_scale`."""
        array = np.asarray(noise, dtype=float)
        lead = array.shape[:array.ndim - len(self.output_shape)]
        return array.reshape(*lead, -1) / self.noise_scale

    def worst_case_inputs(self) -> tuple[np.ndarray, np.ndarray, str]:
        """Two statistic values at exactly the declared sensitivity (the worst case the accounting
        assumes), and a label: zero and Δ·e₁ (Δ_F·e₁e₁ᵀ for a matrix: at Frobenius distance Δ_F)."""
        first = np.zeros(self.output_shape)
        second = first.copy()
        second.flat[0] = self.sensitivity_value
        return first, second, self.worst_case_label

    def audit_view(self, releases: np.ndarray) -> np.ndarray:
        """A lossless deterministic view of n releases (shape (n, *output_shape)) as an (n, m) array."""
        return releases.reshape(releases.shape[0], -1)

    def to_dict(self) -> dict[str, Any]:
        """JSON form; the inverse is :func:`mechanism_from_dict`."""
        return {"kind": self.kind, **asdict(self), "relation": self.relation.value}  # type: ignore[call-overload]



_REGISTRY: dict[str, type[NoiseMechanism]] = {}

#: The registered mechanism classes by :attr:`NoiseMechanism.kind` (read-only view of the registry).
MECHANISMS: Mapping[str, type[NoiseMechanism]] = MappingProxyType(_REGISTRY)


def register_mechanism(cls: type[_M]) -> type[_M]:
    """Class decorator: enter a :class:`NoiseMechanism` subclass in :data:`MECHANISMS` under its kind."""
    if not (isinstance(cls, type) and issubclass(cls, NoiseMechanism)):
        raise InvalidParameterError("mechanism class", "must be a NoiseMechanism subclass", cls)
    for attribute in ("kind", "sensitivity_field", "noise_field", "sensitivity_norm", "noise_help"):
        if not isinstance(getattr(cls, attribute, None), str):
            raise InvalidParameterError(f"{cls.__name__}.{attribute}", "must be set to a string", None)
    names: set[str] = {f.name for f in fields(cls)} if is_dataclass(cls) else set()
    missing = {cls.sensitivity_field, cls.noise_field, "dim", "relation"} - names
    if missing:
        raise InvalidParameterError(f"{cls.__name__} fields", "must include the declared fields", sorted(missing))
    if cls.kind in _REGISTRY and _REGISTRY[cls.kind] is not cls:
        raise InvalidParameterError("mechanism kind", "must be unique in the registry", cls.kind)
    _REGISTRY[cls.kind] = cls
    return cls


def mechanism_for_statistic(statistic_kind: str) -> type[NoiseMechanism]:
    """The registered mechanism a release schedule uses for a statistic of this kind."""
    for cls in _REGISTRY.values():
        if cls.statistic_kind == statistic_kind:
            return cls
    kinds = [c.statistic_kind for c in _REGISTRY.values() if c.statistic_kind]
    raise InvalidParameterError("kind", f"must be one of {', '.join(kinds)}", statistic_kind)


class _GaussianPrivacy(NoiseMechanism):
    """The privacy of a mechanism that is exactly Gaussian with ratio μ = sensitivity/std.

    ρ = μ²/2 (Bun & Steinke 2016, Prop. 1.6); Rényi curve ε(α) = αρ (Mironov 2017, Prop. 7); exact
    profile of μ-GDP (Balle & Wang 2018, Theorem 8), evaluated in log space.
    """

    @property
    def mu(self) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def rho(self) -> float:
        """ρ of the ρ-zCDP guarantee: μ²/2, rounded up so it is never below the exact real value
        (μ carries at most ~1.5 ulps of rounding, μ² ~3.5)."""
        return round_up(self.mu * self.mu / 2.0, 4)

    is_gaussian: ClassVar[bool] = True

    @property
    def dominating_pair(self) -> DominatingPair:
        """N(0, 1) vs N(μ, 1): exactly this release's pair at its worst-case neighbours."""
        return DominatingPair("gaussian", self.mu)

    def renyi_epsilon(self, alpha: float) -> float:
        """Rényi DP curve ε(α) = αρ."""
        return _check_alpha(alpha) * self.rho

    def delta_for_epsilon(self, epsilon: float) -> float:
        """Exact privacy profile δ(ε) of μ-GDP, evaluated in log space."""
        epsilon = _validate.non_negative("epsilon", epsilon)
        return math.exp(gaussian_log_delta(epsilon, self.mu))

    def claimed_epsilon(self, delta: float) -> float:
        """The exact ε of one release at δ (Balle & Wang 2018, Theorem 8), rounded up."""
        from dpverify.conversions import epsilon_exact_gaussian  # scipy.optimize only when asked

        return epsilon_exact_gaussian(self.mu, delta)

    def _draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        return self.noise_from_normals(rng.standard_normal(size))

    def noise_from_normals(self, z: np.ndarray) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError


@register_mechanism
@dataclass(frozen=True)
class GaussianMechanism(_GaussianPrivacy):
    """Gaussian mechanism on ℝ^dim: value + N(0, σ² I).

    Attributes:
        sensitivity: ℓ2 sensitivity Δ of the released statistic under ``relation``.
        sigma: noise standard deviation σ per coordinate.
        dim: dimension of the released vector (1 for a scalar).
        relation: the neighbouring relation under which ``sensitivity`` holds.
    """

    sensitivity: float
    sigma: float
    dim: int = 1
    relation: Neighbouring = Neighbouring.REPLACE_ONE

    kind: ClassVar[str] = "gaussian"
    sensitivity_field: ClassVar[str] = "sensitivity"
    noise_field: ClassVar[str] = "sigma"
    sensitivity_norm: ClassVar[str] = "l2"
    noise_help: ClassVar[str] = "noise std"
    statistic_kind: ClassVar[str | None] = "vector"
    noise_law: ClassVar[str | None] = "normal"

    @classmethod
    def noise_for_rho(cls, sensitivity: float, rho: float) -> float:
        """σ = Δ/√(2ρ) (Bun & Steinke 2016, Proposition 1.6)."""
        return sensitivity / math.sqrt(2.0 * rho)

    @property
    def mu(self) -> float:
        """μ of the μ-GDP guarantee: Δ/σ, so ρ = Δ²/(2σ²)."""
        return self.sensitivity / self.sigma

    def noise_from_normals(self, z: np.ndarray) -> np.ndarray:
        """The noise σ·z of releases whose standard normals are ``z`` (..., dim), as :meth:`noise` draws it."""
        return self.sigma * z


@register_mechanism
@dataclass(frozen=True)
class GOEMechanism(_GaussianPrivacy):
    """Symmetric-matrix Gaussian ("GOE") mechanism on dim × dim symmetric matrices.

    Releases G + (Z + Zᵀ)/√2 with Z_ij ~ N(0, s²) iid (Sahu 2025, Algorithm 1 line 1, with
    s² = 1/(4ρ0)); off-diagonal noise has variance s², diagonal noise 2s².

    Attributes:
        frobenius_sensitivity: Frobenius-norm sensitivity Δ_F of G under ``relation``.
        entry_std: s, the standard deviation of the entries of Z.
        dim: the matrix side n.
        relation: the neighbouring relation under which ``frobenius_sensitivity`` holds.
    """

    frobenius_sensitivity: float
    entry_std: float
    dim: int
    relation: Neighbouring = Neighbouring.REPLACE_ONE

    kind: ClassVar[str] = "goe"
    sensitivity_field: ClassVar[str] = "frobenius_sensitivity"
    noise_field: ClassVar[str] = "entry_std"
    sensitivity_norm: ClassVar[str] = "Frobenius"
    noise_help: ClassVar[str] = "std s of the entries of Z"
    statistic_kind: ClassVar[str | None] = "symmetric-matrix"
    default_dim: ClassVar[int] = 3
    noise_law: ClassVar[str | None] = "normal"
    worst_case_label: ClassVar[str] = "0 vs Delta_F e1 e1^T"

    @classmethod
    def noise_for_rho(cls, sensitivity: float, rho: float) -> float:
        """s = Δ_F/(2√ρ), from ρ = Δ_F²/(4s²)."""
        return sensitivity / (2.0 * math.sqrt(rho))

    @property
    def equivalent_gaussian_std(self) -> float:
        """√2·s: the std of the iid Gaussian noise after the Frobenius isometry (docs/derivations.md)."""
        return math.sqrt(2.0) * self.entry_std

    @property
    def mu(self) -> float:
        """μ = Δ_F/(√2·s), so ρ = μ²/2 = Δ_F²/(4s²)."""
        return self.frobenius_sensitivity / self.equivalent_gaussian_std

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim, self.dim)

    def _checked_value(self, value: object) -> np.ndarray:
        """sym(G), released as sym(G) + (Z + Zᵀ)/√2 with fresh Z.

        G must be symmetric up to rounding (asymmetry ≤ 10⁻¹² of its largest entry, else an error); its
        symmetric part (G + Gᵀ)/2 is what is released — G itself when exactly symmetric — so that no rounding
        asymmetry of the input (an antisymmetric part that no noise covers) reaches the output, which is
        exactly symmetric."""
        g = _check_value(value, self.output_shape)
        if not np.array_equal(g, g.T):
            if float(np.abs(g - g.T).max()) > 1e-12 * max(1.0, float(np.abs(g).max())):
                raise InvalidParameterError("value", "must be a symmetric matrix", "asymmetric")
            g = 0.5 * (g + g.T)
        return g

    def noise_from_normals(self, z: np.ndarray) -> np.ndarray:
        """The noise (W + Wᵀ)/√2, W = s·z, of releases whose standard normals are ``z`` (..., dim, dim), as
        :meth:`noise` draws it."""
        w = self.entry_std * z
        return (w + w.swapaxes(-1, -2)) / math.sqrt(2.0)

    def standardised_noise(self, noise: np.ndarray) -> np.ndarray:
        """The upper triangle of (Z + Zᵀ)/√2: off-diagonal entries (variance s²) divided by s, diagonal entries
        (variance 2s²) by √2·s — iid N(0, 1) for the mechanism's noise. The lower triangle repeats the upper
        one and is not a coordinate (its equality is a symmetry, checked apart)."""
        matrix = np.asarray(noise, dtype=float)
        rows, cols = np.triu_indices(self.dim, 1)
        return np.concatenate([matrix[..., rows, cols] / self.entry_std,
                               np.diagonal(matrix, axis1=-2, axis2=-1) / (math.sqrt(2.0) * self.entry_std)], axis=-1)

    def audit_view(self, releases: np.ndarray) -> np.ndarray:
        """The upper-triangular entries: the matrices are symmetric, so nothing is lost."""
        rows, cols = np.triu_indices(self.dim)
        return releases[:, rows, cols]


@register_mechanism
@dataclass(frozen=True)
class LaplaceMechanism(NoiseMechanism):
    """Laplace mechanism on ℝ^dim: value + Lap(b)^dim, pure ε-DP with ε = Δ₁/b.

    Attributes:
        sensitivity: ℓ1 sensitivity Δ₁ under ``relation``.
        scale: the Laplace scale b.
        dim: dimension of the released vector.
        relation: the neighbouring relation under which ``sensitivity`` holds.
    """

    sensitivity: float
    scale: float
    dim: int = 1
    relation: Neighbouring = Neighbouring.REPLACE_ONE

    kind: ClassVar[str] = "laplace"
    sensitivity_field: ClassVar[str] = "sensitivity"
    noise_field: ClassVar[str] = "scale"
    sensitivity_norm: ClassVar[str] = "l1"
    noise_help: ClassVar[str] = "Laplace scale b"
    statistic_kind: ClassVar[str | None] = "l1-vector"
    max_profile_dim: ClassVar[int | None] = 1
    noise_law: ClassVar[str | None] = "laplace"

    @classmethod
    def noise_for_rho(cls, sensitivity: float, rho: float) -> float:
        """b = Δ₁/√(2ρ), from ρ = ε²/2 with ε = Δ₁/b (Bun & Steinke 2016, Proposition 1.4)."""
        return sensitivity / math.sqrt(2.0 * rho)

    @property
    def epsilon(self) -> float:
        """The pure-DP ε = Δ₁/b, rounded up (never below the exact quotient)."""
        return round_up(self.sensitivity / self.scale, 1)

    @property
    def rho(self) -> float:
        """ρ = ε²/2 (Bun & Steinke 2016, Proposition 1.4), rounded up."""
        return round_up(self.epsilon * self.epsilon / 2.0, 2)

    @property
    def dominating_pair(self) -> DominatingPair:
        """Lap(0, 1) vs Lap(ε0, 1) for a scalar (attained at neighbours Δ apart); for dim > 1 binary randomized
        response with parameter ε0, which dominates every ε0-DP release (not attained: ``tight=False``)."""
        if self.dim == 1:
            return DominatingPair("laplace", self.epsilon)
        return DominatingPair("randomized-response", self.epsilon, tight=False)

    def renyi_epsilon(self, alpha: float) -> float:
        """The Rényi curve of its :attr:`dominating_pair`: Mironov 2017, Proposition 6 for a scalar; for dim > 1
        that of binary randomized response with ε0, the tight curve of any ε0-DP release (Steinke 2024, "Sharp
        RDP & zCDP from pure DP", Theorem 4)."""
        return self.dominating_pair.renyi_divergence(alpha)

    def delta_for_epsilon(self, epsilon: float) -> float:
        """Exact privacy profile of the scalar Laplace mechanism: δ(ε) = 1 − e^{(ε−ε0)/2} for ε < ε0.

        (Balle et al. 2018, "Privacy amplification by subsampling", Theorem 3 / the hockey-stick
        divergence of two shifted Laplace laws.) For dim > 1 only the pure-DP statement δ(ε0) = 0 is
        available; other ε raise an error rather than return an unproven number.
        """
        epsilon = _validate.non_negative("epsilon", epsilon)
        e0 = self.epsilon
        if epsilon >= e0:
            return 0.0
        if self.dim > 1:
            raise InvalidParameterError(
                "epsilon", f"must be >= the pure epsilon {e0!r} for a multi-dimensional Laplace mechanism", epsilon
            )
        return -math.expm1((epsilon - e0) / 2.0)

    def claimed_epsilon(self, delta: float) -> float:
        """The pure ε = Δ₁/b, which holds at every δ."""
        return self.epsilon

    def _draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        """Lap(b) per coordinate."""
        return rng.laplace(0.0, self.scale, size=size)


@register_mechanism
@dataclass(frozen=True)
class RandomizedResponse(NoiseMechanism):
    """k-ary randomized response of each coordinate of a categorical vector in {0, …, k−1}^dim.

    Each coordinate is kept with probability e^ε/(e^ε + k − 1) and otherwise replaced by one of the other
    k − 1 categories uniformly (Warner 1965 for k = 2; the k-RR of Kairouz, Oh & Viswanath 2016), each
    coordinate with fresh coins: the release is x + Z (mod k), Z iid with P(Z = 0) = e^ε/(e^ε + k − 1).
    Neighbouring inputs differ in at most ``sensitivity`` coordinates (the Hamming sensitivity Δ₀), so one
    release is the composition of Δ₀ k-RR pairs: pure Δ₀ε-DP, exactly.

    Attributes:
        sensitivity: Δ₀, the most coordinates in which neighbouring inputs differ (1 ≤ Δ₀ ≤ dim).
        local_epsilon: ε of each coordinate's randomized response.
        dim: the number of coordinates.
        categories: k ≥ 2 (2: Warner's binary randomized response).
        relation: the neighbouring relation under which ``sensitivity`` holds.
    """

    sensitivity: int
    local_epsilon: float
    dim: int = 1
    categories: int = 2
    relation: Neighbouring = Neighbouring.REPLACE_ONE

    kind: ClassVar[str] = "randomized-response"
    sensitivity_field: ClassVar[str] = "sensitivity"
    noise_field: ClassVar[str] = "local_epsilon"
    sensitivity_norm: ClassVar[str] = "hamming"
    noise_help: ClassVar[str] = "epsilon of each coordinate's randomized response (smaller: more noise)"
    noise_law: ClassVar[str | None] = "randomized-response"
    max_profile_dim: ClassVar[int | None] = MAX_KARY_COMPOSITIONS
    extra_fields: ClassVar[tuple[tuple[str, str], ...]] = (
        ("categories", "number of categories k (default 2: Warner's binary randomized response)"),)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dim", _validate.integer("dim", self.dim, minimum=1))
        object.__setattr__(self, "categories", _validate.integer("categories", self.categories, minimum=2))
        sensitivity = _validate.integer("sensitivity", self.sensitivity, minimum=1)
        if sensitivity > self.dim:
            raise InvalidParameterError("sensitivity", f"must be <= dim ({self.dim}): neighbours differ in at "
                                        "most every coordinate", sensitivity)
        object.__setattr__(self, "sensitivity", sensitivity)
        object.__setattr__(self, "local_epsilon", _validate.positive("local_epsilon", self.local_epsilon))
        object.__setattr__(self, "relation", Neighbouring.parse(self.relation))

    @property
    def keep_probability(self) -> float:
        """e^ε/(e^ε + k − 1), rounded down to a multiple of 2⁻⁵³: a uniform draw on numpy's grid of 2⁻⁵³ falls
        below it with exactly this probability, never more often than the accounting says."""
        exact = 1.0 / (1.0 + (self.categories - 1) * math.exp(-self.local_epsilon))
        return math.floor(round_down(exact, 1) * 2.0**53) / 2.0**53

    @property
    def epsilon(self) -> float:
        """The pure ε of one release: Δ₀·ε, rounded up (exact: the output equal to one input everywhere
        attains it)."""
        return self.dominating_pair.pure_epsilon

    @property
    def rho(self) -> float:
        """Δ₀ε²/2: each coordinate's pair is ε-DP, hence ε²/2-zCDP (Bun & Steinke 2016, Proposition 1.4),
        composed over Δ₀ coordinates; rounded up."""
        return round_up(self.sensitivity * self.local_epsilon * self.local_epsilon / 2.0, 3)

    @property
    def dominating_pair(self) -> DominatingPair:
        """Δ₀ k-RR pairs (attained by inputs that differ in Δ₀ coordinates)."""
        return DominatingPair("randomized-response", self.local_epsilon, self.categories, self.sensitivity)

    def renyi_epsilon(self, alpha: float) -> float:
        """Δ₀·D_α of one k-RR pair (:meth:`DominatingPair.renyi_divergence`)."""
        return self.dominating_pair.renyi_divergence(alpha)

    def delta_for_epsilon(self, epsilon: float) -> float:
        """The exact profile of Δ₀ k-RR pairs (:func:`dpverify.composition.rr_delta`); 0 at ε ≥ Δ₀ε."""
        epsilon = _validate.non_negative("epsilon", epsilon)
        return rr_delta(self.local_epsilon, self.sensitivity, epsilon, self.categories)

    def claimed_epsilon(self, delta: float) -> float:
        """The exact ε of one release at δ (the inverse of its profile), rounded up."""
        return rr_epsilon(self.local_epsilon, self.sensitivity, delta, self.categories)

    def _checked_value(self, value: object) -> np.ndarray:
        x = _check_value(value, self.output_shape)
        if not np.all((x == np.rint(x)) & (x >= 0) & (x < self.categories)):
            raise InvalidParameterError("value", f"must hold categories 0..{self.categories - 1}", "other entries")
        return x

    def release(self, value: object, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
        """x + Z (mod k) with fresh offsets Z per coordinate (:meth:`noise`); with ``n``, an (n, dim) array."""
        return np.mod(super().release(value, rng, n), self.categories)

    def _draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        """The offsets Z: 0 with probability :attr:`keep_probability`, else uniform on 1..k−1. One uniform u per
        coordinate: offset 0 when u < p (the keep probability), else 1 + ⌊(k − 1)(u − p)/(1 − p)⌋
        — uniform on 1..k−1 — so releases drawn one by one or n at once use the same draws."""
        u = rng.random(size)
        keep = self.keep_probability
        other = 1.0 + np.minimum(np.floor((self.categories - 1) * (u - keep) / (1.0 - keep)), self.categories - 2)
        return np.where(u < keep, 0.0, other)

    def standardised_noise(self, noise: np.ndarray) -> np.ndarray:
        """The offsets Z = noise mod k (published minus raw value, or the difference of two releases of one
        value), one coordinate each: iid with P(Z = 0) = e^ε/(e^ε + k − 1) for the mechanism's noise."""
        array = np.mod(np.rint(np.asarray(noise, dtype=float)), self.categories)
        lead = array.shape[:array.ndim - 1]
        return array.reshape(*lead, -1)

    def worst_case_inputs(self) -> tuple[np.ndarray, np.ndarray, str]:
        """Category 0 everywhere, and category 1 in the first Δ₀ coordinates (the neighbours the accounting
        assumes)."""
        first = np.zeros(self.output_shape)
        second = first.copy()
        second[: self.sensitivity] = 1.0
        return first, second, "0 vs 1 in Delta_0 coordinates"


#: Any registered mechanism (the type of a ledger entry, a calibrated statistic, an audit target).
Mechanism = NoiseMechanism


def mechanism_from_dict(data: dict[str, Any]) -> NoiseMechanism:
    """Rebuild a mechanism from :meth:`NoiseMechanism.to_dict` output (validating every field)."""
    if not isinstance(data, dict):
        raise InvalidParameterError("mechanism", "must be a JSON object", type(data).__name__)
    kind = data.get("kind")
    if kind not in _REGISTRY:
        raise InvalidParameterError("mechanism.kind", f"must be one of {', '.join(_REGISTRY)}", kind)
    given = {k: v for k, v in data.items() if k != "kind"}
    cls = _REGISTRY[kind]
    expected = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    if set(given) != expected:
        raise InvalidParameterError(f"mechanism ({kind}) fields", f"must be exactly {sorted(expected)}", sorted(given))
    return cls(**given)
