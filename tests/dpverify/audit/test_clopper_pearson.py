"""Clopper–Pearson bounds against scipy's beta quantiles and against a direct high-precision summation
of the binomial tail, and their basic properties."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpverify.audit import clopper_pearson as cp
from dpverify.errors import InvalidParameterError


@pytest.mark.parametrize("n", [1, 7, 100, 10_000, 10**7])
@pytest.mark.parametrize("alpha", [0.2, 0.025, 1e-4])
def test_matches_scipy_beta_quantiles(n, alpha):
    ks = np.unique(np.array([0, 1, 2, n // 3, n // 2, n - 1, n]).clip(0, n))
    for k in ks:
        upper = 1.0 if k == n else stats.beta.ppf(1 - alpha, k + 1, n - k)
        lower = 0.0 if k == 0 else stats.beta.ppf(alpha, k, n - k + 1)
        # scipy's quantile is the first guess; the verified bound moves outward only where it errs.
        assert cp.upper_bound(int(k), n, alpha) == pytest.approx(upper, rel=1e-6, abs=1e-300)
        assert cp.lower_bound(int(k), n, alpha) == pytest.approx(lower, rel=1e-6, abs=1e-300)
        assert cp.upper_bound(int(k), n, alpha) >= upper * (1 - 1e-14)
        assert cp.lower_bound(int(k), n, alpha) <= lower * (1 + 1e-14)


def test_closed_forms_at_the_ends():
    n, a = 1000, 0.05
    assert cp.upper_bound(0, n, a) == pytest.approx(1 - a ** (1 / n), rel=1e-10)
    assert cp.lower_bound(n, n, a) == pytest.approx(a ** (1 / n), rel=1e-10)
    lo, hi = cp.interval(0, n, 0.9)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-10)


def test_vectorised():
    k = np.array([0, 5, 10])
    up = cp.upper_bound(k, 10, 0.05)
    assert up.shape == (3,) and up[-1] == 1.0 and np.all(np.diff(up) > 0)


@given(
    n=st.integers(1, 10**6),
    frac=st.floats(0, 1),
    alpha=st.floats(1e-6, 0.49),
)
def test_bounds_contain_the_estimate(n, frac, alpha):
    k = int(round(frac * n))
    assert cp.lower_bound(k, n, alpha) <= k / n <= cp.upper_bound(k, n, alpha)


@given(n=st.integers(2, 10**5), frac=st.floats(0, 1), alpha=st.floats(1e-6, 0.49))
def test_monotone_in_counts(n, frac, alpha):
    k = min(n - 1, int(frac * n))
    assert cp.upper_bound(k + 1, n, alpha) >= cp.upper_bound(k, n, alpha)
    assert cp.lower_bound(k + 1, n, alpha) >= cp.lower_bound(k, n, alpha)


@given(n=st.integers(2, 10**5), frac=st.floats(0, 1), a1=st.floats(1e-6, 0.4), a2=st.floats(1e-6, 0.4))
def test_monotone_in_level(n, frac, a1, a2):
    k = int(frac * n)
    lo_a, hi_a = sorted((a1, a2))
    assert cp.upper_bound(k, n, lo_a) >= cp.upper_bound(k, n, hi_a)
    assert cp.lower_bound(k, n, lo_a) <= cp.lower_bound(k, n, hi_a)


def test_coverage_by_simulation():
    """P(p > upper) ≤ alpha: 4000 binomial draws at p = 0.03, n = 200 (fixed seed; margin: 3 sd)."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(11)))
    n, p, alpha = 200, 0.03, 0.1
    k = rng.binomial(n, p, size=4000)
    misses = np.count_nonzero(cp.upper_bound(k, n, alpha) < p)
    assert misses <= 4000 * alpha + 3 * np.sqrt(4000 * alpha * (1 - alpha))


@pytest.mark.parametrize(
    "k, n, a",
    [(-1, 10, 0.05), (11, 10, 0.05), (1, 0, 0.05), (1, 10, 0.0), (1, 10, 1.0), (np.nan, 10, 0.05)],
)
def test_invalid_input(k, n, a):
    with pytest.raises(InvalidParameterError):
        cp.upper_bound(k, n, a)


# --- An independent route: the binomial tail summed term by term in high precision -------------------

