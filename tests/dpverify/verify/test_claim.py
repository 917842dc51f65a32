"""verify's claim section: a claim in any measure against the run's ledger, by the tightest valid route; a route
that does not apply is never a failure, and no route at all is a check that did not run."""

from __future__ import annotations

import dataclasses
import types

import pytest
from verify_fixtures import TINY, audits, structure, whitebox

from dpverify.accounting import ROUTES, epsilon_routes
from dpverify.checks import FAIL, NOT_RUN, PASS, UNDECIDED
from dpverify.claims import PrivacyClaim
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import GaussianMechanism, LaplaceMechanism, RandomizedResponse
from dpverify.verify import CONSISTENT, INCONCLUSIVE, REFUTED
from dpverify.verify.claim import claim_section
from dpverify.verify.report import _claim_line
from dpverify.verify.result import decide
from dpverify.verify.target import VerifyRun, prepare

K = 64


@pytest.fixture(scope="module")
def run() -> VerifyRun:
    prepared, _ = prepare("dp-ucb", "bernoulli-bandit", 1.0, 1e-5, K, TINY, workers=1)
    return dataclasses.replace(prepared, known=None)


def _agent(ledger: PrivacyLedger, stated: object) -> types.SimpleNamespace:
    config = types.SimpleNamespace(num_episodes=K, relation="replace-one")
    return types.SimpleNamespace(claimed_guarantee=lambda: stated, ledger=ledger, config=config)


def _ledger(mechanism: object, users: str = "tree") -> PrivacyLedger:
    ledger = PrivacyLedger()
    ledger.record_block("sums", (1, K), (1, 1), mechanism, users)
    return ledger


def _ledger_check(section):
    return next(c for c in section.checks if c.name == "ledger meets the claim")


LAPLACE = LaplaceMechanism(1.0, 7.0)  # 7 tree nodes per user at K = 64: pure ε = 1 exactly
GAUSSIAN = GaussianMechanism(1.0, 8.0)
RR = RandomizedResponse(1, 0.1)


def test_a_pure_claim_on_a_laplace_ledger_is_met_by_the_pure_route(run) -> None:
    section = claim_section(_agent(_ledger(LAPLACE), PrivacyClaim.pure(1.0)), run)
    check = _ledger_check(section)
    assert section.status == PASS and check.status == PASS and "pure" in check.reason
    assert section.claim == "1-DP (pure)" and section.comparison_route == "pure"
    assert section.ledger_value == pytest.approx(1.0) and section.claimed_delta == 0.0
    assert "exact" not in section.ledger_epsilon and section.ledger_epsilon["pure"] == pytest.approx(1.0)
    assert _claim_line(types.SimpleNamespace(claim=section)).startswith("ledger ε = 1 ≤ claimed ε = 1 (pure")


@pytest.mark.parametrize("conversion", ["exact", "cks", "bun-steinke"])
def test_an_approximate_claim_stated_by_any_conversion_is_compared_by_a_route_that_applies(run, conversion) -> None:
    """The issue's false refutation: a Laplace ledger claimed through 'exact' (which needs Gaussian releases)."""
    section = claim_section(_agent(_ledger(LAPLACE), DPGuarantee(1.0, 1e-5, conversion, 0.0)), run)
    check = _ledger_check(section)
    assert check.status == PASS and section.claim_conversion == conversion
    assert section.comparison_route != "exact" and section.ledger_value <= 1.0


# every route of the accounting, each on a ledger where it does not apply, under a true claim
_NOT_APPLYING = {"exact": LAPLACE, "pure": GAUSSIAN, "kov": GAUSSIAN, "kov-heterogeneous": GAUSSIAN,
                 "gdp": GAUSSIAN, "pld": GAUSSIAN}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("stated", ["approximate", "zcdp", "gdp"])
def test_no_route_that_does_not_apply_ever_fails_the_check(run, route, stated) -> None:
    mechanism = _NOT_APPLYING.get(route, RR)
    ledger = _ledger(mechanism, "current" if mechanism is RR else "tree")
    skipped = {r.route for r in epsilon_routes(ledger, 1e-5) if r.epsilon is None}
    if route not in _NOT_APPLYING:  # the zCDP conversions apply to every ledger
        assert route not in skipped
        return
    assert route in skipped
    true = {"approximate": DPGuarantee(50.0, 1e-5, route if route in ("exact",) else "cks", 0.0),
            "zcdp": PrivacyClaim.zcdp(50.0), "gdp": PrivacyClaim.gdp(50.0)}[stated]
    section = claim_section(_agent(ledger, true), dataclasses.replace(run, epsilon=1e4))
    assert _ledger_check(section).status in (PASS, NOT_RUN)
    assert not any(c.status == FAIL for c in section.checks)


