"""Resource limits checked *before* memory or time is spent: one mechanism for every command.

A computation whose size follows from its inputs (the trials and dimension of an audit, the users of a
per-user account, the states of an environment) estimates what it needs first and calls
:func:`require_memory` or :func:`require_work`. Above the limit it raises
:class:`~dpverify.errors.InvalidParameterError` naming the option responsible, the estimate and the
limit, instead of allocating until the kernel kills the process or running for hours.

The limits, and how to change them (environment variables, read at each check):

``DPVERIFY_MEMORY_LIMIT``
    bytes one computation may hold (suffixes K, M, G, T accepted: ``4G``). Default: half the machine's
    physical memory.
``DPVERIFY_WORK_LIMIT``
    elementary operations (samples drawn, user × block updates, …) one computation may perform.
    Default 2×10¹⁰, about a minute or two of vectorised numpy on one core.
``DPVERIFY_CALL_TIMEOUT``
    seconds one call of an agent's own code (its module's import, its factory, one ``begin_episode`` …)
    may take before it is stopped (:mod:`dpverify.usercode`). Default 60: a hang is met within a minute,
    while a correct agent's slowest call takes a small fraction of it (1.6 s, the slowest of the third-party
    zoo's correct agents at ``quick``, K = 1000: benchmarks/bench_call_times.py); the commands'
    ``--call-timeout`` sets it (worker processes inherit it).

Each variable is validated like an option, with one wording ("DPVERIFY_CALL_TIMEOUT must be a number of
seconds > 0 and finite (got 'abc')"); the command line checks all of them before any work
(:func:`check_environment`), so a bad value is never ignored nor blamed on another input.

Estimates are upper bounds of the dominant arrays and loops, not exact counts; a computation that
can stream instead (accounting chunk by chunk, audits in chunks of trials) estimates its chunk, not
its total.
"""

from __future__ import annotations

import math
import os

from dpverify.errors import InvalidParameterError

DEFAULT_WORK_LIMIT = 2e10
#: Largest count (episodes, stages, a dimension) dpverify accepts: above 2⁵³ counts are not exact in the floating
#: point that accounting uses.
MAX_COUNT = 2**53
_SUFFIXES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 << 30


def _parse_amount(variable: str, text: str) -> float:
    cleaned = text.strip().upper().removesuffix("B")
    suffix = cleaned[-1:] if cleaned[-1:] in _SUFFIXES else ""
    try:
        value = float(cleaned[: len(cleaned) - len(suffix)]) * _SUFFIXES[suffix]
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise InvalidParameterError(variable, "must be a number > 0 and finite, with an optional K, M, G or T "
                                    "suffix", text)
    return value


def memory_limit() -> float:
    """Bytes one computation may hold: ``DPVERIFY_MEMORY_LIMIT`` or half the physical memory."""
    text = os.environ.get("DPVERIFY_MEMORY_LIMIT")
    return _parse_amount("DPVERIFY_MEMORY_LIMIT", text) if text is not None else _physical_memory() / 2


def work_limit() -> float:
    """Elementary operations one computation may perform: ``DPVERIFY_WORK_LIMIT`` or 2e10."""
    text = os.environ.get("DPVERIFY_WORK_LIMIT")
    return _parse_amount("DPVERIFY_WORK_LIMIT", text) if text is not None else DEFAULT_WORK_LIMIT


DEFAULT_CALL_TIMEOUT = 60.0


def call_timeout() -> float:
    """Seconds one call of an agent's code may take: ``DPVERIFY_CALL_TIMEOUT`` or 60."""
    text = os.environ.get("DPVERIFY_CALL_TIMEOUT")
    if text is None:
        return DEFAULT_CALL_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise InvalidParameterError("DPVERIFY_CALL_TIMEOUT", "must be a number of seconds > 0 and finite", text)
    return value


def check_environment() -> None:
    """Validate every variable of this module that is set (module docstring), before any work."""
    memory_limit()
    work_limit()
    call_timeout()


def format_bytes(n: float) -> str:
    """``n`` bytes as a short human figure ("3.2 GiB")."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def require_memory(option: str, value: object, nbytes: float, what: str) -> None:
    """Refuse (InvalidParameterError naming ``option``) when ``what`` needs more than the memory limit."""
    limit = memory_limit()
    if not nbytes <= limit:  # also catches NaN/inf estimates
        raise InvalidParameterError(
            option,
            f"is too large: {what} needs about {format_bytes(nbytes)}, above the memory limit of "
            f"{format_bytes(limit)} (DPVERIFY_MEMORY_LIMIT)",
            value,
        )


def require_work(option: str, value: object, operations: float, what: str) -> None:
    """Refuse (InvalidParameterError naming ``option``) when ``what`` needs more than the work limit."""
    limit = work_limit()
    if not operations <= limit:
        raise InvalidParameterError(
            option,
            f"is too large: {what} needs about {operations:.2g} operations, above the work limit of "
            f"{limit:.2g} (DPVERIFY_WORK_LIMIT)",
            value,
        )


#: Address space a local worker process needs (its own Python, numpy and scipy): an estimate.
WORKER_BYTES = 150 << 20


def require_workers(option: str, workers: int) -> None:
    """Refuse more local worker processes than the memory limit allows (forking is not free): every pool checks
    (:func:`dpverify._pools.new_pool`), and the commands before any work."""
    require_memory(option, workers, workers * WORKER_BYTES, f"{workers} worker processes")
