"""Claim and accounting: what the agent claims, and what its ledger says after a run of K episodes.

The agent's claim is read from its ``claimed_guarantee()`` in any measure — pure ε-DP, (ε, δ)-DP, ρ-zCDP or
μ-GDP (:class:`dpverify.claims.PrivacyClaim`). The ledger (:class:`dpverify.ledger.PrivacyLedger`) is read from
the agent after it has run every episode it was built for, so it records exactly what was published. It is
compared with the claim in the claim's own measure, by the tightest valid route (:meth:`PrivacyClaim.compare`;
the check names the route), with the agent's accounting (per user, unless its config says otherwise); the
ledger's ε by every route is reported beside it, at the claim's δ (the requested δ for a claim in another
measure). A route that does not apply is skipped with its reason and never fails the check; no route at all
is a check that could not run (relative slack :data:`LEDGER_TOLERANCE`, floating-point rounding only). Where the
agent's paper prints its noise (its registry card's schedule has ``printed``: DP-LSVI-UCB++, Sahu 2025,
Algorithm 1 line 1) the noise of each statistic is shown next to the printed one.
"""

from __future__ import annotations

import math
from typing import Any

from dpverify.accounting import epsilon_routes
from dpverify.agent_audit.spec import refuse_gaussian_claim
from dpverify.agents.registry import card
from dpverify.calibration import NamedSchedule
from dpverify.checks import FAIL, NOT_RUN, PASS, UNDECIDED, CheckResult, Figure, overall
from dpverify.claims import ClaimComparison, PrivacyClaim
from dpverify.ledger import PrivacyLedger, noise_room
from dpverify.verify.result import ClaimSection, FamilyAccount, PaperCalibration
from dpverify.verify.target import MDP, VerifyRun

#: Relative slack when comparing the ledger's ε with the claimed ε (rounding of per-user sums only).
LEDGER_TOLERANCE = 1e-9


def _noise_by_family(agent: Any, ledger: PrivacyLedger) -> tuple[dict[str, float], dict[str, float]]:
    """(noise std, sensitivity) per family: of the mechanisms the ledger recorded (what was released; the
    first block of each family), else of the agent's calibration."""
    noise: dict[str, float] = {}
    sensitivity: dict[str, float] = {}
    for block in ledger.blocks:
        mechanism = block.mechanism
        scale = getattr(mechanism, "noise_scale", None)
        bound = getattr(mechanism, "sensitivity", getattr(mechanism, "frobenius_sensitivity", None))
        if block.family not in noise and isinstance(scale, (int, float)):
            noise[block.family] = float(scale)
        if block.family not in sensitivity and isinstance(bound, (int, float)):
            sensitivity[block.family] = float(bound)
    calibration = getattr(agent, "calibration", None)
    for stat in getattr(calibration, "statistics", ()) or ():
        family = getattr(getattr(stat, "spec", None), "family", None)
        if isinstance(family, str):
            noise.setdefault(family, float(stat.noise_std))
            sensitivity.setdefault(family, float(stat.spec.sensitivity))
    return noise, sensitivity


def _paper_calibration(schedule: NamedSchedule | None, mdp: MDP, episodes: int, epsilon: float, delta: float,
                       relation: str) -> tuple[PaperCalibration, dict[str, float]] | None:
    """The paper's printed noise at the run's (H, K, d, ε, δ), with the printed noise std per family; None when
    the agent's schedule has no printed noise (Liao et al. 2021 prints no noise scale in its text; Luyo et al.
    and Ngo et al. are not among the papers whose calibration dpverify checks)."""
    if schedule is None or schedule.printed is None:
        return None
    check = schedule.printed(mdp.horizon, episodes, mdp.dim, epsilon, delta, relation)
    return PaperCalibration(
        source=schedule.printed_source,
        claimed_epsilon=check.claimed_epsilon,
        claimed_rho=check.claimed_rho,
        true_rho=check.true_rho,
        true_epsilon=dict(check.true_epsilon),
        falls_short=check.falls_short,
        note=schedule.printed_note,
    ), check.printed_noise_std


def _read_claim(agent: Any) -> tuple[PrivacyClaim, float | None] | str:
    """(the agent's claim in any measure — :meth:`PrivacyClaim.of` —, the ρ it states: a ρ-zCDP claim's, or the
    ``rho`` a :class:`~dpverify.conversions.DPGuarantee` started from), or why it cannot be read."""
    claimed_guarantee = getattr(agent, "claimed_guarantee", None)
    if not callable(claimed_guarantee):
        return "the agent has no claimed_guarantee() to read its claim from"
    stated = claimed_guarantee()
    claim = PrivacyClaim.of(stated, "claimed_guarantee()")
    rho = claim.value if claim.measure == "zcdp" else getattr(stated, "rho", None)
    return claim, (float(rho) if isinstance(rho, (int, float)) and not isinstance(rho, bool) and rho > 0 else None)


