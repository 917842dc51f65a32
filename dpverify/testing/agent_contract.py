"""The contract every private agent must satisfy, checked on one small run: :func:`check_private_agent`.

A private agent (the protocol of :mod:`dpverify.agents.core.private`) is built by a factory
``factory(mdp, num_episodes, rng, /, *, billboard=None, **options)``, publishes every statistic computed
from users' data on a :class:`~dpverify.agents.core.billboard.Billboard` (which records it in a
:class:`~dpverify.ledger.PrivacyLedger`), declares ``privacy_notion`` ("jdp" or "ldp") and claims an
(ε, δ) through ``claimed_guarantee()``. The check runs the agent for ``num_episodes`` episodes on
``env`` (users as response tapes drawn from ``env``, :mod:`dpverify.agents.core.tapes`, each followed under the
policy the agent deploys) and reports one named status per property: "pass", "fail", "not applicable" (with
the reason) or "not run" (it could not be checked: never a pass):

``notion``
    ``privacy_notion`` is "jdp" or "ldp"; for "ldp" every release reads the current user only
    (Liao, He & Gu 2021: each user privatises its own messages).
``claim_meets_target``
    the claimed (ε, δ) meets the configured target: ε ≤ ``config.epsilon``, δ = ``config.delta``.
``ledger_within_claim``
    at the episode cap, the ledger of what was published accounts (by the claim's conversion and
    accounting) to ε ≤ the claim (relative slack 1e-9, rounding only). A ledger *below* the claim meets
    it — the claim is weaker than what the releases cost, which is true — and the reason says by how much
    the noise could shrink.
``relation_matches_claim``
    the ledger (and billboard) use the neighbouring relation of the configuration.
``billboard_structure``
    the billboard lemma's premise (Hsu et al. 2014; Sahu 2025, Lemma 2.4): replaying the billboard
    (:class:`~dpverify.agents.core.billboard.ReplayBillboard`) with one user's data replaced — the replay follows
    its own policies on the users' tapes — leaves every other user's deployed policy unchanged, and the
    release pattern (the ledger) unchanged.
``refuses_oversized_features``
    an environment whose declared feature-norm bound exceeds the one the sensitivities assume is
    refused at construction with ``InvalidParameterError("feature_norm_bound", ...)``. "Not applicable"
    when the agent's config declares no feature-norm bound (no
    ``feature_norm_bound`` or ``feature_norm`` field, or None: its sensitivities assume none, e.g. it
    reads no features) and the caller passed no ``oversized_env``. With ``oversized_env`` it is always
    checked; an agent that declares a bound is always checked.
``settings_report_the_claim``
    ``settings()`` reports ``claimed_epsilon``, ``claimed_delta``, ``accounted_epsilon`` and
    ``accounted_delta`` equal to the claim and to the ledger. "Not applicable" for an agent without
    ``settings()`` (an adapter's, say): the claim and the ledger are then read directly.
``refuses_episodes_past_cap``
    ``begin_episode`` (a step-level agent without it: ``act``) after ``num_episodes`` episodes raises
    ``InvalidParameterError``.

and, with ``whitebox=True`` (the default), the white-box release checks of :mod:`dpverify.whitebox`, which
check the records above against the agent's behaviour: ``reproducible_from_the_seeds``,
``noise_as_recorded`` (fresh, independent noise of the recorded law and scale at every release),
``release_pattern_as_recorded``, ``sensitivity_within_the_record``, ``witnessed_pairs_within_the_claim`` and
``published_structure``.

Every check raises explicitly (never ``assert``), so the contract is the same under ``python -O``.
The result is frozen, one :class:`~dpverify.checks.CheckResult` per property (its status, the reason and
the figures behind it); :func:`assert_private_agent` raises AssertionError listing every failed or unrun
property. A property that is not applicable is neither passed nor failed: it is listed as such, and does
not make the result fail. A passing check is evidence about this run, not a proof: the privacy proof is
the calibration and the billboard lemma; this check catches code that breaks their premises.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.agents.core.billboard import Billboard, ReplayBillboard
from dpverify.agents.core.tapes import follows_until_it_leaves, ordinary_tapes, play_on_tape, random_tape, run_on_tapes
from dpverify.checks import FAIL, NOT_APPLICABLE, NOT_RUN, PASS, CheckResult, Figure, named
from dpverify.claims import PrivacyClaim
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError
from dpverify.jsonable import to_jsonable
from dpverify.ledger import PrivacyLedger, noise_room
from dpverify.neighbouring import Neighbouring
from dpverify.whitebox import CHECK_NAMES, Subject, WhiteBoxPlan, check_releases
from dpverify.whitebox.runs import fresh_generator

__all__ = [
    "CONTRACT_PROPERTIES", "MAY_NOT_APPLY", "WHITEBOX_PROPERTIES", "AgentContractResult", "assert_private_agent",
    "check_private_agent",
]

#: The white-box properties, in order: the checks of :mod:`dpverify.whitebox` (``CHECK_NAMES``) as names.
WHITEBOX_PROPERTIES: tuple[str, ...] = tuple(name.replace(" ", "_") for name in CHECK_NAMES)

#: The properties :func:`check_private_agent` reports, in order (the white-box ones last).
CONTRACT_PROPERTIES: tuple[str, ...] = (
    "notion",
    "claim_meets_target",
    "ledger_within_claim",
    "relation_matches_claim",
    "billboard_structure",
    "refuses_oversized_features",
    "settings_report_the_claim",
    "refuses_episodes_past_cap",
    *WHITEBOX_PROPERTIES,
)

#: Relative tolerance of "within" between the ledger's ε and the claim (the calibrator's round trip).
CLAIM_REL_TOL = 1e-9

#: The properties that may be not applicable (module docstring); every other one is pass, fail or not run.
MAY_NOT_APPLY: frozenset[str] = frozenset({"refuses_oversized_features", "settings_report_the_claim"})


@dataclass(frozen=True)
class AgentContractResult:
    """The outcome of :func:`check_private_agent`: one :class:`~dpverify.checks.CheckResult` per property."""

    agent: str
    notion: str | None
    num_episodes: int
    changed_users: tuple[int, ...]
    seed: int
    properties: tuple[CheckResult, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        """No property failed and none could not run (a property that does not apply is not a failure)."""
        return not self.failures and not self.not_run

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        return tuple(p for p in self.properties if p.status == FAIL)

    @property
    def not_run(self) -> tuple[CheckResult, ...]:
        return tuple(p for p in self.properties if p.status == NOT_RUN)

    @property
    def not_applicable(self) -> tuple[CheckResult, ...]:
        return tuple(p for p in self.properties if p.status == NOT_APPLICABLE)

    def __getitem__(self, name: str) -> CheckResult:
        return named(self.properties, name)

    def summary(self) -> str:
        waived = f"{len(self.not_applicable)} not applicable" if self.not_applicable else ""
        counts = ", ".join(f"{len(p)} {w}" for p, w in ((self.failures, "failed"), (self.not_run, "not run")) if p)
        outcome = (f"PASS ({waived})" if waived else "PASS") if self.passed else (
            f"FAIL ({counts} of {len(self.properties)}{'; ' + waived if waived else ''})")
        head = (f"private-agent contract of {self.agent} ({self.notion or 'no notion'}), K = {self.num_episodes}, "
                f"changed users {list(self.changed_users)}, seed {self.seed}: {outcome}")
        tags = {PASS: "pass", FAIL: "FAIL", NOT_APPLICABLE: "n/a", NOT_RUN: "NOT RUN"}
        lines = [head] + [f"  [{tags[p.status]}] {p.name}: {p.reason}" for p in self.properties]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable({
            "agent": self.agent, "notion": self.notion, "num_episodes": self.num_episodes,
            "changed_users": list(self.changed_users), "seed": self.seed, "passed": self.passed,
            "not_applicable": [p.name for p in self.not_applicable], "not_run": [p.name for p in self.not_run],
            "properties": [dataclasses.asdict(p) for p in self.properties],
        })


#: What a property's check returns when the property holds: the reason, or the reason and its evidence.
_Held = str | tuple[str, dict[str, Figure]]


class _Violation(Exception):
    """Raised by a property's check when the property does not hold (the message says what was seen, the
    evidence holds the figures behind it)."""

    def __init__(self, message: str, evidence: dict[str, Figure] | None = None) -> None:
        super().__init__(message)
        self.evidence = evidence or {}


class _NotApplicable(Exception):
    """Raised by a property's check when the property does not apply to the agent (the message says why)."""


