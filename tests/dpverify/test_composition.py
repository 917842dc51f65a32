"""Closed forms for pure composition, each against an independent computation (enumeration in mpmath)."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from dpverify.composition import (
    gdp_mu_of_pure,
    kov_heterogeneous_epsilon,
    rr_delta,
    rr_epsilon,
)
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import LaplaceMechanism
from dpverify.numerics import gaussian_log_delta


def _product_profile(epsilons: list[float], eps_prime: float) -> float:
    """δ(ε') of independent binary randomized responses with these ε, by enumeration of every output (40 digits)."""
    with mpmath.workdps(40):
        total = mpmath.mpf(0)
        for outcome in itertools.product((0, 1), repeat=len(epsilons)):
            p = q = mpmath.mpf(1)
            for bit, eps in zip(outcome, epsilons, strict=True):
                e = mpmath.exp(mpmath.mpf(eps))
                keep, flip = e / (1 + e), 1 / (1 + e)
                p *= keep if bit else flip
                q *= flip if bit else keep
            total += max(0, p - mpmath.exp(eps_prime) * q)
        return float(total)


def _exact_heterogeneous_epsilon(epsilons: list[float], delta: float) -> float:
    """ε at δ of independent binary randomized responses with these ε: every output's loss Σ±εᵢ and
    probability enumerated in numpy, then bisection on ε'."""
    eps = np.array(epsilons)
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=eps.size)))  # +: the output favours P
    keep = np.exp(eps) / (1.0 + np.exp(eps))
    prob = np.prod(np.where(signs > 0, keep, 1.0 - keep), axis=1)
    loss = signs @ eps
    profile = lambda x: float(np.sum(prob * np.maximum(0.0, -np.expm1(x - loss))))  # noqa: E731
    lo, hi = 0.0, float(eps.sum())
    if profile(0.0) <= delta:
        return 0.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if profile(mid) <= delta else (mid, hi)
    return hi


@given(st.integers(1, 6), st.floats(0.05, 2.0), st.floats(0.0, 5.0))
@settings(max_examples=25)
def test_binary_profile_is_the_enumerated_product(n, eps, eps_prime):
    reference = _product_profile([eps] * n, eps_prime)
    assert rr_delta(eps, n, eps_prime) == pytest.approx(reference, rel=1e-10, abs=1e-30)
    assert rr_delta(eps, n, eps_prime) >= reference * (1 - 1e-12) - 1e-30


@given(st.integers(1, 6), st.integers(3, 5), st.floats(0.05, 2.0), st.floats(0.0, 4.0))
@settings(max_examples=30)
def test_kary_profile_is_the_enumerated_product(n, k, eps, eps_prime):
    """n k-RR pairs: each output coordinate is the input (P: e^ε/(e^ε+k−1)), the neighbour's, or one of k − 2
    others; enumerated by the count of each (multinomial), in mpmath."""
    with mpmath.workdps(40):
        e = mpmath.exp(mpmath.mpf(eps))
        keep, other = e / (e + k - 1), 1 / (e + k - 1)
        total = mpmath.mpf(0)
        for a in range(n + 1):
            for b in range(n + 1 - a):
                c = n - a - b
                weight = mpmath.factorial(n) / (mpmath.factorial(a) * mpmath.factorial(b) * mpmath.factorial(c))
                p = weight * keep**a * other**b * ((k - 2) * other) ** c
                q = weight * other**a * keep**b * ((k - 2) * other) ** c
                total += max(0, p - mpmath.exp(eps_prime) * q)
        reference = float(total)
    assert rr_delta(eps, n, eps_prime, k) == pytest.approx(reference, rel=1e-10, abs=1e-30)


