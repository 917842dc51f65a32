"""Seeing what opaque code computes: a module global's function, reported before it runs.

A monolithic ``run()`` that computes its noisy statistics inline and hands them straight to
``np.linalg.solve(Lambda, b)`` offers no method to override. :func:`watch_calls` replaces, in that code's
module only, the module global the code calls through (``np`` for ``np.linalg.solve``) with a stand-in that
forwards every attribute to the original except the watched function, which calls ``on_call(*args, **kwargs)``
first and may replace the result (``on_call`` returns None to keep it). numpy itself, and every other module,
is untouched; the module global is restored when the ``with`` block ends.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Callable, Iterator
from typing import Any

from dpverify.errors import InvalidParameterError


class _StandIn:
    """Forwards every attribute to ``target`` except ``name`` (a dotted path below it), which is ``replacement``."""

    def __init__(self, target: Any, path: list[str], replacement: Callable[..., Any]) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_replacement", replacement)

    def __getattr__(self, attribute: str) -> Any:
        target, path = object.__getattribute__(self, "_target"), object.__getattribute__(self, "_path")
        value = getattr(target, attribute)
        if attribute != path[0]:
            return value
        if len(path) == 1:
            return object.__getattribute__(self, "_replacement")
        return _StandIn(value, path[1:], object.__getattribute__(self, "_replacement"))


@contextlib.contextmanager
def watch_calls(module: types.ModuleType, dotted: str, on_call: Callable[..., Any]) -> Iterator[None]:
    """Within the block, calls of ``dotted`` (``"np.linalg.solve"``: a module global and attributes below it)
    made by code of ``module`` call ``on_call(*args, **kwargs)`` first; its result, when not None, replaces the
    function's (else the function runs as it would have)."""
    parts = dotted.split(".")
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        raise InvalidParameterError("dotted", "must name a module global and a function below it (np.linalg.solve)",
                                    dotted)
    if not isinstance(module, types.ModuleType) or not hasattr(module, parts[0]):
        raise InvalidParameterError("module", f"must be a module with a global {parts[0]!r}", module)
    original = getattr(module, parts[0])
    function: Any = original
    for part in parts[1:]:
        function = getattr(function, part, None)
    if not callable(function):
        raise InvalidParameterError("dotted", f"must name a callable below {parts[0]!r}", dotted)

    def watched(*args: Any, **kwargs: Any) -> Any:
        replaced = on_call(*args, **kwargs)
        return function(*args, **kwargs) if replaced is None else replaced

    setattr(module, parts[0], _StandIn(original, parts[1:], watched))
    try:
        yield
    finally:
        setattr(module, parts[0], original)
