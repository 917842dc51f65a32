"""One-line calibration: the returned mechanism's own accounting meets the target, tightly, at every (ε, δ)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.audit import claimed_epsilon
from dpverify.calibrate_mechanism import (
    ROUND_TRIP_TOLERANCE,
    calibrate_gaussian,
    calibrate_goe,
    calibrate_laplace,
    calibrate_randomized_response,
    composed_epsilon,
    composition_ledger,
)
from dpverify.composition import rr_epsilon
from dpverify.conversions import mu_for_epsilon_delta
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism, RandomizedResponse
from dpverify.testing import assert_ledger_meets
from dpverify.testing.strategies import deltas, epsilons

sensitivities = st.floats(1e-3, 1e3)
compositions = st.integers(1, 2000)


def test_the_textbook_recipe_misses_and_the_calibrator_does_not() -> None:
    textbook = GaussianMechanism(1.0, 1.0 / mu_for_epsilon_delta(1.0, 1e-5))
    assert composed_epsilon(textbook, 1e-5) > 1.0  # 1.0000000000000007: rounding, on the wrong side
    with pytest.raises(AssertionError, match="missed by"):
        assert_ledger_meets(composition_ledger(textbook), 1.0, 1e-5)
    calibrated = calibrate_gaussian(1.0, 1e-5, sensitivity=1.0)
    assert assert_ledger_meets(composition_ledger(calibrated), 1.0, 1e-5) <= 1.0
    assert claimed_epsilon(calibrated, 1e-5) <= 1.0
    assert calibrated.sigma == pytest.approx(textbook.sigma, rel=1e-12) and calibrated.sigma > textbook.sigma


@given(epsilons(), deltas(), sensitivities, compositions, st.sampled_from(["exact", "cks", "bun-steinke"]))
def test_gaussian_meets_the_target_by_its_own_accounting(epsilon, delta, sensitivity, k, conversion) -> None:
    m = calibrate_gaussian(epsilon, delta, sensitivity, compositions=k, dim=3, conversion=conversion)
    assert isinstance(m, GaussianMechanism) and m.sensitivity == sensitivity and m.dim == 3
    accounted = assert_ledger_meets(composition_ledger(m, k), epsilon, delta, conversion)
    assert accounted >= epsilon * (1 - ROUND_TRIP_TOLERANCE)
    if k == 1 and conversion == "exact":
        assert claimed_epsilon(m, delta) <= epsilon


@given(epsilons(), deltas(), sensitivities, st.integers(1, 6), compositions)
def test_goe_meets_the_target_by_its_own_accounting(epsilon, delta, sensitivity, dim, k) -> None:
    m = calibrate_goe(epsilon, delta, sensitivity, dim, compositions=k)
    assert isinstance(m, GOEMechanism) and m.dim == dim
    accounted = assert_ledger_meets(composition_ledger(m, k), epsilon, delta)
    assert accounted >= epsilon * (1 - ROUND_TRIP_TOLERANCE)
    if k == 1:
        assert claimed_epsilon(m, delta) <= epsilon


@given(epsilons(), sensitivities, compositions)
def test_pure_laplace_meets_the_target_by_basic_composition(epsilon, sensitivity, k) -> None:
    m = calibrate_laplace(epsilon, sensitivity, compositions=k)
    assert isinstance(m, LaplaceMechanism)
    assert k * m.epsilon <= epsilon and composed_epsilon(m, 0.0, k) <= epsilon
    assert composed_epsilon(m, 0.0, k) >= epsilon * (1 - ROUND_TRIP_TOLERANCE)


@given(epsilons(), deltas(), sensitivities, compositions, st.sampled_from(["cks", "bun-steinke"]))
def test_laplace_with_delta_meets_the_target_by_the_ledger(epsilon, delta, sensitivity, k, conversion) -> None:
    m = calibrate_laplace(epsilon, sensitivity, compositions=k, delta=delta, conversion=conversion)
    accounted = assert_ledger_meets(composition_ledger(m, k), epsilon, delta, conversion)
    assert accounted >= epsilon * (1 - ROUND_TRIP_TOLERANCE)


@given(epsilons(max_value=10.0), st.sampled_from([0.0, 1e-3, 1e-6]), st.integers(2, 6), st.integers(1, 30),
       st.integers(1, 3))
@settings(max_examples=12)
def test_randomized_response_meets_the_target_tightly(epsilon, delta, k, compositions, sensitivity) -> None:
    m = calibrate_randomized_response(epsilon, delta, k, compositions, dim=3, sensitivity=sensitivity)
    assert isinstance(m, RandomizedResponse) and (m.categories, m.sensitivity) == (k, sensitivity)
    accounted = composed_epsilon(m, delta, compositions)
    assert epsilon * (1 - ROUND_TRIP_TOLERANCE) <= accounted <= epsilon
    pairs = compositions * sensitivity
    if delta == 0:
        assert pairs * m.local_epsilon <= epsilon
    else:  # the exact profile of the pairs (an independent evaluation at the calibrated ε) meets it too
        assert rr_epsilon(m.local_epsilon, pairs, delta, k if pairs <= 4096 else 2) <= epsilon


def test_randomized_response_with_delta_needs_less_noise() -> None:
    pure = calibrate_randomized_response(1.0, compositions=500)
    approx = calibrate_randomized_response(1.0, 1e-6, compositions=500)
    assert approx.local_epsilon > 4 * pure.local_epsilon  # a larger ε per report: less noise


def test_many_compositions_favour_the_zcdp_route_for_laplace() -> None:
    pure = calibrate_laplace(1.0, 1.0, compositions=1000)
    approx = calibrate_laplace(1.0, 1.0, compositions=1000, delta=1e-5)
    assert approx.scale < pure.scale / 5


@given(epsilons(), deltas(), sensitivities, st.integers(1, 6), compositions, st.sampled_from(["exact", "cks"]))
@settings(max_examples=25)
def test_a_memoised_calibration_equals_a_fresh_one(epsilon, delta, sensitivity, dim, k, conversion) -> None:
    from dpverify.calibrate_mechanism import _gaussian_family

    for kind, calibrate in ((GaussianMechanism, lambda: calibrate_gaussian(epsilon, delta, sensitivity, k, dim,
                                                                            conversion=conversion)),
                            (GOEMechanism, lambda: calibrate_goe(epsilon, delta, sensitivity, dim, k,
                                                                 conversion=conversion))):
        first = calibrate()
        assert calibrate() is first  # from the memo
        fresh = _gaussian_family.__wrapped__(kind, epsilon, delta, k, first.relation, conversion, sensitivity, dim)
        assert type(fresh) is kind and fresh == first and fresh is not first  # computed afresh: the same mechanism


def test_the_memo_validates_before_it_answers() -> None:
    calibrate_gaussian(1.0, 1e-5, 1.0, compositions=3)
    with pytest.raises(InvalidParameterError, match="compositions"):
        calibrate_gaussian(1.0, 1e-5, 1.0, compositions=True)  # equal to 1 as a key, refused as an integer
    assert calibrate_goe(1.0, 1e-5, 2.0, 3, relation="replace-one") is calibrate_goe(1.0, 1e-5, 2, 3.0)


def test_composition_ledger_touches_one_user_in_every_release() -> None:
    m = calibrate_gaussian(1.0, 1e-5, 1.0)
    ledger = composition_ledger(m, 7)
    assert ledger.n_releases == 7 and ledger.n_users == 1
    assert ledger.worst_user_rho() == pytest.approx(7 * m.rho)
    assert math.isclose(composition_ledger(m).guarantee(1e-5).epsilon, composed_epsilon(m, 1e-5), rel_tol=1e-15)


@pytest.mark.parametrize(("call", "parameter"), [
    (lambda: calibrate_gaussian(0.0, 1e-5, 1.0), "epsilon"),
    (lambda: calibrate_gaussian(1.0, 0.0, 1.0), "delta"),
    (lambda: calibrate_gaussian(1.0, 1e-5, -1.0), "sensitivity"),
    (lambda: calibrate_gaussian(1.0, 1e-5, 1.0, compositions=0), "compositions"),
    (lambda: calibrate_gaussian(1.0, 1e-5, 1.0, conversion="rdp"), "conversion"),
    (lambda: calibrate_goe(1.0, 1e-5, 1.0, dim=0), "dim"),
    (lambda: calibrate_laplace(1.0, 1.0, delta=1e-5, conversion="exact"), "conversion"),
    (lambda: calibrate_laplace(1.0, 1.0, delta=-1.0), "delta"),
    (lambda: composed_epsilon(calibrate_laplace(1.0, 1.0), 0.0, conversion="cks"), "conversion"),
])
def test_bad_input_names_the_parameter(call, parameter) -> None:
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert info.value.parameter == parameter
