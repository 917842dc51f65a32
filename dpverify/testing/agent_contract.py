"""The contract every private agent must satisfy, checked on one small run: :func:`check_private_agent`.

A private agent (the protocol of :mod:`dpverify.agents.private`) is built by a factory
``factory(mdp, num_episodes, rng, /, *, billboard=None, **options)``, publishes every statistic computed
from users' data on a :class:`~dpverify.agents.billboard.Billboard` (which records it in a
:class:`~dpverify.ledger.PrivacyLedger`), declares ``privacy_notion`` ("jdp" or "ldp") and claims an
(ε, δ) through ``claimed_guarantee()``. The check runs the agent for ``num_episodes`` episodes on
``env`` and reports one named status per property: "pass", "fail" or "not applicable" (with the reason):

``notion``
    ``privacy_notion`` is "jdp" or "ldp"; for "ldp" every release reads the current user only
    (Liao, He & Gu 2021: each user privatises its own messages).
``claim_meets_target``
    the claimed (ε, δ) meets the configured target: ε ≤ ``config.epsilon``, δ = ``config.delta``.
``ledger_equals_claim``
    at the episode cap, the ledger of what was published accounts (by the claim's conversion and
    accounting) to ε ≤ the claim and, unless ``claim_is_upper_bound``, equal to it within 1e-9
    relative: no release missing from the ledger and no release that the claim does not cover.
``relation_matches_claim``
    the ledger (and billboard) use the neighbouring relation of the configuration.
``fresh_noise``
    every release drew noise, and no two releases share a draw (up to the signs of its entries); every published
    release is in the ledger.
``billboard_structure``
    the billboard lemma's premise (Hsu et al. 2014; Sahu 2025, Lemma 2.4): replaying the billboard
    (:class:`~dpverify.agents.billboard.ReplayBillboard`) with one user's data replaced leaves every
    other user's deployed policy unchanged, and the release pattern (the ledger) unchanged.
``refuses_oversized_features``
    an environment whose declared feature-norm bound exceeds the one the sensitivities assume is
    refused at construction with ``InvalidParameterError("feature_norm_bound", ...)``. The only property
    that may be "not applicable": when the agent's config declares no feature-norm bound (no
    ``feature_norm_bound`` or ``feature_norm`` field, or None: its sensitivities assume none, e.g. it
    reads no features) and the caller passed no ``oversized_env``. With ``oversized_env`` it is always
    checked; an agent that declares a bound is always checked.
``settings_report_the_claim``
    ``settings()`` reports ``claimed_epsilon``, ``claimed_delta``, ``accounted_epsilon`` and
    ``accounted_delta`` equal to the claim and to the ledger.
``refuses_episodes_past_cap``
    ``begin_episode`` after ``num_episodes`` episodes raises ``InvalidParameterError``.

The result is frozen; :func:`assert_private_agent` raises AssertionError listing every failed property.
A property that is not applicable is neither passed nor failed: it is listed as such, and does not make
the result fail.
A passing check is evidence about this run, not a proof: the privacy proof is the calibration and the
billboard lemma; this check catches code that breaks their premises.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpverify import _validate
from dpverify.errors import InvalidParameterError
from dpverify.neighbouring import Neighbouring
from dpverify.testing.assertions import assert_fresh_noise

if TYPE_CHECKING:  # the agents are imported where a contract runs, never when this module loads
    from dpverify.agents.base import Trajectory

__all__ = [
    "CONTRACT_PROPERTIES", "MAY_NOT_APPLY", "NOT_APPLICABLE", "PROPERTY_STATUSES", "AgentContractResult",
    "PropertyResult", "assert_private_agent", "check_private_agent",
]

#: The properties :func:`check_private_agent` reports, in order.
CONTRACT_PROPERTIES: tuple[str, ...] = (
    "notion",
    "claim_meets_target",
    "ledger_equals_claim",
    "relation_matches_claim",
    "fresh_noise",
    "billboard_structure",
    "refuses_oversized_features",
    "settings_report_the_claim",
    "refuses_episodes_past_cap",
)

#: Relative tolerance of "equal" between the ledger's ε and the claim (the calibrator's round trip).
CLAIM_REL_TOL = 1e-9

PASSED = "pass"
FAILED = "fail"
NOT_APPLICABLE = "not applicable"
#: The statuses a property can have.
PROPERTY_STATUSES: tuple[str, ...] = (PASSED, FAILED, NOT_APPLICABLE)
#: The properties that may be not applicable (module docstring); every other one is pass or fail.
MAY_NOT_APPLY: frozenset[str] = frozenset({"refuses_oversized_features"})


@dataclass(frozen=True)
class PropertyResult:
    """One property of the contract: its name, whether it held, and what was observed.

    ``applicable=False`` (then ``passed`` is False and ``detail`` says why) means the property does not
    apply to this agent: neither passed nor failed (:attr:`status` "not applicable").
    """

    name: str
    passed: bool
    detail: str
    applicable: bool = True

    def __post_init__(self) -> None:
        if not self.applicable and self.passed:
            raise InvalidParameterError("passed", "must be False for a property that does not apply", self.passed)

    @property
    def status(self) -> str:
        """"pass", "fail" or "not applicable"."""
        if not self.applicable:
            return NOT_APPLICABLE
        return PASSED if self.passed else FAILED

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "passed": self.passed, "applicable": self.applicable,
                "detail": self.detail}


@dataclass(frozen=True)
class AgentContractResult:
    """The outcome of :func:`check_private_agent`: one :class:`PropertyResult` per contract property."""

    agent: str
    notion: str | None
    num_episodes: int
    changed_users: tuple[int, ...]
    seed: int
    properties: tuple[PropertyResult, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        """No property failed (a property that does not apply is not a failure)."""
        return not self.failures

    @property
    def failures(self) -> tuple[PropertyResult, ...]:
        return tuple(p for p in self.properties if p.status == FAILED)

    @property
    def not_applicable(self) -> tuple[PropertyResult, ...]:
        return tuple(p for p in self.properties if p.status == NOT_APPLICABLE)

    def __getitem__(self, name: str) -> PropertyResult:
        for p in self.properties:
            if p.name == name:
                return p
        raise KeyError(name)

    def summary(self) -> str:
        n_na = len(self.not_applicable)
        outcome = "PASS" if self.passed else f"FAIL ({len(self.failures)} of {len(self.properties)})"
        if n_na:
            outcome = f"PASS ({n_na} not applicable)" if self.passed else outcome[:-1] + f"; {n_na} not applicable)"
        head = (f"private-agent contract of {self.agent} ({self.notion or 'no notion'}), K = {self.num_episodes}, "
                f"changed users {list(self.changed_users)}, seed {self.seed}: {outcome}")
        tags = {PASSED: "pass", FAILED: "FAIL", NOT_APPLICABLE: "n/a"}
        lines = [head] + [f"  [{tags[p.status]}] {p.name}: {p.detail}" for p in self.properties]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent, "notion": self.notion, "num_episodes": self.num_episodes,
            "changed_users": list(self.changed_users), "seed": self.seed, "passed": self.passed,
            "not_applicable": [p.name for p in self.not_applicable],
            "properties": [p.to_dict() for p in self.properties],
        }


def _generators(seed: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """The agent's, the environment's and the replaced user's generators, all from ``seed``."""
    agent, env, other = np.random.SeedSequence(seed).spawn(3)
    return np.random.default_rng(agent), np.random.default_rng(env), np.random.default_rng(other)


