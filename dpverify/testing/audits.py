"""One-line audit assertions for tests: a mechanism passes its audit, or a known-broken one is refuted.

Both assertions run :func:`dpverify.audit.run_audit` (the audit of docs/auditing.md: a selection split
chooses the distinguishing tests, a fresh evaluation split bounds ε from below with Clopper–Pearson
intervals and, for a Gaussian claim, bounds μ of μ-GDP; Jagielski, Ullman & Oprea 2020; Dong, Roth &
Su 2019). They add defaults for a test suite:

- ``trials = 200_000`` per side, run in the calling process (:class:`~dpverify.audit.SerialExecutor`,
  so the mechanism need not be picklable): a few hundredths of a second for a vectorised scalar
  mechanism and about a second for a vector or matrix of a few dimensions;
- ``confidence = 0.99``: a correct mechanism fails :func:`assert_audit_passes` with probability at
  most 1% over seeds (every bound of the audit holds together with probability ≥ 0.99);
- ``seed = 0``: the result is a deterministic function of the seed, so a test never flickers. Pass
  the ``dp_rng`` fixture (or any ``numpy.random.Generator``) to derive the seed from it.

Whole agents too: pass an agent factory (or a registered agent name) with ``notion=`` ("billboard", "jdp"
or "ldp") and the assertion runs :func:`dpverify.agent_audit.audit_agent` (two neighbouring
datasets of K users' response tapes, replaced at one position; or the one-run route with
``route="one-run"``). Defaults for agents: K = 3 users on a small random linear (or, for an agent that
needs one, linear mixture) MDP, the whole transcript after the replaced user in view, and
``DEFAULT_AGENT_TRIALS = 100`` runs per side — one to a few seconds for an agent run one episode at a time.

An audit can refute a privacy claim, never certify one: :func:`assert_audit_passes` means only that
these tests at this many trials found no violation. :func:`assert_audit_refutes` is the negative
control that shows a test suite has power: a deliberately broken variant must be caught.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.agent_audit import AgentAuditSpec, audit_agent
from dpverify.agents.registry import agent_factory
from dpverify.audit import (
    VIOLATION,
    AuditSpec,
    ReleaseOf,
    SerialExecutor,
    claimed_epsilon,
    run_audit,
    worst_case_pair,
)
from dpverify.audit.executors import Executor
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism
from dpverify.usercode import GuardedFactory

__all__ = [
    "DEFAULT_AGENT_TRIALS", "DEFAULT_CONFIDENCE", "DEFAULT_TRIALS", "assert_audit_passes", "assert_audit_refutes",
    "audit_for_test",
]

#: Trials per side of an audit assertion on a mechanism.
DEFAULT_TRIALS = 200_000
#: Confidence of an audit assertion: its false-alarm probability on a correct mechanism is ≤ 1 − this.
DEFAULT_CONFIDENCE = 0.99
#: Runs per side of an audit assertion on a whole agent (each trial is a run of K episodes).
DEFAULT_AGENT_TRIALS = 100
#: The small environments of agent audit assertions (registered names and options): H = 2, S = 3, A = 2, d = 3.
AGENT_ENVIRONMENTS: dict[str, tuple[str, tuple[tuple[str, Any], ...]]] = {
    "linear": ("random-linear", (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))),
    "mixture": ("random-mixture", (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))),
    "bandit": ("linear-bandit", (("dim", 3), ("num_arms", 2), ("num_contexts", 2), ("seed", 3))),
}

_OWN = (GaussianMechanism, GOEMechanism, LaplaceMechanism)


def _seed_of(seed: int | np.random.Generator) -> int:
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidParameterError("seed", "must be an integer >= 0 or a numpy.random.Generator", seed)
    return int(seed)


def _agent_name(agent: Any) -> str:
    """A registered name or ``module:attribute`` string for the agent audit (which imports it by name)."""

    if isinstance(agent, str):
        agent_factory(agent)
        return agent
    module_name = getattr(agent, "__module__", None) or ""
    module = sys.modules.get(module_name)
    candidates = [getattr(agent, "__qualname__", "")]
    if module is not None:  # e.g. a factory built by a function and bound to a module-level name
        candidates += [attr for attr, value in vars(module).items() if value is agent]
    for attribute in candidates:
        try:
            resolved = agent_factory(f"{module_name}:{attribute}") if attribute else None
        except InvalidParameterError:
            continue
        # a path resolves to the user's factory behind its guard (dpverify.usercode.GuardedFactory)
        factory = resolved.factory() if isinstance(resolved, GuardedFactory) else resolved
        if factory is agent:
            return f"{module_name}:{attribute}"
    raise InvalidParameterError(
        "mechanism", "an agent factory must be importable by name (bound to a module-level name)",
        f"{module_name}:{candidates[0]}")


def _agent_audit(
    agent: Any, notion: str, epsilon: float | None, delta: float, trials: int | None, gaussian_claim: bool | None,
    seed: int, confidence: float, executor: Executor | None, agent_options: AgentOptions,
) -> Any:

    if epsilon is None:
        raise InvalidParameterError("epsilon", "must be given for an agent audit (the claim audited)", None)
    name = _agent_name(agent)
    env, episodes = agent_options.env, agent_options.episodes
    env_options = agent_options.env_options
    if env is None:
        kind = "linear"
        registry = importlib.import_module("dpverify.agents.registry")
        if name in registry.AGENTS:
            kind = registry.AGENTS[name].env_kind
        env = AGENT_ENVIRONMENTS[kind][0]
    if env_options is None:  # the small instance of a random environment; another's own defaults
        env_options = dict(AGENT_ENVIRONMENTS.values()).get(env, ())
    spec = AgentAuditSpec(
        agent=name, env=env, episodes=episodes, notion=notion, epsilon=epsilon, delta=delta,
        route=agent_options.route, trials=DEFAULT_AGENT_TRIALS if trials is None else trials,
        confidence=confidence, seed=seed, positions=agent_options.positions,
        window=agent_options.window if agent_options.window is not None else episodes,
        env_options=env_options or (), agent_options=agent_options.options or (), gaussian_claim=gaussian_claim,
    )
    return audit_agent(spec, executor=executor or SerialExecutor(), progress=False)


@dataclass(frozen=True)
class AgentOptions:
    """Where and how an agent is audited (the keyword arguments of the assertions that apply to agents)."""

    env: str | None
    env_options: Any
    episodes: int
    route: str
    positions: tuple[Any, ...]
    window: int | None
    options: Any


_AGENT_DEFAULTS = AgentOptions(None, None, 3, "two-world", ("first",), None, None)


def _reject_agent_options(where: AgentOptions) -> None:
    """An agent-only option given for a mechanism audit is an error, never silently ignored."""
    for field in dataclasses.fields(AgentOptions):
        value = getattr(where, field.name)
        if value != getattr(_AGENT_DEFAULTS, field.name):
            name = "agent_options" if field.name == "options" else field.name
            raise InvalidParameterError(name, "applies to agent audits only (give notion=)", value)


def audit_for_test(
    mechanism: Any,
    neighbours: Any = None,
    epsilon: float | None = None,
    delta: float = 1e-5,
    *,
    trials: int | None = None,
    gaussian_claim: bool | None = None,
    seed: int | np.random.Generator = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    executor: Executor | None = None,
    notion: str | None = None,
    env: str | None = None,
    env_options: Any = None,
    episodes: int = 3,
    route: str = "two-world",
    positions: tuple[Any, ...] = ("first",),
    window: int | None = None,
    agent_options: Any = None,
) -> Any:
    """The audit behind both assertions (arguments as in :func:`assert_audit_passes`)."""
    where = AgentOptions(env, env_options, episodes, route, positions, window, agent_options)
    if notion is None:
        _reject_agent_options(where)
    else:
        if neighbours is not None:
            raise InvalidParameterError(
                "neighbours", "must be None for an agent audit (the audit builds neighbouring user tapes)",
                type(neighbours).__name__)
        return _agent_audit(mechanism, notion, epsilon, delta, trials, gaussian_claim, _seed_of(seed), confidence,
                            executor, where)
    if isinstance(mechanism, _OWN):
        if neighbours is None:
            neighbours = worst_case_pair(mechanism)
        if epsilon is None:
            epsilon = claimed_epsilon(mechanism, delta)
        if gaussian_claim is None:
            gaussian_claim = mechanism.is_gaussian
        elif gaussian_claim and not mechanism.is_gaussian:
            raise InvalidParameterError("gaussian_claim", f"must be False for a {mechanism.kind} mechanism: a "
                                        "Gaussian (mu-GDP) claim does not describe it", gaussian_claim)
        mechanism = ReleaseOf(mechanism)
    else:
        if not callable(mechanism):
            raise InvalidParameterError(
                "mechanism", "must be a dpverify mechanism or a callable mechanism(dataset, n, rng)",
                type(mechanism).__name__,
            )
        if neighbours is None:
            raise InvalidParameterError("neighbours", "must be given for a mechanism that is not a dpverify one", None)
        if epsilon is None:
            raise InvalidParameterError("epsilon", "must be given for a mechanism that is not a dpverify one", None)
    spec = AuditSpec(
        epsilon=epsilon,
        delta=delta,
        trials=DEFAULT_TRIALS if trials is None else trials,
        confidence=confidence,
        seed=_seed_of(seed),
        gaussian_claim=bool(gaussian_claim),
    )
    return run_audit(mechanism, neighbours, spec, executor=executor or SerialExecutor(), progress=False)


def assert_audit_passes(
    mechanism: Any,
    neighbours: Any = None,
    epsilon: float | None = None,
    delta: float = 1e-5,
    *,
    trials: int | None = None,
    gaussian_claim: bool | None = None,
    seed: int | np.random.Generator = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    executor: Executor | None = None,
    notion: str | None = None,
    **agent_kwargs: Any,
) -> Any:
    """Audit ``mechanism`` against (ε, δ); raise AssertionError with the audit summary on a VIOLATION.

    Args:
        mechanism: a batched callable ``mechanism(dataset, n, rng)`` returning ``n`` independent
            releases (leading dimension n) with all randomness from ``rng`` (docs/auditing.md), or a
            dpverify ``GaussianMechanism``/``GOEMechanism``/``LaplaceMechanism``.
        neighbours: a pair ``(D, D')``, a :class:`~dpverify.audit.NeighbourPair`, or a list of candidate
            pairs. Default for a dpverify mechanism: its worst-case pair (0 and the sensitivity).
        epsilon, delta: the claim. Default ε for a dpverify mechanism: its own accounting at δ.
        trials: per side (default :data:`DEFAULT_TRIALS`, or :data:`DEFAULT_AGENT_TRIALS` for an agent).
        gaussian_claim: the claim is that of a Gaussian mechanism (μ-GDP with the μ exactly meeting
            (ε, δ)), which lets the much more powerful μ-GDP test decide; default True for dpverify's
            Gaussian and GOE mechanisms, False for other mechanisms, and what the agent says for agents.
        seed: an integer, or a Generator (e.g. the ``dp_rng`` fixture) to draw one from.
        confidence: all bounds hold together with this probability; 1 − confidence bounds the
            false-alarm rate. executor: where trials run (default: this process).
        notion: audit a whole agent: ``mechanism`` is then an agent factory (module-level, so that it can
            be imported by name) or a registered agent name, and ``notion`` is what the auditor sees:
            "billboard" (the published transcript), "jdp" (the other users' actions) or "ldp" (one
            user's messages). ``neighbours`` must be None: the audit replaces one user's tape.
        agent_kwargs: for agents only — ``env`` (a registered environment name; default a small random
            linear MDP, or a mixture MDP for a registered agent that needs one: pass
            ``env="random-mixture"`` for an unregistered one), ``env_options`` (default: the small
            instance for "random-linear" and "random-mixture"), ``episodes`` (K, default 3),
            ``route`` (a registered route of :data:`dpverify.agent_audit.routes.ROUTES`,
            "two-world" or "one-run"; ``trials`` counts that route's trials: per side, or runs),
            ``positions`` (default ("first",)), ``window`` (default K), ``agent_options`` (passed to
            the factory).

    Returns the :class:`~dpverify.audit.AuditResult` (for an agent, the
    :class:`~dpverify.agent_audit.AgentAuditResult`), e.g. to assert on its bounds.
    """
    result = audit_for_test(
        mechanism, neighbours, epsilon, delta, trials=trials, gaussian_claim=gaussian_claim, seed=seed,
        confidence=confidence, executor=executor, notion=notion, **agent_kwargs,
    )
    if result.verdict == VIOLATION:
        raise AssertionError(
            f"the audit refutes the claim (ε, δ) = ({result.claimed_epsilon:g}, {result.delta:g}):\n{result.summary()}"
        )
    return result


def assert_audit_refutes(mechanism: Any, neighbours: Any = None, epsilon: float | None = None, delta: float = 1e-5,
                         **options: Any) -> Any:
    """The negative control: the audit must find a VIOLATION of (ε, δ) (arguments as in
    :func:`assert_audit_passes`); raise AssertionError with the audit summary when it does not."""
    result = audit_for_test(mechanism, neighbours, epsilon, delta, **options)
    if result.verdict != VIOLATION:
        raise AssertionError(
            f"the audit did not refute the claim (ε, δ) = ({result.claimed_epsilon:g}, {result.delta:g}) at "
            f"{result.trials} trials per side: the test has no power against this variant (more trials, a "
            f"worse neighbouring pair, or gaussian_claim=True for a Gaussian mechanism may help):\n{result.summary()}"
        )
    return result
