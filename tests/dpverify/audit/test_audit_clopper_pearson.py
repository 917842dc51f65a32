"""Clopper–Pearson bounds against scipy's beta quantiles, and their basic properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
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
        assert cp.upper_bound(int(k), n, alpha) == pytest.approx(upper, rel=1e-9, abs=1e-300)
        assert cp.lower_bound(int(k), n, alpha) == pytest.approx(lower, rel=1e-9, abs=1e-300)
        # Conservative side of floating point: never inside scipy's value by more than rounding.
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
