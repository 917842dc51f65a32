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
from dpverify._pools import Handout, abandon, gather, new_pool, one_blas_thread, quick_switches
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

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], on_done: Callback = None,
            seconds_each: float | None = None) -> list[Any]:
        """``[fn(x) for x in items]`` (``seconds_each``, an estimate for a :class:`ProcessExecutor`, is not used)."""
        results = []
        with one_blas_thread():  # (as on the workers of a ProcessExecutor: the same results)
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


def _cpu_times() -> tuple[float, float] | None:
    """(idle, total) time of this machine's CPUs so far, in clock ticks (Linux ``/proc/stat``), or None."""
    try:
        with open("/proc/stat", "rb") as stat:
            ticks = [float(t) for t in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    if len(ticks) < 5:
        return None
    return ticks[3] + ticks[4], sum(ticks)  # idle and waiting for I/O; user, nice, system, irq, softirq, steal


def _free_cpus_since(before: tuple[float, float] | None) -> float:
    """CPUs not busy with other processes since ``before`` (:func:`_cpu_times`), while this process was busy: the
    idle CPUs of that stretch and this process's own. The load average (:func:`_free_cpus`) when the stretch was too
    short to read (under a clock tick per CPU) or the platform has no ``/proc/stat``: it lags a minute behind, and
    after a busy minute would keep the workers idle on an idle machine."""
    after = _cpu_times()
    if before is None or after is None or after[1] - before[1] < (os.cpu_count() or 1):
        return _free_cpus()
    cpus = float(os.cpu_count() or 1)
    idle = cpus * (after[0] - before[0]) / (after[1] - before[1])
    return min(cpus, max(1.0, idle + 1.0))


class ProcessExecutor(_Closing):
    """Runs chunks on a pool of local worker processes (created on first use, reused until close).

    Adaptive by default: work too small to gain from processes runs in this process. The first item of a map
    runs here and is timed; the rest go to the pool only if the estimated parallel time (pool start-up when no
    pool is running yet, per-item overhead, transfer of results of the first item's size, the work split over
    the workers that have a free CPU, judged by the machine's idle time while the first item ran) is below
    :data:`PARALLEL_GAIN_REQUIRED` × the estimated serial time. A caller that knows roughly how long an item
    takes (``seconds_each``, say from a probe) lets the pool start on the items at once when that estimate says
    it pays (with the free CPUs judged by the load average); the first item this process runs is then timed all
    the same, and if the pool does not pay after all, no worker starts another item. Once a pool runs, a map
    starts on it at once. While the workers take items from the front of the queue, this process takes them from
    its end, until none is left unstarted: no CPU idles while the last ones run. Results do not depend on where
    an item ran: seeds belong to the items, and items run with BLAS on one thread, on the workers and in a map of
    the main thread (:func:`dpverify._pools.one_blas_thread`), which also keeps the workers from contending for the
    CPUs.
    ``adaptive=False`` sends every item to the pool.
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
            adaptive: bool | None = None, seconds_each: float | None = None) -> list[Any]:
        """``[fn(x) for x in items]``; ``adaptive`` overrides the executor's setting for this map (False: every
        item to the pool, for a few long items known to pay, such as whole agent runs); ``seconds_each``: the
        caller's estimate of one item's time (class docstring)."""
        _check_picklable(items, "worker processes")
        items = list(items)
        share = self.adaptive if adaptive is None else adaptive
        with one_blas_thread():
            if not share or not items or self._pool is not None:  # (a running pool starts on the items at once)
                return self._pooled(fn, items, on_done, share)
            if seconds_each is not None and self.workers > 1 and len(items) > 1:
                free = _free_cpus()
                if self._worth_a_pool(seconds_each, None, len(items) - 1, free):
                    return self._pooled(fn, items, on_done, share, confirm=free)
            start, machine = time.perf_counter(), _cpu_times()
            first = self._here(fn, items[0], on_done)
            seconds = time.perf_counter() - start
            if self.workers == 1 or not self._worth_a_pool(seconds, first, len(items) - 1, _free_cpus_since(machine)):
                return [first, *(self._here(fn, item, on_done) for item in items[1:])]
            return [first, *self._pooled(fn, items[1:], on_done, share)]

    def _here(self, fn: Callable[[Any], Any], item: Any, on_done: Callback) -> Any:
        result = fn(item)
        self.items_here += 1
        if on_done is not None:
            on_done()
        return result

    def _pooled(self, fn: Callable[[Any], Any], items: list[Any], on_done: Callback, share: bool,
                confirm: float | None = None) -> list[Any]:
        """The items' results from the pool; with ``share`` this process runs items too, taken from the end while the
        workers are sent theirs from the front one at a time (:class:`~dpverify._pools.Handout`), so that no CPU
        idles while the last ones run. With ``confirm`` (a pool started on an estimate, judged with that many free
        CPUs) the first item this process runs is timed, and if the pool does not pay after all, every item not
        started yet runs here."""
        if not items:
            return []
        if self._pool is None:
            self._pool = new_pool(self.workers, item_workers=True)
        pool = self._pool  # maps from several threads share it

        def done() -> None:
            self.items_pooled += 1
            if on_done is not None:
                on_done()

        try:
            if not share:
                return gather(pool, [pool.submit(fn, item) for item in items], done)
            here: dict[int, Any] = {}
            with quick_switches():
                handout = Handout(pool, fn, items, self.workers)
                while (index := handout.take()) is not None:
                    start = time.perf_counter()
                    here[index] = self._here(fn, items[index], on_done)
                    seconds = time.perf_counter() - start
                    if confirm is not None and not self._worth_a_pool(seconds, here[index], len(items) - len(here),
                                                                      confirm):
                        for rest in handout.take_all():  # the estimate was wrong: the workers are sent no more
                            here[rest] = self._here(fn, items[rest], on_done)
                    confirm = None
                pooled = handout.results(done)
            return [here[i] if i in here else pooled[i] for i in range(len(items))]
        except BaseException:  # an item failed (the pool was abandoned) or this process was interrupted
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

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], on_done: Callback = None,
            seconds_each: float | None = None) -> list[Any]:
        """``[fn(x) for x in items]`` on the cluster (``seconds_each`` is not used: the scheduler decides)."""
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