class _CouldNotCheck(Exception):
    """Raised by a property's check when the agent's behaviour leaves the property undecidable (not run)."""


def _require(condition: bool, message: str, evidence: dict[str, Figure] | None = None) -> None:
    """The contract's check: an explicit raise, so that ``python -O`` changes nothing."""
    if not condition:
        raise _Violation(message, evidence)


#: The config fields that declare the feature-norm bound the sensitivities assume.
_NORM_FIELDS = ("feature_norm_bound", "feature_norm")


def _declared_norm(config: Any) -> Any:
    """The first feature-norm field of the config that is not None (None when it declares none)."""
    return next((v for v in (getattr(config, n, None) for n in _NORM_FIELDS) if v is not None), None)


def _assumed_norm(config: Any) -> float | None:
    value = _declared_norm(config)
    if isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool):
        return float(value)
    return None


def _accounting(agent: Any) -> str:
    value = getattr(agent, "accounting", None)
    if isinstance(value, str):
        return value
    return str(getattr(agent.config, "accounting", "per-user"))


def _releases(ledger: PrivacyLedger) -> Counter[tuple[Any, ...]]:
    """Every release of a ledger as (family, episode, stage, users, mechanism), whatever the recording order."""
    out: Counter[tuple[Any, ...]] = Counter()
    for b in ledger.blocks:
        for k in range(b.episodes[0], b.episodes[1] + 1):
            for h in range(b.stages[0], b.stages[1] + 1):
                out[(b.family, k, h, b.users.kind, b.mechanism)] += 1
    return out


