"""log-space numerics against mpmath at 60 digits."""

import math

import mpmath as mp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpverify.errors import NumericalError
from dpverify.numerics import (
    SEARCH_ITERATIONS,
    decreasing_root,
    gaussian_log_delta,
    golden_minimise,
    log1mexp,
    round_down,
    round_up,
)

mp.mp.dps = 60


def mp_log_delta(eps: float, mu: float) -> mp.mpf:
    e, m = mp.mpf(eps), mp.mpf(mu)
    return mp.log(mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2))


@given(st.floats(min_value=-700, max_value=-1e-300))
def test_log1mexp_matches_mpmath(x):
    # Evaluated without cancellation in mpmath too (1 − e^x loses every digit at tiny |x|).
    ref = mp.log(-mp.expm1(mp.mpf(x))) if x > -1 else mp.log1p(-mp.exp(mp.mpf(x)))
    assert math.isclose(log1mexp(x), float(ref), rel_tol=1e-13)


def test_log1mexp_rejects_positive_and_nan():
    with pytest.raises(NumericalError):
        log1mexp(0.1)
    with pytest.raises(NumericalError):
        log1mexp(float("nan"))
    assert log1mexp(0.0) == -math.inf


@given(
    eps=st.floats(min_value=1e-6, max_value=1e4),
    mu=st.floats(min_value=1e-3, max_value=1e3),
)
def test_gaussian_log_delta_matches_mpmath(eps, mu):
    """Relative error in δ below 1e-10 wherever δ ≥ 1e-300 (the accuracy range the conversions promise)."""
    ref = mp_log_delta(eps, mu)
    if ref < math.log(1e-300):
        return
    got = gaussian_log_delta(eps, mu)
    assert math.isfinite(got)
    assert abs(math.expm1(got - float(ref))) < 1e-10


def test_naive_formula_failures_are_avoided():
    """The naive float form gives NaN at ε ≥ 710 and 0 below 1e-308; the log form does not."""
    log_d = gaussian_log_delta(800.0, 30.0)
    assert math.isfinite(log_d) and log_d < 0
    tiny = gaussian_log_delta(40.0, 1.0)  # δ ≈ e^-790, far below the smallest double
    assert math.isfinite(tiny) and tiny < math.log(1e-308)
    assert abs(tiny - float(mp_log_delta(40.0, 1.0))) < 1e-9 * abs(tiny)


def test_rounding_directions():
    assert round_up(1.0) > 1.0 and round_down(1.0) < 1.0
    assert round_up(1.0, 3) > round_up(1.0, 2)


# ---- bounded searches -----------------------------------------------------------------------


def test_golden_minimise_finds_the_minimum_of_a_unimodal_function():
    value, x = golden_minimise(lambda t: (t - 1.2345) ** 2 + 3.0, -40.0, 5.0)
    assert abs(x - 1.2345) < 1e-7 and abs(value - 3.0) < 1e-14


def test_searches_are_bounded_even_on_nan():
    calls = []

    def f(t):
        calls.append(t)
        return math.nan

    golden_minimise(f, 0.0, 1.0)
    decreasing_root(f, 0.0, 1.0)
    assert len(calls) <= 2 * SEARCH_ITERATIONS + 4


def test_decreasing_root_returns_the_safe_side():
    root = decreasing_root(lambda x: math.exp(-x) - 0.25, 0.0, 10.0)
    assert math.exp(-root) - 0.25 <= 0
    assert abs(root - math.log(4.0)) < 1e-14
