"""The frozen result of ``dpverify verify``: five sections of evidence and one verdict.

Sections, in the order a reviewer reads them after the verdict:

* :class:`WhiteBoxSection` — the white-box release checks of :mod:`dpverify.whitebox`: the agent's
  releases checked against its own records from its behaviour (reproducible from the seeds, noise as
  recorded, release pattern as recorded, sensitivity within the record, published structure), with the
  realised fraction of each family's sensitivity and the ε the witnessed pairs imply;
* :class:`ClaimSection` — the agent's claimed (ε, δ), its ledger after a run (releases, per-user
  counting, ρ, ε by every conversion, per statistic family), whether the ledger meets the claim, and
  the noise of each statistic next to the paper's printed calibration where the agent is one of the
  papers' agents;
* :class:`StructureSection` — the private-agent contract checks (fresh noise, billboard structure,
  norm and episode-cap refusals, ...), each pass / fail / not run / not applicable;
* :class:`AuditSection` — the empirical agent audits that apply to the agent's privacy notion;
* :class:`UtilitySection` — regret against the non-private counterpart and the uniformly random
  policy, and the registry's regret bound at the run's (d, H, K, ε, δ).

:func:`decide` turns the first four into a :class:`Verdict`: ``CLAIM REFUTED`` only when a check shows the
claim false (a witnessed ε above it, noise below the recorded one, a ledger above it, a behaviour it rules
out, records whose correction exceeds it, an audit's violation: a failed check whose ``claim`` is None),
otherwise ``INCONCLUSIVE`` when a check could not run or a record is wrong
and the corrected accounting could not be decided, otherwise ``CLAIM CONSISTENT`` — which, like every audit
result, is not a certificate of privacy. Records that are wrong while their correction still meets the claim
(:data:`~dpverify.checks.HOLDS`) are listed among the reasons of any verdict, first among CONSISTENT's. A
check that is "not applicable" (a contract property that does not apply to the agent, e.g. the feature-norm
refusal of an agent that assumes no feature norm; a white-box check of an agent that published nothing)
neither refutes nor blocks CONSISTENT, and every verdict lists it among its reasons. Utility never
changes the verdict: it is the price, not the claim.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from dpverify import _validate
from dpverify.checks import FAIL, HOLDS, NOT_APPLICABLE, NOT_RUN, PASS, UNDECIDED, CheckResult, named, overall
from dpverify.errors import InvalidParameterError
from dpverify.jsonable import to_jsonable

#: The statuses a whole section can have (a section of checks that all do not apply has not run).
SECTION_STATUSES: tuple[str, ...] = (PASS, FAIL, NOT_RUN)

REFUTED = "CLAIM REFUTED"
CONSISTENT = "CLAIM CONSISTENT"
INCONCLUSIVE = "INCONCLUSIVE"
VERDICTS: tuple[str, ...] = (REFUTED, CONSISTENT, INCONCLUSIVE)
#: Exit status of the command for each verdict (so that ``dpverify verify`` can gate a CI job).
EXIT_STATUS: dict[str, int] = {CONSISTENT: 0, REFUTED: 1, INCONCLUSIVE: 2}

NOT_A_CERTIFICATE = (
    "CLAIM CONSISTENT is not a certificate of privacy: the ledger, the contract checks and the audits at "
    "this budget found nothing wrong, and an empirical audit can refute a claim but never prove it."
)

AUDIT_VIOLATION = "VIOLATION"
AUDIT_NO_VIOLATION = "NO VIOLATION FOUND"


def _valid(status: str, statuses: list[str] | None = None, what: str = "the checks") -> None:
    """A section's status is pass, fail or not run, and agrees with ``statuses`` (when given)."""
    _validate.one_of("status", status, SECTION_STATUSES)
    if statuses is not None and status != overall(statuses):
        raise InvalidParameterError("status", f"must agree with {what}", status)


@dataclass(frozen=True)
class NoiseFigure:
    """One family's noise check: its status, the values tested, the measured noise scale over the recorded
    one and the upper confidence limit of that ratio."""

    family: str
    mechanism: str
    status: str
    values: int
    ratio: float
    upper: float
    detail: str


@dataclass(frozen=True)
class SensitivityFigure:
    """One family's largest realised fraction of its recorded sensitivity (the audit's tightness figure)."""

    family: str
    norm: str
    recorded: float
    realised: float
    ratio: float
    pair: str


