"""Building and running one agent on response tapes (:mod:`dpverify.agents.core.tapes`): :class:`AgentSetup`
(picklable names and options), :func:`run_agent_once` through the private-agent protocol, the batched
DP-LSVI-UCB++ (Sahu 2025, Algorithm 1, vectorised over trials) when it applies, and the
probe run (:func:`probe_agent`) that reads the agent's claim and the width of one episode's releases.

The private-agent protocol (third-party agents): a factory
``factory(mdp, num_episodes, rng, /, *, billboard=None, **options)`` returning an agent with
``begin_episode() -> (H, S) int policy`` and ``end_episode(trajectory)``; ``end_episode(None)`` is an
*empty slot* (add/remove-one audits: episode j still happens, the agent plans and its releases are made on
schedule, but it receives no data — what the ledgers account under add/remove, an absent user being a zero
term). For ``"billboard"`` and ``"ldp"`` audits the agent publishes on the billboard it was given (or
exposes ``agent.billboard``); for ``"jdp"`` only the policies are read. ``claimed_guarantee()`` (an object
with ``epsilon`` and ``delta``) and ``privacy_notion`` ("jdp" or "ldp") state the claim; without them the
claim given to the audit is used. An agent whose registry card has a batched twin covering its options runs
through the twin (:func:`_is_batched`), empty slots included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.adapters.global_rng import keep_installed
from dpverify.agent_audit.notions import audit_notion
from dpverify.agent_audit.spec import AgentAuditSpec, AgentClaim, check_claim, refuse_gaussian_claim
from dpverify.agent_audit.views import _flat
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.core.tapes import ordinary_tapes, run_on_tapes
from dpverify.agents.registry import batched_twin, build_agent, build_environment, check_environment_kind
from dpverify.claims import PrivacyClaim
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger
from dpverify.usercode import declared_notion, guard_stretch
from dpverify.whitebox.neighbours import audit_environment

#: Episodes of the probe run (the width of one episode's releases is read from them).
PROBE_EPISODES = 8


@dataclass(frozen=True)
class AgentSetup:
    """Everything needed to build the environment and one agent (picklable: names and options only)."""
    agent: str
    env: str
    episodes: int
    env_options: tuple[tuple[str, Any], ...]
    agent_options: tuple[tuple[str, Any], ...]
    #: Run in the audit environment of the named environment's kind and dimensions (the worst-case
    #: canary design; :func:`dpverify.whitebox.neighbours.audit_environment`).
    audit_environment: bool = False

    def environment(self) -> Any:
        mdp = build_environment(self.env, self.episodes, self.env_options, parameter="--env")
        if self.audit_environment:
            check_environment_kind(self.agent, mdp)  # named as the user gave it, before it is replaced
            return audit_environment(mdp)
        return mdp

    def build(self, mdp: Any, rng: np.random.Generator, billboard: Any) -> Any:
        return build_agent(self.agent, mdp, self.episodes, rng, self.agent_options, billboard=billboard)

    def billboard(self, rng: np.random.Generator) -> Any:
        """The billboard a run of the agent with generator ``rng`` publishes on: it keeps its history, and its
        ``noise_rng`` (for agents that add their noise themselves) is derived from ``rng`` without touching it."""

        relation = dict(self.agent_options).get("relation", "replace-one")
        return Billboard(relation, keep_history=True, noise_from=rng)


def agent_setup(spec: AgentAuditSpec) -> AgentSetup:
    """The agent and environment of an audit (the claim's (ε, δ) as the agent's options unless given; the audit
    environment for the worst-case canary design)."""
    options = dict(spec.agent_options)
    options.setdefault("epsilon", spec.epsilon)
    options.setdefault("delta", spec.delta)
    return AgentSetup(spec.agent, spec.env, spec.episodes, spec.env_options, tuple(sorted(options.items())),
                      audit_environment=spec.canary_design == "worst-case")


def run_agent_once(setup: AgentSetup, mdp: Any, tapes: Sequence[Any],
                   rng: np.random.Generator) -> tuple[Any, list[np.ndarray]]:
    """Build an agent with a recording billboard, run it on the tapes; (billboard history, policies). A seeded
    global-generator stream of the agent's is swapped in once for the run (:func:`keep_installed`), and so is what
    guards each call of the user's code (:func:`guard_stretch`)."""
    board = setup.billboard(rng)
    with keep_installed(), guard_stretch():
        agent = setup.build(mdp, rng, board)
        policies = run_on_tapes(agent, mdp, tapes)
    published = getattr(agent, "billboard", board)
    history = published.history() if getattr(published, "keep_history", False) else board.history()
    return history, policies


