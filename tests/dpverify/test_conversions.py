"""zCDP/GDP → (ε, δ) conversions: closed forms, mpmath routes, orderings and calibration round trips."""

import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.conversions import (
    CONVERSIONS,
    epsilon_bun_steinke,
    epsilon_cks,
    epsilon_exact_gaussian,
    epsilon_from_rho,
    guarantee,
    mu_for_epsilon_delta,
    rho_for_epsilon_delta,
)
from dpverify.errors import InvalidParameterError, NumericalError
from dpverify.numerics import gaussian_log_delta

mp.mp.dps = 50

rhos = st.floats(min_value=1e-6, max_value=50.0)
deltas = st.floats(min_value=1e-12, max_value=0.1)
mus = st.floats(min_value=1e-3, max_value=20.0)
#: The mpmath references are slow: a third of the profile's examples (20 under the CI profile, 667 under stress).
MPMATH_EXAMPLES = max(10, settings.default.max_examples // 3)


def mp_exact_epsilon(mu: float, delta: float) -> mp.mpf:
    """Independent route: mpmath root of δ(ε) = δ at 50 digits (bisection, no shared code)."""
    m, d = mp.mpf(mu), mp.mpf(delta)

    def f(e):
        return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2) - d

    if f(mp.mpf(0)) <= 0:
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(1)
    while f(hi) > 0:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def mp_cks_epsilon(rho: float, delta: float) -> mp.mpf:
    """Independent route: CKS Corollary 13 written as δ(α) and minimised in mpmath over α."""
    r, L = mp.mpf(rho), mp.log(1 / mp.mpf(delta))
    return mp_cks_minimum(r, L, mp.mpf(-30), mp.mpf(30), 300)


def mp_cks_minimum(r: mp.mpf, L: mp.mpf, lo: mp.mpf, hi: mp.mpf, iterations: int) -> mp.mpf:
    """min over t in [lo, hi] of the CKS ε at α = 1 + e^t for ρ = r and L = log(1/δ), by ternary search
    (the function is unimodal in t)."""

    def eps(t):  # α = 1 + e^t
        a = 1 + mp.exp(t)
        return a * r + mp.log(1 - 1 / a) + (L - mp.log(a)) / (a - 1)

    for _ in range(iterations):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if eps(m1) < eps(m2):
            hi = m2
        else:
            lo = m1
    return eps((lo + hi) / 2)


def test_bun_steinke_closed_form():
    rho, delta = 0.5, 1e-5
    assert math.isclose(epsilon_bun_steinke(rho, delta), rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel_tol=1e-14)
    assert epsilon_bun_steinke(rho, delta) >= rho + 2 * math.sqrt(rho * math.log(1 / delta))


@settings(max_examples=MPMATH_EXAMPLES)
@given(mus, deltas)
def test_exact_epsilon_is_conservative_and_tight_against_mpmath(mu, delta):
    ref = mp_exact_epsilon(mu, delta)
    got = epsilon_exact_gaussian(mu, delta)
    assert got >= float(ref) * (1 - 1e-15)  # never below the truth
    assert got <= float(ref) * (1 + 1e-7) + 1e-12  # and tight


@settings(max_examples=MPMATH_EXAMPLES)
@given(rhos, deltas)
def test_cks_against_mpmath(rho, delta):
    ref = max(0.0, float(mp_cks_epsilon(rho, delta)))  # ε < 0 means (0, δ)-DP: reported as 0
    got = epsilon_cks(rho, delta)
    assert got >= ref - 1e-12 * max(1.0, ref)
    assert got <= ref * (1 + 1e-8) + 1e-12


@given(rhos, deltas)
def test_exact_le_cks_le_bun_steinke(rho, delta):
    e = {c: epsilon_from_rho(rho, delta, c) for c in CONVERSIONS}
    assert e["exact"] <= e["cks"] <= e["bun-steinke"]


# ε comes from root finding (exact) or minimisation (CKS) whose last bits depend on the inputs, so the
# monotonicity laws hold up to that resolution: 1e-12 relative (values are conservative either way).
MONOTONE_RESOLUTION = 1e-12


