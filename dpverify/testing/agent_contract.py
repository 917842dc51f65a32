"""The contract every private agent must satisfy, checked on one small run: :func:`check_private_agent`.

A private agent (the protocol of :mod:`dpverify.agents.core.private`) is built by a factory
``factory(mdp, num_episodes, rng, /, *, billboard=None, **options)``, publishes every statistic computed
from users' data on a :class:`~dpverify.agents.core.billboard.Billboard` (which records it in a
:class:`~dpverify.ledger.PrivacyLedger`), declares ``privacy_notion`` ("jdp" or "ldp") and states its claim
through ``claimed_guarantee()`` — (ε, δ), pure ε, ρ-zCDP or μ-GDP (:class:`~dpverify.claims.PrivacyClaim`).
The check runs the agent for ``num_episodes`` episodes on
``env`` (users as response tapes drawn from ``env``, :mod:`dpverify.agents.core.tapes`, each followed under the
policy the agent deploys) and reports one named status per property: "pass", "fail", "not applicable" (with
the reason) or "not run" (it could not be checked: never a pass):

``notion``
    ``privacy_notion`` is "jdp" or "ldp"; for "ldp" every release reads the current user only
    (Liao, He & Gu 2021: each user privatises its own messages).
``claim_meets_target``
    the claimed (ε, δ) — for a claim in another measure, the ε it implies at ``config.delta`` — meets the
    configured target: ε ≤ ``config.epsilon``, δ = ``config.delta``.
``ledger_within_claim``
    at the episode cap, the ledger of what was published meets the claim in the claim's own measure, by the
    tightest route that applies, with the agent's accounting (relative slack 1e-9, rounding only; no route at
    all: not applicable). A ledger *below* the claim meets
    it — the claim is weaker than what the releases cost, which is true — and the reason says by how much
    the noise could shrink.
``relation_matches_claim``
    the ledger (and billboard) use the neighbouring relation of the configuration.
``billboard_structure``
    billboard isolation, the billboard lemma's premise (Hsu et al. 2014; Sahu 2025, Lemma 2.4): with the
    published values held fixed (:class:`~dpverify.agents.core.billboard.ReplayBillboard`), *every* earlier
    user replaced by the high canary, then by the low one (:func:`~dpverify.agents.core.tapes.canary_tape`),
    every later policy is unchanged — a table agent's whole table (one replay with every user replaced: a
    table is deployed before its user acts), a step-level agent's action at every state its user reached (one
    replay per episode k, users 1..k−1 replaced, user k not) — and so is the release pattern (the ledger). It
    runs on the environment and, for a linear MDP, on the isolation linear MDP of its dimensions
    (:func:`~dpverify.whitebox.neighbours.isolation_linear_mdp`), where a user's path moves the raw sums and
    the actions' features set part of the reward (the data that move a raw-reading planner's choices most).
    An agent that follows the billboard model — what it deploys to user k a function of the published values,
    its coins and user k's own data — passes whatever the users, so a changed choice made with its coins where
    they stood in the run (every generator spawned from the factory's is read between episodes) is a proof by
    example that it reads data outside the billboard. When they stood elsewhere (coins drawn in an order the
    users' data changes: a tie broken only when there is one), when the agent's choices do not follow its
    seeds (a replay of the unchanged users differs) or when its coins share a stream with the billboard's
    noise (another noise seed moves them), the check cannot tell and does not run. An agent that publishes
    nothing passes when its actions read no user's data: it is private at ε = 0.
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
    ``InvalidParameterError``. An agent that accepts the episode fails; the failure refutes the claim only when
    what it released in that episode takes its ledger above the claim (else the claim is undecided: an agent
    that publishes nothing and plays a data-free policy is not refuted for a missing cap).

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
import pickle
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from dpverify import _validate
from dpverify.accounting import pure_epsilon
from dpverify.agents.core.base import acts_step_by_step
from dpverify.agents.core.billboard import Billboard, ReplayBillboard
from dpverify.agents.core.tapes import ordinary_tapes, play_on_tape
from dpverify.agents.envs.linear_mdp import LinearMDP
from dpverify.checks import FAIL, HOLDS, NOT_APPLICABLE, NOT_RUN, PASS, UNDECIDED, CheckResult, Figure, named
from dpverify.claims import PrivacyClaim
from dpverify.errors import InvalidParameterError
from dpverify.jsonable import to_jsonable
from dpverify.ledger import PrivacyLedger, noise_room
from dpverify.neighbouring import Neighbouring
from dpverify.whitebox import CHECK_NAMES, Subject, WhiteBoxPlan, check_releases
from dpverify.whitebox.neighbours import isolation_linear_mdp, own_tapes
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
                f"seed {self.seed}: {outcome}")
        tags = {PASS: "pass", FAIL: "FAIL", NOT_APPLICABLE: "n/a", NOT_RUN: "NOT RUN"}
        lines = [head] + [f"  [{tags[p.status]}] {p.name}: {p.reason}" for p in self.properties]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable({
            "agent": self.agent, "notion": self.notion, "num_episodes": self.num_episodes,
            "seed": self.seed, "passed": self.passed,
            "not_applicable": [p.name for p in self.not_applicable], "not_run": [p.name for p in self.not_run],
            "properties": [dataclasses.asdict(p) for p in self.properties],
        })


#: What a property's check returns when the property holds: the reason, or the reason and its evidence.
_Held = str | tuple[str, dict[str, Figure]]


class _Violation(Exception):
    """Raised by a property's check when the property does not hold (the message says what was seen, the
    evidence holds the figures behind it)."""

    def __init__(self, message: str, evidence: dict[str, Figure] | None = None, claim: str | None = None) -> None:
        super().__init__(message)
        self.evidence = evidence or {}
        self.claim = claim  # what the failure shows of the claim (CheckResult.claim): None, it is false


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
        claim = None
        try:
            held = check()
        except _NotApplicable as exc:  # only the properties listed may be waived
            status, reason = (NOT_APPLICABLE, str(exc)) if name in MAY_NOT_APPLY else (
                FAIL, f"claimed not applicable: {exc}")
        except _Violation as exc:
            status, reason, evidence, claim = FAIL, str(exc) or "the property does not hold", exc.evidence, exc.claim
        except _CouldNotCheck as exc:
            status, reason = NOT_RUN, f"could not be checked: {exc}"
        except Exception as exc:  # a crash in the agent's code: the property could not be checked (never a pass,
            # never a refutation: a crash says nothing about privacy), with its message
            status, reason = NOT_RUN, f"could not be checked: {type(exc).__name__}: {exc}"
        else:
            status, (reason, evidence) = PASS, (held if isinstance(held, tuple) else (held, {}))
        self.results[name] = CheckResult(name, status, reason, evidence, claim=claim)


class _Coins(np.random.Generator):
    """The factory's generator, keeping every generator spawned from it (at any depth), so that where each coin
    stream stands can be read between episodes (:meth:`position`)."""

    def __init__(self, bit_generator: np.random.BitGenerator, streams: list[_Coins] | None = None) -> None:
        super().__init__(bit_generator)
        self.streams = [] if streams is None else streams
        self.streams.append(self)

    @classmethod
    def of(cls, seed: np.random.SeedSequence) -> _Coins:
        return cls(fresh_generator(seed).bit_generator)

    def spawn(self, n_children: int) -> list[_Coins]:  # type: ignore[override]
        kind, seeds = type(self.bit_generator), cast(np.random.SeedSequence, self.bit_generator.seed_seq)
        return [_Coins(kind(seed), self.streams) for seed in seeds.spawn(n_children)]

    def position(self) -> tuple[bytes, ...]:
        return tuple(pickle.dumps(g.bit_generator.state) for g in self.streams)


class _PatternFollows(Exception):
    """A replay's release pattern left the recorded one (the message: the episode and why)."""