def test_one_release_closed_form_and_the_optimal_composition_bounds_laplace():
    # δ(ε') = (e^ε − e^ε')/(e^ε + k − 1) for one pair
    assert rr_delta(1.0, 1, 0.3, 4) == pytest.approx((math.e - math.exp(0.3)) / (math.e + 3), rel=1e-12)
    # binary RR dominates every ε-DP release: the scalar Laplace profile lies below at every ε'
    laplace = LaplaceMechanism(1.0, 2.0)
    for eps_prime in np.linspace(0.0, laplace.epsilon, 17):
        assert laplace.delta_for_epsilon(eps_prime) <= rr_delta(laplace.epsilon, 1, eps_prime) + 1e-15


@given(st.integers(1, 400), st.floats(0.01, 1.5), st.sampled_from([1e-3, 1e-5, 1e-9]))
@settings(max_examples=40)
def test_epsilon_inverts_the_profile_on_the_safe_side(n, eps, delta):
    upper = rr_epsilon(eps, n, delta)
    lower = rr_epsilon(eps, n, delta, lower=True)
    assert lower <= upper <= n * eps * (1 + 1e-12)
    assert rr_delta(eps, n, upper) <= delta
    if lower > 0:
        assert rr_delta(eps, n, lower) > delta
    assert upper - lower <= 1e-9 * max(upper, 1e-3)


def test_large_compositions_are_fast_and_far_below_the_basic_sum():
    upper = rr_epsilon(0.01, 200_000, 1e-6)
    assert upper < 0.1 * 200_000 * 0.01
    with pytest.raises(InvalidParameterError, match="n must be <="):
        rr_delta(0.1, 10_000, 0.5, 3)


@given(st.lists(st.floats(0.05, 1.5), min_size=1, max_size=12), st.sampled_from([1e-2, 1e-4, 1e-6]))
@settings(max_examples=40)
def test_kov_heterogeneous_bound_is_never_below_the_exact_composition(epsilons, delta):
    """Theorem 3.5 of Kairouz, Oh & Viswanath 2015 bounds the exact ε of the heterogeneous binary-RR product
    (which attains the optimal composition), computed by enumeration."""
    bound = kov_heterogeneous_epsilon([(e, 1) for e in epsilons], delta)
    exact = _exact_heterogeneous_epsilon(epsilons, delta)
    assert bound >= exact * (1 - 1e-9)
    assert bound <= sum(epsilons) * (1 + 1e-12)


def test_kov_heterogeneous_beats_basic_composition_for_many_small_releases():
    assert kov_heterogeneous_epsilon([(0.01, 10_000)], 1e-5) < 0.2 * 100.0


@given(st.floats(0.01, 8.0))
@settings(max_examples=30)
def test_pure_dp_implies_the_gdp_of_randomized_response(eps):
    """μ = 2Φ⁻¹(e^ε/(1+e^ε)): the Gaussian trade-off G_μ(α) = Φ(Φ⁻¹(1−α) − μ) lies below RR's at every α,
    touching at the kink α* = 1/(1+e^ε) (so the μ is tight); equivalently μ-GDP's profile is above RR's at
    every ε'. (In 30-digit mpmath at the kink, in floats on a grid of α.)"""
    mu = gdp_mu_of_pure(eps)
    alpha = np.linspace(1e-9, 1 - 1e-9, 2001)
    rr = np.maximum.reduce([np.zeros_like(alpha), 1 - math.exp(eps) * alpha, (1 - alpha) * math.exp(-eps)])
    assert np.all(special.ndtr(special.ndtri(1 - alpha) - mu) <= rr + 1e-12)
    with mpmath.workdps(30):
        kink = 1 / (1 + mpmath.exp(mpmath.mpf(eps)))
        at_kink = mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(2 * kink - 1) - mu)
        assert float(at_kink) == pytest.approx(float(kink), rel=1e-9)
    for eps_prime in np.linspace(0.0, eps, 9):
        assert math.exp(gaussian_log_delta(eps_prime, mu)) >= rr_delta(eps, 1, eps_prime) * (1 - 1e-9)
