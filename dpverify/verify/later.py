"""Work of ``verify`` that waits on worker processes, run in a thread while this process goes on.

A verification's sections are independent (each reads only the :class:`~dpverify.verify.target.VerifyRun`), and
most of their work runs on the executor's workers while this process waits. A section started :class:`Later`
waits in a thread instead, so that the workers and this process are busy at once (``dpverify verify`` on 2
cores: benchmarks/bench_verify.py). Only a registered agent's sections go to a thread, and only with worker
processes: dpverify's own code, which needs none of the time limits that guard the user's code (those hold in
the main thread and on workers only). Results do not depend on it: every run's seeds are its own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from dpverify.audit.executors import Executor, SerialExecutor
from dpverify.verify.target import REGISTERED, VerifyRun

T = TypeVar("T")


def in_background(run: VerifyRun, executor: Executor) -> bool:
    """Whether the run's sections may wait in threads (module docstring)."""
    return run.target.source == REGISTERED and not isinstance(executor, SerialExecutor)


class Later(Generic[T]):
    """``fn(*args)`` in a daemon thread when ``background`` (else now); :meth:`result` gives its value or
    raises its exception; ``seconds`` is how long it took."""

    def __init__(self, background: bool, fn: Callable[..., T], *args: Any) -> None:
        self._start = time.perf_counter()
        self._value: T
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, args=(fn, args), daemon=True) if background else None
        if self._thread is not None:
            self._thread.start()
        else:  # now, in this thread: an exception goes up at once
            self._value = fn(*args)
            self.seconds = time.perf_counter() - self._start

    def _work(self, fn: Callable[..., T], args: tuple[Any, ...]) -> None:
        try:
            self._value = fn(*args)
        except BaseException as exc:  # re-raised in the caller's thread by result()
            self._error = exc
        finally:
            self.seconds = time.perf_counter() - self._start

    def result(self) -> T:
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value