class _NotApplicable(Exception):
    """Raised by a property's check when the property does not apply to the agent (the message says why)."""


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


def _releases(ledger: Any) -> Counter[tuple[Any, ...]]:
    """Every release of a ledger as (family, episode, stage, users, mechanism), whatever the recording order."""
    out: Counter[tuple[Any, ...]] = Counter()
    for b in ledger.blocks:
        for k in range(b.episodes[0], b.episodes[1] + 1):
            for h in range(b.stages[0], b.stages[1] + 1):
                out[(b.family, k, h, b.users.kind, b.mechanism)] += 1
    return out


class _Checker:
    """Collects one PropertyResult per property; an unexpected exception fails that property only."""

    def __init__(self) -> None:
        self.results: dict[str, PropertyResult] = {}

    def run(self, name: str, check: Callable[[], str]) -> None:
        try:
            detail = check()
        except _NotApplicable as exc:
            if name not in MAY_NOT_APPLY:  # only the properties listed may be waived
                self.results[name] = PropertyResult(name, False, f"claimed not applicable: {exc}")
            else:
                self.results[name] = PropertyResult(name, False, str(exc), applicable=False)
        except AssertionError as exc:
            self.results[name] = PropertyResult(name, False, str(exc) or "assertion failed")
        except Exception as exc:  # a crash in the agent's code fails this property, with its message
            self.results[name] = PropertyResult(name, False, f"{type(exc).__name__}: {exc}")
        else:
            self.results[name] = PropertyResult(name, True, detail)


