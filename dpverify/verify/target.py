"""What ``dpverify verify`` is pointed at — a registered agent name or a ``module.path:factory`` — and the
run built around it (:class:`VerifyRun`, the one description of a verification every section reads).

A factory follows the runner's protocol, ``factory(mdp, num_episodes, rng, /, *, billboard=None,
**options) -> agent``; the claim (ε, δ) is passed as the options ``epsilon`` and ``delta``. What verify
knows of the papers' agents — their notion, their non-private counterpart, their regret bound in
:data:`dpverify.bounds.REGISTRY`, their batched audit twin — is on their registry card
(:class:`dpverify.agents.registry.AgentEntry`); an agent dpverify did not write is compared with the
non-private reference agent for its kind of environment and has no registered bound.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TextIO

import numpy as np

from dpverify import _validate
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.envs.bandit import Bandit
from dpverify.agents.envs.linear_mdp import LinearMDP, LinearMixtureMDP
from dpverify.agents.registry import AGENTS, AgentEntry, agent_factory, batched_twin, build_environment, card
from dpverify.agents.registry import build_agent as build_registered_agent
from dpverify.audit.resources import WHITEBOX_RUNS_AT_K, require_episodes
from dpverify.claims import PrivacyClaim
from dpverify.errors import InvalidParameterError
from dpverify.limits import require_workers
from dpverify.usercode import declared_notion, is_factory_path
from dpverify.verify.budget import Budget, budget_by_name
from dpverify.verify.result import Settings

REGISTERED = "registered"
IMPORT_PATH = "import path"

DEFAULT_EPISODES = 1000
#: The environments verify runs agents on.
MDP = LinearMDP | LinearMixtureMDP
#: The non-private reference agent for an agent dpverify does not know, by environment kind.
DEFAULT_COUNTERPART: dict[str, str] = {"linear": "lsvi-ucb", "mixture": "ucrl-vtr", "bandit": "linucb"}


@dataclass(frozen=True)
class AgentTarget:
    """A resolved ``--agent``: its name as given, where it came from, and its factory.

    ``env_kind`` is "linear" or "mixture" for a registered agent, None for an import path (the
    environment decides, and the factory refuses a wrong one).
    """

    name: str
    source: str
    factory: Callable[..., Any]
    env_kind: str | None = None

    def known_name(self, agent: Any = None) -> str | None:
        """The papers' agent this is: the registered name of a private agent, else the agent's own ``name``
        when that is one (e.g. a modified copy of DP-LSVI-UCB++ that keeps its name), else None."""
        if self.source == REGISTERED and _is_private_card(self.name):
            return self.name
        own = getattr(agent, "name", None)
        return own if isinstance(own, str) and _is_private_card(own) else None

    def card(self, agent: Any = None) -> AgentEntry | None:
        """The registry card of :meth:`known_name` (None for an agent dpverify does not know)."""
        return card(self.known_name(agent))

    def batched(self, options: dict[str, Any]) -> bool:
        """Whether the two-world audits run this agent with these options through its card's batched twin (a
        registered agent whose twin covers the options)."""
        return self.source == REGISTERED and batched_twin(self.name, options) is not None


def _is_private_card(name: str) -> bool:
    entry = card(name)
    return entry is not None and entry.private


def resolve_agent(text: str) -> AgentTarget:
    """``NAME`` (registered with the runner), ``module.path:factory`` or ``file.py:factory`` (the user's code,
    guarded: :func:`dpverify.agents.registry.agent_factory`)."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameterError("--agent", "must be a registered agent name or module.path:factory", text)
    factory = agent_factory(text, parameter="--agent")
    if is_factory_path(text):
        return AgentTarget(text, IMPORT_PATH, factory, None)
    if not _is_private_card(text):  # it takes no (epsilon, delta) and makes no claim to verify
        private = ", ".join(name for name, entry in AGENTS.items() if entry.private)
        raise InvalidParameterError("--agent", f"must be a private agent, one of {private} or module.path:factory "
                                    f"({text} is non-private: it makes no privacy claim to verify)", text)
    return AgentTarget(text, REGISTERED, factory, AGENTS[text].env_kind)


