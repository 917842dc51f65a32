"""Claims in four measures against ledgers: each verdict where it must be, and "cannot compare" never a failure."""

from __future__ import annotations

import math
import types

import pytest

from dpverify.claims import ClaimComparison, PrivacyClaim
from dpverify.conversions import DPGuarantee, epsilon_exact_gaussian, epsilon_from_rho
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import GaussianMechanism, LaplaceMechanism, RandomizedResponse


def _bandit() -> PrivacyLedger:
    """A private UCB bandit's per-arm counters as binary mechanisms (Chan, Shi & Song 2011): Laplace, pure ε.
    4 arms, 1024 rounds; a user is in ⌈log₂ 1024⌉ + 1 = 11 nodes of each arm's tree."""
    ledger = PrivacyLedger()
    ledger.record_block("counts", (1, 1024), (1, 4), LaplaceMechanism(1.0, 44.0), "tree")
    return ledger


def test_a_pure_epsilon_ledger_meets_an_exact_conversion_claim():
    """The refutation this module exists for: an (ε, δ) claim made with the 'exact' conversion against a Laplace
    ledger is compared by the routes that apply, not refuted because 'exact' does not."""
    claim = PrivacyClaim.of(DPGuarantee(1.0, 1e-5, "exact", 0.0))
    result = claim.compare(_bandit())
    assert result.status == "holds" and result.ledger_value <= 1.0
    skipped = {r.route: r.note for r in result.routes if r.epsilon is None}
    assert "needs every release to be Gaussian" in skipped["exact"]


def test_pure_claims_are_decided_exactly():
    ledger = _bandit()
    assert PrivacyClaim.pure(1.0).compare(ledger).status == "holds"  # 44 releases × 1/44
    assert PrivacyClaim.pure(0.99).compare(ledger).status == "refuted"
    gaussian = PrivacyLedger()
    gaussian.record_block("sum", (1, 4), (1, 1), GaussianMechanism(1.0, 100.0), "current")
    result = PrivacyClaim.pure(50.0).compare(gaussian)
    assert result.status == "refuted" and result.ledger_value == math.inf


def test_approximate_claims_hold_are_refuted_or_undecided():
    ledger = _bandit()
    epsilon = PrivacyClaim.approximate(10.0, 1e-5).compare(ledger).ledger_value
    assert PrivacyClaim.approximate(epsilon * 1.001, 1e-5).compare(ledger).status == "holds"
    refuted = PrivacyClaim.approximate(epsilon * 0.99, 1e-5).compare(ledger)
    assert refuted.status == "refuted" and refuted.lower > epsilon * 0.99  # the optimistic PLD bounds it below
    # between the lower and the upper bound nothing can be shown either way
    middle = PrivacyClaim.approximate(epsilon * (1 - 1e-7), 1e-5).compare(ledger)
    assert middle.status in ("undecided", "refuted") and middle.lower <= middle.ledger_value


def test_a_non_tight_pair_is_never_refuted_by_its_bound():
    # a 3-dimensional Laplace release is bounded by binary RR (not attained): no lower bound, so no refutation
    ledger = PrivacyLedger()
    ledger.record_block("v", (1, 20), (1, 1), LaplaceMechanism(1.0, 10.0, 3), "current")
    upper = PrivacyClaim.approximate(5.0, 1e-5).compare(ledger).ledger_value
    result = PrivacyClaim.approximate(upper * 0.9, 1e-5).compare(ledger)
    assert result.status == "undecided" and result.lower is None


def test_zcdp_and_gdp_claims():
    gaussian = PrivacyLedger()
    gaussian.record_block("sum", (1, 50), (1, 1), GaussianMechanism(1.0, 10.0), "current")
    assert PrivacyClaim.zcdp(0.005).compare(gaussian).status == "holds"
    assert PrivacyClaim.zcdp(0.0049).compare(gaussian).status == "refuted"
    assert PrivacyClaim.gdp(0.1).compare(gaussian).status == "holds"
    assert PrivacyClaim.gdp(0.099).compare(gaussian).status == "refuted"
    mixed = _bandit()
    mixed.record_block("sum", (1, 1024), (1, 1), GaussianMechanism(1.0, 40.0), "current")
    gdp = PrivacyClaim.gdp(10.0).compare(mixed)
    assert gdp.status == "holds" and gdp.lower == pytest.approx(1 / 40)  # the Gaussian part alone
    assert PrivacyClaim.gdp(0.02).compare(mixed).status == "refuted"
    zcdp = PrivacyClaim.zcdp(mixed.worst_user_rho()).compare(mixed)
    assert zcdp.status == "holds" and 0 < zcdp.lower < zcdp.ledger_value


def test_no_route_means_cannot_compare_with_the_reason():
    toeplitz = PrivacyLedger()
    toeplitz.record_block("blt", (1, 30), (1, 1), LaplaceMechanism(1.0, 30.0), "toeplitz:0.5/0.5")
    for claim in (PrivacyClaim.gdp(1.0), PrivacyClaim.pure(1.0)):
        result = claim.compare(toeplitz)
        assert result.status == "cannot-compare" and "Toeplitz" in result.detail
        assert "cannot compare" in result.summary
    assert PrivacyClaim.zcdp(1.0).compare(toeplitz).status == "holds"
    assert PrivacyClaim.approximate(5.0, 1e-5).compare(toeplitz).route == "cks"
    empty = PrivacyClaim.approximate(1.0, 1e-5).compare(PrivacyLedger())
    assert empty.status == "cannot-compare" and "empty" in empty.detail


