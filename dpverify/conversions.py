"""Conversions between privacy measures: ρ-zCDP and μ-GDP to (ε, δ)-DP, and back for calibration.

Three routes from a composition of releases to (ε, δ), from loosest to tightest:

``bun-steinke``
    Bun & Steinke 2016, Proposition 1.3 (Sahu 2025, Lemma 2.1): ρ-zCDP ⇒ (ρ + 2√(ρ log(1/δ)), δ)-DP.
``cks``
    Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy", Corollary 13:
    ρ-zCDP ⇒ (ε, δ)-DP for every α > 1 with
    ε = αρ + log(1 − 1/α) + (log(1/δ) − log α)/(α − 1); we minimise over α.
    The tightest conversion that uses only the zCDP parameter.
``exact``
    Only when every release is Gaussian (the GOE mechanism included, see :mod:`dpverify.mechanisms`):
    the composition is exactly μ-GDP with μ² = Σ (Δᵢ/σᵢ)² = 2ρ (Dong, Roth & Su 2019, Corollary 3.3),
    whose privacy profile is δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018, Theorem 8).
    This is the true privacy of the releases; no accountant can report less.

Each route is one :class:`Conversion` entered in :data:`CONVERSION_REGISTRY` by
:func:`register_conversion` (its ε, its inverse for calibration, whether it needs Gaussian releases,
and its source); the ledger, the calibrator and the command line read the registry, so a new
conversion is one registered entry plus its tests.

Every function here is *conservative*: the ε it returns is never below the true ε of its route (a
safety margin of :data:`DELTA_SAFETY` relative in δ absorbs evaluation error, and roots are taken on
the safe side of their bracket), and the ρ or μ returned for calibration never exceeds the largest
value that meets the target. Invalid input raises :class:`~dpverify.errors.InvalidParameterError`;
a computation that cannot produce a trustworthy number raises :class:`~dpverify.errors.NumericalError`.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from dpverify import _validate
from dpverify.errors import InvalidParameterError, NumericalError
from dpverify.numerics import decreasing_root, gaussian_log_delta, golden_minimise, round_down, round_up

#: Names of the zCDP/GDP → (ε, δ) conversions, loosest first: the registered ones (see the end of
#: this module, :data:`CONVERSION_REGISTRY`), assigned there.

#: Relative margin applied to δ before inverting δ(ε) (ε is computed for δ·(1 − DELTA_SAFETY)).
#: The exact profile is evaluated to ~1e-11 relative (tested against mpmath), so 1e-9 is a safe margin
#: whose cost in ε is far below any figure we print.
DELTA_SAFETY = 1e-9

#: Beyond this μ the log-space profile's relative error in δ (≈ 1.3e-16·μ, measured against mpmath at
#: 80 digits) could approach DELTA_SAFETY, so ε is reported as ∞ (vacuous) rather than computed. At
#: μ = 4·10⁶ the root ε ≈ μ²/2 ≈ 8·10¹²: the ε → ∞ sanity checks (ε = 10¹²) stay computable.
_MU_CEILING = 4e6
_EPSILON_CEILING = 1e14  # above every root for μ ≤ _MU_CEILING and δ ≥ 1e-300; a search past it reports ∞
_STEP_LIMIT = 200  # every step-until-safe loop below stops after this many steps


@dataclass(frozen=True)
class DPGuarantee:
    """An (ε, δ)-DP guarantee and the route that produced it.

    Attributes:
        epsilon: ε ≥ 0 (``math.inf`` when no finite ε meets δ).
        delta: δ in (0, 1).
        conversion: the name of a registered conversion (:data:`CONVERSIONS`).
        rho: the ρ-zCDP parameter the conversion started from (for ``exact``, μ²/2).
    """

    epsilon: float
    delta: float
    conversion: str
    rho: float

    def __post_init__(self) -> None:
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, numbers.Real):
            raise InvalidParameterError("epsilon", "must be a real number", self.epsilon)
        if math.isnan(self.epsilon) or self.epsilon < 0:
            raise NumericalError(f"epsilon must be >= 0 and not NaN (got {self.epsilon!r})")
        _validate.open_unit("delta", self.delta)
        get_conversion(self.conversion)
        _validate.non_negative("rho", self.rho)


# --------------------------------------------------------------------------------------------
# zCDP → (ε, δ)


def epsilon_bun_steinke(rho: float, delta: float) -> float:
    """ε = ρ + 2√(ρ log(1/δ)) (Bun & Steinke 2016, Proposition 1.3; Sahu 2025, Lemma 2.1)."""
    rho = _validate.non_negative("rho", rho)
    delta = _validate.open_unit("delta", delta)
    # √ρ·√L rather than √(ρL): the product overflows for ρ near the largest float.
    return round_up(rho + 2.0 * math.sqrt(rho) * math.sqrt(-math.log(delta)), 2)


#: Relative outward margin of the CKS ε, relative to the magnitude Σ|terms| of the objective at the
#: minimiser: its floating-point error is ~100 ulps of that magnitude (log1p, exp and the products each
#: add a few), so 2⁻⁴² (1 024 ulps) covers it with room. Relative, because a fixed number of ulps of ε
#: is not enough when the terms cancel (ε much smaller than the terms).
CKS_RELATIVE_MARGIN = 2.0**-42


def _cks_magnitude(t: float, rho: float, log_inv_delta: float) -> float:
    """Σ |terms| of the CKS objective at α = 1 + e^t: the scale of its floating-point error."""
    try:
        alpha_minus_one = math.exp(t)
        log_alpha = math.log1p(alpha_minus_one)
        return ((1.0 + alpha_minus_one) * rho + abs(t) + log_alpha
                + (log_inv_delta + log_alpha) * math.exp(-t))
    except OverflowError:
        return math.inf


def _cks_epsilon_at_log(t: float, rho: float, log_inv_delta: float) -> float:
    """CKS 2020 Corollary 13 at the order α = 1 + e^t (valid for every α > 1).

    ε(α) = αρ + log(1 − 1/α) + (log(1/δ) − log α)/(α − 1), written with log(α − 1) = t so that
    log(1 − 1/α) = t − log α has no cancellation near α = 1 and (α − 1)⁻¹ = e^{−t}. Orders whose terms
    overflow return +inf (they are never the minimiser).
    """
    try:
        alpha_minus_one = math.exp(t)
        alpha = 1.0 + alpha_minus_one
        log_alpha = math.log1p(alpha_minus_one)
        return alpha * rho + (t - log_alpha) + (log_inv_delta - log_alpha) * math.exp(-t)
    except OverflowError:
        return math.inf


def epsilon_cks(rho: float, delta: float) -> float:
    """ε from ρ-zCDP by Canonne, Kamath & Steinke 2020, Corollary 13, minimised over α > 1.

    Every α gives a valid guarantee, so an imprecise minimiser can only make the answer looser,
    never unsafe. The Bun–Steinke optimum α = 1 + √(log(1/δ)/ρ) is always a candidate, so the result
    is never above :func:`epsilon_bun_steinke`. The result is floored at 0 (ε < 0 is meaningless).
    """
    rho = _validate.non_negative("rho", rho)
    delta = _validate.open_unit("delta", delta)
    if rho == 0:
        return 0.0
    log_inv_delta = -math.log(delta)
    # Minimise over t = log(α − 1), which makes the objective well scaled for every ρ.
    objective = lambda t: _cks_epsilon_at_log(t, rho, log_inv_delta)  # noqa: E731
    # t at the Bun–Steinke optimum, log √(L/ρ), computed so that it stays finite for subnormal ρ.
    t_bs = 0.5 * (math.log(log_inv_delta) - math.log(rho))
    candidates = [(objective(t_bs), t_bs)]
    # The optimal order lies below the Bun–Steinke one (α* ≤ α_BS); the window is generous on both sides.
    best, t_min = golden_minimise(objective, t_bs - 40.0, t_bs + 5.0)
    if math.isfinite(best):
        candidates.append((best, t_min))
    eps, t_best = min(candidates)
    if not math.isfinite(eps):
        # Every order overflowed (ρ near the largest float): Bun–Steinke is a valid, looser answer.
        return epsilon_bun_steinke(rho, delta)
    margin = CKS_RELATIVE_MARGIN * _cks_magnitude(t_best, rho, log_inv_delta)
    return min(max(0.0, round_up(eps + margin, 1)), epsilon_bun_steinke(rho, delta))


# --------------------------------------------------------------------------------------------
# μ-GDP (exact for Gaussian releases) ↔ (ε, δ)


def _exact_root(mu: float, delta: float, margin: float) -> tuple[Callable[[float], float], float | None]:
    """(f, the bracketed root ε of f) with f(ε) = log δ_μ(ε) − log(δ·(1 + margin)), decreasing in ε; the root is
    None when f(0) ≤ 0 (ε = 0 already meets the target) and ∞ when the bracket passes the ceiling."""
    log_target = math.log(delta) + math.log1p(margin)
    f = lambda eps: gaussian_log_delta(eps, mu) - log_target  # noqa: E731  (decreasing in ε)
    if f(0.0) <= 0:
        return f, None
    hi = max(1.0, mu * mu)
    while f(hi) > 0:
        hi *= 2.0
        if hi > _EPSILON_CEILING:
            return f, math.inf
    return f, decreasing_root(f, 0.0, hi)


def epsilon_exact_gaussian(mu: float, delta: float) -> float:
    """The smallest ε with δ(ε) ≤ δ for a μ-GDP mechanism, rounded up (never below the truth).

    Solves log δ(ε) = log(δ·(1 − DELTA_SAFETY)) by a bracketing root search
    (:func:`~dpverify.numerics.decreasing_root`) and returns the bracket end on the safe side.
    Returns 0 when δ(0) = 2Φ(μ/2) − 1 is already ≤ δ.
    """
    mu = _validate.non_negative("mu", mu)
    delta = _validate.open_unit("delta", delta)
    if mu == 0:
        return 0.0
    if mu > _MU_CEILING:
        # δ(ε) > δ for every ε up to the ceiling: the guarantee is vacuous.
        return math.inf
    f, eps = _exact_root(mu, delta, -DELTA_SAFETY)
    if eps is None or math.isinf(eps):
        return 0.0 if eps is None else eps
    # Step up until the computed δ meets the (margined) target: the safe side of the root.
    return _step_until(lambda e: f(e) <= 0, eps, up=True, what=f"the exact epsilon at mu={mu!r}, delta={delta!r}")


def epsilon_exact_gaussian_lower(mu: float, delta: float) -> float:
    """The largest ε with δ(ε) ≥ δ for a μ-GDP mechanism, rounded *down*: the ε a lower bound may report.

    The mirror of :func:`epsilon_exact_gaussian` for lower bounds (the safe side of a lower bound is below
    the truth): the same root of log δ(ε) = log(δ·(1 + DELTA_SAFETY)), taken on the low side of its bracket.
    Returns 0 when δ(0) = 2Φ(μ/2) − 1 is below δ already (no ε > 0 is excluded). μ above the ceiling is
    taken at the ceiling: its ε is a valid lower bound, ε being increasing in μ.
    """
    mu = _validate.non_negative("mu", mu)
    delta = _validate.open_unit("delta", delta)
    if mu == 0:
        return 0.0
    f, eps = _exact_root(min(mu, _MU_CEILING), delta, DELTA_SAFETY)
    if eps is None or math.isinf(eps):
        return 0.0 if eps is None else _EPSILON_CEILING
    # Step down until the computed δ is at least the (margined) target: the low side of the root.
    return _step_until(lambda e: f(e) >= 0, eps, up=False, what=f"the exact lower epsilon at mu={mu!r}")


def _step_until(ok: Callable[[float], bool], x: float, up: bool, what: str) -> float:
    """The first of x, x·(1 ± 2⁻⁵²·2ⁱ) for i = 1, 2, … (steps doubling) at which ``ok`` holds.

    Bounded: after :data:`_STEP_LIMIT` steps (a relative move far beyond any rounding error) it raises
    NumericalError instead of looping.
    """
    step = 2.0**-52
    for _ in range(_STEP_LIMIT):
        if not x > 0:  # stepping down reached 0 (or x was NaN): no safe value on this side
            break
        if ok(x):
            return x
        x = round_up(x * (1.0 + step), 1) if up else round_down(x * (1.0 - step), 1)
        step = min(2.0 * step, 0.5)
    if x > 0 and ok(x):
        return x
    raise NumericalError(f"could not reach the safe side of {what}")


def mu_for_epsilon_delta(epsilon: float, delta: float) -> float:
    """The largest μ (rounded down) such that a μ-GDP mechanism is (ε, δ)-DP by the exact profile.

    Inverts :func:`epsilon_exact_gaussian` itself (not the raw profile), so that re-accounting the
    returned μ gives an ε ≤ the target: calibration and accounting cannot disagree.
    """
    epsilon = _validate.positive("epsilon", epsilon)
    delta = _validate.open_unit("delta", delta)
    return _largest_below(lambda mu: epsilon_exact_gaussian(mu, delta), epsilon, start=1.0)


# --------------------------------------------------------------------------------------------
# Calibration: the largest ρ meeting a target (ε, δ) under each conversion


@functools.lru_cache(maxsize=256)
def _rho_exact(epsilon: float, delta: float) -> float:
    """The largest ρ = μ²/2 (rounded down) whose μ-GDP profile meets (ε, δ).

    Memoised: a pure function of two validated floats, and the costliest step of every Gaussian
    calibration (about 60 exact-profile roots). Code that builds an agent per trial — and so calibrates it per
    trial, as research code does in its constructor — pays for it once.
    """
    mu = mu_for_epsilon_delta(epsilon, delta)
    rho = round_down(mu * mu / 2.0, 2)
    return _step_until(lambda r: epsilon_exact_gaussian(math.sqrt(2.0) * math.sqrt(r), delta) <= epsilon, rho,
                       up=False,
                       what=f"the exact rho for epsilon={epsilon!r}, delta={delta!r}")


def _rho_bun_steinke(epsilon: float, delta: float) -> float:
    """The largest ρ (rounded down) with ρ + 2√(ρ log(1/δ)) ≤ ε."""
    # Closed-form inverse of ε = ρ + 2√(ρL): √ρ = √(ε + L) − √L = ε / (√(ε + L) + √L).
    log_inv = -math.log(delta)
    rho = (epsilon / (math.sqrt(epsilon + log_inv) + math.sqrt(log_inv))) ** 2
    return _step_until(lambda r: epsilon_bun_steinke(r, delta) <= epsilon, rho, up=False,
                       what=f"the Bun-Steinke rho for epsilon={epsilon!r}, delta={delta!r}")


def _rho_cks(epsilon: float, delta: float) -> float:
    """The largest ρ (rounded down) whose CKS ε is ≤ the target (bisection on the reported ε)."""
    return _largest_below(lambda rho: epsilon_cks(rho, delta), epsilon, start=epsilon)


def rho_for_epsilon_delta(epsilon: float, delta: float, conversion: str) -> float:
    """The largest ρ (rounded down) whose conversion gives ε ≤ target at δ.

    For ``exact`` the ρ is μ²/2 of the largest admissible μ (valid when every release is Gaussian).
    """
    epsilon = _validate.positive("epsilon", epsilon)
    delta = _validate.open_unit("delta", delta)
    return get_conversion(conversion).rho_for(epsilon, delta)


def epsilon_from_rho(rho: float, delta: float, conversion: str) -> float:
    """ε at δ for ρ-zCDP under one conversion (``exact`` treats ρ as μ²/2 of Gaussian releases)."""
    route = get_conversion(conversion)
    rho = _validate.non_negative("rho", rho)
    return route.epsilon(rho, delta)


def _epsilon_exact(rho: float, delta: float) -> float:
    """ε of Gaussian releases with μ² = 2ρ, by the exact μ-GDP profile."""
    return epsilon_exact_gaussian(math.sqrt(2.0) * math.sqrt(rho), delta)


def guarantee(rho: float, delta: float, conversion: str) -> DPGuarantee:
    """The (ε, δ) guarantee of ρ-zCDP (or of Gaussian releases with μ² = 2ρ, for ``exact``)."""
    return DPGuarantee(epsilon_from_rho(rho, delta, conversion), delta, conversion, rho)


def _largest_below(eps_of: Callable[[float], float], target: float, start: float) -> float:
    """The largest x > 0 with eps_of(x) ≤ target, for eps_of increasing; bisection in log space.

    Returns the lower end of the final bracket, so eps_of(result) ≤ target always holds.
    """
    lo, hi = 0.0, start
    while eps_of(hi) <= target:
        lo, hi = hi, hi * 2.0
        if hi > 1e300:
            raise InvalidParameterError(
                "epsilon", "is too large to calibrate (no finite noise level reaches it; use epsilon <= 1e6)", target
            )
    if lo == 0.0:
        lo = hi
        while eps_of(lo) > target:
            hi, lo = lo, lo / 2.0
            if lo < 1e-300:
                raise InvalidParameterError(
                    "epsilon", "is too small to calibrate (the noise would exceed the largest float)", target
                )
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if mid <= lo or mid >= hi:
            break
        if eps_of(mid) <= target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 2e-15 * lo:
            break
    if eps_of(lo) > target:  # pragma: no cover - guarded by the loop invariant
        raise NumericalError("calibration invariant broken")
    return lo


# --------------------------------------------------------------------------------------------
# The registry of conversions


@dataclass(frozen=True)
class Conversion:
    """One route from a composed budget to (ε, δ), and back for calibration.

    Attributes:
        name: the name callers pass as ``conversion``.
        source: the statement's source, shown next to its ε by ``dpverify convert``.
        epsilon: (ρ, δ) ↦ ε, conservative (never below the true ε of the route).
        rho_for: (ε, δ) ↦ the largest ρ whose ``epsilon`` is ≤ ε (rounded down).
        gaussian_only: True when the route is valid only if every release is Gaussian (the ledger then
            refuses it for a composition with any other release).
    """

    name: str
    source: str
    epsilon: Callable[[float, float], float]
    rho_for: Callable[[float, float], float]
    gaussian_only: bool = False


_REGISTRY: dict[str, Conversion] = {}

#: The registered conversions by name, loosest first (read-only view of the registry).
CONVERSION_REGISTRY: Mapping[str, Conversion] = MappingProxyType(_REGISTRY)


def register_conversion(conversion: Conversion) -> Conversion:
    """Enter a conversion in :data:`CONVERSION_REGISTRY` (its name must be new)."""
    if not isinstance(conversion, Conversion):
        raise InvalidParameterError("conversion", "must be a Conversion", type(conversion).__name__)
    if not conversion.name or conversion.name in _REGISTRY:
        raise InvalidParameterError("conversion.name", "must be a new, non-empty name", conversion.name)
    _REGISTRY[conversion.name] = conversion
    return conversion


def get_conversion(name: str) -> Conversion:
    """The registered conversion called ``name``; InvalidParameterError("conversion", ...) otherwise."""
    if not isinstance(name, str) or name not in _REGISTRY:
        raise InvalidParameterError("conversion", f"must be one of {', '.join(_REGISTRY)}", name)
    return _REGISTRY[name]


register_conversion(Conversion(
    "bun-steinke", "Bun & Steinke 2016 Prop. 1.3 (Sahu 2025 Lemma 2.1)", epsilon_bun_steinke, _rho_bun_steinke,
))
register_conversion(Conversion(
    "cks", "Canonne, Kamath & Steinke 2020 Cor. 13 (tightest from ρ alone)", epsilon_cks, _rho_cks,
))
register_conversion(Conversion(
    "exact", "exact μ-GDP profile, μ = √(2ρ); valid only if every release is Gaussian",
    _epsilon_exact, _rho_exact, gaussian_only=True,
))

CONVERSIONS: tuple[str, ...] = tuple(_REGISTRY)