def _is_batched(setup: AgentSetup, batched: bool | None) -> bool:
    """Whether the trials run through the agent's batched twin (``batched`` False: never; None or True: when
    the card has a twin for these options — e.g. DP-LSVI-UCB++'s covers the fresh-noise and binary-tree variants
    under both relations, not the dyadic and factorised counters)."""
    return batched is not False and batched_twin(setup.agent, setup.agent_options) is not None


def _batched_agent(setup: AgentSetup, mdp: Any, randomness: Any, record: Sequence[int]) -> Any:
    """The batched twin of the setup's agent for ``randomness.n`` trials, keeping the releases of ``record``."""
    twin = batched_twin(setup.agent, setup.agent_options)
    if twin is None:
        raise InvalidParameterError("batched", f"has no batched twin for agent {setup.agent} with these options",
                                    setup.agent)
    return twin(mdp, setup.episodes, dict(setup.agent_options), randomness, record)


def _calibrated_gaussian(agent: Any) -> bool:
    """Whether a registered agent's calibrated releases are all Gaussian (so its claim is μ-GDP); an agent without
    a calibration is taken at its registration (every registered agent but DP-UCB, whose noise is Laplace)."""
    calibration = getattr(agent, "calibration", None)
    ledger = getattr(calibration, "ledger", None)
    return not callable(ledger) or bool(ledger().all_gaussian)


def probe_agent(spec: AgentAuditSpec, setup: AgentSetup) -> tuple[AgentClaim, int, Any]:
    """Build one agent and check the claim it makes (:func:`check_claim`), then run its first
    :data:`PROBE_EPISODES` episodes on ordinary tapes: (the claim, the widest row of releases of one
    episode, the environment). Rows of later episodes are zero-padded or truncated to that width (a
    fixed post-processing)."""

    mdp = setup.environment()
    tapes = ordinary_tapes(mdp, spec.episodes, spec.data_seed)
    rng = np.random.default_rng(np.random.SeedSequence(spec.seed))
    board = setup.billboard(rng)
    agent = setup.build(mdp, rng, board)

    notion = declared_notion(agent)
    epsilon = delta = None
    claimed = getattr(agent, "claimed_guarantee", None)
    if callable(claimed):  # any measure, as the (ε, δ) it implies at the audit's δ
        stated = PrivacyClaim.of(claimed(), "claimed_guarantee()")
        delta = stated.delta if stated.measure == "approximate" else spec.delta
        epsilon = stated.epsilon_at(delta)
    registered = ":" not in setup.agent
    gaussian = bool(spec.gaussian_claim) if spec.gaussian_claim is not None else (
        registered and epsilon is not None and _calibrated_gaussian(agent))
    claim = AgentClaim(notion, epsilon, delta, gaussian)
    check_claim(spec, claim)  # before any episode runs

    policies = run_on_tapes(agent, mdp, tapes[:PROBE_EPISODES])
    if spec.gaussian_claim:  # asked for: the probe's releases must all be Gaussian
        ledger = getattr(getattr(agent, "billboard", board), "ledger", None)
        if isinstance(ledger, PrivacyLedger):
            refuse_gaussian_claim("gaussian_claim", True, ledger)
    width = 1
    audited = audit_notion(spec.notion)
    if audited.reads_policies:
        width = mdp.horizon * mdp.num_states * mdp.num_actions
        del policies
    else:
        published = getattr(agent, "billboard", board)
        if not getattr(published, "keep_history", False):
            published = board
        history = published.history()
        users = audited.users
        per_episode: dict[int, int] = {}
        for r in history:
            if users is None or r.users == users:
                per_episode[r.episode] = per_episode.get(r.episode, 0) + _flat(np.asarray(r.value)).size
        if not per_episode:
            raise InvalidParameterError("notion", f"{spec.notion} needs an agent that publishes "
                                        f"{audited.what_is_published()} on its billboard", spec.agent)
        width = max(per_episode.values())
    return claim, width, mdp
