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
  a process (the command's or a worker's), nested limits keeping the earliest deadline, the timer armed
  lazily; :func:`guard_stretch` installs what the calls of an agent's run share once for the run. Elsewhere
  (a non-main thread) limits are not enforced, which :func:`enforced` tells.

``os._exit(n)`` called by the user's code during a guarded call raises in that call instead of ending the
process (said as "raised SystemExit: os._exit(n)"), so that a library caller — a test session — survives it;
anything else that ends the process (a crash, a signal, ``os._exit`` from a thread of the user's own) is
contained by the command line, which runs the user's code in a work process (:mod:`dpverify.cli._isolate`).

A :class:`~dpverify.errors.DpverifyError` raised by the user's code (the protocol's own refusals, such as
``InvalidParameterError("feature_norm_bound", ...)``, and the billboard's control flow) passes through
unchanged, except a :class:`~dpverify.errors.NumericalError` (the user's numbers: a negative ε given to
``DPGuarantee``), which is the user's like any other exception.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from dpverify import _interrupts, _validate
from dpverify.errors import DpverifyError, InvalidParameterError, NumericalError
from dpverify.limits import call_timeout

#: The agent methods that a :class:`GuardedAgent` guards (everything the protocol calls).
AGENT_METHODS = frozenset({"begin_episode", "end_episode", "act", "observe", "claimed_guarantee", "settings",
                           "reset"})


class UserCodeError(BaseException):
    """The user's code raised (or exited): ``agent``, ``where`` (the method) and what it raised.

    A ``BaseException``, like the limits' errors (module docstring): the user's fault ends the command, and no
    section of a report that records what could not run (``except Exception``) turns it into a verdict."""

    def __init__(self, agent: str, where: str, kind: str, message: str) -> None:
        self.agent, self.where, self.kind, self.message = agent, where, kind, message
        text = " ".join(message.split()) or "(no message)"
        super().__init__(f"the agent {agent} raised {kind}: {text} (in {where})")

    def within(self, context: str) -> UserCodeError:
        """The same error, its place made precise (``"episode 3 of a white-box run"``)."""
        return UserCodeError(self.agent, f"{self.where}, {context}", self.kind, self.message)

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
try:  # signal.signal wraps these C functions in enum conversions that cost microseconds a call
    from _signal import getsignal as _get_handler  # type: ignore[import-not-found]
    from _signal import signal as _set_handler
except ImportError:  # pragma: no cover - another interpreter
    _get_handler, _set_handler = signal.getsignal, signal.signal


class _Held:
    """How many limits and stretches hold ``SIGALRM``'s handler, and the handler it replaced."""

    alarm, replaced = 0, None


class _Stretch:
    """The stretch of guarded calls (:func:`guard_stretch`) in progress in the main thread, if any: its thread, its
    process, how many stretches are nested and how many guarded calls of it are in progress. Its calls take the
    fast path of :func:`guarded_call` (the alarm held and ``os._exit`` replaced for the stretch, the call counted
    here rather than in the table of every thread's calls)."""

    thread: int | None = None
    process = 0
    depth = 0
    calls = 0


def _forget_deadlines_in_child() -> None:
    """A forked worker keeps no deadline of its parent (timers are not inherited; the list is), nor its stretch."""
    _deadlines.clear()
    _Stretch.thread, _Stretch.depth, _Stretch.calls = None, 0, 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_deadlines_in_child)


def enforced() -> bool:
    """Whether limits can be enforced here: the main thread of a process with ``SIGALRM``."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _hold_alarm() -> None:
    """The handler installed while anything holds it (and again if the user's code replaced it)."""
    if not _Held.alarm:
        _Held.replaced = _set_handler(signal.SIGALRM, _on_alarm)
    elif _get_handler(signal.SIGALRM) is not _on_alarm:
        _set_handler(signal.SIGALRM, _on_alarm)
    _Held.alarm += 1


def _release_alarm() -> None:
    _Held.alarm -= 1
    if not _Held.alarm:  # no timer left armed, the replaced handler and the real os._exit back
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        _set_handler(signal.SIGALRM, _Held.replaced)
        _replace_exit(False)


def _arm_within(seconds: float) -> None:
    """The timer made to fire within ``seconds``, lazily: one armed to fire sooner is left (the handler, finding no
    deadline passed, re-arms it for the earliest), so a stretch of short calls arms it about once per limit."""
    armed = signal.getitimer(signal.ITIMER_REAL)[0]
    if not armed or armed > seconds:
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-4))