@dataclass(frozen=True)
class WitnessFigure:
    """One replayed pair: the ε its changes imply with σ at the noise check's upper limits (a lower bound for the pair
    along the recorded transcript, :class:`dpverify.whitebox.result.PairWitness`)."""

    environment: str
    episodes: int
    user: int
    canaries: str
    changed_releases: int
    mu: float
    epsilon_lower: float
    noise_verified: bool


@dataclass(frozen=True)
class WhiteBoxSection:
    """The white-box release checks (``source`` names the function that ran them), first in every report."""

    status: str
    reason: str = ""
    source: str = ""
    checks: tuple[CheckResult, ...] = ()
    noise: tuple[NoiseFigure, ...] = ()
    sensitivity: tuple[SensitivityFigure, ...] = ()
    witnesses: tuple[WitnessFigure, ...] = ()
    notes: tuple[str, ...] = ()
    episodes: int = 0
    search_episodes: int = 0
    seconds: float = 0.0

    def __post_init__(self) -> None:
        _valid(self.status, [c.status for c in self.checks] or None)

    def __getitem__(self, name: str) -> CheckResult:
        return named(self.checks, name)

    @property
    def epsilon_lower(self) -> float | None:
        """The largest ε witnessed at the claim's K (None when no pair was witnessed there)."""
        at_k = [w.epsilon_lower for w in self.witnesses if w.episodes == self.episodes]
        return max(at_k, default=None)


@dataclass(frozen=True)
class FamilyAccount:
    """One statistic family of the ledger, with its calibrated noise and the paper's printed noise."""

    family: str
    n_releases: int
    naive_rho: float
    worst_user_rho: float
    mechanisms: tuple[str, ...]
    sensitivity: float | None = None
    noise_std: float | None = None
    paper_noise_std: float | None = None


@dataclass(frozen=True)
class PaperCalibration:
    """The paper's printed noise, accounted under its own sensitivity assumptions.

    ``true_epsilon`` maps each conversion to the ε of the printed noise (per-user accounting);
    ``falls_short`` is True when the printed noise does not meet the paper's own claim.
    """

    source: str
    claimed_epsilon: float
    claimed_rho: float
    true_rho: float
    true_epsilon: dict[str, float]
    falls_short: bool
    note: str = ""


@dataclass(frozen=True)
class ClaimSection:
    """The claim and the ledger of one run of K episodes (module docstring).

    ``claim`` states the agent's claim in its own measure (``claim_measure``: pure, approximate, zcdp, gdp);
    ``claimed_epsilon`` and ``claimed_delta`` are its (ε, δ) form (for ρ-zCDP and μ-GDP: the ε it implies at
    the requested δ), ``claim_conversion`` the conversion it was calibrated with, if it says. ``ledger_value`` is
    the ledger's parameter in the claim's measure by ``comparison_route``; ``ledger_epsilon`` maps each
    applicable route to the ledger's ε (at the claim's δ, else the requested one) under the claim's accounting;
    ``checks`` holds "ledger meets the claim" and "claim within the requested (ε, δ)".
    """

    status: str
    reason: str = ""
    notion: str = "unknown"
    requested_epsilon: float = math.nan
    requested_delta: float = math.nan
    claim: str = ""
    claim_measure: str = ""
    claimed_epsilon: float | None = None
    claimed_delta: float | None = None
    claim_conversion: str | None = None
    claimed_rho: float | None = None
    comparison_route: str = ""
    ledger_value: float | None = None
    accounting: str = "per-user"
    relation: str = ""
    episodes_run: int = 0
    n_releases: int = 0
    n_users: int = 0
    naive_rho: float = 0.0
    worst_user_rho: float = 0.0
    worst_user: int = 0
    ledger_epsilon: dict[str, float] = field(default_factory=dict)
    families: tuple[FamilyAccount, ...] = ()
    checks: tuple[CheckResult, ...] = ()
    paper: PaperCalibration | None = None
    assumptions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _valid(self.status, None if self.status == NOT_RUN else [c.status for c in self.checks])


@dataclass(frozen=True)
class StructureSection:
    """The private-agent contract checks (``source`` names the function that ran them)."""

    status: str
    reason: str = ""
    source: str = ""
    checks: tuple[CheckResult, ...] = ()
    seconds: float = 0.0

    def __post_init__(self) -> None:
        _valid(self.status, [c.status for c in self.checks] or None)


