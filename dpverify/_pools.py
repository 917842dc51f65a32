"""Local process pools: made within the memory limit, their results gathered failing fast.

:func:`new_pool` refuses more workers than fit in memory (:func:`dpverify.limits.require_workers`).
``concurrent.futures`` waits for every future before a caller sees the first error; with the user's code in
the workers, that first error (or a call that hangs) would hold the command for as long as the slowest
worker. :func:`gather` stops at the first failure: the pending items are cancelled and the running workers
terminated (:func:`abandon`), and a pool broken by a worker that died is said in one sentence. Light on
purpose (no scipy): the ``run`` command's pool and the audits' executors both use it. :class:`Handout` shares one
map between a pool and the calling process.

:func:`one_blas_thread` keeps a process's BLAS and OpenMP libraries to one thread (threadpoolctl, the library
scikit-learn and joblib use for the same end): ``w`` workers on ``w`` CPUs, each free to start as many BLAS threads
as there are CPUs, would otherwise contend for them.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import queue
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from dpverify.errors import DpverifyError
from dpverify.limits import require_workers

#: What a pool broken by a dead worker says.
WORKER_DIED = ("a worker process ended abruptly (killed, out of memory, or code it ran crashed the interpreter "
               "or called os._exit)")


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """A block of the main thread in which this process's BLAS and OpenMP libraries use one thread (module
    docstring); elsewhere the block changes nothing. The limit is set and lifted by the thread that holds the block:
    with the OpenBLAS that numpy and scipy ship, a thread count set back from another thread does not take, and the
    maps of other threads (``verify``'s sections) send their items to the workers anyway."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


#: The interpreter's thread switch interval while this process shares a map with its pool (:class:`Handout`): the
#: pool's thread, which sends a worker its next item, waits for a calling process busy with an item of its own up
#: to the switch interval, several times per hand-off, while that worker idles.
QUICK_SWITCH_SECONDS = 5e-4


@contextlib.contextmanager
def quick_switches() -> Iterator[None]:
    """A block with the thread switch interval at :data:`QUICK_SWITCH_SECONDS`, the interval before it put back at
    its end (blocks of several threads at once may leave the short one a little longer: it costs nothing)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, QUICK_SWITCH_SECONDS))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _start_worker() -> None:
    """A worker's start: its BLAS on one thread for its life, and every object it inherited from the forking process
    moved out of the garbage collector's reach (``gc.freeze``): a collection that walked them would write to the
    pages it shares with that process, and copy them one by one."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    gc.freeze()


def new_pool(workers: int, option: str = "workers", item_workers: bool = False) -> ProcessPoolExecutor:
    """A pool of ``workers`` local processes, refused (naming ``option``) when they cannot fit in memory;
    ``item_workers``: each worker's BLAS on one thread (:func:`one_blas_thread`), its inherited objects frozen
    (:func:`_start_worker`)."""
    require_workers(option, workers)
    return ProcessPoolExecutor(max_workers=workers,
                               initializer=_start_worker if item_workers else None)


def abandon(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: pending items cancelled, running workers terminated and joined, and the pool's
    manager thread joined, so that the interpreter's exit does not race it (a wake-up written to the pipe the
    thread has closed prints a traceback at exit)."""
    handles = list(dict(getattr(pool, "_processes", None) or {}).values())  # no public handle before 3.14
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in handles:
        if process.is_alive():
            process.terminate()
    for process in handles:
        process.join(timeout=5)
    if manager is not None:
        manager.join(timeout=5)


def gather(pool: ProcessPoolExecutor, futures: Sequence[Future[Any]],
           on_done: Callable[[], None] | None = None) -> list[Any]:
    """The futures' results in order; the first error abandons the pool (:func:`abandon`) and is raised
    (a dead worker's as a :class:`~dpverify.errors.DpverifyError` saying so)."""
    for future in as_completed(futures):
        error = future.exception()
        if error is not None:
            _raise_failure(pool, error)
        if on_done is not None:
            on_done()
    return [future.result() for future in futures]


def _raise_failure(pool: ProcessPoolExecutor, error: BaseException) -> None:
    abandon(pool)
    if isinstance(error, BrokenProcessPool):
        raise DpverifyError(WORKER_DIED) from error
    raise error


class Handout:
    """The items of one map, shared between ``pool`` and the calling process: each worker is sent its next item
    from the front when it finishes one (never more than ``slots`` on the pool at once, so that no item waits
    there for a worker while the calling process could run it), and the calling process takes items from the
    back (:meth:`take`) until none is left; :meth:`results` then waits for the pool's. Indices, not items, are
    handed out, so the results come back in the order of the items whoever ran them."""

    def __init__(self, pool: ProcessPoolExecutor, fn: Callable[[Any], Any], items: Sequence[Any], slots: int) -> None:
        self._pool, self._fn, self._items = pool, fn, items
        self._lock = threading.Lock()
        self._front, self._back = 0, len(items)  # items[front:back] have not been started
        self._sent = 0
        self._finished: queue.SimpleQueue[tuple[int, Future[Any]]] = queue.SimpleQueue()
        for _ in range(slots):
            self._send()

    def _send(self) -> None:
        with self._lock:
            if self._front >= self._back:
                return
            index = self._front
            self._front += 1
            self._sent += 1
        try:
            future = self._pool.submit(self._fn, self._items[index])
        except Exception as exc:  # a pool abandoned or broken meanwhile: said by results()
            future = Future()
            future.set_exception(exc)
        future.add_done_callback(functools.partial(self._finish, index))

    def _finish(self, index: int, future: Future[Any]) -> None:
        """(Run by the pool's thread as a worker finishes.) The next item to the pool, unless this one failed."""
        self._finished.put((index, future))
        if not future.cancelled() and future.exception() is None:
            self._send()

    def take(self) -> int | None:
        """The index of an item for the calling process to run (from the back), or None when none is left."""
        with self._lock:
            if self._front >= self._back:
                return None
            self._back -= 1
            return self._back

    def take_all(self) -> list[int]:
        """Every index not started yet, for the calling process: the pool is sent no more."""
        with self._lock:
            rest = list(range(self._front, self._back))
            self._front = self._back
            return rest

    def results(self, on_done: Callable[[], None] | None = None) -> dict[int, Any]:
        """The results of the items sent to the pool, by index, once every one is in; the first failure abandons
        the pool and is raised (as :func:`gather` does). Waits in short steps, so that a signal's handler (Ctrl-C,
        a command's time limit) runs meanwhile."""
        results: dict[int, Any] = {}
        while len(results) < self._sent:
            try:
                index, future = self._finished.get(timeout=0.1)
            except queue.Empty:
                continue
            error = future.exception() if not future.cancelled() else RuntimeError("an item of the map was cancelled")
            if error is not None:
                _raise_failure(self._pool, error)
            results[index] = future.result()
            if on_done is not None:
                on_done()
        return results
