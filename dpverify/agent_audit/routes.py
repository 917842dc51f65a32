"""The routes of an agent audit: how the audit draws its outputs and bounds ε, one registry that
the spec's validation, :func:`dpverify.agent_audit.audit_agent`, the command line and
``dpverify verify`` read (the testing helpers pass any registered route through).

* ``"two-world"`` — many independent runs on two neighbouring datasets through the audit engine
  (Jagielski, Ullman & Oprea 2020; Nasr et al. 2021): :mod:`dpverify.agent_audit.two_world`;
* ``"one-run"`` — canaries in the slots of one run (Steinke, Nasr & Jagielski 2023, Theorem 3):
  :mod:`dpverify.agent_audit.one_run`.

Each route module registers its :class:`AuditRoute` at its end, next to the function the entry names
(the functions need the spec, which reads this registry, so the entries cannot sit here); the
package imports the two-world module first, so the registry lists the routes in the order above. A
new route is its function and one :func:`register_route` call: CONTRIBUTING.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpverify import _validate
from dpverify._registry import look_up, register
from dpverify.errors import InvalidParameterError

if TYPE_CHECKING:  # types only: the spec and the runs import this registry
    from dpverify.agent_audit.runs import AgentSetup
    from dpverify.agent_audit.spec import AgentAuditResult, AgentAuditSpec, AgentClaim
    from dpverify.audit.executors import Executor


@dataclass(frozen=True)
class RouteInputs:
    """What :func:`~dpverify.agent_audit.audit_agent` has settled before a route runs: the built
    agent and environment (``setup``), the claim the agent states, the width of one episode's output
    (from the probe run), the environment, where trials run and whether to show progress, the
    optional vectorised agent of the planted-bug variants, and the audit's start time (the result
    reports the wall time from there).
    """

    setup: AgentSetup
    claim: AgentClaim
    width: int
    mdp: Any
    executor: Executor | None
    progress: bool | None
    batch_factory: Callable[..., Any] | None
    start: float


@dataclass(frozen=True)
class AuditRoute:
    """One audit route (validated on construction).

    Attributes:
        name: the ``route`` value (``--route``).
        description: one line for ``--help`` and listings.
        run: ``run(spec, inputs) -> AgentAuditResult``, the audit by this route.
        resources: ``resources(spec, mdp, width)`` refuses, before anything runs, a size that would
            not fit in time or memory (:mod:`dpverify.audit.resources`; InvalidParameterError names
            the option).
        default_trials: ``trials`` when the command line is not given ``--trials``.
        min_trials: the smallest ``trials`` the route accepts (at least 1).
        min_trials_reason: why, as the spec's error states it after ``must be >= {min_trials}``.
        canary_slots: the route plants canaries in slots of one run (m ≤ K/2), so K must leave room
            for them.
        size_format: how a report states an audit's size: a :meth:`str.format` string over the
            spec's fields (``trials``, ``window``, ``canaries``, …).
    """

    name: str
    description: str
    run: Callable[[AgentAuditSpec, RouteInputs], AgentAuditResult]
    resources: Callable[[AgentAuditSpec, Any, int], None]
    default_trials: int
    min_trials: int
    size_format: str
    min_trials_reason: str = ""
    canary_slots: bool = False

    def __post_init__(self) -> None:
        for field in ("name", "description", "size_format"):
            if not isinstance(getattr(self, field), str) or not getattr(self, field):
                raise InvalidParameterError(field, "must be a non-empty string",
                                            getattr(self, field))
        for field in ("run", "resources"):
            if not callable(getattr(self, field)):
                raise InvalidParameterError(field, "must be callable",
                                            type(getattr(self, field)).__name__)
        _validate.integer("min_trials", self.min_trials, minimum=1)
        _validate.integer("default_trials", self.default_trials, minimum=self.min_trials)
        if not isinstance(self.canary_slots, bool):
            raise InvalidParameterError("canary_slots", "must be True or False", self.canary_slots)

    def size(self, fields: dict[str, Any]) -> str:
        """The size of an audit by this route, from the spec's fields (``size_format``)."""
        return self.size_format.format(**fields)


ROUTES: dict[str, AuditRoute] = {}


def register_route(route: AuditRoute, replace: bool = False) -> AuditRoute:
    """Add an audit route (an existing name is an error unless ``replace``)."""
    return register(ROUTES, route, "route", AuditRoute, replace)


def audit_route(name: str, parameter: str = "route") -> AuditRoute:
    """The registered route ``name`` (one clear error otherwise)."""
    return look_up(ROUTES, name, parameter)