@dataclass(frozen=True)
class AuditRun:
    """One empirical audit of the agent: notion, route, size, verdict and bounds.

    ``verdict`` is VIOLATION, NO VIOLATION FOUND or "not run" (then ``detail`` says why).
    ``epsilon_lower`` is the (ε, δ) lower bound valid for any mechanism (Clopper–Pearson, or the one-run bound);
    ``mu_lower`` the μ lower bound of the μ-GDP test, valid for a μ-GDP (Gaussian) claim only, beside the claim's
    ``claimed_mu``, and ``gdp_epsilon_lower`` the ε at δ of the μ-GDP curve it rules out (the ε of a Gaussian
    mechanism, not a lower bound on the output's ε); ``verdict_by`` the tests whose bound exceeded the claim;
    ``ceiling`` the largest ε the audit could have shown at this size.
    """

    notion: str
    route: str
    configuration: str
    verdict: str
    claimed_epsilon: float = math.nan
    epsilon_lower: float | None = None
    gdp_epsilon_lower: float | None = None
    ceiling: float | None = None
    trials: int = 0
    seconds: float = 0.0
    detail: str = ""
    figure: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    mu_lower: float | None = None
    claimed_mu: float | None = None
    verdict_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _validate.one_of("verdict", self.verdict, (AUDIT_VIOLATION, AUDIT_NO_VIOLATION, NOT_RUN))

    def refutation(self) -> str:
        """What refuted the claim, under the deciding test's own name (empty unless the verdict is VIOLATION)."""
        if self.verdict != AUDIT_VIOLATION:
            return ""
        if "gaussian-dp" in self.verdict_by and self.mu_lower is not None and self.claimed_mu is not None:
            return (f"μ ≥ {self.mu_lower:.3g} > claimed μ {self.claimed_mu:.3g}: the μ-GDP test, valid for a "
                    "Gaussian claim")
        if self.epsilon_lower is not None:
            return f"(ε, δ) lower bound {self.epsilon_lower:.3g} > claimed {self.claimed_epsilon:.3g}"
        return self.detail

    @property
    def status(self) -> str:
        return {AUDIT_VIOLATION: FAIL, AUDIT_NO_VIOLATION: PASS}.get(self.verdict, NOT_RUN)


@dataclass(frozen=True)
class AuditSection:
    """Every audit that applies to the agent's notion (billboard / JDP / LDP; two-world and one-run)."""

    status: str
    reason: str = ""
    runs: tuple[AuditRun, ...] = ()

    def __post_init__(self) -> None:
        _valid(self.status, [r.status for r in self.runs] or None, "the audit verdicts")


@dataclass(frozen=True)
class BoundValue:
    """A registry bound evaluated at the run's values (hidden constants taken as 1)."""

    name: str
    stated: str
    value: float
    privacy_term: float
    non_private_term: float
    values: dict[str, float]


@dataclass(frozen=True)
class Curve:
    """Mean ± std of cumulative regret across seeds at a subset of episodes (for plots and JSON)."""

    label: str
    episodes: tuple[int, ...]
    mean: tuple[float, ...]
    std: tuple[float, ...]

    @property
    def final_mean(self) -> float:
        return self.mean[-1] if self.mean else math.nan

    @property
    def final_std(self) -> float:
        return self.std[-1] if self.std else math.nan


@dataclass(frozen=True)
class UtilitySection:
    """Regret of the agent, its non-private counterpart and the uniformly random policy; the bound."""

    status: str
    reason: str = ""
    episodes: int = 0
    seeds: int = 0
    agent: Curve | None = None
    counterpart_name: str = ""
    counterpart: Curve | None = None
    random_per_episode: float | None = None
    bound: BoundValue | None = None
    counterpart_bound: BoundValue | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    #: The no-data control (dpverify.agents.core.learning): its comparison's ``to_dict()`` and its one line, or
    #: why it could not run.
    learning: dict[str, Any] | None = None
    learning_line: str = ""

    def __post_init__(self) -> None:
        _valid(self.status)


@dataclass(frozen=True)
class Verdict:
    """The one-line answer, its exit status, and the reasons behind it."""

    verdict: str
    reasons: tuple[str, ...]
    caveat: str = NOT_A_CERTIFICATE

    def __post_init__(self) -> None:
        _validate.one_of("verdict", self.verdict, VERDICTS)

    @property
    def exit_status(self) -> int:
        return EXIT_STATUS[self.verdict]


