"""One-line calibration of a single mechanism for a target (ε, δ), rounded on the safe side.

:func:`calibrate_gaussian`, :func:`calibrate_goe` and :func:`calibrate_laplace` return a dpverify
mechanism whose **own accounting** meets the target: the ledger of ``compositions`` releases of it,
all touching the same user (:func:`composition_ledger`), accounts to ε ≤ target at δ, and so does the
mechanism's direct claim (:func:`dpverify.audit.claimed_epsilon`) for one release. The textbook
recipe σ = Δ/μ(ε, δ) misses this by rounding: at (1, 1e-5) it accounts to ε = 1.0000000000000007.
Here the noise is rounded *up* until the accounting meets the target, and the result is checked to be
within :data:`ROUND_TRIP_TOLERANCE` of it (not needlessly loose).

Routes:

- Gaussian and GOE: the largest total ρ meeting (ε, δ) by ``conversion`` (default ``exact``, the
  exact privacy profile of μ-GDP, Balle & Wang 2018, Theorem 8; composition of k μ-GDP releases is
  √k·μ-GDP, Dong, Roth & Su 2019, Corollary 3.3), split evenly over the compositions; σ = Δ/√(2ρ0)
  (Bun & Steinke 2016, Proposition 1.6) and s = Δ_F/(2√ρ0) for GOE (Sahu 2025, Algorithm 1 line 1).
- Laplace with ``delta=0``: pure ε by basic composition (Dwork et al. 2006), b = kΔ₁/ε. With
  ``delta > 0``: the ledger's zCDP route (ρ = ε0²/2 per release, Bun & Steinke 2016, Proposition 1.4,
  then the CKS or Bun–Steinke conversion), which wins over basic composition for many compositions.
- Randomized response (:func:`calibrate_randomized_response`): the largest ε of each coordinate such that
  ``compositions`` releases of Δ₀ coordinates each — n = compositions·Δ₀ k-RR pairs — meet the target: pure
  nε ≤ ε with ``delta=0``, else the exact profile of n k-RR pairs (:func:`dpverify.composition.rr_epsilon`;
  the optimal composition theorem of Kairouz, Oh & Viswanath 2015 for k = 2; for k > 2 and n above
  :data:`~dpverify.composition.MAX_KARY_COMPOSITIONS` the binary profile, which bounds it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from dpverify import _validate
from dpverify.composition import MAX_KARY_COMPOSITIONS, rr_delta, rr_epsilon
from dpverify.conversions import CONVERSIONS, DELTA_SAFETY, epsilon_exact_gaussian, rho_for_epsilon_delta
from dpverify.errors import InvalidParameterError, NumericalError
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism, Mechanism, RandomizedResponse
from dpverify.neighbouring import Neighbouring
from dpverify.numerics import round_down, round_up

__all__ = [
    "ROUND_TRIP_TOLERANCE",
    "calibrate_gaussian",
    "calibrate_goe",
    "calibrate_laplace",
    "calibrate_randomized_response",
    "composed_epsilon",
    "composition_ledger",
]

#: The calibrated mechanism accounts to ε within this relative distance below the target.
ROUND_TRIP_TOLERANCE = 1e-9

_FAMILY = "release"


def composition_ledger(mechanism: Mechanism, compositions: int = 1) -> PrivacyLedger:
    """The ledger of ``compositions`` releases of ``mechanism`` that all touch the same user (user 1).

    The releases are recorded at episode 1, stages 1..compositions, with ``users="current"`` (user 1
    is in every one of them), so the ledger's per-user accounting is the composition of all of them.
    """
    compositions = _validate.integer("compositions", compositions, minimum=1)
    ledger = PrivacyLedger(mechanism.relation)
    ledger.record_block(_FAMILY, (1, 1), (1, compositions), mechanism, "current")
    return ledger


def composed_epsilon(mechanism: Mechanism, delta: float, compositions: int = 1, conversion: str | None = None) -> float:
    """ε at δ of ``compositions`` releases of ``mechanism``, by the route its calibrator uses.

    ``conversion=None`` picks the mechanism's own route: ``exact`` for Gaussian and GOE; for Laplace,
    pure ε by basic composition when ``delta == 0`` and the ledger's ``cks`` conversion otherwise; for
    randomized response, pure ε when ``delta == 0`` and the exact profile of its k-RR pairs otherwise
    (:func:`_rr_composed`).
    A Gaussian route is the larger of the ledger's answer and, for one release, the direct claim
    ε(μ, δ) — both must meet a target.
    """
    compositions = _validate.integer("compositions", compositions, minimum=1)
    delta = _validate.non_negative("delta", delta)
    if isinstance(mechanism, RandomizedResponse) and conversion is None:
        return _rr_composed(mechanism.local_epsilon, compositions * mechanism.sensitivity, delta,
                            mechanism.categories)
    if isinstance(mechanism, LaplaceMechanism) and delta == 0:
        if conversion is not None:
            raise InvalidParameterError("conversion", "must be None for pure ε (delta = 0)", conversion)
        return round_up(compositions * mechanism.epsilon, 1)
    delta = _validate.open_unit("delta", delta)
    if conversion is None:
        conversion = "exact" if mechanism.is_gaussian else "cks"
    conversion = _validate.one_of("conversion", conversion, CONVERSIONS)
    accounted = composition_ledger(mechanism, compositions).guarantee(delta, conversion).epsilon
    if conversion == "exact" and compositions == 1 and isinstance(mechanism, (GaussianMechanism, GOEMechanism)):
        accounted = max(accounted, epsilon_exact_gaussian(mechanism.mu, delta))
    return accounted


def _round_noise_up(
    build: Callable[[float], Mechanism], start: float, meets: Callable[[Mechanism], bool], what: str
) -> Mechanism:
    """Round the noise scale up (doubling the step) until ``meets``; error if it never does."""
    scale = round_up(start, 2)
    for step in range(64):
        mechanism = build(scale)
        if meets(mechanism):
            return mechanism
        scale = round_up(scale * (1.0 + 2.0 ** (step - 52)), 1)  # steps of ~1, 2, 4, ... ulps
    raise NumericalError(f"could not round the noise of the {what} mechanism up to meet the target")  # pragma: no cover


def _check_tight(accounted: float, epsilon: float, what: str) -> None:
    if accounted < epsilon * (1.0 - ROUND_TRIP_TOLERANCE):
        raise NumericalError(
            f"{what} calibration is looser than it should be: accounted epsilon {accounted!r} < target {epsilon!r}"
        )


def _calibrated(
    build: Callable[[float], Mechanism], start: float, epsilon: float, delta: float, compositions: int,
    conversion: str | None, what: str,
) -> Mechanism:
    """The mechanism ``build(scale)`` with the scale rounded up from ``start`` until its ``compositions``
    releases account (:func:`composed_epsilon` at ``delta`` by ``conversion``) to at most ``epsilon``;
    checked to be within :data:`ROUND_TRIP_TOLERANCE` of it."""
    mechanism = _round_noise_up(
        build, start, lambda m: composed_epsilon(m, delta, compositions, conversion) <= epsilon, what
    )
    _check_tight(composed_epsilon(mechanism, delta, compositions, conversion), epsilon, what)
    return mechanism


def _gaussian_rho0(epsilon: float, delta: float, compositions: int, conversion: str) -> float:
    rho = rho_for_epsilon_delta(epsilon, delta, conversion)
    return round_down(rho / compositions, 2)


@functools.lru_cache(maxsize=256)
def _gaussian_family(kind: Any, epsilon: float, delta: float, compositions: int,
                     relation: Neighbouring, conversion: str, sensitivity: float, dim: int) -> Any:
    """The calibrated Gaussian (σ = Δ/√(2ρ0)) or GOE (s = Δ_F/(2√ρ0)) mechanism of validated arguments.

    Memoised: a pure function of hashable validated values whose answer is a frozen mechanism, and research code
    calibrates its agent in its constructor — once per two-world trial — each time re-checking the answer through a
    composition ledger. The same arguments give the same (equal, shared) mechanism as a fresh calibration."""
    start = kind.noise_for_rho(sensitivity, _gaussian_rho0(epsilon, delta, compositions, conversion))
    return _calibrated(lambda scale: kind(sensitivity, scale, dim, relation), start, epsilon, delta, compositions,
                       conversion, kind.__name__.removesuffix("Mechanism"))


def _gaussian_calibration(kind: Any, epsilon: object, delta: object,
                          sensitivity: tuple[str, object], dim: object, compositions: object,
                          relation: Neighbouring | str, conversion: object) -> Any:
    """A Gaussian-family calibration, its arguments checked (``sensitivity``: its name and value)."""
    return _gaussian_family(kind, _validate.positive("epsilon", epsilon), _validate.open_unit("delta", delta),
                            _validate.integer("compositions", compositions, minimum=1), Neighbouring.parse(relation),
                            _validate.one_of("conversion", conversion, CONVERSIONS), _validate.positive(*sensitivity),
                            _validate.integer("dim", dim, minimum=1))


def calibrate_gaussian(
    epsilon: float,
    delta: float,
    sensitivity: float,
    compositions: int = 1,
    dim: int = 1,
    relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
    conversion: str = "exact",
) -> GaussianMechanism:
    """The Gaussian mechanism with the least noise (up to rounding) whose ``compositions`` releases
    account to (ε, δ) by ``conversion``.

    >>> m = calibrate_gaussian(1.0, 1e-5, sensitivity=1.0)
    >>> composed_epsilon(m, 1e-5) <= 1.0, round(m.sigma, 4)
    (True, 3.7306)
    """
    return _gaussian_calibration(GaussianMechanism, epsilon, delta, ("sensitivity", sensitivity), dim, compositions,
                                 relation, conversion)


def calibrate_goe(
    epsilon: float,
    delta: float,
    frobenius_sensitivity: float,
    dim: int,
    compositions: int = 1,
    relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
    conversion: str = "exact",
) -> GOEMechanism:
    """The GOE (symmetric-matrix Gaussian) mechanism whose ``compositions`` releases account to (ε, δ).

    The noise is (Z + Zᵀ)/√2 with Z_ij ~ N(0, s²): exactly a Gaussian mechanism with std √2·s, so
    s = Δ_F/(2√ρ0) (Sahu 2025, Algorithm 1 line 1, with Δ_F = 1).
    """
    return _gaussian_calibration(GOEMechanism, epsilon, delta, ("frobenius_sensitivity", frobenius_sensitivity), dim,
                                 compositions, relation, conversion)


def calibrate_laplace(
    epsilon: float,
    sensitivity: float,
    compositions: int = 1,
    dim: int = 1,
    delta: float = 0.0,
    relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
    conversion: str = "cks",
) -> LaplaceMechanism:
    """The Laplace mechanism (ℓ1 sensitivity Δ₁) whose ``compositions`` releases meet the target.

    ``delta=0``: pure ε-DP by basic composition, scale b = kΔ₁/ε rounded up. ``delta > 0``: the
    ledger's zCDP accounting at δ by ``conversion`` (``cks`` or ``bun-steinke``; ``exact`` applies to
    Gaussian releases only). For few compositions the pure route needs less noise; use ``delta > 0``
    when there are many.
    """
    epsilon = _validate.positive("epsilon", epsilon)
    sensitivity = _validate.positive("sensitivity", sensitivity)
    compositions = _validate.integer("compositions", compositions, minimum=1)
    dim = _validate.integer("dim", dim, minimum=1)
    delta = _validate.non_negative("delta", delta)
    relation = Neighbouring.parse(relation)
    build = lambda b: LaplaceMechanism(sensitivity, b, dim, relation)  # noqa: E731
    if delta == 0:
        start, route = compositions * sensitivity / epsilon, None
    else:
        delta = _validate.open_unit("delta", delta)
        route = _validate.one_of("conversion", conversion, ("cks", "bun-steinke"))
        # the same split of the zCDP budget as a Gaussian's
        start = LaplaceMechanism.noise_for_rho(sensitivity, _gaussian_rho0(epsilon, delta, compositions, route))
    return _calibrated(build, start, epsilon, delta, compositions, route, "Laplace")  # type: ignore[return-value]


def _rr_composed(local_epsilon: float, pairs: int, delta: float, categories: int) -> float:
    """ε at δ of ``pairs`` k-RR pairs: pure (rounded up) at δ = 0, else their exact profile (the binary one,
    which bounds it, for k > 2 past :data:`~dpverify.composition.MAX_KARY_COMPOSITIONS`)."""
    if delta == 0:
        return round_up(pairs * local_epsilon, 1)
    k = categories if categories == 2 or pairs <= MAX_KARY_COMPOSITIONS else 2
    return rr_epsilon(local_epsilon, pairs, _validate.open_unit("delta", delta), k)


def calibrate_randomized_response(
    epsilon: float,
    delta: float = 0.0,
    categories: int = 2,
    compositions: int = 1,
    dim: int = 1,
    sensitivity: int = 1,
    relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
) -> RandomizedResponse:
    """The randomized response (k = ``categories``, ``dim`` coordinates, Hamming sensitivity Δ₀) with the
    largest ε per coordinate (up to rounding) whose ``compositions`` releases meet (ε, δ) — pure ε at δ = 0
    (module docstring).

    >>> m = calibrate_randomized_response(1.0, compositions=4)
    >>> composed_epsilon(m, 0.0, 4) <= 1.0, round(m.local_epsilon, 6)
    (True, 0.25)
    """
    epsilon = _validate.positive("epsilon", epsilon)
    delta = _validate.non_negative("delta", delta)
    if delta:
        _validate.open_unit("delta", delta)
    compositions = _validate.integer("compositions", compositions, minimum=1)
    relation_ = Neighbouring.parse(relation)
    build = lambda e: RandomizedResponse(sensitivity, e, dim, categories, relation_)  # noqa: E731
    pairs = compositions * build(1.0).sensitivity
    k = categories if categories == 2 or pairs <= MAX_KARY_COMPOSITIONS else 2
    # the bisection reads the profile at the target (one evaluation), the result is checked by its inverse
    meets = (lambda e: pairs * e <= epsilon) if delta == 0 else (
        lambda e: rr_delta(e, pairs, epsilon, k) <= delta * (1.0 - DELTA_SAFETY))
    lo, hi = round_down(epsilon / pairs, 2), epsilon  # pure composition meets the target at every δ
    while meets(hi):  # (a pair's ε at δ grows without bound with its parameter)
        hi *= 2.0
    for _ in range(200):  # bisection on ε per coordinate, keeping meets(lo)
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi or hi - lo <= 1e-13 * lo:
            break
        lo, hi = (mid, hi) if meets(mid) else (lo, mid)
    while _rr_composed(lo, pairs, delta, categories) > epsilon:  # the inverse rounds up: step below it
        lo = round_down(lo, 4)
    mechanism = build(lo)
    _check_tight(composed_epsilon(mechanism, delta, compositions), epsilon, "randomized response")
    return mechanism