def test_no_route_at_all_is_a_check_that_did_not_run_and_never_refutes(run) -> None:
    toeplitz = _ledger(LAPLACE, "toeplitz:0.5/0.5")
    section = claim_section(_agent(toeplitz, PrivacyClaim.gdp(1.0)), dataclasses.replace(run, epsilon=10.0))
    check = _ledger_check(section)
    assert check.status == NOT_RUN and "no valid route" in check.reason and "Toeplitz" in check.reason
    verdict = decide(whitebox(), section, structure(), audits())
    assert verdict.verdict == INCONCLUSIVE and verdict.verdict != REFUTED


def test_a_claim_shown_false_refutes_and_an_undecided_one_does_not(run) -> None:
    shown_false = claim_section(_agent(_ledger(LAPLACE), PrivacyClaim.pure(0.5)), run)
    assert _ledger_check(shown_false).refutes  # pure ε is exact: 1 > 0.5
    assert decide(whitebox(), shown_false, structure(), audits()).verdict == REFUTED
    # a Gaussian ledger under a pure claim: no finite pure ε, exactly (a Gaussian release is ε-DP for no ε)
    assert _ledger_check(claim_section(_agent(_ledger(GAUSSIAN), PrivacyClaim.pure(100.0)), run)).refutes


def test_an_undecided_comparison_fails_without_refuting() -> None:
    from dpverify.verify.claim import _ledger_check as check_of

    ledger = _ledger(LAPLACE)
    undecided = types.SimpleNamespace(status="undecided", ledger_value=2.0, lower=None, route="cks", detail="")
    result = check_of(ledger, PrivacyClaim.approximate(1.0, 1e-5), undecided, "per-user")  # type: ignore[arg-type]
    assert result.status == FAIL and result.claim == UNDECIDED and not result.refutes


def test_claims_in_zcdp_and_gdp_are_compared_in_their_own_measure(run) -> None:
    gaussian = _ledger(GAUSSIAN)
    rho = gaussian.worst_user_rho()
    holds = claim_section(_agent(gaussian, PrivacyClaim.zcdp(rho)), run)
    assert _ledger_check(holds).status == PASS and holds.claimed_rho == rho and holds.claim_measure == "zcdp"
    assert _claim_line(types.SimpleNamespace(claim=holds)).startswith("ledger ρ = ")
    assert _ledger_check(claim_section(_agent(gaussian, PrivacyClaim.zcdp(rho / 2)), run)).refutes
    assert _ledger_check(claim_section(_agent(gaussian, PrivacyClaim.gdp((2 * rho) ** 0.5 * 1.01)), run)).status \
        == PASS


def test_the_request_check_reads_the_epsilon_a_claim_implies(run) -> None:
    ledger = _ledger(GAUSSIAN)
    implied = PrivacyClaim.zcdp(0.5).epsilon_at(1e-5)
    too_weak = claim_section(_agent(ledger, PrivacyClaim.zcdp(0.5)), dataclasses.replace(run, epsilon=implied / 2))
    request = next(c for c in too_weak.checks if c.name == "claim within the requested (ε, δ)")
    assert request.status == FAIL and "which implies ε" in request.reason
    within = claim_section(_agent(ledger, PrivacyClaim.zcdp(0.5)), dataclasses.replace(run, epsilon=implied))
    assert all(c.status == PASS for c in within.checks if c.name == "claim within the requested (ε, δ)")
    pure = claim_section(_agent(_ledger(LAPLACE), PrivacyClaim.pure(1.0)), run)  # pure 1 ⇒ (1, δ) at any δ
    assert next(c for c in pure.checks if c.name == "claim within the requested (ε, δ)").status == PASS


def test_an_unreadable_claim_is_named(run) -> None:
    with pytest.raises(InvalidParameterError, match=r"claimed_guarantee\(\) must have epsilon and delta"):
        claim_section(_agent(_ledger(LAPLACE), object()), run)


def test_nothing_published_meets_any_claim(run) -> None:
    section = claim_section(_agent(PrivacyLedger(), PrivacyClaim.gdp(0.1)), run)
    check = _ledger_check(section)
    assert check.status == PASS and "μ = 0" in check.reason
    assert decide(whitebox(), section, structure(), audits()).verdict == CONSISTENT


def test_the_rho_a_claim_states_is_kept_for_the_ledger_figure(run) -> None:
    """A DPGuarantee's ρ (what the agent calibrated to) and a ρ-zCDP claim's ρ are the figure's claimed-ρ line; a
    pure claim states none."""
    stated = claim_section(_agent(_ledger(GAUSSIAN), DPGuarantee(1.0, 1e-5, "exact", 0.03)), run)
    assert stated.claimed_rho == 0.03 and stated.claim_conversion == "exact"
    assert claim_section(_agent(_ledger(GAUSSIAN), PrivacyClaim.zcdp(0.5)), run).claimed_rho == 0.5
    assert claim_section(_agent(_ledger(LAPLACE), PrivacyClaim.pure(1.0)), run).claimed_rho is None
