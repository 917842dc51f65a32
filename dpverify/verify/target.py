"""What ``dpverify verify`` is pointed at: a registered agent name or a ``module.path:factory``.

A factory follows the runner's protocol, ``factory(mdp, num_episodes, rng, /, *, billboard=None,
**options) -> agent``; the claim (ε, δ) is passed as the options ``epsilon`` and ``delta``. What verify
knows of the papers' agents — their notion, their non-private counterpart, their regret bound in
:data:`dpverify.bounds.REGISTRY`, their batched audit twin — is on their registry card
(:class:`dpverify.agents.registry.AgentEntry`); an agent dpverify did not write is compared with the
non-private reference agent for its kind of environment and has no registered bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpverify.agents.core.billboard import Billboard, derived_noise_generator
from dpverify.agents.envs.bandit import Bandit
from dpverify.agents.envs.linear_mdp import LinearMixtureMDP
from dpverify.agents.registry import AGENTS, AgentEntry, agent_factory, batched_twin, card
from dpverify.agents.registry import build_agent as build_registered_agent
from dpverify.errors import InvalidParameterError
from dpverify.usercode import declared_notion, is_factory_path

REGISTERED = "registered"
IMPORT_PATH = "import path"

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


def claim_route(agent: Any, epsilon: float, delta: float) -> tuple[float, float, str, str]:
    """(ε, δ, conversion, accounting) of the agent's claim, for the white-box checks: its
    ``claimed_guarantee()``'s, else the requested (ε, δ), the exact conversion and per-user accounting."""
    try:
        claim = agent.claimed_guarantee()
        route = (float(claim.epsilon), float(claim.delta), str(claim.conversion))
    except Exception:  # an agent without a readable claim: the claim section reports it
        route = (epsilon, delta, "exact")
    accounting = getattr(agent, "accounting", None)
    if not isinstance(accounting, str):
        accounting = str(getattr(getattr(agent, "config", None), "accounting", "per-user"))
    return route[0], route[1], route[2], accounting


def notion_of(target: AgentTarget, agent: Any) -> str:
    """"jdp" or "ldp" as the agent declares it (``privacy_notion``), else as its registry card says."""
    declared = declared_notion(agent)
    if declared is not None:
        return declared
    entry = target.card(agent)
    return entry.notion if entry is not None and entry.notion is not None else "unknown"


def build_agent(target: AgentTarget, mdp: Any, episodes: int, rng: Any, epsilon: float, delta: float,
                options: dict[str, Any], noise_rng: Any = None) -> Any:
    """Call the factory with the claim as options and a fresh billboard to publish on (the private-agent
    protocol), whose ``noise_rng`` (for agents that add their noise themselves) is ``noise_rng`` (default:
    derived from ``rng``, as the audits' billboards are); a refused option is bad input."""
    kwargs = {**options, "epsilon": epsilon, "delta": delta}
    if noise_rng is None:
        noise_rng = derived_noise_generator(rng)
    board = Billboard(options.get("relation", "replace-one"), noise_rng=noise_rng)
    agent = target.name if target.source == REGISTERED else target.factory
    return build_registered_agent(agent, mdp, episodes, rng, kwargs, billboard=board, billboard_required=False,
                                  name=target.name)
