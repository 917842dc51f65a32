"""Small validators shared by every frozen dataclass and public function.

Each returns the (possibly converted) value or raises :class:`~dpverify.errors.InvalidParameterError`
naming the parameter and the rule. Nothing is silently corrected: a float that is not an integer is
an error for an integer parameter, not truncated.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from dpverify.errors import InvalidParameterError


def real(name: str, value: object) -> float:
    """A finite real number (bool is rejected)."""
    if type(value) is not float and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise InvalidParameterError(name, "must be a real number", value)
    x = float(value)
    if math.isnan(x):
        raise InvalidParameterError(name, "must not be NaN", value)
    if math.isinf(x):
        raise InvalidParameterError(name, "must be finite", value)
    return x


def positive(name: str, value: object) -> float:
    """A finite real number > 0."""
    x = real(name, value)
    if x <= 0:
        raise InvalidParameterError(name, "must be > 0", value)
    return x


def non_negative(name: str, value: object) -> float:
    """A finite real number >= 0."""
    x = real(name, value)
    if x < 0:
        raise InvalidParameterError(name, "must be >= 0", value)
    return x


def open_unit(name: str, value: object) -> float:
    """A real number in the open interval (0, 1), e.g. a δ or a confidence level."""
    x = real(name, value)
    if not 0.0 < x < 1.0:
        raise InvalidParameterError(name, "must be in the open interval (0, 1)", value)
    return x


def integer(name: str, value: object, minimum: int | None = None) -> int:
    """An integer (an integral float such as 1e5 is accepted; 2.5 is not), optionally >= minimum."""
    if type(value) is int:  # the common case, without the abstract-base-class checks (bool is excluded)
        n = value
    elif isinstance(value, bool):
        raise InvalidParameterError(name, "must be an integer", value)
    elif isinstance(value, numbers.Integral):
        n = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        n = int(float(value))
    else:
        raise InvalidParameterError(name, "must be an integer", value)
    if minimum is not None and n < minimum:
        raise InvalidParameterError(name, f"must be an integer >= {minimum}", value)
    return n


def one_of(name: str, value: object, allowed: tuple[str, ...]) -> str:
    """One of a fixed set of strings."""
    if value not in allowed:
        raise InvalidParameterError(name, f"must be one of {', '.join(allowed)}", value)
    return str(value)


def options(name: str, value: object) -> tuple[tuple[str, object], ...]:
    """Keyword options given as a mapping or as (name, value) pairs, as sorted pairs (names must be strings)."""
    items: Any = tuple(value.items()) if isinstance(value, Mapping) else value
    try:
        pairs: tuple[Any, ...] = tuple(items)
    except TypeError:
        raise InvalidParameterError(name, "must map option names to values", value) from None
    for item in pairs:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            raise InvalidParameterError(name, "must map option names to values", value)
    return tuple(sorted(pairs))
