"""Helpers of the verify tests: hand-built reports (no agent runs) and a tiny budget for real runs."""

from __future__ import annotations

from dpverify.checks import FAIL, NOT_RUN, PASS, CheckResult
from dpverify.verify.budget import Budget
from dpverify.verify.result import (
    AUDIT_NO_VIOLATION,
    AUDIT_VIOLATION,
    AuditRun,
    AuditSection,
    BoundValue,
    ClaimSection,
    Curve,
    FamilyAccount,
    NoiseFigure,
    PaperCalibration,
    SensitivityFigure,
    Settings,
    StructureSection,
    UtilitySection,
    VerifyReport,
    WhiteBoxSection,
    WitnessFigure,
    decide,
)

#: Small enough that a whole verification of a reference agent takes a few seconds.
TINY = Budget("tiny", utility_seeds=1, two_world_trials=40, batched_trials=40, two_world_episodes=4,
              one_run_canaries=4, one_run_runs=1, contract_episodes=6, one_run_audits="first")


def whitebox(status: str = PASS) -> WhiteBoxSection:
    names = ("reproducible from the seeds", "noise as recorded", "release pattern as recorded",
             "sensitivity within the record", "witnessed pairs within the claim", "published structure")
    checks = tuple(CheckResult(n, status if n == "sensitivity within the record" else PASS, "seen") for n in names)
    return WhiteBoxSection(
        status, "", "dpverify.whitebox.check_releases", checks,
        (NoiseFigure("gram", "goe", PASS, 550, 1.002, 1.01, "as recorded"),),
        (SensitivityFigure("gram", "Frobenius", 0.0035, 0.0033, 0.943, "audit environment, minus -> orth at user 1"),),
        (WitnessFigure("environment", 10, 1, "low -> high", 300, 0.12, 0.43, True),), ("a note",), 10, 10, 0.5)


def claim(status: str = PASS) -> ClaimSection:
    ledger_ok = CheckResult("ledger meets the claim", status, "ledger ε = 1 vs claimed ε = 1")
    return ClaimSection(
        status=status, notion="jdp", requested_epsilon=1.0, requested_delta=1e-5, claimed_epsilon=1.0,
        claimed_delta=1e-5, claim_conversion="exact", claimed_rho=0.0359, relation="replace-one", episodes_run=10,
        n_releases=360, n_users=9, naive_rho=0.04, worst_user_rho=0.0359, worst_user=1,
        ledger_epsilon={"bun-steinke": 1.32, "cks": 1.09, "exact": 1.0},
        families=(FamilyAccount("gram", 90, 0.01, 0.009, ("goe",), 0.0035, 2.6, 980.0),
                  FamilyAccount("w_hat", 90, 0.01, 0.009, ("gaussian",), 0.1, 105.0, 55000.0)),
        checks=(ledger_ok, CheckResult("claim within the requested (ε, δ)", PASS, "ok")),
        paper=PaperCalibration("Sahu 2025, Algorithm 1 line 1", 1.0, 0.0208, 0.026,
                               {"bun-steinke": 1.12, "cks": 0.92, "exact": 0.84}, True),
        assumptions=("‖φ‖ ≤ 1",),
    )


def structure(status: str = PASS) -> StructureSection:
    checks = (CheckResult("fresh noise", PASS, "40 releases"),
              CheckResult("billboard structure", status, "user 2 replaced"))
    return StructureSection(status, "", "dpverify.testing.check_private_agent", checks)


def audits(verdict: str = AUDIT_NO_VIOLATION) -> AuditSection:
    points = [[0.1, 0.85, 0.15, 0.9], [0.2, 0.7, 0.25, 0.75]]
    raw = {"points": points, "audit": {"claimed_mu": 0.27}, "gaussian_claim": True, "delta": 1e-5}
    runs = (
        AuditRun("billboard", "two-world", "min2021 (horizon=2), K = 4", verdict, 1.0,
                 epsilon_lower=3.0 if verdict == AUDIT_VIOLATION else 0.1, gdp_epsilon_lower=0.2, ceiling=4.4,
                 trials=400, seconds=1.5, detail="bound by clopper-pearson", figure="audit_billboard_two-world.png",
                 raw=raw),
        AuditRun("billboard", "one-run", "min2021, K = 10", AUDIT_NO_VIOLATION, 1.0, epsilon_lower=0.0, trials=1),
    )
    status = FAIL if verdict == AUDIT_VIOLATION else PASS
    return AuditSection(status, "", runs)


def utility() -> UtilitySection:
    curve = Curve("dp-lsvi-ucb++", (1, 5, 10), (1.0, 5.0, 10.0), (0.0, 0.5, 1.0))
    base = Curve("lsvi-ucb++", (1, 5, 10), (1.0, 3.0, 4.0), (0.0, 0.2, 0.3))
    bound = BoundValue("dp-lsvi-ucb++/theorem-3.2", "Õ(...)", 100.0, 90.0, 10.0, {"d": 10.0, "H": 20.0})
    return UtilitySection(PASS, episodes=10, seeds=2, agent=curve, counterpart_name="lsvi-ucb++", counterpart=base,
                          random_per_episode=1.2, bound=bound)


def report(kind: str = "consistent") -> VerifyReport:
    w, c, s, a = whitebox(), claim(), structure(), audits()
    if kind == "refuted":
        a = audits(AUDIT_VIOLATION)
    elif kind == "inconclusive":
        s = StructureSection(NOT_RUN, "checks could not run: the factory ignores billboard=")
    settings = Settings("dp-lsvi-ucb++", "registered", "min2021", 1.0, 1e-5, 10, "tiny")
    return VerifyReport(settings, decide(w, c, s, a), w, c, s, a, utility(), timings={"claim": 0.1},
                        versions={"python": "3"})
