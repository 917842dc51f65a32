"""Resolving the agent and environment an agent audit names: a registered agent name,
``"module.path:factory"`` or ``"file.py:factory"`` (:func:`resolve_factory`) and a registered environment
(:func:`build_environment`), with one clear error otherwise.

The registries live in :mod:`dpverify.agents`, imported lazily (inside functions), never at module level.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from dpverify.errors import InvalidParameterError


def _registry() -> Any:
    try:
        return importlib.import_module("dpverify.agents.registry")
    except ImportError:  # older layout: the runner holds the registries
        runner = importlib.import_module("dpverify.agents.runner")
        runner.load_registrations()
        return runner


def _import_target(module: str) -> Any:
    """Import ``module`` (a dotted path, the current directory importable as with ``python -m``) or load a
    ``.py`` file."""
    import os
    import sys

    if module.endswith(".py"):
        from importlib import util as import_util

        path = os.path.abspath(module)
        name = "dpverify_agent_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
        if name in sys.modules and getattr(sys.modules[name], "__file__", None) == path:
            return sys.modules[name]
        if not os.path.isfile(path):
            raise ImportError(f"no such file {module}")
        spec = import_util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {module}")
        loaded = import_util.module_from_spec(spec)
        sys.modules[name] = loaded
        spec.loader.exec_module(loaded)
        return loaded
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        cwd = os.getcwd()
        if cwd in sys.path:
            raise
        sys.path.append(cwd)
        return importlib.import_module(module)


def import_factory(agent: str) -> Callable[..., Any]:
    """The factory ``"module.path:factory"`` or ``"file.py:factory"`` names, imported (an error naming ``agent``
    when the path does not import or names no callable; whatever else the module raises is its own)."""
    module, _, attribute = agent.rpartition(":")
    try:
        value: Any = _import_target(module)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError, SyntaxError) as exc:
        raise InvalidParameterError("agent", f"factory path does not import ({exc})", agent) from None
    if not callable(value):
        raise InvalidParameterError("agent", "must name a callable factory", agent)
    return value


def resolve_factory(agent: str) -> Callable[..., Any]:
    """A registered agent name, ``"module.path:factory"`` or ``"file.py:factory"`` (one clear error otherwise).

    A factory named by path is the user's code: it comes back as a :class:`~dpverify.usercode.GuardedFactory`,
    whose module import, factory call and agent methods are guarded calls (one-line errors, time limits),
    its module imported once here so that a path that does not import is refused at once."""
    if not isinstance(agent, str) or not agent:
        raise InvalidParameterError("agent", "must be a registered name or module.path:factory", agent)
    if ":" in agent:
        from dpverify.usercode import GuardedFactory

        guarded = GuardedFactory(agent, import_factory)
        guarded.factory()
        return guarded
    agents = _registry().AGENTS
    if agent not in agents:
        raise InvalidParameterError("agent", f"must be one of {', '.join(sorted(agents))} or module.path:factory",
                                    agent)
    return agents[agent].factory


def build_environment(env: str, episodes: int, options: tuple[tuple[str, Any], ...]) -> Any:
    environments = _registry().ENVIRONMENTS
    if env not in environments:
        raise InvalidParameterError("env", f"must be one of {', '.join(sorted(environments))}", env)
    try:
        return environments[env].factory(episodes, **dict(options))
    except TypeError as exc:
        raise InvalidParameterError("--env-option", f"is not accepted by {env} ({exc})",
                                    ", ".join(k for k, _ in options)) from None
