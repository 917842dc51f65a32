"""Where chunks of trials run: in this process, on local worker processes, or on a Dask cluster.

Every executor has the same two methods: ``map(fn, items, on_done)`` returns ``[fn(x) for x in items]``
in the order of ``items`` (calling ``on_done()`` as each finishes, for the progress bar), and
``close()``. Seeds belong to the chunks (see :mod:`dpverify.audit.trials`), never to the executor, so
all three give identical audit results.

- :class:`SerialExecutor` — one core, no pickling; what the throughput benchmark measures.
- :class:`ProcessExecutor` — ``concurrent.futures.ProcessPoolExecutor`` (the default); adaptive: work too
  small to gain from processes runs in the calling process, and one pool serves every ``map`` until
  ``close()`` (so a zoo or a command that passes one executor to many audits starts one pool).
- :class:`DaskExecutor` — a ``distributed.Client`` connected to a scheduler address
  (``tcp://host:port``), so large audits scale past one machine; dask is imported only here.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from dpverify import _validate
from dpverify._pools import abandon, gather, new_pool
from dpverify.errors import InvalidParameterError
from dpverify.usercode import time_limit

Callback = Callable[[], None] | None
_Self = TypeVar("_Self", bound="_Closing")


class _Closing:
    """``close()`` (nothing to release by default), also at the end of a ``with`` block."""

    def close(self) -> None:
        return None

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SerialExecutor(_Closing):
    """Runs every chunk in the calling process, in order."""

    name = "serial"

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], on_done: Callback = None) -> list[Any]:
        results = []
        for item in items:
            results.append(fn(item))
            if on_done is not None:
                on_done()
        return results


def _check_picklable(items: Sequence[Any], where: str) -> None:
    if not items:
        return
    try:
        pickle.dumps(items[0])
    except Exception as exc:  # pickling can fail with many exception types
        raise InvalidParameterError(
            "mechanism",
            f"must be picklable to run on {where} (define it at module level, or use the serial executor)",
            type(exc).__name__,
        ) from None


#: Cost model of the adaptive :class:`ProcessExecutor` (seconds, bytes per second); deliberately pessimistic
#: about parallel work, so that a map goes to the pool only when it clearly pays.
POOL_STARTUP_SECONDS = 0.15
ITEM_OVERHEAD_SECONDS = 0.002
TRANSFER_BYTES_PER_SECOND = 1e8
PARALLEL_GAIN_REQUIRED = 0.8


def _free_cpus() -> float:
    """CPUs not busy with other processes: the CPU count minus the 1-minute load beyond this process."""
    cpus = float(os.cpu_count() or 1)
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):  # not available on this platform
        return cpus
    return max(1.0, cpus - max(0.0, load - 1.0))


class ProcessExecutor(_Closing):
    """Runs chunks on a pool of local worker processes (created on first use, reused until close).

    Adaptive by default: the first item of every ``map`` runs in this process and is timed; the rest go
    to the pool only if the estimated parallel time (pool start-up when no pool is running yet, per-item
    overhead, transfer of results of the first item's size, the work split over the workers that have a
    free CPU, judged by the load average) is below :data:`PARALLEL_GAIN_REQUIRED` × the estimated serial
    time. So a small audit never pays for a pool
    and the executor is not slower than :class:`SerialExecutor`. Once a pool runs, a map starts on it at once.
    While the workers take items from the front of the queue, this process takes them from its end, until none
    is left unstarted: no CPU idles while the first item is timed or the last ones run. Results do not depend
    on where an item ran (seeds belong to the items). ``adaptive=False`` sends every item to the pool.
    """

    name = "processes"

    def __init__(self, workers: int | None = None, *, adaptive: bool = True):
        self.workers = (
            _validate.integer("workers", workers, minimum=1) if workers is not None else (os.cpu_count() or 1)
        )
        if not isinstance(adaptive, bool):
            raise InvalidParameterError("adaptive", "must be a bool", adaptive)
        self.adaptive = adaptive
        self._pool: ProcessPoolExecutor | None = None
        #: How many items ran here and on the pool (for benchmarks and tests).
        self.items_here = 0
        self.items_pooled = 0

    def _worth_a_pool(self, seconds: float, result: Any, remaining: int, free: float | None = None) -> bool:
        """Whether ``remaining`` more items like the first (``seconds`` each, results like ``result``)
        finish clearly sooner on the pool. ``free``: CPUs not busy with other work (default: measured)."""
        serial = seconds * remaining
        size = float(getattr(result, "nbytes", 0) or 0)
        per_item = ITEM_OVERHEAD_SECONDS + 2.0 * size / TRANSFER_BYTES_PER_SECOND
        startup = POOL_STARTUP_SECONDS if self._pool is None else 0.0
        parallelism = min(float(self.workers), float(remaining), _free_cpus() if free is None else free)
        if parallelism <= 1.0:
            return False
        parallel = startup + remaining * per_item + serial / parallelism
        return parallel < PARALLEL_GAIN_REQUIRED * serial

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], on_done: Callback = None,
            adaptive: bool | None = None) -> list[Any]:
        """``[fn(x) for x in items]``; ``adaptive`` overrides the executor's setting for this map (False: every
        item to the pool, for a few long items known to pay, such as whole agent runs)."""
        _check_picklable(items, "worker processes")
        items = list(items)
        share = self.adaptive if adaptive is None else adaptive
        if not share or not items or self._pool is not None:  # (a running pool starts on the items at once)
            return self._pooled(fn, items, on_done, share)
        start = time.perf_counter()
        first = self._here(fn, items[0], on_done)
        if self.workers == 1 or not self._worth_a_pool(time.perf_counter() - start, first, len(items) - 1):
            return [first, *(self._here(fn, item, on_done) for item in items[1:])]
        return [first, *self._pooled(fn, items[1:], on_done, share)]

    def _here(self, fn: Callable[[Any], Any], item: Any, on_done: Callback) -> Any:
        result = fn(item)
        self.items_here += 1
        if on_done is not None:
            on_done()
        return result

    def _pooled(self, fn: Callable[[Any], Any], items: list[Any], on_done: Callback, share: bool) -> list[Any]:
        """The items' results from the pool; with ``share`` this process takes items from the end of the queue
        (those no worker has started) until none is left, so that no CPU idles while the last ones run."""
        if not items:
            return []
        if self._pool is None:
            self._pool = new_pool(self.workers)
        pool = self._pool  # maps from several threads share it (and gather waits on this one)
        futures = [pool.submit(fn, item) for item in items]
        ours: list[Any] = []

        def done() -> None:
            self.items_pooled += 1
            if on_done is not None:
                on_done()

        try:
            while share and futures and futures[-1].cancel():
                futures.pop()
                ours.append(self._here(fn, items[len(futures)], on_done))
            return gather(pool, futures, done) + ours[::-1]
        except BaseException:  # an item failed (gather abandoned the pool) or this process was interrupted
            self.abandon()  # a later map starts a new pool
            raise

    def abandon(self) -> None:
        """Stop the pool now (:func:`dpverify._pools.abandon`)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            abandon(pool)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