def _binomial_cdf(k: int, n: int, p: float) -> mpmath.mpf:
    """P[Bin(n, p) ≤ k] by direct summation in mpmath (50 digits), over the shorter side of k."""
    with mpmath.workdps(50):
        p_ = mpmath.mpf(p)
        if k < 0:
            return mpmath.mpf(0)
        if k >= n:
            return mpmath.mpf(1)
        if k <= n - k:
            term, total = (1 - p_) ** n, mpmath.mpf(0)
            for j in range(k + 1):
                total += term
                term = term * (n - j) / (j + 1) * p_ / (1 - p_)
            return total
        # P[Bin ≤ k] = 1 − P[failures ≤ n − k − 1], failures ~ Bin(n, 1 − p)
        q_ = 1 - p_
        term, total = p_ ** n, mpmath.mpf(0)
        for j in range(n - k):
            total += term
            term = term * (n - j) / (j + 1) * q_ / p_
        return 1 - total


def _upper_valid(k: int, n: int, a: float, p: float) -> bool:
    return p >= 1.0 or _binomial_cdf(k, n, p) <= a


def _lower_valid(k: int, n: int, a: float, p: float) -> bool:
    return p <= 0.0 or 1 - _binomial_cdf(k - 1, n, p) <= a


@pytest.mark.parametrize(
    "k, n, alpha, side",
    [
        (999, 10**7, 1e-4, "upper"),   # the beta-quantile guess is 1.1e-6 (relative) inside the exact bound
        (2, 10**7, 0.2, "upper"),      # 2e-10 inside
        (999, 2 * 10**6, 1e-4, "upper"),
        (1000, 10**9, 1e-4, "lower"),  # the guess is twice the exact bound
    ],
)
def test_reported_bounds_are_valid_where_the_quantile_routine_errs(k, n, alpha, side):
    """The exact tail at the reported bound is at most alpha, and just inside it more than alpha."""
    if side == "upper":
        bound = cp.upper_bound(k, n, alpha)
        assert _upper_valid(k, n, alpha, bound)
        assert not _upper_valid(k, n, alpha, bound * (1 - 1e-6))  # tight to 1e-6
    else:
        bound = cp.lower_bound(k, n, alpha)
        assert _lower_valid(k, n, alpha, bound)
        assert not _lower_valid(k, n, alpha, bound * (1 + 1e-6))


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 10**8),
    near=st.integers(0, 150),
    from_top=st.booleans(),
    alpha=st.floats(1e-8, 0.45),
)
def test_bounds_valid_and_tight_against_direct_summation(n, near, from_top, alpha):
    k = max(0, n - near) if from_top else min(n, near)
    upper = cp.upper_bound(k, n, alpha)
    lower = cp.lower_bound(k, n, alpha)
    assert _upper_valid(k, n, alpha, upper)
    assert _lower_valid(k, n, alpha, lower)
    if upper < 1.0:
        assert not _upper_valid(k, n, alpha, upper * (1 - 1e-6))
    if lower > 0.0:
        assert not _lower_valid(k, n, alpha, lower * (1 + 1e-6))


def test_bisection_fallback_when_no_outward_step_passes(monkeypatch):
    """A wildly wrong quantile guess still yields the exact bound (found on the forward tail)."""
    monkeypatch.setattr(cp.special, "betaincinv", lambda a, b, y: np.zeros(np.broadcast(a, b, y).shape))
    k, n, alpha = 3, 1000, 0.05
    bound = cp.upper_bound(k, n, alpha)
    assert _upper_valid(k, n, alpha, bound) and not _upper_valid(k, n, alpha, bound * (1 - 1e-9))


@pytest.mark.parametrize("n", [1_000, 10**6, 10**7, 3 * 10**8, 1_400_000_000])
def test_forward_tail_error_is_within_the_margin(n):
    """The forward routine's relative error, measured against direct summation, stays 3x inside the margin."""
    margin = cp.FORWARD_MARGIN + cp.FORWARD_MARGIN_PER_TRIAL * n
    for k in (0, 8, 34, 250):
        for a in (1e-7, 0.0125, 0.3):
            p = float(cp.upper_guess(np.float64(k), float(n), a))
            forward = float(cp.special.betaincc(k + 1.0, n - k, p))
            exact = _binomial_cdf(k, n, p)
            assert abs(forward - exact) <= margin / 3 * exact