def _replaced_trajectory(env: Any, policy: np.ndarray, original: Trajectory, rng: np.random.Generator) -> Trajectory:
    """Another user's data: follow a policy that differs at every (stage, state), with other randomness."""
    from dpverify.agents.base import rollout

    num_actions = int(getattr(env, "num_actions", 1))
    other_policy = (np.asarray(policy) + 1) % max(num_actions, 1)
    for _ in range(16):
        replaced = rollout(env, other_policy, rng)
        same = np.array_equal(replaced.states, original.states) and np.array_equal(replaced.actions, original.actions)
        if not same:
            return replaced
    raise AssertionError("could not draw a replacement trajectory that differs from the original user's")


class _ContractRun:
    """One run of the agent to its cap, and the property checks on it (each returns a detail string)."""

    def __init__(self, factory: Callable[..., Any], env: Any, num_episodes: int, options: dict[str, Any],
                 seed: int, changed_users: tuple[int, ...], oversized_env: Any, claim_is_upper_bound: bool) -> None:
        self.factory, self.env, self.num_episodes, self.options = factory, env, num_episodes, options
        self.seed, self.changed_users = seed, changed_users
        self.oversized_env, self.claim_is_upper_bound = oversized_env, claim_is_upper_bound
        from dpverify.agents.base import rollout
        from dpverify.agents.billboard import Billboard

        agent_rng, env_rng, self.other_rng = _generators(seed)
        probe = factory(env, num_episodes, np.random.default_rng(seed), **options)
        self.relation = Neighbouring.parse(probe.billboard.relation)
        self.billboard = Billboard(self.relation, keep_history=True, keep_noise=True)
        self.agent = factory(env, num_episodes, agent_rng, billboard=self.billboard, **options)
        if self.agent.billboard is not self.billboard:
            raise InvalidParameterError("factory", "must publish on the billboard it is given (billboard=...)",
                                        getattr(factory, "__name__", factory))
        self.policies: list[np.ndarray] = []
        self.trajectories: list[Trajectory] = []
        for _ in range(num_episodes):
            policy = np.array(self.agent.begin_episode(), copy=True)
            self.policies.append(policy)
            trajectory = rollout(env, policy, env_rng)
            self.trajectories.append(trajectory)
            self.agent.end_episode(trajectory)
        self.notion = getattr(self.agent, "privacy_notion", None)
        self.claim = self.agent.claimed_guarantee()
        self.config = self.agent.config
        self.accounting = _accounting(self.agent)

    def notion_check(self) -> str:
        notion = self.notion
        assert notion in ("jdp", "ldp"), f"privacy_notion must be 'jdp' or 'ldp' (got {notion!r})"
        if notion == "ldp":
            others = sorted({b.users.kind for b in self.agent.ledger.blocks} - {"current"})
            assert not others, f"an LDP agent's releases must read the current user only (found users={others})"
            return "ldp: every release reads the current user only"
        return "jdp"

    def claim_check(self) -> str:
        claim, config = self.claim, self.config
        assert claim.delta == config.delta, f"claimed δ {claim.delta!r} differs from the target δ {config.delta!r}"
        assert claim.epsilon <= config.epsilon, f"claimed ε {claim.epsilon!r} exceeds the target ε {config.epsilon!r}"
        return (f"claimed ({claim.epsilon:.12g}, {claim.delta:g}) meets the target "
                f"({config.epsilon:g}, {config.delta:g})")

    def ledger_check(self) -> str:
        claim = self.claim
        accounted = self.agent.ledger.guarantee(claim.delta, claim.conversion, self.accounting).epsilon
        assert accounted <= claim.epsilon, (
            f"the ledger accounts to ε = {accounted!r} > the claim {claim.epsilon!r} "
            f"({claim.conversion}, {self.accounting}): releases the claim does not cover"
        )
        if not self.claim_is_upper_bound:
            assert accounted >= claim.epsilon * (1.0 - CLAIM_REL_TOL), (
                f"the ledger accounts to ε = {accounted!r} < the claim {claim.epsilon!r} at the episode cap: releases "
                "missing from the ledger, or noise larger than calibrated"
            )
        return f"ledger ε = {accounted:.12g} vs claim {claim.epsilon:.12g} ({claim.conversion}, {self.accounting})"

    def relation_check(self) -> str:
        expected = Neighbouring.parse(getattr(self.config, "relation", self.relation))
        ledger = self.agent.ledger
        assert ledger.relation is expected, (
            f"the ledger's relation {ledger.relation.value!r} differs from the claim's {expected.value!r}")
        bad = [b.family for b in ledger.blocks if b.mechanism.relation is not expected]
        assert not bad, f"mechanisms of families {bad} are calibrated for another relation"
        return expected.value

    def noise_check(self) -> str:
        history = self.billboard.history()
        n_ledger = self.agent.ledger.n_releases
        assert len(history) == n_ledger, f"{len(history)} published releases but {n_ledger} in the ledger"
        assert history, "the agent published nothing in the whole run"
        noises = [r.noise for r in history if r.noise is not None]
        assert len(noises) == len(history), "the billboard kept no noise for some releases"
        assert_fresh_noise(noises)
        return f"{len(history)} releases, each with its own noise draw"

    def structure_check(self) -> str:
        for j in self.changed_users:
            self._replay_with_user_replaced(j)
        users = ", ".join(str(j) for j in self.changed_users)
        return (f"user(s) {users} replaced, one replay each: every other user's policy and the release pattern "
                "are unchanged")

    def _replay_with_user_replaced(self, j: int) -> None:
        from dpverify.agents.billboard import ReplayBillboard

        K = self.num_episodes
        modified = list(self.trajectories)
        modified[j - 1] = _replaced_trajectory(self.env, self.policies[j - 1], self.trajectories[j - 1], self.other_rng)
        replay = self.factory(self.env, K, _generators(self.seed)[0],
                              billboard=ReplayBillboard(self.billboard.history(), self.relation), **self.options)
        changed: list[int] = []
        for k in range(1, K + 1):
            try:
                policy = replay.begin_episode()
            except InvalidParameterError as exc:
                raise AssertionError(
                    f"user {j} replaced, episode {k}: the release pattern depends on the raw data ({exc})") from None
            if k != j and not np.array_equal(policy, self.policies[k - 1]):
                changed.append(k)
            replay.end_episode(modified[k - 1])
        assert not changed, (
            f"with the billboard held fixed, replacing user {j}'s data changed the policies of users {changed[:10]}: "
            "they read user data outside the billboard")
        assert _releases(replay.ledger) == _releases(self.agent.ledger), (
            f"replacing user {j}'s data changed the release pattern (the ledger's releases)")

    def oversized_check(self) -> str:
        assumed = _assumed_norm(self.config)
        big = self.oversized_env
        if big is None:
            if _declared_norm(self.config) is None:
                raise _NotApplicable("the agent's config declares no feature_norm_bound and no oversized_env was "
                                     "given")
            assert assumed is not None, (
                f"the config's feature-norm bound is not a number: {_declared_norm(self.config)!r}")
            assert dataclasses.is_dataclass(self.env) and hasattr(self.env, "feature_norm_bound"), (
                "cannot build an environment with a larger declared feature-norm bound; pass oversized_env=")
            big = dataclasses.replace(self.env, feature_norm_bound=2.0 * assumed)  # type: ignore[type-var]
        declared = getattr(big, "feature_norm_bound", "?")
        try:
            self.factory(big, self.num_episodes, np.random.default_rng(self.seed), **self.options)
        except InvalidParameterError as exc:
            assert exc.parameter == "feature_norm_bound", (
                f"refused, but naming {exc.parameter!r} rather than 'feature_norm_bound': {exc}")
            return f"refused feature_norm_bound = {declared} (assumed {assumed})"
        raise AssertionError(f"accepted an environment declaring feature_norm_bound = {declared} above the assumed "
                             f"{assumed if assumed is not None else 'bound (the config declares none)'}")

    def settings_check(self) -> str:
        settings, claim = self.agent.settings(), self.claim
        missing = [k for k in ("claimed_epsilon", "claimed_delta", "accounted_epsilon", "accounted_delta")
                   if k not in settings]
        assert not missing, f"settings() lacks {missing}"
        accounted = self.agent.ledger.guarantee(claim.delta, claim.conversion, self.accounting)
        pairs = (("claimed_epsilon", claim.epsilon), ("claimed_delta", claim.delta),
                 ("accounted_epsilon", accounted.epsilon), ("accounted_delta", accounted.delta))
        for key, expected in pairs:
            assert math.isclose(settings[key], expected, rel_tol=1e-12, abs_tol=0.0), (
                f"settings {key} = {settings[key]!r} differs from {expected!r}")
        return "claimed and accounted (ε, δ) reported"

    def cap_check(self) -> str:
        try:
            self.agent.begin_episode()
        except InvalidParameterError as exc:
            return f"episode {self.num_episodes + 1} refused ({exc.parameter})"
        raise AssertionError(f"begin_episode after the cap K = {self.num_episodes} did not raise InvalidParameterError")


