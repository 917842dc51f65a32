"""Checks the sub-commands run before any work: worker counts, cluster addresses, audit sizes.

Each estimates from the options alone and refuses through :mod:`dpverify.limits` (one mechanism for
every resource), so that nothing is allocated, forked or connected to before the input is known to fit.
"""

from __future__ import annotations

import re

from dpverify.errors import InvalidParameterError
from dpverify.limits import require_memory, require_work

#: Address space a local worker process needs (its own Python, numpy and scipy): an estimate.
_WORKER_BYTES = 150 << 20
#: Trials per chunk the audit engine holds at once per worker (its chunk size, fixed for reproducibility).
_AUDIT_CHUNK = 1 << 17
#: Arrays of one chunk alive at once per worker (outputs of both sides, features, temporaries).
_AUDIT_ARRAYS_PER_CHUNK = 6
#: Share of the trials kept in memory for selection (the engine's selection split, both sides).
_AUDIT_SELECTION_KEPT = 2 * 0.2

_ADDRESS = re.compile(r"^(tcp|tls|inproc|ucx|ws|wss)://[^\s:/]+:(\d{1,5})$")


def check_workers(option: str, workers: int | None) -> None:
    """Refuse more local worker processes than the memory limit allows (forking is not free)."""
    if workers is not None:
        require_memory(option, workers, workers * _WORKER_BYTES, f"{workers} worker processes")


def check_scheduler(option: str, address: str | None) -> None:
    """A Dask scheduler address must look like ``tcp://host:port`` (port 1..65535) before connecting."""
    if address is None:
        return
    match = _ADDRESS.match(address)
    if match is None or not 0 < int(match.group(2)) < 65536:
        raise InvalidParameterError(option, "must be a scheduler address like tcp://host:8786", address)


def check_audit_size(trials: int, numbers_per_trial: int, workers: int | None, dim: int | None = None) -> None:
    """Refuse an audit whose trials × outputs cannot fit in memory or time (the option named is
    ``--dim`` when one trial at that dimension is already too large, else ``--trials``)."""
    parallel = max(1, workers or 1)
    per_chunk = 8.0 * numbers_per_trial * min(trials, _AUDIT_CHUNK) * _AUDIT_ARRAYS_PER_CHUNK * parallel
    total = per_chunk + 8.0 * numbers_per_trial * _AUDIT_SELECTION_KEPT * trials
    what = f"an audit of {trials} trials per side with {numbers_per_trial} numbers per trial"
    smallest = 8.0 * numbers_per_trial * 2 * _AUDIT_ARRAYS_PER_CHUNK * parallel
    if dim is not None and smallest > 0 and not _fits(smallest):
        require_memory("--dim", dim, smallest, f"one trial at dimension {dim} ({numbers_per_trial} numbers)")
    require_memory("--trials", trials, total, what)
    require_work("--trials", trials, 2.0 * trials * numbers_per_trial, what)


def _fits(nbytes: float) -> bool:
    from dpverify.limits import memory_limit

    return nbytes <= memory_limit()