def _on_alarm(signum: int, frame: object) -> None:
    now = time.monotonic()
    expired = [entry for entry in _deadlines if entry[0] <= now]
    if expired:  # the earliest fires; its block re-arms the timer for the others when it ends (its error unwound)
        entry = min(expired, key=lambda e: e[0])
        _deadlines.remove(entry)
        raise entry[1]()
    if _deadlines:
        _arm_within(min(d for d, _ in _deadlines) - now)


def _start_limit(seconds: float | None, error: Callable[[], BaseException]) -> Any:
    """The armed deadline of a block limited to ``seconds`` (None: no limit, or not enforced here)."""
    if seconds is None or seconds == math.inf or not enforced():
        return None
    if type(seconds) is not float or not seconds > 0.0:
        seconds = _validate.positive("limit", seconds)
    entry = (time.monotonic() + seconds, error)
    _hold_alarm()
    _deadlines.append(entry)
    _arm_within(seconds)
    return entry


def _drop_deadline(entry: tuple[float, Callable[[], BaseException]]) -> None:
    if _deadlines and _deadlines[-1] is entry:  # (limits nest: the latest ends first)
        _deadlines.pop()
    elif entry in _deadlines:
        _deadlines.remove(entry)
    elif _deadlines:  # it fired: the enclosing blocks' deadlines need the timer again
        _arm_within(min(d for d, _ in _deadlines) - time.monotonic())


def _end_limit(entry: Any) -> None:
    if entry is not None:
        _drop_deadline(entry)
        _release_alarm()


@contextlib.contextmanager
def time_limit(seconds: float | None, error: Callable[[], BaseException]) -> Iterator[None]:
    """Raise ``error()`` in this thread if the block has not finished after ``seconds`` (None or ∞: no limit;
    not enforced outside the main thread). Limits nest: the earliest deadline fires first."""
    entry = _start_limit(seconds, error)
    try:
        yield
    finally:
        _end_limit(entry)


# ---- os._exit in a guarded call --------------------------------------------------------------------------

_REAL_EXIT = os._exit
_guarded: dict[tuple[int, int], int] = {}  # (process, thread) → guarded calls in progress there


class ExitCalled(BaseException):
    """``os._exit(status)`` called by the user's code in a guarded call: raised there instead of ending the process."""

    def __init__(self, status: object) -> None:
        super().__init__(f"os._exit({status!r})")
        self.status = status


def _exit_or_raise(status: int) -> Any:
    """``os._exit`` while a guarded call runs: raise in that call's thread, exit for real anywhere else (another
    thread, a process forked meanwhile — whose ``os._exit`` ends it as it should)."""
    here = (os.getpid(), threading.get_ident())
    if _guarded.get(here) or (_Stretch.calls and here == (_Stretch.process, _Stretch.thread)):
        raise ExitCalled(status)
    _REAL_EXIT(status)


def _replace_exit(guarding: bool) -> None:
    """``os._exit`` (and ``posix._exit``) replaced while a guarded call runs or the alarm is held, real otherwise."""
    if guarding or not (_guarded or _Held.alarm):
        for module in (os, *([sys.modules["posix"]] if "posix" in sys.modules else [])):
            module._exit = _exit_or_raise if guarding else _REAL_EXIT  # type: ignore[attr-defined]


@contextlib.contextmanager
def guard_stretch() -> Iterator[None]:
    """A stretch of guarded calls (an agent's run): ``SIGALRM``'s handler (in the main thread) and the ``os._exit``
    replacement are installed once for it rather than around each call, and taken back at its end. Each call
    keeps its own limit; between calls ``os._exit`` exits for real and an alarm with no deadline passed does
    nothing."""
    held = enforced()
    if held:
        _hold_alarm()
        _Stretch.thread, _Stretch.process = threading.get_ident(), os.getpid()
        _Stretch.depth += 1
    _replace_exit(True)
    try:
        yield
    finally:
        if held:
            _Stretch.depth -= 1
            if not _Stretch.depth:
                _Stretch.thread = None
            _release_alarm()
        _replace_exit(False)