def counterpart_for(target: AgentTarget, agent: Any, mdp: Any) -> str:
    """The non-private agent to compare regret with (module docstring)."""
    entry = target.card(agent)
    if entry is not None and entry.counterpart is not None:
        return entry.counterpart
    if isinstance(mdp, Bandit):
        return DEFAULT_COUNTERPART["bandit"]
    return DEFAULT_COUNTERPART["mixture" if isinstance(mdp, LinearMixtureMDP) else "linear"]


def bound_of(target: AgentTarget, agent: Any) -> str | None:
    """The registry name of the agent's regret bound (None for an agent dpverify does not know)."""
    entry = target.card(agent)
    return None if entry is None else entry.bound


def relation_of(agent: Any, options: dict[str, Any]) -> str:
    """The neighbouring relation the agent's ledger uses: its billboard's, else its config's, else the option's."""
    board = getattr(agent, "billboard", None)
    relation = getattr(getattr(board, "ledger", None), "relation", None)
    if relation is None:
        relation = getattr(getattr(agent, "config", None), "relation", None)
    relation = getattr(relation, "value", relation)
    return str(relation if isinstance(relation, str) else options.get("relation", "replace-one"))


class ClaimRoute(NamedTuple):
    """The agent's claim as the white-box checks judge it."""

    epsilon: float
    delta: float
    conversion: str
    accounting: str


def claim_route(agent: Any, epsilon: float, delta: float) -> ClaimRoute:
    """The (ε, δ), conversion and accounting of the agent's claim (:meth:`PrivacyClaim.of` its
    ``claimed_guarantee()``, at the requested δ: :meth:`PrivacyClaim.audit_point`). An agent without a readable
    claim gets the requested (ε, δ) and the exact conversion."""
    try:
        claim = PrivacyClaim.of(agent.claimed_guarantee(), "claimed_guarantee()")
    except Exception:  # an agent without a readable claim: the claim section reports it
        route = (epsilon, delta, "exact")
    else:
        route = claim.audit_point(delta)
    accounting = getattr(agent, "accounting", None)
    if not isinstance(accounting, str):
        accounting = str(getattr(getattr(agent, "config", None), "accounting", "per-user"))
    return ClaimRoute(*route, accounting)


def notion_of(target: AgentTarget, agent: Any) -> str:
    """"jdp" or "ldp" as the agent declares it (``privacy_notion``), else as its registry card says."""
    declared = declared_notion(agent)
    if declared is not None:
        return declared
    entry = target.card(agent)
    return entry.notion if entry is not None and entry.notion is not None else "unknown"


def build_agent(target: AgentTarget, mdp: MDP, episodes: int, rng: np.random.Generator,
                epsilon: float, delta: float, options: dict[str, Any],
                noise_rng: np.random.Generator | None = None) -> Any:
    """Call the factory with the claim as options and a fresh billboard to publish on (the private-agent
    protocol), whose ``noise_rng`` (for agents that add their noise themselves) is ``noise_rng`` (default:
    derived from ``rng``, as the audits' billboards are); a refused option is bad input."""
    kwargs = {**options, "epsilon": epsilon, "delta": delta}
    board = Billboard(options.get("relation", "replace-one"), noise_rng=noise_rng,
                      noise_from=rng if noise_rng is None else None)
    agent = target.name if target.source == REGISTERED else target.factory
    return build_registered_agent(agent, mdp, episodes, rng, kwargs, billboard=board, billboard_required=False,
                                  name=target.name)


