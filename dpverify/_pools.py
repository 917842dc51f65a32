"""Local process pools: made within the memory limit, their results gathered failing fast.

:func:`new_pool` refuses more workers than fit in memory (:func:`dpverify.limits.require_workers`).
``concurrent.futures`` waits for every future before a caller sees the first error; with the user's code in
the workers, that first error (or a call that hangs) would hold the command for as long as the slowest
worker. :func:`gather` stops at the first failure: the pending items are cancelled and the running workers
terminated (:func:`abandon`), and a pool broken by a worker that died is said in one sentence. Light on
purpose (no scipy): the ``run`` command's pool and the audits' executors both use it.

:func:`one_blas_thread` keeps a process's BLAS and OpenMP libraries to one thread (threadpoolctl, the library
scikit-learn and joblib use for the same end): ``w`` workers on ``w`` CPUs, each free to start as many BLAS threads
as there are CPUs, would otherwise contend for them (a candidate pair's test selection took twice as long on a
worker as in a process alone).
"""

from __future__ import annotations

import contextlib
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


class _OneThread:
    """Blocks of :func:`one_blas_thread` in progress in this process (from any thread), and the limit they hold."""

    lock = threading.Lock()
    blocks = 0
    limit: Any = None


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """A block in which this process's BLAS and OpenMP libraries use one thread (module docstring). Blocks nest and
    may overlap across threads: the first to start sets the limit, the last to end lifts it."""
    from threadpoolctl import threadpool_limits

    with _OneThread.lock:
        if not _OneThread.blocks:
            _OneThread.limit = threadpool_limits(1)
        _OneThread.blocks += 1
    try:
        yield
    finally:
        with _OneThread.lock:
            _OneThread.blocks -= 1
            if not _OneThread.blocks:
                _OneThread.limit.restore_original_limits()


def _start_worker_on_one_blas_thread() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # (for the worker's life)


def new_pool(workers: int, option: str = "workers", one_thread_each: bool = False) -> ProcessPoolExecutor:
    """A pool of ``workers`` local processes, refused (naming ``option``) when they cannot fit in memory;
    ``one_thread_each``: each worker's BLAS on one thread (:func:`one_blas_thread`)."""
    require_workers(option, workers)
    return ProcessPoolExecutor(max_workers=workers,
                               initializer=_start_worker_on_one_blas_thread if one_thread_each else None)


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
            abandon(pool)
            if isinstance(error, BrokenProcessPool):
                raise DpverifyError(WORKER_DIED) from error
            raise error
        if on_done is not None:
            on_done()
    return [future.result() for future in futures]