# ---- guarded calls -------------------------------------------------------------------------------------------


def guarded_call(agent: str, where: str, fn: Callable[..., Any], *args: Any, limit: float | None = None,
                 option: str = "--call-timeout", **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, the user's code: any exception but Ctrl-C and dpverify's own errors becomes a
    :class:`UserCodeError`, ``sys.exit`` included (and a ``KeyboardInterrupt`` the code raises itself, where a
    stop handler tells the two apart: :mod:`dpverify._interrupts`); a call past ``limit`` seconds (default: the
    ``DPVERIFY_CALL_TIMEOUT`` of :mod:`dpverify.limits`) a :class:`UserCodeTimeout`. A call in the thread of a
    :func:`guard_stretch` takes a short path: the stretch holds the alarm and counts its calls."""
    if limit is None:
        limit = call_timeout()
    if _Stretch.thread == threading.get_ident() and type(limit) is float and 0.0 < limit < math.inf:
        return _call_in_stretch(agent, where, fn, args, kwargs, limit, option)
    error = functools.partial(UserCodeTimeout, agent, where, float(limit or 0.0), option)
    entry = _start_limit(limit, error)
    key = (os.getpid(), threading.get_ident())
    _guarded[key] = _guarded.get(key, 0) + 1
    try:
        return _users_call(agent, where, fn, args, kwargs)
    finally:
        _guarded[key] -= 1
        if not _guarded[key]:
            del _guarded[key]
            _replace_exit(False)
        _end_limit(entry)


#: ``SIGALRM`` as a plain int, for the C functions a guarded call in a stretch calls directly.
_SIGALRM = int(signal.SIGALRM)


def _call_in_stretch(agent: str, where: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                     limit: float, option: str) -> Any:
    """:func:`guarded_call` in the thread of a :func:`guard_stretch` (a finite ``limit``): the call's deadline is
    kept with the others, the alarm held again if the user's code took it and the timer armed lazily; the call is
    counted in the stretch rather than in the table of every thread's calls."""
    entry = (time.monotonic() + limit, functools.partial(UserCodeTimeout, agent, where, limit, option))
    _deadlines.append(entry)
    if _get_handler(_SIGALRM) is not _on_alarm:
        _set_handler(_SIGALRM, _on_alarm)
    _arm_within(limit)
    _Stretch.calls += 1
    try:
        return _users_call(agent, where, fn, args, kwargs)
    finally:
        _Stretch.calls -= 1
        _drop_deadline(entry)


def _users_call(agent: str, where: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` with ``os._exit`` replaced, what it raises said as a guarded call says it
    (:func:`_as_users_error`): the call itself, for both paths of :func:`guarded_call`."""
    if os._exit is not _exit_or_raise:
        _replace_exit(True)
    try:
        return fn(*args, **kwargs)
    except BaseException as exc:
        said = _as_users_error(exc, agent, where)
        if said is None:
            raise
        raise said from (None if isinstance(exc, ExitCalled) else exc)


def _as_users_error(exc: BaseException, agent: str, where: str) -> UserCodeError | None:
    """What a guarded call raises for ``exc``: None for ``exc`` itself (Ctrl-C or a stop signal, a limit, an error
    already said, the protocol's refusals and the billboard's control flow), else the user's error."""
    if isinstance(exc, KeyboardInterrupt):  # the user's Ctrl-C ends the command; one the code raised is its own
        return UserCodeError(agent, where, "KeyboardInterrupt", str(exc)) if _interrupts.raised_by_code() else None
    if isinstance(exc, (LimitExceeded, UserCodeError)):
        return None
    if isinstance(exc, ExitCalled):  # said like sys.exit, the process kept (module docstring)
        return UserCodeError(agent, where, "SystemExit", str(exc))
    if isinstance(exc, DpverifyError) and not isinstance(exc, NumericalError):  # (a NumericalError: the user's numbers)
        return None
    return UserCodeError(agent, where, type(exc).__name__, str(exc))  # SystemExit, GeneratorExit, anything else


class GuardedAgent:
    """An agent whose protocol methods (:data:`AGENT_METHODS`) run as guarded calls; every other attribute
    is the agent's own (a property that raises is reported like a method). Each lookup reads the agent's
    attribute afresh, so an agent that replaces a method is called through its new one."""

    __slots__ = ("_agent", "_name", "_limit")

    def __init__(self, agent: Any, name: str, limit: float | None = None) -> None:
        object.__setattr__(self, "_agent", agent)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_limit", call_timeout() if limit is None else limit)

    def __getattr__(self, attribute: str) -> Any:
        if attribute in GuardedAgent.__slots__:  # (not set yet: a copy being made)
            raise AttributeError(attribute)
        try:
            return getattr(self._agent, attribute)
        except (AttributeError, KeyboardInterrupt, LimitExceeded, UserCodeError, DpverifyError):
            raise
        except BaseException as exc:  # a property of the user's code
            raise UserCodeError(self._name, attribute, type(exc).__name__, str(exc)) from exc

    def __setattr__(self, attribute: str, value: Any) -> None:
        setattr(self._agent, attribute, value)

    def __reduce__(self) -> tuple[Any, ...]:  # (a copy, or a pickle, guards its own copy of the agent)
        return (GuardedAgent, (self._agent, self._name, self._limit))

    @property
    def unguarded(self) -> Any:
        """The agent itself."""
        return self._agent


class _ProtocolMethod:
    """A protocol method as a :class:`GuardedAgent` looks it up (found on the class, so that a protocol call does
    not first fail a lookup): the agent's attribute, called as a guarded call when it is callable."""

    __slots__ = ("attribute",)

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, guarded: GuardedAgent | None, owner: type | None = None) -> Any:
        if guarded is None:
            return self
        value = guarded.__getattr__(self.attribute)
        if not callable(value):
            return value
        return functools.partial(_protocol_call, guarded._name, self.attribute, value, guarded._limit)


def _protocol_call(agent: str, where: str, fn: Callable[..., Any], limit: float, /, *args: Any, **kwargs: Any) -> Any:
    """A :class:`GuardedAgent`'s protocol call: :func:`guarded_call` of ``fn``, straight to its path in a stretch."""
    if _Stretch.thread == threading.get_ident() and type(limit) is float and 0.0 < limit < math.inf:
        return _call_in_stretch(agent, where, fn, args, kwargs, limit, "--call-timeout")
    return guarded_call(agent, where, fn, *args, limit=limit, **kwargs)


for _method in AGENT_METHODS:
    setattr(GuardedAgent, _method, _ProtocolMethod(_method))


class GuardedFactory:
    """A factory named by import path (``module.path:factory`` or ``file.py:factory``), resolved and called as
    the user's code: importing its module, calling it and every protocol method of the agent it returns are
    guarded calls. Picklable (the spec travels, the module is imported where it runs)."""

    def __init__(self, spec: str, resolve: Callable[[str], Callable[..., Any]],
                 limit: float | None = None) -> None:
        self.spec, self.resolve, self.limit = spec, resolve, limit
        self.__name__ = spec.rpartition(":")[2] or spec
        self._resolved: Callable[..., Any] | None = None  # the factory resolved in this process
        self._bindable: set[tuple[int, frozenset[str]]] = set()  # call shapes its signature accepted

    def __getstate__(self) -> dict[str, Any]:  # (the spec travels; the module is imported where it runs)
        return {**self.__dict__, "_resolved": None, "_bindable": set()}

    def factory(self) -> Callable[..., Any]:
        """The user's factory itself (its module imported as a guarded call)."""
        return guarded_call(self.spec, "importing its module", self.resolve, self.spec, limit=self.limit)

    def checked(self) -> GuardedFactory:
        """This factory with its path resolved now (an error at once if it does not import), the resolution kept
        for the calls that follow in this process (a trial builds an agent per run: one import, not one a run)."""
        self._resolved = self.factory()
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The agent, guarded. Arguments the factory's signature does not accept raise ``TypeError`` itself (the
        caller's mistake, an option the factory does not take), as a plain call would."""
        factory = self._resolved
        if factory is None:
            factory = self._resolved = self.factory()
        shape = (len(args), frozenset(kwargs))  # (whether a call binds depends on its positions and names only)
        if shape not in self._bindable:
            try:
                signature: inspect.Signature | None = inspect.signature(factory)
            except (TypeError, ValueError):  # a callable without a signature: the call decides
                signature = None
            if signature is not None:
                signature.bind(*args, **kwargs)  # TypeError: the factory does not take these arguments
            self._bindable.add(shape)
        agent = guarded_call(self.spec, "its factory", factory, *args, limit=self.limit, **kwargs)
        acts = "act" if callable(getattr(agent, "act", None)) else "begin_episode"  # step-level or table
        missing = [m for m in (acts, "end_episode") if not callable(getattr(agent, m, None))]
        if missing:
            raise InvalidParameterError(f"the factory {self.spec}", "must return an agent with begin_episode() (or "
                                        "act(h, state)) and end_episode(trajectory) (docs/auditing.md, Third-party "
                                        "agents)", f"{type(agent).__name__} without {' and '.join(missing)}")
        return GuardedAgent(agent, self.spec, self.limit)

    def __repr__(self) -> str:
        return f"GuardedFactory({self.spec!r})"


# ---- naming the user's factory -----------------------------------------------------------------------------


def is_factory_path(agent: str) -> bool:
    """Whether ``agent`` names a factory by import path (``module.path:factory``, ``file.py:factory``) rather
    than a registered agent."""
    return isinstance(agent, str) and ":" in agent


def _import_target(module: str) -> Any:
    """Import ``module`` (a dotted path, the current directory importable as with ``python -m``) or load a
    ``.py`` file (a module that fails while loading is not left half-made in ``sys.modules``)."""
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
        try:
            spec.loader.exec_module(loaded)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return loaded
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        cwd = os.getcwd()
        if cwd in sys.path or (exc.name is not None and not module.startswith(exc.name)):
            raise  # a module the user's module imports is missing: that is the error to show
        sys.path.append(cwd)
        return importlib.import_module(module)


def import_factory(agent: str) -> Callable[..., Any]:
    """The factory ``"module.path:factory"`` or ``"file.py:factory"`` names, imported (an error naming ``agent``
    when the path does not import or names no callable; whatever else the module raises is its own)."""
    module, _, attribute = agent.rpartition(":")
    if not module.strip() or not attribute.strip():
        raise InvalidParameterError("agent", "must name a module and a factory around the colon "
                                    "(module.path:factory or file.py:factory)", agent)
    try:
        value: Any = _import_target(module)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError, SyntaxError) as exc:
        raise InvalidParameterError("agent", f"factory path does not import ({exc})", agent) from None
    if not callable(value):
        raise InvalidParameterError("agent", "must name a callable factory", agent)
    return value


#: The guarded factories of the paths named in this process, by (path, working directory, limit): a trial's agent
#: is built from its path each run, resolved once.
_FACTORIES: dict[tuple[str, str, float | None], GuardedFactory] = {}


def guarded_factory(agent: str, limit: float | None = None) -> GuardedFactory:
    """The :class:`GuardedFactory` of a factory path, its module imported once in this process (guarded), so that
    a path that does not import is refused at once (a relative path is read from the working directory)."""
    key = (agent, os.getcwd(), limit)
    factory = _FACTORIES.get(key)
    if factory is None:
        factory = GuardedFactory(agent, import_factory, limit).checked()
        if len(_FACTORIES) >= 64:
            _FACTORIES.clear()
        _FACTORIES[key] = factory
    return factory


# ---- what the user's agent declares ------------------------------------------------------------------------

#: The privacy notions an agent may declare (``privacy_notion``).
NOTIONS = ("jdp", "ldp")


def declared_notion(agent: Any) -> str | None:
    """The agent's ``privacy_notion``: None when it declares none, else "jdp" or "ldp" (any other value is
    malformed: an error naming what was expected, before anything runs)."""
    notion = getattr(agent, "privacy_notion", None)
    if notion is None or (isinstance(notion, str) and notion in NOTIONS):
        return notion
    raise InvalidParameterError("privacy_notion", f"must be one of {', '.join(map(repr, NOTIONS))} (what the agent "
                                "declares it protects; docs/auditing.md, Third-party agents)", notion)
