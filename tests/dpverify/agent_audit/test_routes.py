"""The audit-route registry: what each route declares, the command line that lists it, and a new
route end to end."""

from __future__ import annotations

import argparse
import re
from dataclasses import replace

import pytest

from dpverify.agent_audit import AgentAuditResult, AgentAuditSpec, audit_agent
from dpverify.agent_audit.one_run import _one_run
from dpverify.agent_audit.routes import (
    ROUTES,
    AuditRoute,
    RouteInputs,
    audit_route,
    register_route,
)
from dpverify.agent_audit.two_world import MIN_TRIALS, _two_world
from dpverify.audit.resources import require_one_run, require_two_world
from dpverify.cli import audit_agent_command, build_parser
from dpverify.errors import InvalidParameterError
from dpverify.verify.audits import _configuration

SMALL = (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))
ARGS = ["--agent", "dp-lsvi-ucb++", "--env", "random-linear", "--episodes", "3", "--notion",
        "billboard", "--epsilon", "1"]


def _agent_parser() -> argparse.ArgumentParser:
    """The ``dpverify audit agent`` sub-parser."""
    def sub(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return action.choices[name]

    return sub(sub(build_parser(["audit"]), "audit"), "agent")


def _help(parser: argparse.ArgumentParser, dest: str) -> str:
    return next(a for a in parser._actions if a.dest == dest).help or ""


def test_the_two_routes_and_what_they_declare() -> None:
    # the first is the default of the spec and of the command line
    assert tuple(ROUTES) == ("two-world", "one-run")
    assert AgentAuditSpec.__dataclass_fields__["route"].default == "two-world"
    two, one = audit_route("two-world"), audit_route("one-run")
    assert (two.run, two.resources) == (_two_world, require_two_world)
    assert (two.min_trials, two.default_trials) == (MIN_TRIALS, 10_000)
    assert (one.run, one.resources) == (_one_run, require_one_run)
    assert (one.min_trials, one.default_trials) == (1, 1)
    assert one.canary_slots and not two.canary_slots
    assert one.size({"trials": 2, "canaries": 6}) == "2 run(s) × 6 canaries"


def test_the_spec_reads_each_route_s_minimum_trials() -> None:
    base = AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 6, "billboard", 1.0, trials=10)
    rule = (r"trials must be >= 10 per side for a two-world audit "
            r"\(a selection and an evaluation split\)")
    with pytest.raises(InvalidParameterError, match=rule) as info:
        replace(base, trials=9)
    assert info.value.parameter == "trials"
    assert replace(base, route="one-run", trials=1).trials == 1


def test_bad_names_double_registration_and_bad_entries_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="must be one of two-world, one-run") as info:
        audit_route("three-world", parameter="--route")
    assert info.value.parameter == "--route"
    with pytest.raises(InvalidParameterError, match="already registered"):
        register_route(ROUTES["one-run"])
    with pytest.raises(InvalidParameterError, match="AuditRoute"):
        register_route("one-run")  # type: ignore[arg-type]
    entry = ROUTES["two-world"]
    for changes, parameter in (({"min_trials": 0}, "min_trials"),
                               ({"default_trials": 5}, "default_trials"),
                               ({"run": "two_world"}, "run"), ({"name": ""}, "name"),
                               ({"canary_slots": 1}, "canary_slots")):
        with pytest.raises(InvalidParameterError) as info:
            replace(entry, **changes)
        assert info.value.parameter == parameter


def test_the_command_line_lists_the_registered_routes() -> None:
    """``--route``'s choices are the registry's (listed in the CLI so that ``--help`` imports no
    library); its help and ``--trials``' help state each route's description and default trials,
    which the handler reads from the registry."""
    assert audit_agent_command.ROUTE_CHOICES == tuple(ROUTES)
    parser = _agent_parser()
    route_help, trials_help = _help(parser, "route"), _help(parser, "trials")
    assert parser.get_default("route") == next(iter(ROUTES))
    for route in ROUTES.values():
        assert f"{route.name} ({route.description})" in route_help
        default = re.search(rf"{route.name}: [^;]*\(default ([0-9.e]+)\)", trials_help)
        assert default is not None and float(default.group(1)) == route.default_trials
        args = parser.parse_args([*ARGS, "--route", route.name])
        assert audit_agent_command.spec_from_args(args).trials == route.default_trials


def test_a_new_route_is_one_registry_entry() -> None:
    """The recipe of CONTRIBUTING.md, followed once: a route (here the two-world audit at the first
    position only, with its own size rules) is validated, dispatched, given its default trials by
    the command line and sized in verify's report with no other change."""
    calls: list[str] = []

    def resources(spec: AgentAuditSpec, mdp: object, width: int) -> None:
        calls.append("resources")
        require_two_world(spec, mdp, width)

    def first_position(spec: AgentAuditSpec, inputs: RouteInputs) -> AgentAuditResult:
        calls.append("run")
        return _two_world(replace(spec, positions=("first",)), inputs)

    register_route(AuditRoute(
        "first-position", "the two-world audit at the first position", run=first_position,
        resources=resources, default_trials=200, min_trials=20,
        min_trials_reason="per side for a first-position audit",
        size_format="{trials} trials per side, first position"))
    try:
        with pytest.raises(InvalidParameterError, match=">= 20 per side for a first-position"):
            AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 3, "billboard", 1.0,
                           route="first-position", trials=19)
        spec = AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 3, "billboard", 1.0,
                              route="first-position", trials=200, env_options=SMALL, window=3)
        result = audit_agent(spec, progress=False)
        assert calls == ["resources", "run"]
        assert result.verdict == "NO VIOLATION FOUND" and result.spec.positions == ("first",)
        assert "route: first-position" in result.summary().splitlines()[0]
        # the command line's choices list it once its name is added there
        args = argparse.Namespace(**{**vars(_agent_parser().parse_args(ARGS)),
                                     "route": "first-position"})
        assert audit_agent_command.spec_from_args(args).trials == 200
        kwargs = {"route": "first-position", "env": "random-linear", "env_options": {},
                  "episodes": 3, "trials": 200}
        size = "random-linear, K = 3; 200 trials per side, first position"
        assert _configuration(kwargs) == size
    finally:
        del ROUTES["first-position"]