class _Checker:
    """Collects one CheckResult per property; an unexpected exception leaves that property not run."""

    def __init__(self) -> None:
        self.results: dict[str, CheckResult] = {}

    def run(self, name: str, check: Callable[[], _Held]) -> None:
        evidence: dict[str, Figure] = {}
        try:
            held = check()
        except _NotApplicable as exc:  # only the properties listed may be waived
            status, reason = (NOT_APPLICABLE, str(exc)) if name in MAY_NOT_APPLY else (
                FAIL, f"claimed not applicable: {exc}")
        except _Violation as exc:
            status, reason, evidence = FAIL, str(exc) or "the property does not hold", exc.evidence
        except _CouldNotCheck as exc:
            status, reason = NOT_RUN, f"could not be checked: {exc}"
        except Exception as exc:  # a crash in the agent's code: the property could not be checked (never a pass,
            # never a refutation: a crash says nothing about privacy), with its message
            status, reason = NOT_RUN, f"could not be checked: {type(exc).__name__}: {exc}"
        else:
            status, (reason, evidence) = PASS, (held if isinstance(held, tuple) else (held, {}))
        self.results[name] = CheckResult(name, status, reason, evidence)


def _generators(seed: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence, np.random.Generator, int]:
    """The agent's coins, the billboard's noise seed, the replaced users' generator and the tapes' seed."""
    coins, noise, other, data = np.random.SeedSequence(seed).spawn(4)
    return coins, noise, np.random.default_rng(other), int(data.generate_state(1)[0])