def test_randomized_response_claims_use_the_exact_profile():
    ledger = PrivacyLedger()
    ledger.record_block("report", (1, 1), (1, 50), RandomizedResponse(1, 0.1), "current")
    result = PrivacyClaim.approximate(2.0, 1e-5).compare(ledger)
    assert result.status == "refuted" and result.route == "kov"
    assert result.lower == pytest.approx(result.ledger_value, rel=1e-9)


@pytest.mark.parametrize("text, claim", [
    ("epsilon=1", PrivacyClaim.pure(1.0)),
    ("epsilon=1,delta=0", PrivacyClaim.pure(1.0)),
    ("epsilon=1, delta=1e-5", PrivacyClaim.approximate(1.0, 1e-5)),
    ("rho=0.5", PrivacyClaim.zcdp(0.5)),
    ("mu=2", PrivacyClaim.gdp(2.0)),
])
def test_parse(text, claim):
    assert PrivacyClaim.parse(text) == claim


@pytest.mark.parametrize("text", ["", "eps=1", "epsilon=x", "rho=1,mu=2", "delta=1e-5", "epsilon=1,delta=2"])
def test_parse_rejects(text):
    with pytest.raises(InvalidParameterError):
        PrivacyClaim.parse(text)


def test_validation_and_of():
    with pytest.raises(InvalidParameterError, match="delta must be 0"):
        PrivacyClaim("zcdp", 1.0, 1e-5)
    with pytest.raises(InvalidParameterError, match="measure"):
        PrivacyClaim("renyi", 1.0)
    with pytest.raises(InvalidParameterError, match="rho"):
        PrivacyClaim.zcdp(-1.0)
    with pytest.raises(InvalidParameterError, match="status"):
        ClaimComparison(PrivacyClaim.pure(1.0), "maybe", "", None, None, "")
    assert PrivacyClaim.of(PrivacyClaim.gdp(1.0)) == PrivacyClaim.gdp(1.0)
    assert str(PrivacyClaim.approximate(1.0, 1e-5)) == "(1, 1e-05)-DP" and str(PrivacyClaim.zcdp(0.5)) == "0.5-zCDP"
    with pytest.raises(InvalidParameterError, match="claim"):
        PrivacyClaim.of(object())


def test_of_keeps_the_stated_conversion_and_names_what_it_refuses():
    stated = PrivacyClaim.of(DPGuarantee(1.0, 1e-5, "cks", 0.1))
    assert stated == PrivacyClaim("approximate", 1.0, 1e-5, "cks")
    assert PrivacyClaim.of(DPGuarantee(1.0, 1e-5, "cks", 0.1)).compare(_bandit()).route != "cks"  # the tightest
    with pytest.raises(InvalidParameterError, match=r"claimed_guarantee\(\).conversion"):
        PrivacyClaim.of(types.SimpleNamespace(epsilon=1.0, delta=1e-5, conversion="renyi"), "claimed_guarantee()")
    with pytest.raises(InvalidParameterError, match=r"claimed_guarantee\(\).epsilon"):
        PrivacyClaim.of(types.SimpleNamespace(epsilon=float("nan"), delta=1e-5), "claimed_guarantee()")
    with pytest.raises(InvalidParameterError, match=r"claimed_guarantee\(\).rho"):
        PrivacyClaim.of(types.SimpleNamespace(rho=-1.0), "claimed_guarantee()")
    with pytest.raises(InvalidParameterError, match="conversion"):
        PrivacyClaim("pure", 1.0, 0.0, "cks")
    assert PrivacyClaim.of(types.SimpleNamespace(epsilon=2.0, delta=0)) == PrivacyClaim.pure(2.0)


def test_the_epsilon_a_claim_implies_at_a_delta():
    """Pure ε at every δ; (ε, δ) at δ' ≥ δ and nothing (∞) below; ρ-zCDP by the CKS conversion; μ-GDP exactly."""
    assert PrivacyClaim.pure(0.7).epsilon_at(1e-9) == 0.7
    claim = PrivacyClaim.approximate(1.0, 1e-5)
    assert claim.epsilon_at(1e-4) == 1.0 and claim.epsilon_at(1e-6) == math.inf
    assert PrivacyClaim.zcdp(0.1).epsilon_at(1e-5) == epsilon_from_rho(0.1, 1e-5, "cks")
    assert PrivacyClaim.gdp(1.0).epsilon_at(1e-5) == epsilon_exact_gaussian(1.0, 1e-5)
    # the (ε, δ) point the checks test: the claim's own δ for an (ε, δ) claim, the given δ otherwise
    assert PrivacyClaim("approximate", 1.0, 1e-6, "exact").audit_point(1e-5) == (1.0, 1e-6, "exact")
    assert PrivacyClaim.pure(1.0).audit_point(1e-5) == (1.0, 1e-5, "cks")
    assert PrivacyClaim.gdp(1.0).audit_point(1e-5)[2] == "exact"
    with pytest.raises(InvalidParameterError, match="delta"):
        PrivacyClaim.pure(1.0).epsilon_at(0.0)
