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
from dpverify.errors import InvalidParameterError
from dpverify.neighbouring import Neighbouring
from dpverify.numerics import gaussian_log_delta, round_up


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
    #: The law of the standardised noise coordinates (:meth:`standardised_noise`): "normal" or "laplace";
    #: ``None`` when the mechanism declares none (its releases cannot be checked from behaviour).
    noise_law: ClassVar[str | None] = None

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
    ) -> _M:
        """The mechanism with this sensitivity, noise scale, dimension and relation."""
        return cls(**{cls.sensitivity_field: sensitivity, cls.noise_field: noise, "dim": dim, "relation": relation})

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
        raise NotImplementedError

    @property
    def rho(self) -> float:
        raise NotImplementedError

    @property
    def is_gaussian(self) -> bool:
        raise NotImplementedError

    def renyi_epsilon(self, alpha: float) -> float:
        raise NotImplementedError

    def delta_for_epsilon(self, epsilon: float) -> float:
        raise NotImplementedError

    def release(self, value: object, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
        raise NotImplementedError

    def noise(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """The noise of n releases, shape (n, *output_shape): ``release(value, rng, n) − value``, drawn as
        :meth:`release` draws it (the same draws from ``rng``). Subclasses that can draw it without a zero
        value to release override it; the default releases zeros."""
        return self.release(np.zeros(self.output_shape), rng, n)

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
        assumes), and a label: zero and Δ·e₁."""
        first = np.zeros(self.output_shape)
        second = first.copy()
        second.flat[0] = self.sensitivity_value
        return first, second, "0 vs Delta e1"

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

    @property
    def is_gaussian(self) -> bool:
        return True

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

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim,)

    def release(self, value: object, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
        """value + fresh N(0, σ²I) noise; with ``n``, an (n, dim) array of n independent releases."""
        rng = _check_generator(rng)
        x = _check_value(value, self.output_shape)
        if n is None:
            return x + self.noise_from_normals(rng.standard_normal(self.output_shape))
        return x + self.noise(rng, n)

    def noise(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """N(0, σ²I) for n releases, shape (n, dim)."""
        n = _validate.integer("n", n, minimum=1)
        return self.noise_from_normals(_check_generator(rng).standard_normal((n, *self.output_shape)))

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

    def release(self, value: object, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
        """sym(G) + (Z + Zᵀ)/√2 with fresh Z; with ``n``, an (n, dim, dim) array of independent releases.

        G must be symmetric up to rounding (asymmetry ≤ 10⁻¹² of its largest entry, else an error); its
        symmetric part (G + Gᵀ)/2 is what is released — G itself when exactly symmetric — so that no rounding
        asymmetry of the input (an antisymmetric part that no noise covers) reaches the output, which is
        exactly symmetric."""
        rng = _check_generator(rng)
        g = _check_value(value, self.output_shape)
        if not np.array_equal(g, g.T):
            if float(np.abs(g - g.T).max()) > 1e-12 * max(1.0, float(np.abs(g).max())):
                raise InvalidParameterError("value", "must be a symmetric matrix", "asymmetric")
            g = 0.5 * (g + g.T)
        if n is not None:
            return g + self.noise(rng, n)
        return g + self.noise_from_normals(rng.standard_normal(self.output_shape))

    def noise(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """(Z + Zᵀ)/√2 with Z_ij ~ N(0, s²) iid for n releases, shape (n, dim, dim)."""
        size = (_validate.integer("n", n, minimum=1), *self.output_shape)
        return self.noise_from_normals(_check_generator(rng).standard_normal(size))

    def noise_from_normals(self, z: np.ndarray) -> np.ndarray:
        """The noise (W + Wᵀ)/√2, W = s·z, of releases whose standard normals are ``z`` (..., dim, dim), as
        :meth:`noise` draws it."""
        w = self.entry_std * z
        return (w + np.swapaxes(w, -1, -2)) / math.sqrt(2.0)

    def standardised_noise(self, noise: np.ndarray) -> np.ndarray:
        """The upper triangle of (Z + Zᵀ)/√2: off-diagonal entries (variance s²) divided by s, diagonal entries
        (variance 2s²) by √2·s — iid N(0, 1) for the mechanism's noise. The lower triangle repeats the upper
        one and is not a coordinate (its equality is a symmetry, checked apart)."""
        matrix = np.asarray(noise, dtype=float)
        rows, cols = np.triu_indices(self.dim, 1)
        return np.concatenate([matrix[..., rows, cols] / self.entry_std,
                               np.diagonal(matrix, axis1=-2, axis2=-1) / (math.sqrt(2.0) * self.entry_std)], axis=-1)

    def worst_case_inputs(self) -> tuple[np.ndarray, np.ndarray, str]:
        """Zero and Δ_F·e₁e₁ᵀ (a symmetric matrix at Frobenius distance Δ_F)."""
        first = np.zeros(self.output_shape)
        second = first.copy()
        second[0, 0] = self.frobenius_sensitivity
        return first, second, "0 vs Delta_F e1 e1^T"

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
    def is_gaussian(self) -> bool:
        return False

    def renyi_epsilon(self, alpha: float) -> float:
        """Mironov 2017, Proposition 6 (with ε0 = Δ/b):

        ε(α) = 1/(α−1) · log( α/(2α−1)·e^{(α−1)ε0} + (α−1)/(2α−1)·e^{−α ε0} ), evaluated in log space.
        The curve is proven for the scalar mechanism; for dim > 1 we return the pure-DP bound ε0,
        which holds at every order.
        """
        alpha = _check_alpha(alpha)
        e0 = self.epsilon
        if self.dim > 1:
            return e0
        a = math.log(alpha / (2 * alpha - 1)) + (alpha - 1) * e0
        b = math.log((alpha - 1) / (2 * alpha - 1)) - alpha * e0
        log_sum = max(a, b) + math.log1p(math.exp(-abs(a - b)))
        return min(e0, log_sum / (alpha - 1))

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

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim,)

    def release(self, value: object, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
        """value + fresh Lap(b) noise per coordinate; with ``n``, an (n, dim) array."""
        rng = _check_generator(rng)
        x = _check_value(value, self.output_shape)
        if n is not None:
            return x + self.noise(rng, n)
        return x + rng.laplace(0.0, self.scale, size=self.output_shape)

    def noise(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Lap(b) per coordinate for n releases, shape (n, dim)."""
        size = (_validate.integer("n", n, minimum=1), *self.output_shape)
        return _check_generator(rng).laplace(0.0, self.scale, size=size)


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
