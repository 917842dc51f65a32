"""What ``dpverify verify`` is pointed at: a registered agent name or a ``module.path:factory``.

A factory follows the runner's protocol, ``factory(mdp, num_episodes, rng, /, *, billboard=None,
**options) -> agent``; the claim (ε, δ) is passed as the options ``epsilon`` and ``delta``. For the
papers' agents the module also knows their non-private counterpart and their regret bound in
:data:`dpverify.bounds.REGISTRY`; an agent dpverify did not write is compared with the non-private
reference agent for its kind of environment and has no registered bound.

``dpverify.agents`` is imported inside the functions only (the library never imports it at module
level).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpverify.errors import InvalidParameterError

REGISTERED = "registered"
IMPORT_PATH = "import path"

#: The non-private agent each paper's private agent builds on (same learning rule without noise).
COUNTERPARTS: dict[str, str] = {
    "dp-lsvi-ucb++": "lsvi-ucb++",
    "luyo": "lsvi-ucb",
    "ngo": "lsvi-ucb",
    "ldp-ucrl-vtr": "ucrl-vtr",
}
#: The non-private reference agent for an agent dpverify does not know, by environment kind.
DEFAULT_COUNTERPART: dict[str, str] = {"linear": "lsvi-ucb", "mixture": "ucrl-vtr"}
#: The registry bound stated for each of the papers' agents (dpverify.bounds.REGISTRY names).
BOUNDS: dict[str, str] = {
    "dp-lsvi-ucb++": "dp-lsvi-ucb++/theorem-3.2",
    "luyo": "luyo-2021/linear-mdp",
    "ngo": "ngo-2022/linear-mdp",
    "ldp-ucrl-vtr": "ldp-ucrl-vtr/upper",
}
#: Privacy notion of the papers' agents, for agents that do not declare ``privacy_notion``.
NOTIONS: dict[str, str] = {"dp-lsvi-ucb++": "jdp", "luyo": "jdp", "ngo": "jdp", "ldp-ucrl-vtr": "ldp"}


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
        """The papers' agent this is: the registered name, else the agent's own ``name`` when that is one
        of the papers' agents (e.g. a modified copy of DP-LSVI-UCB++ that keeps its name), else None."""
        if self.source == REGISTERED and self.name in COUNTERPARTS:
            return self.name
        own = getattr(agent, "name", None)
        return own if isinstance(own, str) and own in COUNTERPARTS else None


def registries() -> tuple[dict[str, Any], dict[str, Any]]:
    """The agent and environment registries (name → entry) of :mod:`dpverify.agents.registry`."""
    from dpverify.agents.registry import AGENTS, ENVIRONMENTS

    return AGENTS, ENVIRONMENTS


def resolve_agent(text: str) -> AgentTarget:
    """``NAME`` (registered with the runner), ``module.path:factory`` or ``file.py:factory`` (imported by
    :func:`dpverify.audit.agent_audit.resolve_factory`, as the agent audits do)."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidParameterError("--agent", "must be a registered agent name or module.path:factory", text)
    agents, _ = registries()
    if text in agents:
        entry = agents[text]
        return AgentTarget(text, REGISTERED, entry.factory, entry.env_kind)
    if ":" not in text:
        raise InvalidParameterError(
            "--agent", f"must be one of {', '.join(sorted(agents))} or module.path:factory", text)
    from dpverify.audit.agent_audit import resolve_factory  # the agent audits' resolver: the same rules

    try:
        factory = resolve_factory(text)
    except InvalidParameterError as exc:
        raise InvalidParameterError("--agent", exc.rule, text) from None
    return AgentTarget(text, IMPORT_PATH, factory, None)


def counterpart_for(target: AgentTarget, agent: Any, mdp: Any) -> str:
    """The non-private agent to compare regret with (module docstring)."""
    from dpverify.agents.envs.linear_mdp import LinearMixtureMDP

    known = target.known_name(agent)
    if known is not None:
        return COUNTERPARTS[known]
    return DEFAULT_COUNTERPART["mixture" if isinstance(mdp, LinearMixtureMDP) else "linear"]


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
    """"jdp" or "ldp" as the agent declares it (``privacy_notion``), else as known for the papers' agents."""
    from dpverify.usercode import declared_notion

    declared = declared_notion(agent)
    if declared is not None:
        return declared
    known = target.known_name(agent)
    return NOTIONS.get(known, "unknown") if known is not None else "unknown"


def build_agent(target: AgentTarget, mdp: Any, episodes: int, rng: Any, epsilon: float, delta: float,
                options: dict[str, Any], noise_rng: Any = None) -> Any:
    """Call the factory with the claim as options and a fresh billboard to publish on (the private-agent
    protocol; a factory without ``billboard=`` is called without it), whose ``noise_rng`` (for agents that add
    their noise themselves) is ``noise_rng`` (default: derived from ``rng``, as the audits' billboards are); a
    refused option is bad input."""
    from dpverify.agents.billboard import Billboard, derived_noise_generator

    kwargs = {**options, "epsilon": epsilon, "delta": delta}
    if noise_rng is None:
        noise_rng = derived_noise_generator(rng)
    board = Billboard(options.get("relation", "replace-one"), noise_rng=noise_rng)
    try:
        return target.factory(mdp, episodes, rng, billboard=board, **kwargs)
    except TypeError as exc:
        if "billboard" not in str(exc):
            raise InvalidParameterError("--agent-option", f"is not accepted by {target.name} ({exc})",
                                        ", ".join(sorted(kwargs))) from None
    try:
        return target.factory(mdp, episodes, rng, **kwargs)
    except TypeError as exc:
        raise InvalidParameterError("--agent-option", f"is not accepted by {target.name} ({exc})",
                                    ", ".join(sorted(kwargs))) from None
