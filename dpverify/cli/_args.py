"""Argument types shared by every sub-command: one parser for numbers and one for integers.

A bad value becomes one line naming the option (argparse prefixes "argument --name:"). Every
sub-command uses these, so ``--episodes 1e3`` means 1000 everywhere, ``2.5`` is never truncated,
NaN and infinities are refused where they are read, and negative numbers (``--delta -1e-5``) reach the
option's own range check instead of being taken for an option (see ``OneLineParser``).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

#: Largest integer an option accepts: far above any size the limits allow, small enough to print.
_MAX_INTEGER = 10**18


def number(text: str) -> float:
    """A finite real number in any float syntax ("1e5", "0.5", "-1e-5"); NaN and ±inf are refused."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {text!r})") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {text!r})")
    return value


def count(text: str) -> int:
    """An integer written as "1000" or "1e5" (an integral float); "2.5" is rejected, not truncated."""
    try:
        value = int(text)
    except ValueError:
        try:
            as_float = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer (got {text!r})") from None
        if not math.isfinite(as_float) or not as_float.is_integer():
            raise argparse.ArgumentTypeError(f"must be an integer (got {text!r})") from None
        value = int(as_float)
    if abs(value) > _MAX_INTEGER:
        raise argparse.ArgumentTypeError(f"must be an integer of at most {_MAX_INTEGER:.0e} in size (got {text!r})")
    return value


def count_at_least(minimum: int) -> Callable[[str], int]:
    """Like :func:`count`, also refusing values below ``minimum`` (so every command states the same rule)."""

    def parse(text: str) -> int:
        value = count(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum} (got {text!r})")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def seconds(text: str) -> float:
    """A positive, finite number of seconds (a time limit)."""
    value = number(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0 (got {text!r})")
    return value


def add_time_limits(parser: argparse.ArgumentParser, default: float | None, what: str,
                    unset: str = "set by --budget") -> None:
    """``--timeout`` (the whole command; ``default`` seconds, or None, described by ``unset``) and
    ``--call-timeout`` (one call of the agent's own code; default 60 s, ``DPVERIFY_CALL_TIMEOUT``), enforced by
    :mod:`dpverify.usercode`."""
    shown = unset if default is None else f"default {default:g}"
    parser.add_argument("--timeout", type=seconds, default=default,
                        help=f"stop {what} after this many seconds of wall time ({shown})")
    parser.add_argument("--call-timeout", type=seconds, default=None,
                        help="stop when one call of the agent's own code (import, factory, begin_episode, ...) takes "
                             "longer than this many seconds (default 60, or DPVERIFY_CALL_TIMEOUT)")