def _play(agent: Any, env: Any, tapes: Sequence[Any], coins: _Coins) -> tuple[list[np.ndarray], list[Any]]:
    """Run ``agent`` one episode per tape: what it deployed, and where its coins stood before each episode."""
    policies: list[np.ndarray] = []
    positions: list[Any] = []
    for k, tape in enumerate(tapes, start=1):
        positions.append(coins.position())
        try:
            policies.append(play_on_tape(agent, env, tape, k)[0])
        except InvalidParameterError as exc:
            if exc.parameter in ("release", "recorded"):
                raise _PatternFollows(f"{k} ({exc})") from None
            raise
    return policies, positions


def _generators(seed: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence, np.random.SeedSequence, int]:
    """The agent's coins, the billboard's noise seed, another noise seed and the tapes' seed."""
    coins, noise, other, data = np.random.SeedSequence(seed).spawn(4)
    return coins, noise, other, int(data.generate_state(1)[0])


class _Isolation:
    """One recorded run of the contract's agent on one environment, and the billboard isolation replays of it
    (``check`` is the :class:`_ContractRun` that gives the factory, its options and the seeds)."""

    def __init__(self, check: _ContractRun, env: Any, tapes: Sequence[Any]) -> None:
        self.check, self.env, self.tapes = check, env, tapes
        self.env_name = str(getattr(env, "name", "") or "the environment")
        self.billboard = Billboard(check.relation, keep_history=True, keep_noise=True,
                                   noise_rng=fresh_generator(check.noise))
        coins = _Coins.of(check.coins)
        self.agent = check.factory(env, check.num_episodes, coins, billboard=self.billboard, **check.options)
        if self.agent.billboard is not self.billboard:
            raise InvalidParameterError("factory", "must publish on the billboard it is given (billboard=...)",
                                        getattr(check.factory, "__name__", check.factory))
        self.policies, self.positions = _play(self.agent, env, tapes, coins)

    def isolated(self) -> tuple[int, list[tuple[str, int, Any]]]:
        """(replays made, the changed policies: (canary, episode, where the coins stood before it))."""
        K, replays, changed = self.check.num_episodes, 0, []
        step_level = acts_step_by_step(self.agent)
        for kind, canary in own_tapes(self.env).items():
            # a table is deployed before its user acts: one replay, every user replaced, every table compared; a
            # step-level agent acts on its user's states: per episode k, users 1..k−1 replaced, user k kept
            plans = [(k, [canary] * (k - 1) + [self.tapes[k - 1]]) for k in range(2, K + 1)] if step_level else [
                (1, [canary] * K)]
            for first, tapes in plans:
                replays += 1
                policies, positions = self.replay(tapes, self.check.noise)
                changed += [(kind, k, positions[k - 1]) for k in range(first, len(tapes) + 1)
                            if not np.array_equal(policies[k - 1], self.policies[k - 1])]
        return replays, changed

    def replay(self, tapes: Sequence[Any], noise: np.random.SeedSequence) -> tuple[list[np.ndarray], list[Any]]:
        """Replay the billboard on ``tapes`` with the run's coins and the noise seed ``noise``: the policies deployed,
        and where the coins stood before each episode. Raises _Violation when the release pattern follows the
        users' data."""
        check = self.check
        board = ReplayBillboard(self.billboard.history(), check.relation, noise_rng=fresh_generator(noise))
        coins = _Coins.of(check.coins)
        replay = check.factory(self.env, check.num_episodes, coins, billboard=board, **check.options)
        try:
            policies, positions = _play(replay, self.env, tapes, coins)
        except _PatternFollows as exc:
            raise _Violation(f"replacing users' data changed the release pattern at episode {exc}: the pattern "
                             "depends on the raw data") from None
        finally:
            close = getattr(replay, "close", None)
            if callable(close):  # an adapter's loop thread, left waiting by a replay cut short
                close()
        if len(tapes) == check.num_episodes:
            _require(board.n_replayed == len(self.billboard.history()) and
                     _releases(replay.ledger) == _releases(self.agent.ledger),
                     "replacing users' data changed the release pattern (the ledger's releases)")
        return policies, positions

    def attributed(self, changed: Sequence[tuple[str, int, Any]]) -> tuple[str, int]:
        """The first changed policy that only the data can have changed (its coins stood where they stood in the
        run); _CouldNotCheck when the agent's choices do not follow its coins and the billboard alone (a replay of
        the unchanged users differs), its coins share the billboard's noise stream (another noise seed moves
        them), or every changed choice was made with coins drawn elsewhere in their streams."""
        if self.differs(self.replay(self.tapes, self.check.noise)[0]):
            raise _CouldNotCheck(
                "even with no user's data replaced, replaying the billboard changed the agent's policies: its choices "
                "do not follow its coins and the billboard alone (numpy's global generator, the clock), so what "
                "reads user data outside the billboard cannot be told apart")
        if self.differs(self.replay(self.tapes, self.check.other_noise)[0]):
            raise _CouldNotCheck(
                "with no user's data replaced, another billboard noise seed changed the agent's policies: its coins "
                "share a stream with the noise (numpy's global generator seeded from noise_source(), or coins drawn "
                "from noise_source()), so a changed policy may be a shifted coin, not a leak. Draw the coins from the "
                "factory's generator (for code you cannot edit: an adapter answering the calls that draw them)")
        for kind, k, position in changed:
            if position == self.positions[k - 1]:
                return kind, k
        raise _CouldNotCheck(
            f"replacing users' data changed later choices ({len(changed)} policies), each made with the agent's coins "
            "drawn elsewhere in their streams than in the run: its coins are drawn in an order the users' data "
            "changes (a tie broken only when there is one, say), so a leak cannot be told apart. Draw a fixed "
            "number of coins per decision (one uniform, whatever the ties)")

    def differs(self, policies: Sequence[np.ndarray]) -> bool:
        return any(not np.array_equal(a, b) for a, b in zip(policies, self.policies, strict=True))


