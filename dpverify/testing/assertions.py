"""Assertions for privacy claims, usable from any test runner: they raise AssertionError explicitly (never with
``assert``, so they check the same under ``python -O``)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from dpverify import _validate
from dpverify.accounting import epsilon_routes, tightest
from dpverify.conversions import get_conversion
from dpverify.ledger import PrivacyLedger


def _check(condition: bool, message: str) -> None:
    """Raise AssertionError(message) unless ``condition``: an explicit raise, unaffected by ``python -O``."""
    if not condition:
        raise AssertionError(message)


def assert_ledger_meets(
    ledger: PrivacyLedger,
    epsilon: float,
    delta: float,
    conversion: str = "exact",
    rel_tol: float = 0.0,
    accounting: str = "per-user",
) -> float:
    """The releases recorded in ``ledger`` are (ε, δ)-DP by ``conversion``; returns the accounted ε.

    A conversion that does not apply to the ledger (``exact`` with a non-Gaussian release) stands aside for
    the tightest route that does (:func:`dpverify.accounting.epsilon_routes`), named in the message.
    ``rel_tol`` (default 0: no slack) accepts an accounted ε up to ``epsilon · (1 + rel_tol)``; state it
    explicitly when a claim is known to be rounded. On failure the message says by how much the ledger
    missed the claim, absolutely and relatively.
    """
    rel_tol = _validate.non_negative("rel_tol", rel_tol)
    if get_conversion(conversion).gaussian_only and not ledger.all_gaussian:
        best = tightest(epsilon_routes(ledger, delta, accounting))
        accounted, conversion = float(best.epsilon or 0.0), best.route
    else:
        accounted = ledger.guarantee(delta, conversion, accounting).epsilon
    allowed = epsilon * (1.0 + rel_tol)
    if not accounted <= allowed:
        missed = accounted - epsilon
        relative = missed / epsilon if epsilon > 0 else math.inf
        raise AssertionError(
            f"ledger accounts to ε = {accounted!r} > claimed {epsilon!r} at δ = {delta!r} "
            f"({conversion}, {accounting}): missed by {missed:.3g} (relative {relative:.3g}; rel_tol = {rel_tol:g})"
        )
    return accounted


def assert_claim_matches_ledger(
    claimed_epsilon: float, ledger: PrivacyLedger, delta: float, conversion: str = "exact", rel_tol: float = 1e-9
) -> None:
    """An agent's claimed ε equals what its ledger accounts (no release missing, none unrecorded)."""
    accounted = ledger.guarantee(delta, conversion).epsilon
    _check(accounted <= claimed_epsilon * (1 + 1e-15),
           f"accounted ε {accounted!r} exceeds the claim {claimed_epsilon!r}")
    _check(math.isclose(accounted, claimed_epsilon, rel_tol=rel_tol),
           f"accounted ε {accounted!r} differs from the claim {claimed_epsilon!r}: releases missing from the ledger, "
           "or noise larger than calibrated")


def assert_fresh_noise(noises: Iterable[np.ndarray], atol: float = 0.0) -> None:
    """No two releases share a noise draw (reused noise is not private), and every release drew some.

    Compares the noise arrays of every pair of releases of the same shape up to the sign of each entry
    (a draw reused negated, or with some coordinates negated, is as bad), and rejects a noise array
    that is identically zero. Exact float equality is the default (independent continuous draws never
    coincide) and runs in linear time by hashing; ``atol > 0`` compares all pairs.
    """
    atol = _validate.non_negative("atol", atol)
    exact: dict[tuple[tuple[int, ...], bytes], int] = {}
    seen: dict[tuple[int, ...], list[tuple[int, np.ndarray]]] = {}
    for i, noise in enumerate(noises):
        arr = np.asarray(noise, dtype=float).ravel()
        _check(bool(np.all(np.isfinite(arr))), f"release {i}: noise is not finite")
        _check(arr.size == 0 or bool(np.any(arr != 0)), f"release {i}: noise is identically zero (no noise drawn)")
        magnitude = np.abs(arr)
        if atol == 0:
            key = (arr.shape, magnitude.tobytes())
            j = exact.get(key)
            _check(j is None, f"releases {j} and {i} share a noise draw (up to signs)")
            exact[key] = i
            continue
        for j, other in seen.get(arr.shape, []):
            _check(not np.allclose(magnitude, other, rtol=0.0, atol=atol),
                   f"releases {j} and {i} share a noise draw (up to signs, within atol = {atol:g})")
        seen.setdefault(arr.shape, []).append((i, magnitude))


def assert_not_below(reported_epsilon: float, reference_epsilon: float, rel_tol: float = 0.0) -> None:
    """A reported ε is never below a reference (e.g. an mpmath or PLD computation): the safety rule."""
    _check(not math.isnan(reported_epsilon), "reported ε is NaN")
    _check(reported_epsilon >= reference_epsilon * (1 - rel_tol),
           f"reported ε {reported_epsilon!r} is below the reference {reference_epsilon!r}")
