"""The two operations of dpverify's small name → entry registries (audit notions, audit routes).

Each registry is a plain ``dict`` (iteration, ``in`` and indexing read it directly); these functions are the
one way to add to it and the one way to look a name up, with the same errors everywhere.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from dpverify.errors import InvalidParameterError


class Named(Protocol):
    """An entry of a registry: it carries its own name."""

    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


def register(table: dict[str, T], entry: T, kind: str, entry_type: type, replace: bool = False) -> T:
    """Add ``entry`` (an ``entry_type`` with a ``name``) to ``table``; an existing name is an error unless
    ``replace``. ``kind`` names the parameter in errors ("notion", "route")."""
    if not isinstance(entry, entry_type):
        raise InvalidParameterError(kind, f"must be an {entry_type.__name__}", type(entry).__name__)
    if entry.name in table and not replace:
        raise InvalidParameterError(kind, "is already registered", entry.name)
    table[entry.name] = entry
    return entry


def look_up(table: dict[str, T], name: object, parameter: str) -> T:
    """The entry registered as ``name`` (one error naming ``parameter`` and the choices otherwise)."""
    if not isinstance(name, str) or name not in table:
        raise InvalidParameterError(parameter, f"must be one of {', '.join(table)}", name)
    return table[name]