def check_private_agent(
    factory: Callable[..., Any],
    env: Any,
    *,
    num_episodes: int = 20,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    changed_users: int | Sequence[int] | None = None,
    oversized_env: Any = None,
    claim_is_upper_bound: bool = False,
    name: str | None = None,
) -> AgentContractResult:
    """Run the private-agent contract (module docstring) on ``factory`` and ``env``.

    Args:
        factory: ``factory(mdp, num_episodes, rng, /, *, billboard=None, **options) -> agent``.
        env: the environment (an MDP with ``horizon``, ``num_states``, ``num_actions`` and a declared
            ``feature_norm_bound`` within the agent's assumption).
        num_episodes: K, the episode cap the agent is built for and run to.
        options: passed to the factory (e.g. ``{"epsilon": 1.0}``).
        seed: root of the agent's, the environment's and the replaced user's generators.
        changed_users: the users (1..K) whose data a replay replaces, one replay each; default user 1
            (whose data every later prefix release reads) and user ⌈K/3⌉.
        oversized_env: an environment declaring a feature-norm bound above the agent's assumption; by
            default ``env`` with its declared bound set to twice the assumed one (a dataclass replace); when
            the agent's config declares no bound and this is None, the property is not applicable.
        claim_is_upper_bound: the agent's release pattern depends on the data (e.g. adaptive batching)
            and this run need not use the whole budget: the ledger must then only stay ≤ the claim.
        name: the agent's name in the report (default: ``agent.name``).

    Raises InvalidParameterError for bad arguments, or when the factory ignores ``billboard=``; an
    exception inside a property's check fails that property (its detail names the exception).
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
    run = _ContractRun(factory, env, num_episodes, dict(options or {}), seed, users, oversized_env,
                       bool(claim_is_upper_bound))
    checks: dict[str, Callable[[], str]] = {
        "notion": run.notion_check,
        "claim_meets_target": run.claim_check,
        "ledger_equals_claim": run.ledger_check,
        "relation_matches_claim": run.relation_check,
        "fresh_noise": run.noise_check,
        "billboard_structure": run.structure_check,
        "refuses_oversized_features": run.oversized_check,
        "settings_report_the_claim": run.settings_check,
        "refuses_episodes_past_cap": run.cap_check,  # last: an agent that does not refuse moves past its cap
    }
    checker = _Checker()
    for prop in CONTRACT_PROPERTIES:
        checker.run(prop, checks[prop])
    label = name or str(getattr(run.agent, "name", type(run.agent).__name__))
    return AgentContractResult(
        agent=label, notion=run.notion if isinstance(run.notion, str) else None, num_episodes=num_episodes,
        changed_users=users, seed=seed, properties=tuple(checker.results[p] for p in CONTRACT_PROPERTIES),
    )


def assert_private_agent(factory: Callable[..., Any], env: Any, **kwargs: Any) -> AgentContractResult:
    """:func:`check_private_agent`, raising AssertionError with the report when any property fails."""
    result = check_private_agent(factory, env, **kwargs)
    if not result.passed:
        raise AssertionError(result.summary())
    return result
