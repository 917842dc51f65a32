"""Exact (Clopper–Pearson) one-sided confidence bounds on a binomial proportion.

Clopper, C. J. & Pearson, E. S. (1934), "The use of confidence or fiducial limits illustrated in the
case of the binomial", Biometrika 26(4):404–413. For k successes in n trials the one-sided bounds at
error level a are the beta quantiles

    upper(k, n, a) = B⁻¹(1 − a; k + 1, n − k)   (= 1 when k = n)
    lower(k, n, a) = B⁻¹(a; k, n − k + 1)       (= 0 when k = 0)

and P(p > upper) ≤ a, P(p < lower) ≤ a for every true p (the bounds are exact, hence conservative
for a discrete binomial). Equivalently, by the beta–binomial identity, the upper bound is the p at which
P[Bin(n, p) ≤ k] = a and the lower bound the p at which P[Bin(n, p) ≥ k] = a.

**Verified, not trusted.** The beta-quantile routine (scipy's ``betaincinv``) is a first guess only: it
errs on the unsafe side by up to about 1e-6 relative for counts near 10³ out of 10⁶–10⁷ trials, and
returns values off by a factor of two at 10⁹ trials. :func:`upper_bound` and :func:`lower_bound`
therefore accept a candidate only when the *forward* binomial tail at it — scipy's ``betaincc`` and
``betainc``, checked against a direct high-precision summation of the binomial terms — is at
most a·(1 − margin), the margin covering the forward routine's own error (:data:`FORWARD_MARGIN`).
Where the guess nudged outward by :data:`RELATIVE_SAFETY` fails, it is pushed outward in the relative
steps of :data:`_OUTWARD_STEPS` (or to 1, resp. 0) until the forward tail accepts it, and bisection on
the forward tail then draws it back to the exact bound. Every reported bound is thus on the safe side
of the exact one whatever the quantile routine returned.

The functions are vectorised and also accept non-integer counts, which the threshold selection uses to
*project* a bound to another sample size through :func:`upper_guess` and :func:`lower_guess`:
the raw guesses, unverified, used only to steer a choice and never reported.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from dpverify import _validate
from dpverify.errors import InvalidParameterError

#: Relative outward nudge of the raw quantile (the first step of :data:`_OUTWARD_STEPS`).
RELATIVE_SAFETY = 1e-12
#: Relative outward steps tried in turn until the forward tail accepts the bound (then bisection
#: between the last rejected and the first accepted step draws it back to the exact boundary).
_OUTWARD_STEPS: tuple[float, ...] = (RELATIVE_SAFETY, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5)
#: The forward tail must be at most a·(1 − margin), margin = FORWARD_MARGIN + FORWARD_MARGIN_PER_TRIAL·n:
#: the forward routine's error grows with n. Against a direct 50-digit summation of the binomial terms
#: it was at most 3e-14 (relative) up to 10⁶ trials, 2e-13 at 10⁷, 7e-12 at 3×10⁸ and 3e-11 at 1.4×10⁹;
#: the margin is 10–50 times that.
FORWARD_MARGIN = 1e-12
FORWARD_MARGIN_PER_TRIAL = 1e-18
#: Most bisection steps (each halves the bracket; about 60 reach adjacent doubles from [0, 1]).
_BISECTION_STEPS = 200


def _check(k: object, n: object, a: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k_arr = np.asarray(k, dtype=float)
    n_arr = np.asarray(n, dtype=float)
    a_arr = np.asarray(a, dtype=float)
    if not (np.all(np.isfinite(k_arr)) and np.all(np.isfinite(n_arr))):
        raise InvalidParameterError("counts", "must be finite", "non-finite")
    if np.any(n_arr < 1):
        raise InvalidParameterError("n", "must be >= 1", n)
    if np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise InvalidParameterError("k", "must satisfy 0 <= k <= n", k)
    if np.any(~(a_arr > 0)) or np.any(~(a_arr < 1)):
        raise InvalidParameterError("alpha", "must be in the open interval (0, 1)", a)
    return k_arr, n_arr, a_arr


def _raw_upper(k: np.ndarray, n: np.ndarray | float, a: np.ndarray | float) -> np.ndarray:
    """The beta quantile B⁻¹(1 − a; k + 1, n − k), and 1 where k = n."""
    full = k >= n
    kk = np.where(full, 0.0, k)  # placeholder where the bound is 1 (avoids b = 0 in betaincinv)
    return np.where(full, 1.0, special.betaincinv(kk + 1.0, np.maximum(n - kk, 1e-300), 1.0 - a))


def _raw_lower(k: np.ndarray, n: np.ndarray | float, a: np.ndarray | float) -> np.ndarray:
    """The beta quantile B⁻¹(a; k, n − k + 1), and 0 where k = 0."""
    empty = k <= 0
    kk = np.where(empty, 1.0, k)
    return np.where(empty, 0.0, special.betaincinv(kk, n - kk + 1.0, a))


def _step_up(q: np.ndarray, s: float) -> np.ndarray:
    return np.minimum(1.0, q * (1.0 + s) + 1e-300)


def _step_down(q: np.ndarray, s: float) -> np.ndarray:
    return np.maximum(0.0, q * (1.0 - s))


def upper_guess(k: np.ndarray, n: np.ndarray | float, a: np.ndarray | float) -> np.ndarray:
    """The raw beta-quantile guess of :func:`upper_bound`, nudged by :data:`RELATIVE_SAFETY`.

    No input checks and no verification: for steering a selection only, never for a reported bound.
    """
    return _step_up(_raw_upper(k, n, a), RELATIVE_SAFETY)


def lower_guess(k: np.ndarray, n: np.ndarray | float, a: np.ndarray | float) -> np.ndarray:
    """The raw beta-quantile guess of :func:`lower_bound`, nudged by :data:`RELATIVE_SAFETY`.

    No input checks and no verification: for steering a selection only, never for a reported bound.
    """
    return _step_down(_raw_lower(k, n, a), RELATIVE_SAFETY)


def _margin(n: np.ndarray) -> np.ndarray:
    return FORWARD_MARGIN + FORWARD_MARGIN_PER_TRIAL * n


def _upper_tail_ok(k: np.ndarray, n: np.ndarray, a: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Whether p is a valid upper bound: P[Bin(n, p) ≤ k] = betaincc(k + 1, n − k, p) ≤ a (with margin)."""
    with np.errstate(invalid="ignore"):
        tail = special.betaincc(k + 1.0, np.maximum(n - k, 1e-300), np.clip(p, 0.0, 1.0))
    return (p >= 1.0) | (tail <= a * (1.0 - _margin(n)))