class _NoAnswer(BaseException):
    """The address accepted the connection but did not answer as a Dask scheduler in time."""


def _connect(distributed: Any, address: str, timeout: float) -> Any:
    """A Client of the scheduler at ``address``, or an error naming ``--scheduler`` within ``timeout`` seconds
    plus a margin: a service that is not a Dask scheduler (it accepts the connection and never answers the
    handshake) would otherwise hold the command forever."""

    limit = timeout + HANDSHAKE_MARGIN_SECONDS
    try:
        with time_limit(limit, _NoAnswer):
            return distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise InvalidParameterError("scheduler", f"could not be reached ({type(exc).__name__})", address) from None
    except (MemoryError, ValueError, TypeError) as exc:  # a reply in another protocol read as Dask's frames
        raise InvalidParameterError("scheduler", f"did not answer as a Dask scheduler (its reply could not be read: "
                                    f"{type(exc).__name__})", address) from None
    except _NoAnswer:
        raise InvalidParameterError(
            "scheduler", f"did not answer as a Dask scheduler within {limit:g} s (is it one?)", address) from None


#: Seconds a scheduler may take beyond the connection timeout to complete the handshake.
HANDSHAKE_MARGIN_SECONDS = 5.0


class DaskExecutor(_Closing):
    """Runs chunks on a Dask distributed cluster, given a scheduler address or an existing Client."""

    name = "dask"

    def __init__(self, address: str | None = None, client: Any = None, timeout: float = 10.0):
        if (address is None) == (client is None):
            raise InvalidParameterError(
                "scheduler", "give exactly one of a scheduler address or a dask Client", address
            )
        try:
            import distributed
        except ImportError:
            raise InvalidParameterError(
                "scheduler", "needs dask.distributed (pip install 'dask[distributed]')", address
            ) from None
        self._distributed = distributed
        self._owns_client = client is None
        if client is None:
            if not isinstance(address, str) or "://" not in address:
                raise InvalidParameterError("scheduler", "must be an address like tcp://host:port", address)
            client = _connect(distributed, address, timeout)
        self._client = client

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], on_done: Callback = None) -> list[Any]:
        _check_picklable(items, "a Dask cluster")
        futures = self._client.map(fn, list(items), pure=False)
        for _ in self._distributed.as_completed(futures):
            if on_done is not None:
                on_done()
        return list(self._client.gather(futures))

    def close(self) -> None:
        if self._owns_client:
            self._client.close()


Executor = SerialExecutor | ProcessExecutor | DaskExecutor


def make_executor(scheduler: str | None = None, workers: int | None = None, serial: bool = False,
                  adaptive: bool = True) -> Executor:
    """The executor for a command line: Dask if a scheduler address is given, else local processes."""
    if scheduler is not None:
        return DaskExecutor(address=scheduler)
    if serial or workers == 1:
        return SerialExecutor()
    return ProcessExecutor(workers, adaptive=adaptive)
