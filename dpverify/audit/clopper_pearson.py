"""Exact (Clopper–Pearson) one-sided confidence bounds on a binomial proportion.

Clopper, C. J. & Pearson, E. S. (1934), "The use of confidence or fiducial limits illustrated in the
case of the binomial", Biometrika 26(4):404–413. For k successes in n trials the one-sided bounds at
error level a are the beta quantiles

    upper(k, n, a) = B⁻¹(1 − a; k + 1, n − k)   (= 1 when k = n)
    lower(k, n, a) = B⁻¹(a; k, n − k + 1)       (= 0 when k = 0)

and P(p > upper) ≤ a, P(p < lower) ≤ a for every true p (the bounds are exact, hence conservative
for a discrete binomial). The functions are vectorised and also accept non-integer counts, which the
threshold selection uses to *project* a bound to another sample size (never for a reported bound).

To keep every reported number on the safe side of floating-point error, upper bounds are nudged up
and lower bounds down by :data:`RELATIVE_SAFETY` (far below any printed digit).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from dpverify import _validate
from dpverify.errors import InvalidParameterError

#: Relative outward margin applied to every bound (absorbs the error of the beta-quantile routine).
RELATIVE_SAFETY = 1e-12


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


def upper_unchecked(k: np.ndarray, n: np.ndarray | float, a: np.ndarray | float) -> np.ndarray:
    """:func:`upper_bound` on float arrays already known to be valid (no checks; the same arithmetic)."""
    full = k >= n
    kk = np.where(full, 0.0, k)  # placeholder where the bound is 1 (avoids b = 0 in betaincinv)
    q = special.betaincinv(kk + 1.0, np.maximum(n - kk, 1e-300), 1.0 - a)
    q = np.minimum(1.0, q * (1.0 + RELATIVE_SAFETY) + 1e-300)
    return np.where(full, 1.0, q)


def lower_unchecked(k: np.ndarray, n: np.ndarray | float, a: np.ndarray | float) -> np.ndarray:
    """:func:`lower_bound` on float arrays already known to be valid (no checks; the same arithmetic)."""
    empty = k <= 0
    kk = np.where(empty, 1.0, k)
    q = special.betaincinv(kk, n - kk + 1.0, a)
    q = np.maximum(0.0, q * (1.0 - RELATIVE_SAFETY))
    return np.where(empty, 0.0, q)


def upper_bound(k: object, n: object, alpha: object) -> np.ndarray | float:
    """One-sided upper bound on p with P(p > bound) ≤ alpha (Clopper & Pearson 1934)."""
    out = upper_unchecked(*_check(k, n, alpha))
    return float(out) if out.ndim == 0 else out


def lower_bound(k: object, n: object, alpha: object) -> np.ndarray | float:
    """One-sided lower bound on p with P(p < bound) ≤ alpha (Clopper & Pearson 1934)."""
    out = lower_unchecked(*_check(k, n, alpha))
    return float(out) if out.ndim == 0 else out


def interval(k: object, n: object, confidence: float) -> tuple[float, float]:
    """Two-sided Clopper–Pearson interval at the given confidence (each tail (1 − confidence)/2)."""
    confidence = _validate.open_unit("confidence", confidence)
    a = (1.0 - confidence) / 2.0
    return float(lower_bound(k, n, a)), float(upper_bound(k, n, a))
