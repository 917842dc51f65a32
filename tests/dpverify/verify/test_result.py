"""The verdict rules and the validation of the result model."""

from __future__ import annotations

import dataclasses
import json

import pytest
from verify_fixtures import audits, claim, report, structure, whitebox

from dpverify.checks import FAIL, HOLDS, NOT_APPLICABLE, NOT_RUN, PASS, UNDECIDED, CheckResult
from dpverify.errors import InvalidParameterError
from dpverify.verify.budget import BUDGETS, Budget, budget_by_name
from dpverify.verify.result import (
    AUDIT_NO_VIOLATION,
    AUDIT_VIOLATION,
    CONSISTENT,
    EXIT_STATUS,
    INCONCLUSIVE,
    NOT_A_CERTIFICATE,
    REFUTED,
    AuditRun,
    AuditSection,
    ClaimSection,
    StructureSection,
    Verdict,
    WhiteBoxSection,
    decide,
)


def test_everything_passing_is_consistent_with_the_caveat() -> None:
    verdict = decide(whitebox(), claim(), structure(), audits())
    assert verdict.verdict == CONSISTENT and verdict.exit_status == 0
    assert verdict.caveat == NOT_A_CERTIFICATE and "not a certificate" in verdict.caveat


@pytest.mark.parametrize("which", ["whitebox", "claim", "structure", "audit"])
def test_any_failure_refutes(which: str) -> None:
    w = whitebox(FAIL) if which == "whitebox" else whitebox()
    c = claim(FAIL) if which == "claim" else claim()
    s = structure(FAIL) if which == "structure" else structure()
    a = audits(AUDIT_VIOLATION) if which == "audit" else audits()
    verdict = decide(w, c, s, a)
    assert verdict.verdict == REFUTED and verdict.exit_status == 1
    assert len(verdict.reasons) == 1


def test_a_check_that_could_not_run_is_inconclusive_never_consistent() -> None:
    missing = StructureSection(NOT_RUN, "checks could not run: no helper")
    verdict = decide(whitebox(), claim(), missing, audits())
    assert verdict.verdict == INCONCLUSIVE and verdict.exit_status == 2
    assert "checks could not run" in verdict.reasons[0]
    no_audit = AuditRun("ldp", "one-run", "K = 3", NOT_RUN, 1.0, detail="K < 4")
    partial = AuditSection(NOT_RUN, "", (audits().runs[0], no_audit))
    assert decide(whitebox(), claim(), structure(), partial).verdict == INCONCLUSIVE
    assert decide(whitebox(), ClaimSection(NOT_RUN, "no ledger"), structure(), audits()).verdict == INCONCLUSIVE
    assert decide(whitebox(), claim(), structure(), AuditSection(NOT_RUN, "none")).verdict == INCONCLUSIVE
    unrun = decide(whitebox(NOT_RUN), claim(), structure(), audits())
    assert unrun.verdict == INCONCLUSIVE and unrun.reasons[0].startswith("white-box: sensitivity within the record did")
    assert decide(WhiteBoxSection(NOT_RUN, "the agent raised"), claim(), structure(), audits()).verdict == INCONCLUSIVE


def test_refutation_wins_over_missing_checks_and_lists_both() -> None:
    verdict = decide(whitebox(), claim(), StructureSection(NOT_RUN, "no helper"), audits(AUDIT_VIOLATION))
    assert verdict.verdict == REFUTED
    assert any("VIOLATION" in r for r in verdict.reasons) and any("could not run" in r for r in verdict.reasons)


def test_exit_statuses_gate_ci() -> None:
    assert EXIT_STATUS == {CONSISTENT: 0, REFUTED: 1, INCONCLUSIVE: 2}


def test_statuses_must_agree_with_checks() -> None:
    with pytest.raises(InvalidParameterError):
        StructureSection(PASS, checks=(CheckResult("x", FAIL, "seen"),))
    with pytest.raises(InvalidParameterError):
        AuditSection(PASS, runs=(AuditRun("jdp", "two-world", "", AUDIT_VIOLATION),))
    with pytest.raises(InvalidParameterError):
        AuditRun("jdp", "two-world", "", "PRIVATE")
    with pytest.raises(InvalidParameterError):
        Verdict("PROBABLY FINE", ())
    AuditSection(PASS, runs=(AuditRun("jdp", "two-world", "", AUDIT_NO_VIOLATION),))


def test_report_json_is_plain_json_with_exit_status() -> None:
    data = report("refuted").to_dict()
    text = json.dumps(data)
    assert json.loads(text)["verdict"]["verdict"] == REFUTED
    assert data["verdict"]["exit_status"] == 1 and data["schema"] == "dpverify.verify"


def test_budgets() -> None:
    assert set(BUDGETS) == {"quick", "standard", "thorough"}
    assert budget_by_name("quick") is BUDGETS["quick"]
    quick, standard, thorough = (BUDGETS[n] for n in ("quick", "standard", "thorough"))
    assert quick.two_world_trials < standard.two_world_trials < thorough.two_world_trials
    assert quick.utility_seeds < standard.utility_seeds < thorough.utility_seeds
    with pytest.raises(InvalidParameterError, match="budget"):
        budget_by_name("huge")
    with pytest.raises(InvalidParameterError, match="two_world_trials"):
        Budget("x", 1, 5, 100, 8, 10, 1)