@dataclass(frozen=True)
class Settings:
    """What was verified and at which budget."""

    agent: str
    agent_source: str
    env: str
    epsilon: float
    delta: float
    episodes: int
    budget: str
    seed: int = 0
    scheduler: str | None = None
    agent_options: dict[str, Any] = field(default_factory=dict)
    env_options: dict[str, Any] = field(default_factory=dict)
    gaussian_claim: bool | None = None  # --gaussian-claim (None: as the agent says)


@dataclass(frozen=True)
class VerifyReport:
    """Everything ``dpverify verify`` found (module docstring); :meth:`to_dict` is ``report.json``."""

    settings: Settings
    verdict: Verdict
    whitebox: WhiteBoxSection
    claim: ClaimSection
    structure: StructureSection
    audits: AuditSection
    utility: UtilitySection
    timings: dict[str, float] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["verdict"]["exit_status"] = self.verdict.exit_status
        out = {"schema": "dpverify.verify", "schema_version": 3, **out}
        return to_jsonable(out)


def _said(status: str, word: str, *sections: tuple[str, tuple[CheckResult, ...]], claim: str | None = "any"
          ) -> list[str]:
    return [f"{name}: {c.name} {word} ({c.reason})" for name, checks in sections for c in checks
            if c.status == status and claim in ("any", c.claim)]


def decide(whitebox: WhiteBoxSection, claim: ClaimSection, structure: StructureSection,
           audits: AuditSection) -> Verdict:
    """The verdict from the four privacy sections (module docstring); utility does not enter."""
    box, ledger = ("white-box", whitebox.checks), ("claim & accounting", claim.checks)
    contract = ("contract", structure.checks)
    refuting = _said(FAIL, "failed", box, ledger, contract, claim=None) + [
        f"{r.notion} {r.route} audit found a VIOLATION ({r.refutation()})" for r in audits.runs
        if r.verdict == AUDIT_VIOLATION]
    records = _said(FAIL, "failed, the claim holds", box, ledger, contract, claim=HOLDS)
    missing = _said(FAIL, "failed, whether the claim holds is undecided", box, ledger, contract, claim=UNDECIDED)
    missing += _said(NOT_RUN, "did not run", box)
    missing += [] if whitebox.checks else [f"white-box checks could not run ({whitebox.reason})"]
    missing += _said(NOT_RUN, "did not run", ledger)
    missing += [f"claim & accounting could not run ({claim.reason})"] if claim.status == NOT_RUN else []
    missing += _said(NOT_RUN, "did not run", contract)
    # nothing published (the ledger met the claim at ε = 0): a billboard audit has nothing to audit
    silent = claim.status == PASS and claim.n_releases == 0
    empty = [r for r in audits.runs if r.verdict == NOT_RUN and silent and r.notion == "billboard"]
    missing += [f"{r.notion} {r.route} audit could not run ({r.detail})" for r in audits.runs
                if r.verdict == NOT_RUN and r not in empty]
    if all(c.status == NOT_APPLICABLE for c in structure.checks):  # none ran (or none applies)
        missing.append(f"contract checks could not run ({structure.reason})")
    missing += [] if audits.runs else [f"audits could not run ({audits.reason})"]
    waived = _said(NOT_APPLICABLE, "not applicable", box, ledger, contract) + [
        f"{r.notion} {r.route} audit not applicable (nothing was published: the billboard is empty in every world)"
        for r in empty]
    if refuting:
        return Verdict(REFUTED, tuple(refuting + missing + records + waived))
    if missing:
        return Verdict(INCONCLUSIVE, tuple(missing + records + waived))
    every = "every applicable contract check passed" if waived else "every contract check passed"
    if records:
        return Verdict(CONSISTENT, (f"the claim holds, but the agent's records are wrong: corrected, they meet the "
                                    f"claim; otherwise the ledger meets the claim, {every} and no audit found a "
                                    "violation", *records, *waived))
    behaved = ("nothing was published (the ledger accounts ε = 0)" if silent else
               "the releases behave as recorded (white-box checks), the ledger meets the claim")
    return Verdict(CONSISTENT, (f"{behaved}, {every} and no audit found a violation", *waived))
