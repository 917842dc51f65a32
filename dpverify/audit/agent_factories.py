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
from dpverify.usercode import guarded_factory, import_factory

__all__ = ["build_environment", "import_factory", "resolve_factory"]


def _registry() -> Any:
    return importlib.import_module("dpverify.agents.registry")


def resolve_factory(agent: str) -> Callable[..., Any]:
    """A registered agent name, ``"module.path:factory"`` or ``"file.py:factory"`` (one clear error otherwise).

    A factory named by path is the user's code: it comes back as a :class:`~dpverify.usercode.GuardedFactory`,
    whose module import, factory call and agent methods are guarded calls (one-line errors, time limits),
    its module imported once here so that a path that does not import is refused at once."""
    if not isinstance(agent, str) or not agent:
        raise InvalidParameterError("agent", "must be a registered name or module.path:factory", agent)
    if ":" in agent:
        return guarded_factory(agent)
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
