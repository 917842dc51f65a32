"""Claim and accounting: what the agent claims, and what its ledger says after a run of K episodes.

The ledger (:class:`dpverify.ledger.PrivacyLedger`) is read from the agent after it has run every
episode it was built for, so it records exactly what was published. It is accounted with the claim's
δ and accounting (per user, unless the agent's config says otherwise) under every applicable
conversion; the claim holds on paper when the ledger's ε under the claim's conversion does not exceed
the claimed ε (relative slack :data:`LEDGER_TOLERANCE`, floating-point rounding only). Where the
agent's paper prints its noise (its registry card's schedule has ``printed``: DP-LSVI-UCB++, Sahu 2025,
Algorithm 1 line 1) the noise of each statistic is shown next to the printed one.
"""

from __future__ import annotations

import math
from typing import Any

from dpverify.agents.registry import card
from dpverify.calibration import NamedSchedule
from dpverify.conversions import CONVERSIONS, DPGuarantee
from dpverify.ledger import PrivacyLedger, noise_room
from dpverify.verify.result import FAIL, NOT_RUN, PASS, Check, ClaimSection, FamilyAccount, PaperCalibration

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


def paper_calibration(schedule: NamedSchedule | None, mdp: Any, episodes: int, epsilon: float, delta: float,
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


def claim_section(agent: Any, *, notion: str, known: str | None, mdp: Any, episodes_run: int,
                  requested_epsilon: float, requested_delta: float) -> ClaimSection:
    """The claim and the ledger of ``agent`` after it ran ``episodes_run`` episodes (module docstring)."""
    base: dict[str, Any] = {"notion": notion, "requested_epsilon": requested_epsilon,
                            "requested_delta": requested_delta, "episodes_run": episodes_run}
    claimed_guarantee = getattr(agent, "claimed_guarantee", None)
    ledger = getattr(agent, "ledger", None)
    if ledger is None:  # the protocol's minimum: the releases are on the agent's billboard
        ledger = getattr(getattr(agent, "billboard", None), "ledger", None)
    if not callable(claimed_guarantee):
        return ClaimSection(NOT_RUN, "the agent has no claimed_guarantee() to read its claim from", **base)
    if not isinstance(ledger, PrivacyLedger):
        return ClaimSection(NOT_RUN, "the agent has no ledger (a dpverify PrivacyLedger, as agent.ledger or "
                                     "agent.billboard.ledger) to account", **base)
    claim = DPGuarantee.of_claim(claimed_guarantee())
    config = getattr(agent, "config", None)
    accounting = getattr(config, "accounting", "per-user")
    relation = ledger.relation.value
    conversions = [c for c in CONVERSIONS if c != "exact" or ledger.all_gaussian]
    ledger_eps = {c: ledger.guarantee(claim.delta, c, accounting).epsilon for c in conversions}
    at_claim = ledger_eps.get(claim.conversion)
    checks = [
        _ledger_check(ledger, claim, at_claim, accounting),
        _request_check(claim, requested_epsilon, requested_delta),
        _relation_check(ledger, config),
    ]
    noise, sensitivity = _noise_by_family(agent, ledger)
    entry = card(known)
    printed_check = paper_calibration(None if entry is None else entry.named_schedule, mdp,
                                      getattr(config, "num_episodes", episodes_run), requested_epsilon,
                                      requested_delta, relation)
    paper, printed = printed_check if printed_check is not None else (None, {})
    account = ledger.account(claim.delta, accounting)
    families = tuple(
        FamilyAccount(f.family, f.n_releases, f.naive_rho, f.worst_user_rho, f.mechanisms,
                      sensitivity.get(f.family), noise.get(f.family), printed.get(f.family))
        for f in account.families
    )
    schedule = getattr(agent, "schedule", None)
    statuses = {c.status for c in checks}
    return ClaimSection(
        status=FAIL if FAIL in statuses else PASS,
        claimed_epsilon=claim.epsilon,
        claimed_delta=claim.delta,
        claim_conversion=claim.conversion,
        claimed_rho=claim.rho,
        accounting=accounting,
        relation=relation,
        n_releases=account.n_releases,
        n_users=account.n_users,
        naive_rho=account.naive_rho,
        worst_user_rho=account.worst_user_rho,
        worst_user=account.worst_user,
        ledger_epsilon=ledger_eps,
        families=families,
        checks=tuple(checks),
        paper=paper,
        assumptions=tuple(getattr(schedule, "assumptions", ()) or ()),
        **base,
    )


def _ledger_check(ledger: PrivacyLedger, claim: Any, at_claim: float | None, accounting: str) -> Check:
    name = "ledger meets the claim"
    if ledger.n_releases == 0:
        return Check(name, FAIL, "the ledger is empty: nothing the agent released was recorded, so its "
                                 "claim has no accounting behind it")
    if at_claim is None:
        return Check(name, FAIL, f"the claim's conversion {claim.conversion!r} does not apply to the ledger "
                                 "(exact needs every release to be Gaussian)")
    detail = (f"ledger ε = {at_claim:.6g} ({claim.conversion}, {accounting}, δ = {claim.delta:g}) vs claimed "
              f"ε = {claim.epsilon:.6g}")
    if at_claim <= claim.epsilon * (1.0 + LEDGER_TOLERANCE):
        if math.isclose(at_claim, claim.epsilon, rel_tol=LEDGER_TOLERANCE):
            return Check(name, PASS, detail + "; equal")
        room = noise_room(ledger, claim.epsilon, claim.delta, claim.conversion, accounting)
        more = f" (the noise could be {room:.3g}× smaller and still meet it)" if room is not None and room > 1 else ""
        return Check(name, PASS, detail + f"; the claim is met with room: the run spent less than claimed{more}")
    return Check(name, FAIL, detail + "; the releases cost more than the agent claims")


def _request_check(claim: Any, epsilon: float, delta: float) -> Check:
    name = "claim within the requested (ε, δ)"
    detail = f"claimed ({claim.epsilon:.6g}, {claim.delta:g}) vs requested ({epsilon:g}, {delta:g})"
    if claim.epsilon <= epsilon * (1.0 + LEDGER_TOLERANCE) and claim.delta <= delta:
        return Check(name, PASS, detail)
    return Check(name, FAIL, detail + ": the agent claims less privacy than was asked of it")


def _relation_check(ledger: PrivacyLedger, config: Any) -> Check:
    name = "ledger relation = claim relation"
    declared = getattr(config, "relation", None)
    if declared is None:
        return Check(name, PASS, f"{ledger.relation.value} (the agent's config declares no relation)")
    declared = getattr(declared, "value", declared)
    if declared == ledger.relation.value:
        return Check(name, PASS, f"{declared}")
    return Check(name, FAIL, f"ledger accounts under {ledger.relation.value}, the claim is stated for {declared}")