class _ContractRun:
    """One run of the agent to its cap, and the property checks on it (each returns its reason, or its reason and
    evidence)."""

    def __init__(self, factory: Callable[..., Any], env: Any, num_episodes: int, options: dict[str, Any],
                 seed: int, changed_users: tuple[int, ...], oversized_env: Any) -> None:
        self.factory, self.env, self.num_episodes, self.options = factory, env, num_episodes, options
        self.seed, self.changed_users, self.oversized_env = seed, changed_users, oversized_env
        self.coins, self.noise, self.other_rng, data = _generators(seed)
        probe = factory(env, num_episodes, np.random.default_rng(seed), **options)
        self.relation = Neighbouring.parse(probe.billboard.relation)
        self.billboard = Billboard(self.relation, keep_history=True, keep_noise=True,
                                   noise_rng=fresh_generator(self.noise))
        self.agent = factory(env, num_episodes, fresh_generator(self.coins), billboard=self.billboard, **options)
        if self.agent.billboard is not self.billboard:
            raise InvalidParameterError("factory", "must publish on the billboard it is given (billboard=...)",
                                        getattr(factory, "__name__", factory))
        self.tapes = ordinary_tapes(env, num_episodes, data)
        self.policies = run_on_tapes(self.agent, env, self.tapes)
        self.notion = getattr(self.agent, "privacy_notion", None)
        self.claim = DPGuarantee.of_claim(self.agent.claimed_guarantee())
        self.config = self.agent.config
        self.accounting = _accounting(self.agent)

    def notion_check(self) -> str:
        notion = self.notion
        _require(notion in ("jdp", "ldp"), f"privacy_notion must be 'jdp' or 'ldp' (got {notion!r})")
        if notion == "ldp":
            others = sorted({b.users.kind for b in self.agent.ledger.blocks} - {"current"})
            _require(not others, f"an LDP agent's releases must read the current user only (found users={others})")
            return "ldp: every release reads the current user only"
        return "jdp"

    def claim_check(self) -> _Held:
        claim, config = self.claim, self.config
        evidence = {"claimed_epsilon": claim.epsilon, "claimed_delta": claim.delta, "target_epsilon": config.epsilon,
                    "target_delta": config.delta}
        _require(claim.delta == config.delta, f"claimed δ {claim.delta!r} differs from the target δ {config.delta!r}",
                 evidence)
        _require(claim.epsilon <= config.epsilon,
                 f"claimed ε {claim.epsilon!r} exceeds the target ε {config.epsilon!r}", evidence)
        return (f"claimed ({claim.epsilon:.12g}, {claim.delta:g}) meets the target "
                f"({config.epsilon:g}, {config.delta:g})"), evidence

    def ledger_check(self) -> _Held:
        """The ledger meets the claim's (ε, δ) by the tightest valid route (:meth:`PrivacyClaim.compare`): a
        conversion that does not apply to the ledger (``exact`` with a Laplace release) is never a failure."""
        claim = self.claim
        ledger = self.agent.ledger
        result = PrivacyClaim.approximate(claim.epsilon, claim.delta).compare(ledger, self.accounting)
        if result.status == "cannot-compare":
            raise _NotApplicable(result.detail)
        accounted = result.ledger_value
        evidence: dict[str, Figure] = {"ledger_epsilon": accounted, "claimed_epsilon": claim.epsilon,
                                       "route": result.route, "accounting": self.accounting}
        _require(result.status == "holds", (
            f"the ledger accounts to ε = {accounted!r} > the claim {claim.epsilon!r} "
            f"({result.route}, {self.accounting}): releases the claim does not cover"), evidence)
        reason = f"ledger ε = {accounted:.12g} vs claim {claim.epsilon:.12g} ({result.route}, {self.accounting})"
        if accounted is not None and accounted < claim.epsilon * (1.0 - CLAIM_REL_TOL):
            room = evidence["noise_room"] = noise_room(ledger, claim.epsilon, claim.delta, claim.conversion,
                                                       self.accounting)
            reason += "; the claim is met with room: the releases cost less than claimed"
            if room is not None and room > 1.0:
                reason += f" (the noise could be {room:.3g}× smaller and still meet it)"
        return reason, evidence

    def relation_check(self) -> str:
        expected = Neighbouring.parse(getattr(self.config, "relation", self.relation))
        ledger = self.agent.ledger
        _require(ledger.relation is expected,
                 f"the ledger's relation {ledger.relation.value!r} differs from the claim's {expected.value!r}")
        bad = [b.family for b in ledger.blocks if b.mechanism.relation is not expected]
        _require(not bad, f"mechanisms of families {bad} are calibrated for another relation")
        return expected.value

    def structure_check(self) -> _Held:
        _require(bool(self.billboard.history()), "the agent published nothing in the whole run")
        for j in self.changed_users:
            self._replay_with_user_replaced(j)
        users = ", ".join(str(j) for j in self.changed_users)
        return (f"user(s) {users} replaced, one replay each: every other user's policy and the release pattern "
                "are unchanged"), {"replays": len(self.changed_users), "releases": len(self.billboard.history())}

    def _replacement(self, j: int) -> Any:
        """Another user at position j: a tape on which the agent, as deployed to user j, takes another path (seen
        along the original user's path, where a step-level agent's partial policy is known)."""
        for _ in range(16):
            tape = random_tape(self.env, self.other_rng)
            if follows_until_it_leaves(self.policies[j - 1], self.tapes[j - 1], tape):
                return tape
        raise _Violation(f"could not draw a user {j} whose trajectory differs from the original user's")

    def _replay(self, tapes: Sequence[Any], j: int) -> tuple[list[int], Any]:
        """Replay the billboard on ``tapes`` (user j's possibly replaced): the users other than j whose
        policies changed, and the replaying agent."""
        board = ReplayBillboard(self.billboard.history(), self.relation, noise_rng=fresh_generator(self.noise))
        replay = self.factory(self.env, self.num_episodes, fresh_generator(self.coins), billboard=board, **self.options)
        changed: list[int] = []
        for k, tape in enumerate(tapes, start=1):
            try:
                policy = play_on_tape(replay, self.env, tape, k)[0]
                if k != j and not np.array_equal(policy, self.policies[k - 1]):
                    changed.append(k)
            except InvalidParameterError as exc:
                if exc.parameter in ("release", "recorded"):
                    raise _Violation(f"user {j} replaced, episode {k}: the release pattern depends on the raw data "
                                     f"({exc})") from None
                raise
        return changed, replay

    def _replay_with_user_replaced(self, j: int) -> None:
        tapes = list(self.tapes)
        tapes[j - 1] = self._replacement(j)
        changed, replay = self._replay(tapes, j)
        if changed:  # the control: the same replay with no user replaced must reproduce the run
            unchanged, _ = self._replay(self.tapes, j)
            if unchanged:
                raise _CouldNotCheck(
                    f"even with no user's data replaced, replaying the billboard changed the policies of users "
                    f"{unchanged[:10]}: the agent's choices do not follow its coins and the billboard alone (a "
                    "generator shared by its coins and the billboard's noise, numpy's global generator, or the "
                    "clock), so what reads user data outside the billboard cannot be told apart")
        _require(not changed, (
            f"with the billboard held fixed, replacing user {j}'s data changed the policies of users {changed[:10]}: "
            "they read user data outside the billboard"), {"replaced_user": j, "changed_policies": len(changed)})
        _require(_releases(replay.ledger) == _releases(self.agent.ledger),
                 f"replacing user {j}'s data changed the release pattern (the ledger's releases)")

    def oversized_check(self) -> str:
        assumed = _assumed_norm(self.config)
        big = self.oversized_env
        if big is None:
            if _declared_norm(self.config) is None:
                raise _NotApplicable("the agent's config declares no feature_norm_bound and no oversized_env was "
                                     "given")
            _require(assumed is not None,
                     f"the config's feature-norm bound is not a number: {_declared_norm(self.config)!r}")
            _require(dataclasses.is_dataclass(self.env) and hasattr(self.env, "feature_norm_bound"),
                     "cannot build an environment with a larger declared feature-norm bound; pass oversized_env=")
            big = dataclasses.replace(self.env, feature_norm_bound=2.0 * float(assumed))  # type: ignore[arg-type]
        declared = getattr(big, "feature_norm_bound", "?")
        try:
            self.factory(big, self.num_episodes, np.random.default_rng(self.seed), **self.options)
        except InvalidParameterError as exc:
            _require(exc.parameter == "feature_norm_bound",
                     f"refused, but naming {exc.parameter!r} rather than 'feature_norm_bound': {exc}")
            return f"refused feature_norm_bound = {declared} (assumed {assumed})"
        raise _Violation(f"accepted an environment declaring feature_norm_bound = {declared} above the assumed "
                         f"{assumed if assumed is not None else 'bound (the config declares none)'}")

    def settings_check(self) -> str:
        if not callable(getattr(self.agent, "settings", None)):  # optional: the ledger is read directly
            raise _NotApplicable("the agent reports no settings(); its claim and ledger are read directly")
        settings, claim = self.agent.settings(), self.claim
        missing = [k for k in ("claimed_epsilon", "claimed_delta", "accounted_epsilon", "accounted_delta")
                   if k not in settings]
        _require(not missing, f"settings() lacks {missing}")
        accounted = self.agent.ledger.guarantee(claim.delta, claim.conversion, self.accounting)
        pairs = (("claimed_epsilon", claim.epsilon), ("claimed_delta", claim.delta),
                 ("accounted_epsilon", accounted.epsilon), ("accounted_delta", accounted.delta))
        for key, expected in pairs:
            _require(math.isclose(settings[key], expected, rel_tol=1e-12, abs_tol=0.0),
                     f"settings {key} = {settings[key]!r} differs from {expected!r}")
        return "claimed and accounted (ε, δ) reported"

    def cap_check(self) -> str:
        try:
            if callable(getattr(self.agent, "begin_episode", None)):
                self.agent.begin_episode()
            else:  # a step-level agent without begin_episode: its first action past the cap
                self.agent.act(0, int(self.tapes[0].initial_state))
        except InvalidParameterError as exc:
            return f"episode {self.num_episodes + 1} refused ({exc.parameter})"
        raise _Violation(f"begin_episode after the cap K = {self.num_episodes} did not raise InvalidParameterError")

    def whitebox(self, name: str | None) -> list[CheckResult]:
        """The white-box release checks (:mod:`dpverify.whitebox`), one property each."""
        subject = Subject(self.factory, self.env, self.num_episodes, self.options, self.relation.value,
                          name or str(getattr(self.agent, "name", "agent")))
        plan = WhiteBoxPlan(self.num_episodes, search_episodes=min(self.num_episodes, 12), seed=self.seed,
                            claim_epsilon=self.claim.epsilon, delta=self.claim.delta, conversion=self.claim.conversion,
                            accounting=self.accounting)
        result = check_releases(subject, plan)
        return [dataclasses.replace(c, name=p) for p, c in zip(WHITEBOX_PROPERTIES, result.checks, strict=True)]