def claim_section(agent: Any, run: VerifyRun) -> ClaimSection:
    """The claim and the ledger of ``agent`` after it ran the run's K episodes (module docstring)."""
    base: dict[str, Any] = {"notion": run.notion, "requested_epsilon": run.epsilon,
                            "requested_delta": run.delta, "episodes_run": run.episodes}
    ledger = getattr(agent, "ledger", None)
    if ledger is None:  # the protocol's minimum: the releases are on the agent's billboard
        ledger = getattr(getattr(agent, "billboard", None), "ledger", None)
    read = _read_claim(agent)
    if isinstance(read, str):
        return ClaimSection(NOT_RUN, read, **base)
    claim, claimed_rho = read
    if not isinstance(ledger, PrivacyLedger):
        return ClaimSection(NOT_RUN, "the agent has no ledger (a dpverify PrivacyLedger, as agent.ledger or "
                                     "agent.billboard.ledger) to account", **base)
    refuse_gaussian_claim("--gaussian-claim", run.gaussian_claim, ledger)
    config = getattr(agent, "config", None)
    accounting = getattr(config, "accounting", "per-user")
    relation = ledger.relation.value
    # the (ε, δ) figures: at the claim's δ, or the requested one for a claim in another measure
    delta = claim.delta if claim.measure == "approximate" else run.delta
    comparison = claim.compare(ledger, accounting) if ledger.n_releases else None
    # every route's ε: an (ε, δ) comparison has them already (at the claim's δ); another measure's has not
    routes = (comparison.routes if comparison is not None and comparison.routes
              else epsilon_routes(ledger, delta, accounting) if ledger.n_releases else ())
    checks = (_ledger_check(ledger, claim, comparison, accounting), _request_check(claim, run.epsilon, run.delta),
              _relation_check(ledger, config), _episodes_check(ledger, run.episodes))
    noise, sensitivity = _noise_by_family(agent, ledger)
    entry = card(run.known)
    printed_check = _paper_calibration(None if entry is None else entry.named_schedule, run.mdp,
                                      getattr(config, "num_episodes", run.episodes), run.epsilon, run.delta, relation)
    paper, printed = printed_check if printed_check is not None else (None, {})
    account = ledger.account(delta, accounting)
    families = tuple(
        FamilyAccount(f.family, f.n_releases, f.naive_rho, f.worst_user_rho, f.mechanisms,
                      sensitivity.get(f.family), noise.get(f.family), printed.get(f.family))
        for f in account.families
    )
    schedule = getattr(agent, "schedule", None)
    return ClaimSection(
        status=overall(c.status for c in checks),
        claim=str(claim),
        claim_measure=claim.measure,
        claimed_epsilon=claim.value if claim.measure in ("pure", "approximate") else claim.epsilon_at(delta),
        claimed_delta=claim.delta if claim.measure in ("pure", "approximate") else delta,
        claim_conversion=claim.conversion,
        claimed_rho=claimed_rho,
        comparison_route="" if comparison is None else comparison.route or claim.measure,
        ledger_value=0.0 if comparison is None else comparison.ledger_value,
        accounting=accounting,
        relation=relation,
        n_releases=account.n_releases,
        n_users=account.n_users,
        naive_rho=account.naive_rho,
        worst_user_rho=account.worst_user_rho,
        worst_user=account.worst_user,
        ledger_epsilon={r.route: r.epsilon for r in routes if r.epsilon is not None},
        families=families,
        checks=checks,
        paper=paper,
        assumptions=tuple(getattr(schedule, "assumptions", ()) or ()),
        **base,
    )


