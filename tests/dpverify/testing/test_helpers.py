"""The shipped testing helpers catch what they claim to catch."""

import numpy as np
import pytest
from hypothesis import given

from dpverify.agents.dp_lsvi_ucb_pp.schedule import dp_lsvi_ucbpp_schedule
from dpverify.calibration import calibrate
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import GaussianMechanism
from dpverify.testing import assert_claim_matches_ledger, assert_fresh_noise, assert_ledger_meets, assert_not_below
from dpverify.testing.strategies import deltas, gaussian_mechanisms, goe_mechanisms, ledgers, mechanisms


def test_ledger_meets_and_claim_match():
    cal = calibrate(dp_lsvi_ucbpp_schedule(3, 20, 2), 1.0, 1e-5)
    ledger = cal.ledger()
    assert assert_ledger_meets(ledger, 1.0, 1e-5) <= 1.0
    assert_claim_matches_ledger(1.0, ledger, 1e-5)
    ledger.record_block("extra", (1, 20), (1, 1), GaussianMechanism(1.0, 1.0), "current")  # an unaccounted release
    with pytest.raises(AssertionError):
        assert_ledger_meets(ledger, 1.0, 1e-5)
    with pytest.raises(AssertionError):
        assert_claim_matches_ledger(1.0, ledger, 1e-5)


def test_fresh_noise_detects_reuse(dp_rng):
    draws = [dp_rng.normal(size=4) for _ in range(5)]
    assert_fresh_noise(draws)
    with pytest.raises(AssertionError, match="share a noise draw"):
        assert_fresh_noise(draws + [draws[2]])
    with pytest.raises(AssertionError, match="share a noise draw"):
        assert_fresh_noise(draws + [-draws[0]])
    with pytest.raises(AssertionError, match="share a noise draw"):
        assert_fresh_noise(draws + [draws[1] * np.array([1.0, -1.0, 1.0, -1.0])])  # some coordinates negated


def test_not_below():
    assert_not_below(1.0, 0.99)
    with pytest.raises(AssertionError):
        assert_not_below(0.98, 0.99)
    with pytest.raises(AssertionError):
        assert_not_below(float("nan"), 0.5)


def test_dp_rng_fixture_is_deterministic_per_test(dp_rng, request):
    import hashlib

    digest = hashlib.sha256(request.node.nodeid.encode()).digest()
    again = np.random.default_rng(np.random.SeedSequence(int.from_bytes(digest[:16], "little")))
    assert dp_rng.random() == again.random()


@given(mechanisms())
def test_strategies_build_valid_mechanisms(mech):
    assert mech.rho > 0


@given(ledgers(), deltas())
def test_ledger_strategy_round_trips(ledger, delta):
    assert PrivacyLedger.from_json(ledger.to_json()) == ledger
    if ledger.n_releases:
        assert ledger.guarantee(delta, "exact").epsilon <= ledger.guarantee(delta, "bun-steinke").epsilon


@given(gaussian_mechanisms(), goe_mechanisms())
def test_gaussian_strategies(g, o):
    assert g.is_gaussian and o.is_gaussian


def test_ledger_meets_reports_the_miss_and_takes_an_explicit_tolerance():
    ledger = PrivacyLedger()
    ledger.record_block("x", (1, 1), (1, 4), GaussianMechanism(1.0, 2.0), "current")
    accounted = ledger.guarantee(1e-5).epsilon
    assert assert_ledger_meets(ledger, accounted, 1e-5) == accounted  # default tolerance 0: equality passes
    below = accounted / 1.01
    with pytest.raises(AssertionError, match=r"missed by .* \(relative 0\.01; rel_tol = 0\)"):
        assert_ledger_meets(ledger, below, 1e-5)
    assert assert_ledger_meets(ledger, below, 1e-5, rel_tol=0.02) == accounted
    with pytest.raises(AssertionError, match="rel_tol = 0.005"):
        assert_ledger_meets(ledger, below, 1e-5, rel_tol=0.005)
    with pytest.raises(InvalidParameterError, match="rel_tol"):
        assert_ledger_meets(ledger, 1.0, 1e-5, rel_tol=-0.1)


def test_fresh_noise_rejects_a_release_without_noise_and_scales_linearly(dp_rng):
    with pytest.raises(AssertionError, match="identically zero"):
        assert_fresh_noise([dp_rng.normal(size=3), np.zeros(3)])
    assert_fresh_noise(dp_rng.normal(size=(20_000, 2)))  # hashing: 20 000 releases in well under a second
    draws = [dp_rng.normal(size=2) for _ in range(3)]
    with pytest.raises(AssertionError, match="share a noise draw"):
        assert_fresh_noise(draws + [draws[1] + 1e-12], atol=1e-9)


def test_assert_ledger_meets_a_laplace_ledger_by_the_routes_that_apply():
    from dpverify.mechanisms import LaplaceMechanism
    from dpverify.testing import assert_ledger_meets

    ledger = PrivacyLedger()
    ledger.record_block("count", (1, 64), (1, 1), LaplaceMechanism(1.0, 10.0), "tree")
    accounted = assert_ledger_meets(ledger, 0.7, 1e-5)  # 'exact' does not apply: the least route does
    assert accounted < 0.7
    with pytest.raises(AssertionError, match="pld"):
        assert_ledger_meets(ledger, 0.5, 1e-5)
