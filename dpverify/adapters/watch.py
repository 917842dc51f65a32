"""Seeing what opaque code computes: a module global's function, reported before it runs.

A monolithic ``run()`` that computes its noisy statistics inline and hands them straight to
``np.linalg.solve(Lambda, b)`` offers no method to override. :func:`watch_calls` replaces, in that code's
module only, the module global the code calls through (``np`` for ``np.linalg.solve``) with a stand-in that
forwards every attribute to the original except the watched functions. A watched function calls the
``on_call(*args, **kwargs)`` registered *in the calling context* (the thread or greenlet that entered the
watch: a :class:`contextvars.ContextVar`) first, which may replace the result (it returns None to keep it);
calls from any other context run the original untouched.

That makes watches safe where adapters need them: several agents of one module alive at once (each
:class:`~dpverify.adapters.ClosedLoopAgent` runs its code in a greenlet of its own and registers its watch
there), several functions below one global (``np.linalg.solve`` and ``np.random.choice``), and watches ending
in any order. numpy itself, and every other module, is untouched; the module global is restored when the
last watch on it ends.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

from dpverify.errors import InvalidParameterError

Handler = Callable[..., Any]


class _Watched:
    """One watched function: the original, and how many registrations it has over all contexts."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.active = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        handler = next((h for w, h in reversed(_REGISTERED.get()) if w is self), None)  # the latest here
        replaced = None if handler is None else handler(*args, **kwargs)
        return self.function(*args, **kwargs) if replaced is None else replaced


#: The watches registered in this context, latest last (a tuple: a context copied from this one shares none).
_REGISTERED: contextvars.ContextVar[tuple[tuple[_Watched, Handler], ...]] = contextvars.ContextVar(
    "dpverify_watches", default=())


class _StandIn:
    """Forwards every attribute to ``target`` except the watched paths below ``prefix`` (of ``owner``)."""

    def __init__(self, target: Any, prefix: tuple[str, ...], owner: _Global) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_prefix", prefix)
        object.__setattr__(self, "_owner", owner)

    def __getattr__(self, attribute: str) -> Any:
        get = object.__getattribute__
        owner: _Global = get(self, "_owner")
        path = get(self, "_prefix") + (attribute,)
        value = getattr(get(self, "_target"), attribute)
        watched = owner.watched.get(path)
        if watched is not None:
            return watched
        return _StandIn(value, path, owner) if path in owner.prefixes else value


class _Global:
    """The stand-in installed for one module global, the functions watched below it and the paths leading
    to them (``np.linalg`` for ``np.linalg.solve``)."""

    def __init__(self, module: types.ModuleType, name: str) -> None:
        self.module, self.name = module, name
        self.original = getattr(module, name)
        self.watched: dict[tuple[str, ...], _Watched] = {}
        self.prefixes: frozenset[tuple[str, ...]] = frozenset()
        setattr(module, name, _StandIn(self.original, (), self))

    def _changed(self) -> None:
        self.prefixes = frozenset(key[:i] for key in self.watched for i in range(1, len(key)))

    def watch(self, path: tuple[str, ...]) -> _Watched:
        if path not in self.watched:
            function: Any = self.original
            for part in path:
                function = getattr(function, part, None)
            if not callable(function):
                raise InvalidParameterError("dotted", f"must name a callable below {self.name!r}",
                                            ".".join((self.name, *path)))
            self.watched[path] = _Watched(function)
            self._changed()
        return self.watched[path]

    def release(self, path: tuple[str, ...]) -> bool:
        """One registration of ``path`` ended; True when nothing is watched any more (the global restored)."""
        watched = self.watched[path]
        watched.active -= 1
        if watched.active == 0:
            del self.watched[path]
            self._changed()
        if self.watched:
            return False
        setattr(self.module, self.name, self.original)
        return True


_GLOBALS: dict[tuple[int, str], _Global] = {}
_LOCK = threading.Lock()


@contextlib.contextmanager
def watch_calls(module: types.ModuleType, dotted: str, on_call: Handler) -> Iterator[None]:
    """Within the block, calls of ``dotted`` (``"np.linalg.solve"``: a module global and attributes below it)
    made by code of ``module`` *in this context* (thread or greenlet) call ``on_call(*args, **kwargs)`` first;
    its result, when not None, replaces the function's (else the function runs as it would have)."""
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
    entry = (watched, on_call)
    _REGISTERED.set((*_REGISTERED.get(), entry))
    try:
        yield
    finally:
        _REGISTERED.set(tuple(e for e in _REGISTERED.get() if e is not entry))  # wherever it now stands
        with _LOCK:
            if installed.release(path):
                del _GLOBALS[key]
