"""Seeing what opaque code computes: a module global's function, reported before it runs.

A monolithic ``run()`` that computes its noisy statistics inline and hands them straight to
``np.linalg.solve(Lambda, b)`` offers no method to override. :func:`watch_calls` replaces, in that code's
module only, the module global the code calls through (``np`` for ``np.linalg.solve``) with a stand-in that
forwards every attribute to the original except the watched functions. A watched function calls the
``on_call(*args, **kwargs)`` registered *by the calling thread* first, which may replace the result (it
returns None to keep it); calls from any other thread run the original untouched.

That makes watches safe where adapters need them: several agents of one module alive at once (each
:class:`~dpverify.adapters.ClosedLoopAgent` runs its code in a thread of its own and registers its watch
there), several functions below one global (``np.linalg.solve`` and ``np.random.choice``), and watches ending
in any order. numpy itself, and every other module, is untouched; the module global is restored when the
last watch on it ends.
"""

from __future__ import annotations

import contextlib
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

from dpverify.errors import InvalidParameterError

Handler = Callable[..., Any]


class _Watched:
    """One watched function: the original and, per thread, the stack of handlers registered there."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.local = threading.local()
        self.active = 0  # registrations over all threads

    def handlers(self) -> list[Handler]:
        stack: list[Handler] | None = getattr(self.local, "stack", None)
        if stack is None:
            stack = self.local.stack = []
        return stack

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        stack = getattr(self.local, "stack", None)
        if stack:
            replaced = stack[-1](*args, **kwargs)
            if replaced is not None:
                return replaced
        return self.function(*args, **kwargs)


class _StandIn:
    """Forwards every attribute to ``target`` except the watched paths below ``prefix``."""

    def __init__(self, target: Any, prefix: tuple[str, ...], watched: dict[tuple[str, ...], _Watched]) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_prefix", prefix)
        object.__setattr__(self, "_watched", watched)

    def __getattr__(self, attribute: str) -> Any:
        target = object.__getattribute__(self, "_target")
        watched: dict[tuple[str, ...], _Watched] = object.__getattribute__(self, "_watched")
        path = object.__getattribute__(self, "_prefix") + (attribute,)
        value = getattr(target, attribute)
        if path in watched:
            return watched[path]
        if any(key[: len(path)] == path for key in watched):
            return _StandIn(value, path, watched)
        return value


class _Global:
    """The stand-in installed for one module global, and the functions watched below it."""

    def __init__(self, module: types.ModuleType, name: str) -> None:
        self.module, self.name = module, name
        self.original = getattr(module, name)
        self.watched: dict[tuple[str, ...], _Watched] = {}
        setattr(module, name, _StandIn(self.original, (), self.watched))

    def watch(self, path: tuple[str, ...]) -> _Watched:
        if path not in self.watched:
            function: Any = self.original
            for part in path:
                function = getattr(function, part, None)
            if not callable(function):
                raise InvalidParameterError("dotted", f"must name a callable below {self.name!r}",
                                            ".".join((self.name, *path)))
            self.watched[path] = _Watched(function)
        return self.watched[path]

    def release(self, path: tuple[str, ...]) -> bool:
        """One registration of ``path`` ended; True when nothing is watched any more (the global restored)."""
        watched = self.watched[path]
        watched.active -= 1
        if watched.active == 0:
            del self.watched[path]
        if self.watched:
            return False
        setattr(self.module, self.name, self.original)
        return True


_GLOBALS: dict[tuple[int, str], _Global] = {}
_LOCK = threading.Lock()


@contextlib.contextmanager
def watch_calls(module: types.ModuleType, dotted: str, on_call: Handler) -> Iterator[None]:
    """Within the block, calls of ``dotted`` (``"np.linalg.solve"``: a module global and attributes below it)
    made by code of ``module`` *in this thread* call ``on_call(*args, **kwargs)`` first; its result, when not
    None, replaces the function's (else the function runs as it would have)."""
    parts = dotted.split(".")
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        raise InvalidParameterError("dotted", "must name a module global and a function below it (np.linalg.solve)",
                                    dotted)
    if not isinstance(module, types.ModuleType) or not hasattr(module, parts[0]):
        raise InvalidParameterError("module", f"must be a module with a global {parts[0]!r}", module)
    if not callable(on_call):
        raise InvalidParameterError("on_call", "must be callable", type(on_call).__name__)
    key, path = (id(module), parts[0]), tuple(parts[1:])
    with _LOCK:
        installed = _GLOBALS.get(key)
        if installed is None:
            installed = _Global(module, parts[0])
        try:
            watched = installed.watch(path)
        except InvalidParameterError:
            if not installed.watched:
                setattr(module, parts[0], installed.original)
            raise
        _GLOBALS[key] = installed
        watched.active += 1
    handlers = watched.handlers()
    handlers.append(on_call)
    try:
        yield
    finally:
        handlers.pop()
        with _LOCK:
            if installed.release(path):
                del _GLOBALS[key]