@given(rhos, deltas, deltas)
def test_epsilon_non_increasing_in_delta(rho, d1, d2):
    lo, hi = sorted((d1, d2))
    for c in CONVERSIONS:
        assert epsilon_from_rho(rho, hi, c) <= epsilon_from_rho(rho, lo, c) * (1 + MONOTONE_RESOLUTION)


@given(rhos, rhos, deltas)
def test_epsilon_non_decreasing_in_rho(r1, r2, delta):
    lo, hi = sorted((r1, r2))
    for c in CONVERSIONS:
        assert epsilon_from_rho(lo, delta, c) <= epsilon_from_rho(hi, delta, c) * (1 + MONOTONE_RESOLUTION)


@given(st.floats(min_value=0.01, max_value=20.0), deltas, st.sampled_from(CONVERSIONS))
def test_rho_calibration_round_trip(eps, delta, conversion):
    rho = rho_for_epsilon_delta(eps, delta, conversion)
    back = epsilon_from_rho(rho, delta, conversion)
    assert back <= eps
    assert back >= eps * (1 - 1e-9)


@given(st.floats(min_value=0.01, max_value=20.0), deltas)
def test_memoised_exact_rho_equals_a_fresh_computation(eps, delta):
    from dpverify.conversions import _rho_exact

    first = rho_for_epsilon_delta(eps, delta, "exact")
    assert rho_for_epsilon_delta(eps, delta, "exact") == first  # from the memo
    assert _rho_exact.__wrapped__(eps, delta) == first  # computed afresh


@given(st.floats(min_value=0.01, max_value=20.0), deltas)
def test_mu_calibration_meets_profile(eps, delta):
    mu = mu_for_epsilon_delta(eps, delta)
    assert math.exp(gaussian_log_delta(eps, mu)) <= delta
    assert epsilon_exact_gaussian(mu, delta) <= eps


def test_reference_noise_ratios():
    """docs/derivations.md: at (1, 1e-5) Bun–Steinke needs 31% more std than exact, CKS 8.4% more."""
    r = {c: rho_for_epsilon_delta(1.0, 1e-5, c) for c in CONVERSIONS}
    assert math.sqrt(r["exact"] / r["bun-steinke"]) == pytest.approx(1.31, abs=0.005)
    assert math.sqrt(r["exact"] / r["cks"]) == pytest.approx(1.084, abs=0.001)


def test_large_epsilon_and_tiny_delta_stay_finite():
    assert math.isfinite(epsilon_exact_gaussian(200.0, 1e-300))
    assert epsilon_exact_gaussian(1e-9, 1e-5) == 0.0


@pytest.mark.parametrize(
    "call, parameter",
    [
        (lambda: epsilon_from_rho(float("nan"), 1e-5, "cks"), "rho"),
        (lambda: epsilon_from_rho(-1.0, 1e-5, "cks"), "rho"),
        (lambda: epsilon_from_rho(1.0, 1.0, "cks"), "delta"),
        (lambda: epsilon_from_rho(1.0, 0.0, "exact"), "delta"),
        (lambda: epsilon_from_rho(1.0, 1e-5, "rdp"), "conversion"),
        (lambda: rho_for_epsilon_delta(0.0, 1e-5, "exact"), "epsilon"),
        (lambda: rho_for_epsilon_delta(float("inf"), 1e-5, "exact"), "epsilon"),
    ],
)
def test_bad_input_names_the_parameter(call, parameter):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert info.value.parameter == parameter


def test_guarantee_dataclass():
    g = guarantee(0.5, 1e-5, "exact")
    assert g.conversion == "exact" and g.rho == 0.5 and g.epsilon > 0


def test_invalid_parameter_error_pickles():
    """Errors raised in worker processes come back to the caller with their fields intact."""
    import pickle

    err = InvalidParameterError("delta", "must be in (0, 1)", 2.0)
    again = pickle.loads(pickle.dumps(err))
    assert (again.parameter, again.rule, again.value, str(again)) == (err.parameter, err.rule, err.value, str(err))


def mp_cks_epsilon_around(rho: float, delta: float) -> mp.mpf:
    """mpmath CKS minimum searched around the Bun–Steinke order (works for extreme ρ and δ)."""
    r, L = mp.mpf(rho), -mp.log(mp.mpf(delta))
    centre = (mp.log(L) - mp.log(r)) / 2
    return mp_cks_minimum(r, L, centre - 40, centre + 40, 400)


