"""The boundary with code dpverify did not write: an agent's module, its factory and its methods.

Whatever the user's code does — raise any exception, call ``sys.exit``, hang — is the user's, and is said
in one line: :class:`UserCodeError` "the agent <name> raised <Type>: <message> (in <method>)", and
:class:`UserCodeTimeout` when a call does not return within its limit. The command line prints it and
exits with status 2 (no traceback unless ``--debug``); Ctrl-C is never swallowed. The limits' errors
(:class:`LimitExceeded`) derive from ``BaseException``, like Ctrl-C, so that neither a broad ``except
Exception`` in the user's code nor a section of a report that records what could not run swallows them:
a limit ends the command.

* :func:`guarded_call` runs one call of user code under a wall-clock limit;
* :class:`GuardedFactory` is a picklable stand-in for a factory named by import path: it imports the
  module (guarded), calls the factory (guarded) and wraps the agent it returns in :class:`GuardedAgent`,
  whose protocol methods are guarded calls;
* :func:`time_limit` is the limit itself: ``SIGALRM`` through ``signal.setitimer`` in the main thread of
  a process (the command's or a worker's), nested limits keeping the earliest deadline. Elsewhere (a
  non-main thread) it is not enforced, which :data:`ENFORCED` tells.

A :class:`~dpverify.errors.DpverifyError` raised by the user's code (the protocol's own refusals, such as
``InvalidParameterError("feature_norm_bound", ...)``) passes through unchanged.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from dpverify import _validate
from dpverify.errors import DpverifyError
from dpverify.limits import call_timeout

#: The agent methods that a :class:`GuardedAgent` guards (everything the protocol calls).
AGENT_METHODS = frozenset({"begin_episode", "end_episode", "act", "observe", "claimed_guarantee", "settings",
                           "reset"})


class UserCodeError(DpverifyError):
    """The user's code raised (or exited): ``agent``, ``where`` (the method) and what it raised."""

    def __init__(self, agent: str, where: str, kind: str, message: str) -> None:
        self.agent, self.where, self.kind, self.message = agent, where, kind, message
        text = " ".join(message.split()) or "(no message)"
        super().__init__(f"the agent {agent} raised {kind}: {text} (in {where})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.agent, self.where, self.kind, self.message))


class LimitExceeded(BaseException):
    """A wall-clock limit was reached (module docstring: a ``BaseException``, so that nothing swallows it)."""


class UserCodeTimeout(LimitExceeded):
    """A call of the user's code did not return within its limit."""

    def __init__(self, agent: str, where: str, seconds: float, option: str) -> None:
        self.agent, self.where, self.seconds, self.option = agent, where, seconds, option
        super().__init__(f"the agent {agent} did not return from {where} within {seconds:g} s (the {option} limit)")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.agent, self.where, self.seconds, self.option))


class TimeLimitExceeded(LimitExceeded):
    """A whole command ran past its ``--timeout``."""

    def __init__(self, seconds: float, option: str, what: str) -> None:
        self.seconds, self.option, self.what = seconds, option, what
        super().__init__(f"{what} did not finish within {seconds:g} s (the {option} limit)")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.seconds, self.option, self.what))


# ---- wall-clock limits ------------------------------------------------------------------------------------

_deadlines: list[tuple[float, Callable[[], BaseException]]] = []  # (monotonic deadline, the error to raise)


def _forget_deadlines_in_child() -> None:
    """A forked worker keeps no deadline of its parent (timers are not inherited; the list is)."""
    _deadlines.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_deadlines_in_child)