def check_private_agent(
    factory: Callable[..., Any],
    env: Any,
    *,
    num_episodes: int = 20,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    changed_users: int | Sequence[int] | None = None,
    oversized_env: Any = None,
    whitebox: bool = True,
    name: str | None = None,
) -> AgentContractResult:
    """Run the private-agent contract (module docstring) on ``factory`` and ``env``.

    Args:
        factory: ``factory(mdp, num_episodes, rng, /, *, billboard=None, **options) -> agent``.
        env: the environment (a finite MDP of :mod:`dpverify.agents.envs` with a declared
            ``feature_norm_bound`` within the agent's assumption).
        num_episodes: K, the episode cap the agent is built for and run to.
        options: passed to the factory (e.g. ``{"epsilon": 1.0}``).
        seed: root of the agent's coins, the billboard's noise, the users' tapes and the replaced users.
        changed_users: the users (1..K) whose data a replay replaces, one replay each; default user 1
            (whose data every later prefix release reads) and user ⌈K/3⌉.
        oversized_env: an environment declaring a feature-norm bound above the agent's assumption; by
            default ``env`` with its declared bound set to twice the assumed one (a dataclass replace); when
            the agent's config declares no bound and this is None, the property is not applicable.
        whitebox: also run the white-box release checks (:mod:`dpverify.whitebox`) as properties.
        name: the agent's name in the report (default: ``agent.name``).

    Raises InvalidParameterError for bad arguments, or when the factory ignores ``billboard=``; an
    exception inside a property's check leaves that property not run (its reason names the exception).
    """
    num_episodes = _validate.integer("num_episodes", num_episodes, minimum=1)
    seed = _validate.integer("seed", seed, minimum=0)
    if changed_users is None:
        changed_users = (1, max(1, math.ceil(num_episodes / 3)))
    elif isinstance(changed_users, (int, np.integer)):
        changed_users = (int(changed_users),)
    users = tuple(dict.fromkeys(_validate.integer("changed_users", u, minimum=1) for u in changed_users))
    if not users or max(users) > num_episodes:
        raise InvalidParameterError("changed_users", f"must be one or more users in 1..num_episodes = {num_episodes}",
                                    changed_users)
    if not isinstance(whitebox, bool):
        raise InvalidParameterError("whitebox", "must be True or False", whitebox)
    run = _ContractRun(factory, env, num_episodes, dict(options or {}), seed, users, oversized_env)
    checks: dict[str, Callable[[], _Held]] = {
        "notion": run.notion_check,
        "claim_meets_target": run.claim_check,
        "ledger_within_claim": run.ledger_check,
        "relation_matches_claim": run.relation_check,
        "billboard_structure": run.structure_check,
        "refuses_oversized_features": run.oversized_check,
        "settings_report_the_claim": run.settings_check,
        "refuses_episodes_past_cap": run.cap_check,  # last: an agent that does not refuse moves past its cap
    }
    checker = _Checker()
    for prop, check in checks.items():
        checker.run(prop, check)
    properties = [checker.results[p] for p in checks]
    if whitebox:
        properties += run.whitebox(name)
    label = name or str(getattr(run.agent, "name", type(run.agent).__name__))
    return AgentContractResult(
        agent=label, notion=run.notion if isinstance(run.notion, str) else None, num_episodes=num_episodes,
        changed_users=users, seed=seed, properties=tuple(properties),
    )


def assert_private_agent(factory: Callable[..., Any], env: Any, **kwargs: Any) -> AgentContractResult:
    """:func:`check_private_agent`, raising AssertionError with the report when any property fails or could not
    run (an explicit raise: the same under ``python -O``)."""
    result = check_private_agent(factory, env, **kwargs)
    if not result.passed:
        raise AssertionError(result.summary())
    return result