@pytest.mark.parametrize("rho", [1e-4, 1e-12, 1e-30, 1e-200, 0.5, 50.0, 1e4, 1e8])
@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-12, 1e-100, 1e-300, 0.5])
def test_cks_never_below_the_mpmath_truth(rho, delta):
    """Strictly: no absolute slack. The relative outward margin covers the objective's float error
    (at ρ = 1e-4, δ = 1e-3 a 4-ulp rounding was 1e-14 relative below the truth)."""
    mp.mp.dps = 60
    truth = max(mp.mpf(0), mp_cks_epsilon_around(rho, delta))
    got = epsilon_cks(rho, delta)
    assert mp.mpf(got) >= truth
    # and still tight: the margin is relative to the objective's terms (~log(1/δ)), not to ε
    assert got <= float(truth) * (1 + 1e-9) + 1e-12 * (1 - math.log(delta))


@pytest.mark.parametrize("rho", [1e-320, 5e-324, 1e-300])
def test_tiny_rho_gives_a_tiny_epsilon_not_an_error(rho):
    for conversion in CONVERSIONS:
        eps = epsilon_from_rho(rho, 1e-5, conversion)
        assert 0.0 <= eps <= 1e-140


@pytest.mark.parametrize("rho", [1e300, 1.7e308])
def test_huge_rho_gives_a_huge_or_infinite_epsilon_not_an_error(rho):
    for conversion in CONVERSIONS:
        assert epsilon_from_rho(rho, 1e-5, conversion) >= 1e6


@pytest.mark.parametrize("delta", [1e-320, 5e-324])
def test_subnormal_delta_is_handled(delta):
    for conversion in CONVERSIONS:
        assert math.isfinite(epsilon_from_rho(1.0, delta, conversion))


@pytest.mark.parametrize("epsilon", [1e-300, 1e308, 1e12])
def test_every_calibration_search_ends(epsilon):
    """The searches are bounded: an extreme target returns or raises, never loops."""
    for conversion in CONVERSIONS:
        try:
            rho = rho_for_epsilon_delta(epsilon, 1e-5, conversion)
        except (InvalidParameterError, NumericalError):
            continue
        assert epsilon_from_rho(rho, 1e-5, conversion) <= epsilon


@pytest.mark.parametrize("mu", [1e5, 1e6, 4e6])
@pytest.mark.parametrize("delta", [1e-5, 0.3])
def test_exact_epsilon_at_large_mu_is_never_below_the_mpmath_truth(mu, delta):
    """The ε → ∞ sanity regime (ε up to ~10¹²) is computed, on the safe side, not refused."""
    with mp.workdps(80):
        ref = mp_exact_epsilon(mu, delta)
    got = epsilon_exact_gaussian(mu, delta)
    assert math.isfinite(got)
    assert got >= float(ref) * (1 - 1e-15)
    assert got <= float(ref) * (1 + 1e-7)


def test_beyond_the_mu_ceiling_epsilon_is_infinite_never_small():
    assert epsilon_exact_gaussian(1e7, 1e-5) == math.inf


@pytest.mark.parametrize("epsilon", [1e9, 1e12])
def test_calibration_round_trip_at_huge_epsilon(epsilon):
    for conversion in CONVERSIONS:
        rho = rho_for_epsilon_delta(epsilon, 1e-5, conversion)
        got = epsilon_from_rho(rho, 1e-5, conversion)
        assert got <= epsilon
        assert got >= epsilon * (1 - 1e-6)


@given(mu=st.floats(1e-3, 1e3), delta=st.floats(1e-12, 0.5))
def test_the_lower_exact_epsilon_is_a_lower_rounding_of_the_same_root(mu: float, delta: float) -> None:
    from dpverify.conversions import epsilon_exact_gaussian_lower

    lower, upper = epsilon_exact_gaussian_lower(mu, delta), epsilon_exact_gaussian(mu, delta)
    assert lower <= upper and (upper == 0 or lower >= upper * (1 - 1e-6))
    if lower > 0:
        assert math.exp(gaussian_log_delta(lower, mu)) >= delta  # at the lower value δ(ε) is still at least δ