@dataclass(frozen=True)
class VerifyRun:
    """One verification: the agent, the environment (built once, for the claim's K episodes), the claim, the
    budget and how to run it, and what the agent built for the claim's run says of itself — its notion, the
    papers' agent it is (``known``), its ledger's relation, its claim's route, its non-private counterpart
    and its registered regret bound. :func:`prepare` builds it from validated input; every section of
    ``verify`` reads what it needs from it."""

    target: AgentTarget
    env: str
    env_options: dict[str, Any]
    mdp: MDP
    epsilon: float
    delta: float
    episodes: int
    budget: Budget
    agent_options: dict[str, Any]
    seed: int
    workers: int
    scheduler: str | None
    gaussian_claim: bool | None
    progress_stream: TextIO | None
    notion: str
    known: str | None
    relation: str
    claim: ClaimRoute
    counterpart: str
    bound: str | None

    @property
    def options(self) -> dict[str, Any]:
        """The factory's options with the claim (``epsilon``, ``delta``)."""
        return {**self.agent_options, "epsilon": self.epsilon, "delta": self.delta}

    @property
    def settings(self) -> Settings:
        """What was verified and at which budget, as the report records it."""
        return Settings(self.target.name, self.target.source, self.env, self.epsilon, self.delta, self.episodes,
                        self.budget.name, self.seed, self.scheduler, self.agent_options, self.env_options,
                        self.gaussian_claim)


def prepare(agent: str, env: str, epsilon: float, delta: float, episodes: int = DEFAULT_EPISODES,
            budget: str | Budget = "quick", *, agent_options: Mapping[str, Any] | None = None,
            env_options: Mapping[str, Any] | None = None, seed: int = 0, workers: int | None = None,
            scheduler: str | None = None, gaussian_claim: bool | None = None,
            progress_stream: TextIO | None = None) -> tuple[VerifyRun, Any]:
    """The run :func:`dpverify.verify.verify` makes (its arguments, validated; the environment built once) and
    the agent built for the claim's run of K episodes, whose declarations the run records."""
    epsilon = _validate.positive("--epsilon", epsilon)
    delta = _validate.open_unit("--delta", delta)
    episodes = _validate.integer("--episodes", episodes, minimum=1)
    seed = _validate.integer("--seed", seed, minimum=0)
    plan = budget if isinstance(budget, Budget) else budget_by_name(budget)
    agent_options = dict(agent_options or {})
    env_options = dict(env_options or {})
    for reserved in ("epsilon", "delta"):
        if reserved in agent_options:
            raise InvalidParameterError("--agent-option", f"must not set {reserved} (use --{reserved})", reserved)
    workers = min(2, os.cpu_count() or 1) if workers is None else _validate.integer("--workers", workers, minimum=1)
    require_workers("--workers", workers)
    target = resolve_agent(agent)
    mdp = build_environment(env, episodes, env_options, parameter="--env")
    require_episodes("--episodes", episodes, mdp, episodes, _verification_runs(plan), f"the {plan.name} verification")
    agent_seed, _, noise_seed = claim_seeds(seed)
    instance = build_agent(target, mdp, episodes, np.random.default_rng(agent_seed), epsilon, delta, agent_options,
                           noise_rng=np.random.default_rng(noise_seed))
    run = VerifyRun(target, env, env_options, mdp, epsilon, delta, episodes, plan, agent_options, seed, workers,
                    scheduler, gaussian_claim, progress_stream, notion_of(target, instance),
                    target.known_name(instance), relation_of(instance, agent_options),
                    claim_route(instance, epsilon, delta), counterpart_for(target, instance, mdp),
                    bound_of(target, instance))
    return run, instance


def claim_seeds(seed: int) -> list[np.random.SeedSequence]:
    """The seeds of the claim's run: the agent's coins and the environment's randomness (those of the runner's seed
    0, :mod:`dpverify.agents.core.runner`), the billboard's noise."""
    return np.random.SeedSequence(seed).spawn(1)[0].spawn(3)


def _verification_runs(plan: Budget) -> float:
    """Runs of up to K episodes a verification makes at most (:mod:`dpverify.audit.resources`): the claim's
    run, the utility seeds (the agent, its no-data control and its counterpart), the one-run audits (a pilot
    and the audited run, for two notions at most) and the white-box runs at K (the recorded run, its replays
    and the noise runs)."""
    return 1.0 + 3.0 * plan.utility_seeds + 4.0 * plan.one_run_runs + WHITEBOX_RUNS_AT_K
