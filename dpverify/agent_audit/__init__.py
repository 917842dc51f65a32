"""Audits of whole private agents — a layer above the agents and the generic audit engine
(:mod:`dpverify.audit`): billboard DP, joint DP and local DP, by two routes. This package's entry point is
:func:`audit_agent`; it re-exports the names of the modules below that its callers use.

A user's data is a **response tape** (:mod:`dpverify.agents.core.tapes`): the initial state and a next-state
table that fix the user's whole trajectory for any policy. A dataset is a sequence of K tapes; two
datasets are replace-one neighbours when they differ in the tape at one position j (add/remove-one: user
j absent, an empty slot, versus a canary at j). What the auditor sees (``notion``) is the published
transcript (``"billboard"``), the actions given to the other users (``"jdp"``; Kearns et al. 2014; Vietri
et al. 2020) or one user's messages (``"ldp"``; Liao et al. 2021); every output is a fixed function of
that view, so a lower bound on ε for it is a lower bound for the claim (post-processing). The routes
(``route``, :mod:`dpverify.agent_audit.routes`) are ``"two-world"`` (many runs on two neighbouring
datasets through the audit engine; Jagielski, Ullman & Oprea 2020; Nasr et al. 2021) and
``"one-run"`` (Steinke, Nasr & Jagielski 2023, Theorem 3). An ``"ldp"`` audit is replace-one only.
An agent whose registry card has a batched twin for its options runs through it (both relations;
:mod:`dpverify.agents.core.batching`).

The modules, one job each:

* :mod:`dpverify.agent_audit.notions` — the audit notions (:class:`AuditNotion`, :func:`register_notion`);
* :mod:`dpverify.agent_audit.routes` — the routes (:class:`AuditRoute`, :func:`register_route`);
* :mod:`dpverify.agent_audit.spec` — :class:`AgentAuditSpec`, :class:`AgentClaim`, :class:`AgentAuditResult`;
* :mod:`dpverify.agent_audit.runs` — :class:`AgentSetup`, one run on tapes, the probe run;
* :mod:`dpverify.agent_audit.views` — the output of each notion (:func:`output_view`, :func:`observe`);
* :mod:`dpverify.agent_audit.canaries` — measured canary pairs and the worst-case design;
* :mod:`dpverify.agent_audit.two_world` — the two-world route, the default (registered first), and
  its :func:`neighbour_pairs`;
* :mod:`dpverify.agent_audit.one_run` — the one-run route with a pilot-learned slot score;
* :mod:`dpverify.agent_audit.plot` — the figure of a result.

Agents and environments are built by :mod:`dpverify.agents.registry` (one wording for every caller). The
private-agent protocol (third-party agents) is described in :mod:`dpverify.agent_audit.runs`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

# the two-world module first: its route registers first and heads the registry (the default route)
from dpverify.agent_audit import two_world as _two_world_route  # noqa: F401

# isort: split
from dpverify.agent_audit import one_run as _one_run_route  # noqa: F401
from dpverify.agent_audit.routes import RouteInputs, audit_route
from dpverify.agent_audit.runs import AgentSetup, _batched_agent, agent_setup, probe_agent, run_agent_once
from dpverify.agent_audit.spec import AgentAuditResult, AgentAuditSpec
from dpverify.agent_audit.two_world import neighbour_pairs
from dpverify.agent_audit.views import observe, observe_batch, output_view
from dpverify.audit.executors import Executor
from dpverify.audit.resources import require_episodes
from dpverify.errors import InvalidParameterError

__all__ = [
    "AgentAuditResult",
    "AgentAuditSpec",
    "AgentSetup",
    "_batched_agent",
    "agent_setup",
    "audit_agent",
    "audit_route",
    "neighbour_pairs",
    "observe",
    "observe_batch",
    "output_view",
    "probe_agent",
    "run_agent_once",
]


def audit_agent(spec: AgentAuditSpec, executor: Executor | None = None, progress: bool | None = None,
                batch_factory: Callable[..., Any] | None = None) -> AgentAuditResult:
    """Audit an agent's claim by the spec's route (module docstring); bad input raises InvalidParameterError.

    The route (:data:`~dpverify.agent_audit.routes.ROUTES`) refuses a size that does not fit, then
    runs.
    ``batch_factory`` optionally supplies a vectorised agent for the two-world route (planted-bug variants
    of the batched twins use it, ``dpverify.audits.agent_zoo.BatchedVariant``); it must be picklable for process
    executors.
    """
    if not isinstance(spec, AgentAuditSpec):
        raise InvalidParameterError("spec", "must be an AgentAuditSpec", type(spec).__name__)
    start = time.perf_counter()
    setup = agent_setup(spec)
    require_episodes("--episodes", spec.episodes, setup.environment(), spec.episodes, 1, "the audited agent")
    claim, width, mdp = probe_agent(spec, setup)
    route = audit_route(spec.route)
    route.resources(spec, mdp, width)
    inputs = RouteInputs(setup, claim, width, mdp, executor, progress, batch_factory, start)
    return route.run(spec, inputs)