def _with_not_applicable(status: str = PASS) -> StructureSection:
    na = CheckResult("refuses oversized features", NOT_APPLICABLE, "the agent's config declares no feature_norm_bound")
    checks = (*structure(status).checks, na)
    return StructureSection(status, "", "dpverify.testing.check_private_agent", checks)


def test_not_applicable_neither_refutes_nor_blocks_consistent_and_is_listed() -> None:
    verdict = decide(whitebox(), claim(), _with_not_applicable(), audits())
    assert verdict.verdict == CONSISTENT
    assert "every applicable contract check passed" in verdict.reasons[0]
    assert verdict.reasons[1] == ("contract: refuses oversized features not applicable (the agent's config declares "
                                  "no feature_norm_bound)")
    refuted = decide(whitebox(), claim(), _with_not_applicable(FAIL), audits())
    assert refuted.verdict == REFUTED and any("not applicable" in r for r in refuted.reasons)
    inconclusive = decide(whitebox(), claim(), _with_not_applicable(), AuditSection(NOT_RUN, "none"))
    assert inconclusive.verdict == INCONCLUSIVE and any("not applicable" in r for r in inconclusive.reasons)


def test_a_section_where_nothing_applies_has_not_run() -> None:
    only = (CheckResult("refuses oversized features", NOT_APPLICABLE, "no bound declared"),)
    with pytest.raises(InvalidParameterError, match="status"):
        StructureSection(PASS, checks=only)
    section = StructureSection(NOT_RUN, "no applicable property", checks=only)
    assert decide(whitebox(), claim(), section, audits()).verdict == INCONCLUSIVE
    with pytest.raises(InvalidParameterError, match="status"):
        StructureSection(NOT_APPLICABLE)  # a whole section is pass, fail or not run


def test_an_audit_refutation_is_named_by_the_test_that_decided_it() -> None:
    """A violation found by the μ-GDP test is stated as a μ bound against the claimed μ, never as an (ε, δ) lower
    bound above the claim (the Clopper–Pearson figure can be far below it); one found by Clopper–Pearson as the
    (ε, δ) lower bound."""
    from dpverify.verify.result import AUDIT_NO_VIOLATION, AUDIT_VIOLATION, AuditRun

    by_mu = AuditRun("billboard", "two-world", "K = 6", AUDIT_VIOLATION, claimed_epsilon=1.0, epsilon_lower=0.51,
                     gdp_epsilon_lower=1.86, mu_lower=0.47, claimed_mu=0.268, verdict_by=("gaussian-dp",))
    assert by_mu.refutation().startswith("μ ≥ 0.47 > claimed μ 0.268") and "0.51" not in by_mu.refutation()
    by_cp = AuditRun("jdp", "two-world", "K = 6", AUDIT_VIOLATION, claimed_epsilon=1.0, epsilon_lower=1.7,
                     verdict_by=("clopper-pearson",))
    assert by_cp.refutation() == "(ε, δ) lower bound 1.7 > claimed 1"
    assert AuditRun("jdp", "two-world", "K = 6", AUDIT_NO_VIOLATION).refutation() == ""


def _with_pattern(claim_bearing: str | None) -> WhiteBoxSection:
    base = whitebox()
    checks = tuple(CheckResult(c.name, FAIL, "labels contradict the replays", claim=claim_bearing)
                   if c.name == "release pattern as recorded" else c for c in base.checks)
    return dataclasses.replace(base, status=FAIL, checks=checks)


def test_wrong_records_refute_only_when_their_correction_exceeds_the_claim() -> None:
    holds = decide(_with_pattern(HOLDS), claim(), structure(), audits())
    assert holds.verdict == CONSISTENT and holds.exit_status == 0
    assert holds.reasons[0].startswith("the claim holds, but the agent's records are wrong")
    assert holds.reasons[1].startswith("white-box: release pattern as recorded failed, the claim holds")
    undecided = decide(_with_pattern(UNDECIDED), claim(), structure(), audits())
    assert undecided.verdict == INCONCLUSIVE and "undecided" in undecided.reasons[0]
    refuted = decide(_with_pattern(None), claim(), structure(), audits())
    assert refuted.verdict == REFUTED and refuted.reasons[0].startswith("white-box: release pattern as recorded failed")
    with pytest.raises(InvalidParameterError, match="claim"):
        CheckResult("x", PASS, "fine", claim=HOLDS)


def test_an_agent_that_published_nothing_is_consistent_its_billboard_audits_not_applicable() -> None:
    nothing = dataclasses.replace(claim(), n_releases=0)
    runs = tuple(dataclasses.replace(r, verdict=NOT_RUN, detail="no releases") for r in audits().runs)
    empty = AuditSection(NOT_RUN, "", runs)
    verdict = decide(whitebox(), nothing, structure(), empty)
    assert verdict.verdict == CONSISTENT and verdict.reasons[0].startswith("nothing was published")
    assert all("billboard is empty" in r for r in verdict.reasons[1:])
    assert decide(whitebox(), claim(), structure(), empty).verdict == INCONCLUSIVE  # something was published
