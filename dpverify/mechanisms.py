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
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Union

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


class _Serializable:
    """``to_dict`` for the frozen mechanism dataclasses (the inverse is :func:`mechanism_from_dict`)."""

    kind: str
    relation: Neighbouring

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self), "relation": self.relation.value}  # type: ignore[call-overload]


class _GaussianPrivacy(_Serializable):
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

    kind = "gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sensitivity", _validate.positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "sigma", _validate.positive("sigma", self.sigma))
        object.__setattr__(self, "dim", _validate.integer("dim", self.dim, minimum=1))
        object.__setattr__(self, "relation", Neighbouring.parse(self.relation))

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
            return x + rng.normal(0.0, self.sigma, size=self.output_shape)
        n = _validate.integer("n", n, minimum=1)
        return x + rng.normal(0.0, self.sigma, size=(n, *self.output_shape))


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

    kind = "goe"

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "frobenius_sensitivity", _validate.positive("frobenius_sensitivity", self.frobenius_sensitivity)
        )
        object.__setattr__(self, "entry_std", _validate.positive("entry_std", self.entry_std))
        object.__setattr__(self, "dim", _validate.integer("dim", self.dim, minimum=1))
        object.__setattr__(self, "relation", Neighbouring.parse(self.relation))

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
        """G + (Z + Zᵀ)/√2 with fresh Z; with ``n``, an (n, dim, dim) array of independent releases."""
        rng = _check_generator(rng)
        g = _check_value(value, self.output_shape)
        magnitude = np.abs(g)
        if float(np.abs(g - g.T).max()) > 1e-12 * max(1.0, float(magnitude.max())):
            raise InvalidParameterError("value", "must be a symmetric matrix", "asymmetric")
        size = self.output_shape if n is None else (_validate.integer("n", n, minimum=1), *self.output_shape)
        z = rng.normal(0.0, self.entry_std, size=size)
        return g + (z + np.swapaxes(z, -1, -2)) / math.sqrt(2.0)


@dataclass(frozen=True)
class LaplaceMechanism(_Serializable):
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

    kind = "laplace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sensitivity", _validate.positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "scale", _validate.positive("scale", self.scale))
        object.__setattr__(self, "dim", _validate.integer("dim", self.dim, minimum=1))
        object.__setattr__(self, "relation", Neighbouring.parse(self.relation))

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

    @property
    def output_shape(self) -> tuple[int, ...]:
        return (self.dim,)

    def release(self, value: object, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
        """value + fresh Lap(b) noise per coordinate; with ``n``, an (n, dim) array."""
        rng = _check_generator(rng)
        x = _check_value(value, self.output_shape)
        size = self.output_shape if n is None else (_validate.integer("n", n, minimum=1), *self.output_shape)
        return x + rng.laplace(0.0, self.scale, size=size)


Mechanism = Union[GaussianMechanism, GOEMechanism, LaplaceMechanism]

_KINDS: dict[str, type] = {"gaussian": GaussianMechanism, "goe": GOEMechanism, "laplace": LaplaceMechanism}


def mechanism_from_dict(data: dict[str, Any]) -> Mechanism:
    """Rebuild a mechanism from :meth:`to_dict` output (validating every field)."""
    if not isinstance(data, dict):
        raise InvalidParameterError("mechanism", "must be a JSON object", type(data).__name__)
    kind = data.get("kind")
    if kind not in _KINDS:
        raise InvalidParameterError("mechanism.kind", f"must be one of {', '.join(_KINDS)}", kind)
    fields = {k: v for k, v in data.items() if k != "kind"}
    cls = _KINDS[kind]
    expected = set(cls.__dataclass_fields__)
    if set(fields) != expected:
        raise InvalidParameterError(f"mechanism ({kind}) fields", f"must be exactly {sorted(expected)}", sorted(fields))
    return cls(**fields)