def _ledger_check(ledger: PrivacyLedger, claim: PrivacyClaim, comparison: ClaimComparison | None,
                  accounting: str) -> CheckResult:
    """The ledger against the claim in the claim's own measure, by the tightest valid route
    (:meth:`PrivacyClaim.compare`): holds → pass; shown above the claim (an exact value or a lower bound) → fail;
    above by every upper bound but shown by none → fail, the claim undecided; no route → not run."""
    name = "ledger meets the claim"
    parameter = {"epsilon": "ε", "rho": "ρ", "mu": "μ"}[claim.parameter]
    evidence: dict[str, Figure] = {"releases": ledger.n_releases, "claim": str(claim),
                                   f"claimed_{claim.parameter}": claim.value}
    if comparison is None:
        evidence[f"ledger_{claim.parameter}"] = 0.0
        return CheckResult(name, PASS, f"nothing was published: the ledger accounts {parameter} = 0, within any claim "
                                       "(which then rests on the agent's actions reading no user's data: the "
                                       "contract's billboard isolation check)", evidence)
    evidence.update({f"ledger_{claim.parameter}": comparison.ledger_value, "ledger_lower": comparison.lower,
                     "route": comparison.route or claim.measure})
    if comparison.status == "cannot-compare":
        return CheckResult(name, NOT_RUN, f"no valid route puts the ledger in the claim's terms ({claim}): "
                                          f"{comparison.detail}", evidence)
    value = comparison.ledger_value
    reason = (f"ledger {parameter} = {value:.6g} ({comparison.route or claim.measure}, {accounting}"
              + (f", δ = {claim.delta:g}" if claim.measure == "approximate" else "")
              + f") vs claimed {parameter} = {claim.value:.6g}")
    if comparison.status == "holds":
        if value is not None and math.isclose(value, claim.value, rel_tol=LEDGER_TOLERANCE):
            return CheckResult(name, PASS, reason + "; equal", evidence)
        room = None
        if claim.measure == "approximate" and claim.conversion is not None:
            room = noise_room(ledger, claim.value, claim.delta, claim.conversion, accounting)
            evidence["noise_room"] = room
        more = f" (the noise could be {room:.3g}× smaller and still meet it)" if room is not None and room > 1 else ""
        return CheckResult(name, PASS, reason + f"; the claim is met with room: the run spent less than claimed{more}",
                           evidence)
    if comparison.status == "refuted":
        shown = "" if comparison.lower == value else f" (at least {comparison.lower:.6g})"
        return CheckResult(name, FAIL, reason + f"{shown}; the releases cost more than the agent claims", evidence)
    return CheckResult(name, FAIL, reason + "; no valid route shows the claim, and none shows it false (the best "
                                            "upper bound is above it, no lower bound is)", evidence, claim=UNDECIDED)


def _episodes_check(ledger: PrivacyLedger, episodes: int) -> CheckResult:
    """Every release recorded at an episode of the run (1..K): one recorded beyond K names users who do not
    exist, so the per-user accounting does not describe the run the agent made."""
    name = "releases recorded within the run's K episodes"
    last = max((block.episodes[1] for block in ledger.blocks), default=0)
    evidence = {"last_recorded_episode": last, "episodes": episodes}
    if last <= episodes:
        return CheckResult(name, PASS, f"the last release is recorded at episode {last} of K = {episodes}", evidence)
    return CheckResult(name, FAIL, f"releases are recorded at episodes up to {last}, beyond the run's K = "
                                   f"{episodes}: the ledger does not describe the run (its per-user accounting "
                                   "charges users who do not exist)", evidence)


def _request_check(claim: PrivacyClaim, epsilon: float, delta: float) -> CheckResult:
    """The claim implies the requested (ε, δ) (:meth:`PrivacyClaim.epsilon_at` the requested δ)."""
    name = "claim within the requested (ε, δ)"
    implied = claim.epsilon_at(delta)
    shown = "" if claim.measure in ("pure", "approximate") else f", which implies ε = {implied:.6g} at δ = {delta:g}"
    reason = f"claimed {claim}{shown} vs requested ({epsilon:g}, {delta:g})"
    evidence: dict[str, Figure] = {"claim": str(claim), "implied_epsilon": implied, "requested_epsilon": epsilon,
                                   "requested_delta": delta}
    if implied <= epsilon * (1.0 + LEDGER_TOLERANCE):
        return CheckResult(name, PASS, reason, evidence)
    return CheckResult(name, FAIL, reason + ": the agent claims less privacy than was asked of it", evidence)


def _relation_check(ledger: PrivacyLedger, config: Any) -> CheckResult:
    name = "ledger relation = claim relation"
    declared = getattr(config, "relation", None)
    declared = getattr(declared, "value", declared)
    evidence = {"ledger_relation": ledger.relation.value, "claim_relation": None if declared is None else str(declared)}
    if declared is None:
        return CheckResult(name, PASS, f"{ledger.relation.value} (the agent's config declares no relation)", evidence)
    if declared == ledger.relation.value:
        return CheckResult(name, PASS, f"{declared}", evidence)
    return CheckResult(name, FAIL, f"ledger accounts under {ledger.relation.value}, the claim is stated for "
                                   f"{declared}", evidence)