def _lower_tail_ok(k: np.ndarray, n: np.ndarray, a: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Whether p is a valid lower bound: P[Bin(n, p) ≥ k] = betainc(k, n − k + 1, p) ≤ a (with margin)."""
    with np.errstate(invalid="ignore"):
        tail = special.betainc(np.maximum(k, 1e-300), n - k + 1.0, np.clip(p, 0.0, 1.0))
    return (p <= 0.0) | (tail <= a * (1.0 - _margin(n)))


def _verified(
    guess: np.ndarray,
    ok: Callable[[np.ndarray], np.ndarray],
    step: Callable[[np.ndarray, float], np.ndarray],
    safe: float,
    start: np.ndarray,
) -> np.ndarray:
    """The guess moved outward until ``ok`` accepts it, then drawn back in by bisection.

    ``step(guess, s)`` moves a guess outward by the relative step s. Where the first step
    (:data:`RELATIVE_SAFETY`) is accepted, that is the answer. Elsewhere the bracket runs from the
    last rejected step (or ``start``, the estimate k/n, if the guess is not a number) to the first
    accepted one (or ``safe``, 1 or 0, which is always accepted), and bisection on the forward tail
    narrows it to adjacent doubles. Only accepted values are ever returned.
    """
    first = step(guess, _OUTWARD_STEPS[0])
    todo = ~(ok(first) & np.isfinite(first))
    if not todo.any():
        return first
    good = np.where(todo, safe, first)                       # accepted end of each bracket
    bad = np.where(todo & np.isfinite(first), first, start)  # rejected end
    open_ = todo.copy()
    for s in _OUTWARD_STEPS[1:]:
        candidate = step(guess, s)
        accepted = open_ & ok(candidate) & np.isfinite(candidate)
        good = np.where(accepted, candidate, good)
        bad = np.where(open_ & ~accepted & np.isfinite(candidate), candidate, bad)
        open_ &= ~accepted
        if not open_.any():
            break
    for _ in range(_BISECTION_STEPS):
        mid = bad / 2.0 + good / 2.0
        moving = todo & (mid != good) & (mid != bad)
        if not moving.any():
            break
        accepted = ok(mid)
        good = np.where(moving & accepted, mid, good)
        bad = np.where(moving & ~accepted, mid, bad)
    return good


def _upper(k: np.ndarray, n: np.ndarray, a: np.ndarray) -> np.ndarray:
    k, n, a = np.broadcast_arrays(k, n, a)
    return _verified(_raw_upper(k, n, a), lambda p: _upper_tail_ok(k, n, a, p), _step_up, 1.0,
                     np.minimum(k / n, 1.0))


def _lower(k: np.ndarray, n: np.ndarray, a: np.ndarray) -> np.ndarray:
    k, n, a = np.broadcast_arrays(k, n, a)
    return _verified(_raw_lower(k, n, a), lambda p: _lower_tail_ok(k, n, a, p), _step_down, 0.0,
                     np.maximum(k / n, 0.0))


def upper_bound(k: object, n: object, alpha: object) -> np.ndarray | float:
    """One-sided upper bound on p with P(p > bound) ≤ alpha (Clopper & Pearson 1934), verified."""
    out = _upper(*_check(k, n, alpha))
    return float(out) if out.ndim == 0 else out


def lower_bound(k: object, n: object, alpha: object) -> np.ndarray | float:
    """One-sided lower bound on p with P(p < bound) ≤ alpha (Clopper & Pearson 1934), verified."""
    out = _lower(*_check(k, n, alpha))
    return float(out) if out.ndim == 0 else out


def interval(k: object, n: object, confidence: float) -> tuple[float, float]:
    """Two-sided Clopper–Pearson interval at the given confidence (each tail (1 − confidence)/2)."""
    confidence = _validate.open_unit("confidence", confidence)
    a = (1.0 - confidence) / 2.0
    return float(lower_bound(k, n, a)), float(upper_bound(k, n, a))