def enforced() -> bool:
    """Whether limits can be enforced here: the main thread of a process with ``SIGALRM``."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _arm() -> None:
    if not _deadlines:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        return
    remaining = min(d for d, _ in _deadlines) - time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, max(remaining, 1e-4))


def _on_alarm(signum: int, frame: object) -> None:
    now = time.monotonic()
    expired = [entry for entry in _deadlines if entry[0] <= now]
    if not expired:
        _arm()
        return
    raise min(expired, key=lambda entry: entry[0])[1]()


@contextlib.contextmanager
def time_limit(seconds: float | None, error: Callable[[], BaseException]) -> Iterator[None]:
    """Raise ``error()`` in this thread if the block has not finished after ``seconds`` (None or ∞: no limit;
    not enforced outside the main thread). Limits nest: the earliest deadline fires first."""
    if seconds is None or math.isinf(seconds) or not enforced():
        yield
        return
    seconds = _validate.positive("limit", seconds)
    entry = (time.monotonic() + seconds, error)
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    _deadlines.append(entry)
    _arm()
    try:
        yield
    finally:
        _deadlines.remove(entry)
        _arm()
        if not _deadlines:
            signal.signal(signal.SIGALRM, previous)


# ---- guarded calls -------------------------------------------------------------------------------------------


def guarded_call(agent: str, where: str, fn: Callable[..., Any], *args: Any, limit: float | None = None,
                 option: str = "--call-timeout", **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, the user's code: any exception but Ctrl-C and dpverify's own errors becomes a
    :class:`UserCodeError`, ``sys.exit`` included; a call past ``limit`` seconds (default: the
    ``DPVERIFY_CALL_TIMEOUT`` of :mod:`dpverify.limits`) a :class:`UserCodeTimeout`."""
    if limit is None:
        limit = call_timeout()
    with time_limit(limit, lambda: UserCodeTimeout(agent, where, float(limit or 0.0), option)):
        try:
            return fn(*args, **kwargs)
        except (KeyboardInterrupt, LimitExceeded, DpverifyError):
            raise
        except BaseException as exc:  # the user's code: SystemExit, GeneratorExit, anything it raises
            raise UserCodeError(agent, where, type(exc).__name__, str(exc)) from exc


class GuardedAgent:
    """An agent whose protocol methods (:data:`AGENT_METHODS`) run as guarded calls; every other attribute
    is the agent's own (a property that raises is reported like a method)."""

    def __init__(self, agent: Any, name: str, limit: float | None = None) -> None:
        object.__setattr__(self, "_agent", agent)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_limit", limit)

    def __getattr__(self, attribute: str) -> Any:
        agent, name = object.__getattribute__(self, "_agent"), object.__getattribute__(self, "_name")
        try:
            value = getattr(agent, attribute)
        except (AttributeError, KeyboardInterrupt, LimitExceeded, DpverifyError):
            raise
        except BaseException as exc:  # a property of the user's code
            raise UserCodeError(name, attribute, type(exc).__name__, str(exc)) from exc
        if attribute in AGENT_METHODS and callable(value):
            limit = object.__getattribute__(self, "_limit")
            return lambda *args, **kwargs: guarded_call(name, attribute, value, *args, limit=limit, **kwargs)
        return value

    def __setattr__(self, attribute: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "_agent"), attribute, value)

    @property
    def unguarded(self) -> Any:
        """The agent itself."""
        return object.__getattribute__(self, "_agent")


class GuardedFactory:
    """A factory named by import path (``module.path:factory`` or ``file.py:factory``), resolved and called as
    the user's code: importing its module, calling it and every protocol method of the agent it returns are
    guarded calls. Picklable (the spec travels, the module is imported where it runs)."""

    def __init__(self, spec: str, resolve: Callable[[str], Callable[..., Any]],
                 limit: float | None = None) -> None:
        self.spec, self.resolve, self.limit = spec, resolve, limit
        self.__name__ = spec.rpartition(":")[2] or spec

    def factory(self) -> Callable[..., Any]:
        """The user's factory itself (its module imported as a guarded call)."""
        return guarded_call(self.spec, "importing its module", self.resolve, self.spec, limit=self.limit)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The agent, guarded. Arguments the factory's signature does not accept raise ``TypeError`` itself (the
        caller's mistake, an option the factory does not take), as a plain call would."""
        factory = self.factory()
        try:
            signature = inspect.signature(factory)
        except (TypeError, ValueError):  # a callable without a signature: let the call decide
            signature = None
        if signature is not None:
            signature.bind(*args, **kwargs)  # TypeError: the factory does not take these arguments
        agent = guarded_call(self.spec, "its factory", factory, *args, limit=self.limit, **kwargs)
        return agent if agent is None else GuardedAgent(agent, self.spec, self.limit)

    def __repr__(self) -> str:
        return f"GuardedFactory({self.spec!r})"
