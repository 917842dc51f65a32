"""What an agent audit audits and what it reports: :class:`AgentAuditSpec` (validated, frozen), the claim
the agent itself states (:class:`AgentClaim`, checked by :func:`check_claim`) and :class:`AgentAuditResult`.

The notions ("billboard", "jdp", "ldp": :mod:`dpverify.agent_audit.notions`) and routes
("two-world", "one-run": :mod:`dpverify.agent_audit.routes`) are described in
:mod:`dpverify.agent_audit`. Which notions an agent's own notion supports follows joint DP (Kearns
et al. 2014; Vietri et al. 2020: a JDP agent's private billboard and, by post-processing, the
actions given to the other users) and local DP (Liao et al. 2021: each user's messages). An audit
never certifies a claim: the verdict is VIOLATION or NO VIOLATION FOUND (Jagielski, Ullman & Oprea
2020).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from dpverify import _validate
from dpverify.agent_audit.notions import audit_notion, notions_for
from dpverify.agent_audit.routes import audit_route
from dpverify.agents.registry import card
from dpverify.audit.result import NO_VIOLATION_FOUND, VIOLATION, AuditResult
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger

POSITIONS: tuple[str, ...] = ("first", "middle", "last")
#: Canary designs of a two-world audit (:mod:`dpverify.agent_audit.canaries`).
CANARY_DESIGNS: tuple[str, ...] = ("environment", "worst-case")
#: The neighbouring relations a claim may be audited under (the agents' spelling,
#: :class:`dpverify.neighbouring.Neighbouring`).
RELATIONS: tuple[str, ...] = ("replace-one", "add-remove-one")


def _check_positions(positions: Any, episodes: int) -> tuple[Any, ...]:
    out = tuple(positions)
    if not out:
        raise InvalidParameterError("positions", "must name at least one position", out)
    for p in out:
        if isinstance(p, str):
            _validate.one_of("positions", p, POSITIONS)
        elif isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= episodes:
            raise InvalidParameterError("positions", f"must be names or episodes in [1, {episodes}]", p)
    return out


@dataclass(frozen=True)
class AgentAuditSpec:
    """What to audit and how (module docstring).

    Attributes:
        agent: a registered agent name or ``"module.path:factory"``.
        env: a registered environment name; ``env_options``/``agent_options``: their keyword options.
        episodes: K, the number of users.
        notion: "billboard", "jdp" or "ldp".
        route: a registered route (:data:`dpverify.agent_audit.routes.ROUTES`): "two-world" or
            "one-run".
        epsilon, delta: the claim audited. The agent is configured with them unless ``agent_options``
            set its own; the claim must be one the agent makes (ε ≥ its claimed ε, δ ≥ its δ).
        trials: two-world: trials per side (selection + evaluation); one-run: number of runs.
        canaries: one-run: canary slots m per run (default ⌊K/2⌋).
        confidence: of all bounds together.
        seed: audit seed (the result depends only on the spec).
        data_seed: seed of the ordinary tapes (the fixed dataset).
        positions: two-world: the replaced positions (each a candidate pair).
        window: episodes after j in a billboard/JDP output.
        gaussian_claim: whether the claim is a μ-GDP (Gaussian-mechanism) claim; None = the agent says so
            (a registered private agent adds only Gaussian noise), False for third-party agents.
        batched: run the agent's batched twin where its registry card has one for the options (None = yes).
        canary_design: "environment" (the environment's own low/high-value canaries) or
            "worst-case" (the audit linear MDP — for a linear mixture MDP, the audit linear
            mixture MDP — of its dimensions and its path canaries, the pairs of largest measured μ;
            :mod:`dpverify.agent_audit.canaries`).
    """

    agent: str
    env: str
    episodes: int
    notion: str
    epsilon: float
    delta: float = 1e-5
    route: str = "two-world"
    trials: int = 10_000
    canaries: int | None = None
    confidence: float = 0.95
    seed: int = 0
    data_seed: int = 0
    positions: tuple[str, ...] = POSITIONS
    window: int = 1
    env_options: tuple[tuple[str, Any], ...] = ()
    agent_options: tuple[tuple[str, Any], ...] = ()
    gaussian_claim: bool | None = None
    batched: bool | None = None
    canary_design: str = "environment"

    def __post_init__(self) -> None:
        if not isinstance(self.agent, str) or not self.agent:
            raise InvalidParameterError("agent", "must be a registered name or module.path:factory", self.agent)
        entry = card(self.agent)
        if entry is not None and not entry.private:  # it takes no claim and publishes nothing to audit
            raise InvalidParameterError("agent", f"must be a private agent or module.path:factory ({self.agent} is "
                                        "non-private: it makes no privacy claim to audit)", self.agent)
        if not isinstance(self.env, str) or not self.env:
            raise InvalidParameterError("env", "must be a registered environment name", self.env)
        _validate.integer("episodes", self.episodes, minimum=2)
        audit_notion(self.notion)
        route = audit_route(self.route)
        object.__setattr__(self, "epsilon", _validate.positive("epsilon", self.epsilon))
        object.__setattr__(self, "delta", _validate.open_unit("delta", self.delta))
        trials = _validate.integer("trials", self.trials, minimum=1)
        if trials < route.min_trials:
            raise InvalidParameterError(
                "trials", f"must be >= {route.min_trials} {route.min_trials_reason}", trials)
        if self.canaries is not None:
            m = _validate.integer("canaries", self.canaries, minimum=2)
            if m > self.episodes:
                raise InvalidParameterError("canaries", f"must be <= episodes = {self.episodes}", m)
        object.__setattr__(self, "confidence", _validate.open_unit("confidence", self.confidence))
        _validate.integer("seed", self.seed, minimum=0)
        _validate.integer("data_seed", self.data_seed, minimum=0)
        object.__setattr__(self, "positions", _check_positions(self.positions, self.episodes))
        _validate.integer("window", self.window, minimum=1)
        object.__setattr__(self, "env_options", _validate.options("env_options", self.env_options))
        object.__setattr__(self, "agent_options", _validate.options("agent_options", self.agent_options))
        relation = dict(self.agent_options).get("relation", "replace-one")
        if relation not in RELATIONS:
            raise InvalidParameterError("relation", f"must be one of {', '.join(RELATIONS)}", relation)
        if relation == "add-remove-one" and not audit_notion(self.notion).add_remove:
            raise InvalidParameterError(
                "relation", f"must be replace-one for an {self.notion} audit (local DP compares two data of one user)",
                relation)
        for name in ("gaussian_claim", "batched"):
            if getattr(self, name) not in (None, True, False):
                raise InvalidParameterError(name, "must be True, False or None", getattr(self, name))
        _validate.one_of("canary_design", self.canary_design, CANARY_DESIGNS)

    @property
    def add_remove(self) -> bool:
        """Whether the claim is under add/remove-one (pairs: user j absent, an empty slot, vs a canary at j)."""
        return dict(self.agent_options).get("relation") == "add-remove-one"

    @property
    def canary_count(self) -> int:
        return self.canaries if self.canaries is not None else max(2, self.episodes // 2)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["env_options"] = dict(self.env_options)
        data["agent_options"] = dict(self.agent_options)
        data["positions"] = list(self.positions)
        return data


@dataclass(frozen=True)
class AgentClaim:
    """The claim the agent itself states: its notion and (ε, δ) (None when it does not say)."""
    notion: str | None
    epsilon: float | None
    delta: float | None
    gaussian: bool


def check_claim(spec: AgentAuditSpec, claim: AgentClaim) -> None:
    """The notion must be one the agent supports, and (ε, δ) a claim it makes (one line otherwise)."""
    if claim.notion is not None:
        supported = notions_for(claim.notion)
        if spec.notion not in supported:
            raise InvalidParameterError(
                "notion", f"must be one of {', '.join(supported) or 'none'} for a {claim.notion} agent", spec.notion)
    if claim.epsilon is not None and claim.delta is not None:
        if spec.epsilon < claim.epsilon * (1 - 1e-9) or spec.delta < claim.delta * (1 - 1e-9):
            raise InvalidParameterError(
                "epsilon/delta",
                f"must be a claim the agent makes: it claims ({claim.epsilon:.6g}, {claim.delta:g}), so epsilon >= "
                f"{claim.epsilon:.6g} and delta >= {claim.delta:g}",
                (spec.epsilon, spec.delta))


@dataclass(frozen=True)
class AgentAuditResult:
    """The outcome of an agent audit (frozen).

    Attributes:
        verdict: VIOLATION or NO VIOLATION FOUND (never "private").
        spec: the :class:`AgentAuditSpec` audited.
        epsilon_lower_bound: the (ε, δ) lower bound the route certified, valid for any mechanism: the
            Clopper–Pearson bound of a two-world audit, the one-run bound of a one-run audit. Never the ε of a
            rejected μ-GDP curve (that one is ``gdp_epsilon``, with ``mu_lower_bound``).
        method: which test gave ``epsilon_lower_bound`` ("clopper-pearson" or the one-run method).
        claimed_epsilon, delta: the claim audited; ``agent_claim``: what the agent itself claims.
        trials: two-world trials per side, or one-run runs; ``canaries``: one-run m per run (else None).
        seconds: wall time of the audit.
        batched: whether a batched twin ran the trials.
        audit: the engine's :class:`~dpverify.audit.AuditResult` (two-world) or None.
        one_run: the one-run result (:class:`dpverify.audit.one_run.OneRunResult`) or None.
        points: tested (FPR, FNR, FPR upper, FNR upper) points for the trade-off plot.
        notes: caveats, always including that an audit is not a certificate.
        mu_lower_bound: for an audit of a Gaussian claim, the μ lower bound of the μ-GDP test (two-world) or of
            the f-DP one-run analysis (one-run, ``one_run_fdp``) — valid for a μ-GDP claim only (it says no
            μ-GDP mechanism with a smaller μ produced these outputs, not that the outputs' (ε, δ) is large);
            else None. ``claimed_mu``: the claim's μ (None without one).
        gdp_epsilon: ε at δ of the μ-GDP curve that ``mu_lower_bound`` rules out (None without it): the ε of a
            Gaussian mechanism, not a lower bound on the audited output's ε.
        verdict_by: the tests whose bound exceeded the claim (empty when the verdict is NO VIOLATION FOUND):
            "clopper-pearson", "gaussian-dp" or the one-run methods.
        measured_pairs: the candidate canary pairs as measured before the audit
            (:class:`dpverify.agent_audit.canaries.MeasuredPair`: realised fraction of each family's sensitivity,
            the pair's μ), the engine's choice first (two-world); one-run: the pair the slots hold under the
            worst-case design, empty under the environment's.
        one_run_fdp: the f-DP one-run result (:class:`dpverify.audit.one_run_fdp.FdpOneRunResult`) of a
            one-run audit of a Gaussian claim, else None.
    """

    verdict: str
    spec: AgentAuditSpec
    epsilon_lower_bound: float
    method: str
    claimed_epsilon: float
    delta: float
    agent_claim: AgentClaim
    trials: int
    canaries: int | None
    seconds: float
    batched: bool
    audit: AuditResult | None
    one_run: Any
    points: tuple[tuple[float, float, float, float], ...]
    notes: tuple[str, ...]
    mu_lower_bound: float | None = None
    claimed_mu: float | None = None
    gdp_epsilon: float | None = None
    verdict_by: tuple[str, ...] = ()
    one_run_fdp: Any = None
    measured_pairs: Any = ()

    def __post_init__(self) -> None:
        _validate.one_of("verdict", self.verdict, (VIOLATION, NO_VIOLATION_FOUND))
        if math.isnan(self.epsilon_lower_bound) or self.epsilon_lower_bound < 0:
            raise InvalidParameterError("epsilon_lower_bound", "must be >= 0", self.epsilon_lower_bound)
        if (self.verdict == VIOLATION) != bool(self.verdict_by):
            raise InvalidParameterError("verdict_by", "must name the tests behind a VIOLATION, and only then",
                                        self.verdict_by)
        for name in ("mu_lower_bound", "claimed_mu", "gdp_epsilon"):
            value = getattr(self, name)
            if value is not None and (math.isnan(value) or value < 0):
                raise InvalidParameterError(name, "must be >= 0 or None", value)

    @property
    def gaussian_claim(self) -> bool:
        return self.agent_claim.gaussian

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "agent": self.spec.agent,
            "env": self.spec.env,
            "episodes": self.spec.episodes,
            "notion": self.spec.notion,
            "route": self.spec.route,
            "claimed_epsilon": self.claimed_epsilon,
            "delta": self.delta,
            "gaussian_claim": self.gaussian_claim,
            "agent_claim": dataclasses.asdict(self.agent_claim),
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "epsilon_lower_bound_kind": "(epsilon, delta) lower bound, valid for any mechanism",
            "method": self.method,
            "mu_lower_bound": self.mu_lower_bound,
            "mu_lower_bound_kind": None if self.mu_lower_bound is None else "valid for a mu-GDP claim only",
            "claimed_mu": self.claimed_mu,
            "gdp_epsilon": self.gdp_epsilon,
            "verdict_by": list(self.verdict_by),
            "trials": self.trials,
            "canaries": self.canaries,
            "seconds": self.seconds,
            "batched": self.batched,
            "spec": self.spec.to_dict(),
            "audit": None if self.audit is None else self.audit.to_dict(),
            "one_run": None if self.one_run is None else self.one_run.to_dict(),
            "one_run_fdp": None if self.one_run_fdp is None else self.one_run_fdp.to_dict(),
            "canary_design": self.spec.canary_design,
            "measured_pairs": [p.to_dict() for p in self.measured_pairs],
            "points": [list(p) for p in self.points],
            "notes": list(self.notes),
        }

    def summary(self) -> str:
        s = self.spec
        lines = [
            f"agent: {s.agent} on {s.env} (K={s.episodes}); notion: {s.notion}; route: {s.route}",
            f"verdict: {self.verdict}",
            f"claim: ({self.claimed_epsilon:g}, {self.delta:g})" + (" Gaussian-DP" if self.gaussian_claim else ""),
            f"(epsilon, delta) lower bound: {self.epsilon_lower_bound:.4f} ({self.method}; valid for any mechanism)",
        ]
        if self.mu_lower_bound is not None:
            mu = "" if self.claimed_mu is None else f" against the claimed mu {self.claimed_mu:.4f}"
            lines.append(f"mu lower bound: {self.mu_lower_bound:.4f}{mu} (valid for a mu-GDP claim only; the mu-GDP "
                         f"curve it rules out has epsilon {self.gdp_epsilon:.4f} at delta {self.delta:g}, the epsilon "
                         "of a Gaussian mechanism, not a lower bound on this output's epsilon)")
        lines.append("verdict by: " + (", ".join(self.verdict_by) if self.verdict_by else "no test exceeded the claim"))
        if self.audit is not None:
            lines.append(f"trials: {self.trials} per side ({self.audit.selection_trials} selection, "
                         f"{self.audit.evaluation_trials} evaluation); pair: {self.audit.pair_label}"
                         + ("; batched twin" if self.batched else ""))
            lines.append(f"Clopper-Pearson: {self.audit.clopper_pearson.epsilon_lower:.4f} "
                         f"[{self.audit.clopper_pearson.test}]")
            lines.append(f"mu-GDP: mu >= {self.audit.gaussian.mu_lower or 0.0:.4f} -> epsilon "
                         f"{self.audit.gaussian.epsilon_lower:.4f}")
        if self.one_run is not None:
            lines.append(f"runs: {self.trials}, canaries per run: {self.canaries}; {self.one_run.v} of "
                         f"{self.one_run.r} guesses correct (m = {self.one_run.m})")
        if self.one_run_fdp is not None:
            lines.append(self.one_run_fdp.summary())
        if self.measured_pairs:
            lines.append(f"canaries ({self.spec.canary_design} design), as measured before the audit: "
                         + self.measured_pairs[0].describe())
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


def _scope_note(spec: AgentAuditSpec) -> str:
    seen = audit_notion(spec.notion).sees
    if spec.add_remove:
        moved = "add/remove-one: user j was absent (an empty slot, episode j still happened) or a high canary"
    elif spec.canary_design == "worst-case":
        largest = "the measured pair of largest mu" if spec.route == "one-run" else "the measured pairs of largest mu"
        moved = f"the canaries were the audit environment's path canaries, {largest}"
    else:
        moved = "canaries moved the targets between the lowest- and highest-value states"
    return (f"The auditor saw {seen} (window {spec.window}); {moved}. A bug whose effect lies outside this view or "
            "needs other user data is not tested.")


def refuse_gaussian_claim(option: str, gaussian_claim: bool | None, ledger: PrivacyLedger) -> None:
    """A μ-GDP (Gaussian-mechanism) claim asked for an agent whose ledger records other mechanisms is bad input:
    its μ-GDP curve does not describe those releases (an error, never a silent switch to the other claim)."""
    if gaussian_claim and not ledger.all_gaussian:
        kinds = sorted({b.mechanism.kind for b in ledger.blocks if not b.mechanism.is_gaussian})
        raise InvalidParameterError(option, f"must be no for an agent whose ledger records {', '.join(kinds)} "
                                    "releases: a Gaussian (mu-GDP) claim does not describe them", "yes")