class _ContractRun:
    """One run of the agent to its cap, and the property checks on it (each returns its reason, or its reason and
    evidence)."""

    def __init__(self, factory: Callable[..., Any], env: Any, num_episodes: int, options: dict[str, Any],
                 seed: int, oversized_env: Any) -> None:
        self.factory, self.env, self.num_episodes, self.options = factory, env, num_episodes, options
        self.seed, self.oversized_env = seed, oversized_env
        self.coins, self.noise, self.other_noise, data = _generators(seed)
        probe = factory(env, num_episodes, np.random.default_rng(seed), **options)
        self.relation = Neighbouring.parse(probe.billboard.relation)
        self.run = _Isolation(self, env, ordinary_tapes(env, num_episodes, data))
        self.billboard, self.agent, self.tapes = self.run.billboard, self.run.agent, self.run.tapes
        self.data = data
        self.notion = getattr(self.agent, "privacy_notion", None)
        self.claim = PrivacyClaim.of(self.agent.claimed_guarantee(), "claimed_guarantee()")
        self.config = self.agent.config
        # the claim as the (ε, δ) checks test it: at the target δ for a claim in another measure
        self.claim_epsilon, self.claim_delta, self.conversion = self.claim.audit_point(self.config.delta)
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
        """An (ε, δ) claim at the target δ with ε ≤ the target's; a claim in another measure implying ε ≤ the
        target's at the target δ (:meth:`PrivacyClaim.epsilon_at`)."""
        claim, config = self.claim, self.config
        evidence: dict[str, Figure] = {"claim": str(claim), "claimed_epsilon": self.claim_epsilon,
                                       "claimed_delta": self.claim_delta, "target_epsilon": config.epsilon,
                                       "target_delta": config.delta}
        _require(self.claim_delta == config.delta,
                 f"claimed δ {self.claim_delta!r} differs from the target δ {config.delta!r}", evidence)
        _require(self.claim_epsilon <= config.epsilon,
                 f"claimed ε {self.claim_epsilon!r} exceeds the target ε {config.epsilon!r}", evidence)
        implied = "" if claim.measure == "approximate" else f" (ε it implies at δ = {config.delta:g})"
        return (f"claimed {claim}: ({self.claim_epsilon:.12g}, {self.claim_delta:g}){implied} meets the target "
                f"({config.epsilon:g}, {config.delta:g})"), evidence

    def ledger_check(self) -> _Held:
        """The ledger meets the claim in the claim's own measure by the tightest valid route
        (:meth:`PrivacyClaim.compare`): a route that does not apply to the ledger (``exact`` with a Laplace
        release) is never a failure."""
        claim = self.claim
        ledger = self.agent.ledger
        name = claim.parameter
        symbol = {"epsilon": "ε", "rho": "ρ", "mu": "μ"}[name]
        if not ledger.n_releases:
            return f"nothing was published: the ledger accounts {symbol} = 0, within the claim", {
                f"ledger_{name}": 0.0, f"claimed_{name}": claim.value, "accounting": self.accounting}
        result = claim.compare(ledger, self.accounting)
        if result.status == "cannot-compare":
            raise _NotApplicable(result.detail)
        accounted = result.ledger_value
        route = result.route or claim.measure
        evidence: dict[str, Figure] = {f"ledger_{name}": accounted, f"claimed_{name}": claim.value,
                                       "route": route, "accounting": self.accounting}
        _require(result.status == "holds", (
            f"the ledger accounts to {symbol} = {accounted!r} > the claim {claim.value!r} "
            f"({route}, {self.accounting}): releases the claim does not cover"), evidence)
        reason = f"ledger {symbol} = {accounted:.12g} vs claim {claim.value:.12g} ({route}, {self.accounting})"
        if accounted is not None and accounted < claim.value * (1.0 - CLAIM_REL_TOL):
            room = None
            if claim.measure == "approximate" and claim.conversion is not None:
                room = evidence["noise_room"] = noise_room(ledger, claim.value, claim.delta, claim.conversion,
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
        """Billboard isolation (module docstring), on the environment and on the isolation linear MDP
        (:func:`~dpverify.whitebox.neighbours.isolation_linear_mdp`) of its dimensions."""
        runs = [self.run]
        iso = (isolation_linear_mdp(self.env.horizon, self.env.num_states, self.env.num_actions, self.env.dim)
               if isinstance(self.env, LinearMDP) else None)
        refused = ""
        if iso is not None:
            try:
                runs.append(_Isolation(self, iso, ordinary_tapes(iso, self.num_episodes, self.data)))
            except Exception as exc:  # an agent may refuse an environment it was not written for
                refused = f"; the isolation MDP was refused ({type(exc).__name__}: {exc})"
        replays, changed = 0, 0
        for run in runs:
            n, found = run.isolated()
            replays, changed = replays + n, changed + len(found)
            if found:
                kind, k = run.attributed(found)
                raise _Violation(
                    f"with the billboard held fixed, replacing every user before episode {k} by the {kind} canary "
                    f"({run.env_name}) changed the policy deployed at episode {k} ({len(found)} policies changed in "
                    f"{n} replays), its coins where they stood in the run: the agent reads user data outside the "
                    "billboard",
                    {"replays": replays, "changed_policies": len(found)})
        step_level = acts_step_by_step(self.agent)
        what = "every table" if not step_level else "the action at every state each user reached"
        said = (f"every earlier user replaced by the high, then the low canary ({replays} replays on "
                f"{' and '.join(r.env_name for r in runs)}, the billboard held fixed): {what} and the release pattern "
                f"unchanged{refused}")
        published = len(self.billboard.history())
        if not published:
            said = f"nothing was published, and the actions read no user's data (private at ε = 0): {said}"
        return said, {"replays": replays, "releases": published, "changed_policies": changed}

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
        if claim.measure == "pure":  # pure ε-DP: the claim and the ledger's pure ε, at δ = 0
            pure, how = pure_epsilon(self.agent.ledger, self.accounting)
            if pure is None:
                raise _NotApplicable(f"the ledger's pure ε cannot be computed ({how})")
            accounted, stated = (pure, 0.0), (claim.value, 0.0)
        else:
            stated = (self.claim_epsilon, self.claim_delta)
            guarantee = self.agent.ledger.guarantee(self.claim_delta, self.conversion, self.accounting)
            accounted = (guarantee.epsilon, guarantee.delta)
        pairs = (("claimed_epsilon", stated[0]), ("claimed_delta", stated[1]),
                 ("accounted_epsilon", accounted[0]), ("accounted_delta", accounted[1]))
        for key, expected in pairs:
            _require(math.isclose(settings[key], expected, rel_tol=1e-12, abs_tol=0.0),
                     f"settings {key} = {settings[key]!r} differs from {expected!r}")
        return "claimed and accounted (ε, δ) reported"

    def cap_check(self) -> str:
        """Episode K + 1 refused. An agent that accepts it fails; that shows the claim false only when what it
        released in that episode takes its ledger above the claim, else whether the claim holds for the episodes
        it goes on to accept cannot be decided (:data:`~dpverify.checks.UNDECIDED`)."""
        try:
            if callable(getattr(self.agent, "begin_episode", None)):
                self.agent.begin_episode()
            else:  # a step-level agent without begin_episode: its first action past the cap
                self.agent.act(0, int(self.tapes[0].initial_state))
        except InvalidParameterError as exc:
            return f"episode {self.num_episodes + 1} refused ({exc.parameter})"
        said = f"begin_episode after the cap K = {self.num_episodes} did not raise InvalidParameterError"
        ledger = self.agent.ledger
        result = self.claim.compare(ledger, self.accounting) if ledger.n_releases else None
        if result is not None and result.status not in ("holds", "cannot-compare"):
            raise _Violation(f"{said}, and with what it released then its ledger accounts to {self.claim.parameter} "
                             f"= {result.ledger_value!r} > the claim {self.claim.value!r}")
        raise _Violation(f"{said}; its ledger still meets the claim after episode {self.num_episodes + 1}, but "
                         "whether it does over the further episodes the agent would accept cannot be told",
                         claim=UNDECIDED)

    def whitebox(self, name: str | None) -> list[CheckResult]:
        """The white-box release checks (:mod:`dpverify.whitebox`), one property each."""
        subject = Subject(self.factory, self.env, self.num_episodes, self.options, self.relation.value,
                          name or str(getattr(self.agent, "name", "agent")))
        plan = WhiteBoxPlan(self.num_episodes, search_episodes=min(self.num_episodes, 12), seed=self.seed,
                            claim_epsilon=self.claim_epsilon, delta=self.claim_delta, conversion=self.conversion,
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
        seed: root of the agent's coins, the billboard's noise and the users' tapes.
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
    if not isinstance(whitebox, bool):
        raise InvalidParameterError("whitebox", "must be True or False", whitebox)
    run = _ContractRun(factory, env, num_episodes, dict(options or {}), seed, oversized_env)
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
    settings, ledger = checker.results["settings_report_the_claim"], checker.results["ledger_within_claim"]
    if settings.status == FAIL and ledger.status == PASS:  # a wrong report of a claim the ledger meets
        properties[list(checks).index("settings_report_the_claim")] = dataclasses.replace(
            settings, reason=settings.reason + "; the ledger itself meets the claim: the claim holds", claim=HOLDS)
    if whitebox:
        properties += run.whitebox(name)
    label = name or str(getattr(run.agent, "name", type(run.agent).__name__))
    return AgentContractResult(
        agent=label, notion=run.notion if isinstance(run.notion, str) else None, num_episodes=num_episodes,
        seed=seed, properties=tuple(properties),
    )


def assert_private_agent(factory: Callable[..., Any], env: Any, **kwargs: Any) -> AgentContractResult:
    """:func:`check_private_agent`, raising AssertionError with the report when any property fails or could not
    run (an explicit raise: the same under ``python -O``)."""
    result = check_private_agent(factory, env, **kwargs)
    if not result.passed:
        raise AssertionError(result.summary())
    return result
