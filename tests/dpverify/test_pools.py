"""Gathering a process pool's results, failing fast (dpverify._pools)."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor

import pytest

from dpverify._pools import WORKER_DIED, gather
from dpverify.audit.executors import ProcessExecutor
from dpverify.errors import DpverifyError


def _job(kind: str) -> str:
    if kind == "fail":
        raise ValueError("job failed")
    if kind == "die":
        os._exit(3)
    if kind == "hang":
        time.sleep(60)
    return kind


def test_gather_returns_results_in_order():
    with ProcessPoolExecutor(2) as pool:
        done = []
        assert gather(pool, [pool.submit(_job, x) for x in ("a", "b", "c")], lambda: done.append(1)) == ["a", "b", "c"]
        assert len(done) == 3


def test_the_first_failure_ends_the_map_without_waiting_for_a_hanging_job():
    pool = ProcessPoolExecutor(2)
    futures = [pool.submit(_job, "hang"), pool.submit(_job, "fail")]
    start = time.monotonic()
    with pytest.raises(ValueError, match="job failed"):
        gather(pool, futures)
    assert time.monotonic() - start < 30  # the hanging job (60 s) was terminated, not awaited


def test_a_dead_worker_is_said_in_one_sentence():
    pool = ProcessPoolExecutor(1)
    with pytest.raises(DpverifyError, match="worker process ended abruptly"):
        gather(pool, [pool.submit(_job, "die")])
    assert "os._exit" in WORKER_DIED


def test_the_executor_starts_a_new_pool_after_a_failure():
    executor = ProcessExecutor(2, adaptive=False)
    try:
        with pytest.raises(ValueError):
            executor.map(_job, ["hang", "fail"])
        assert executor.map(_job, ["x", "y"]) == ["x", "y"]
    finally:
        executor.close()


def _blas_threads(_: object = None) -> int:
    from threadpoolctl import threadpool_info

    return max(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas")


def test_quick_switches_within_a_block_and_the_interval_put_back_after_it():
    import sys

    from dpverify._pools import QUICK_SWITCH_SECONDS, quick_switches

    before = sys.getswitchinterval()
    with quick_switches():
        assert sys.getswitchinterval() == min(before, QUICK_SWITCH_SECONDS)
        with quick_switches():
            assert sys.getswitchinterval() == min(before, QUICK_SWITCH_SECONDS)
    assert sys.getswitchinterval() == before


def test_one_blas_thread_within_a_block_of_the_main_thread_and_lifted_after_it():
    import threading

    from dpverify._pools import one_blas_thread

    before = _blas_threads()
    with one_blas_thread():
        assert _blas_threads() == 1
        with one_blas_thread():
            assert _blas_threads() == 1
        assert _blas_threads() == 1
    assert _blas_threads() == before
    seen: list[int] = []

    def elsewhere() -> None:  # another thread's block changes nothing
        with one_blas_thread():
            seen.append(_blas_threads())

    other = threading.Thread(target=elsewhere)
    other.start()
    other.join()
    assert seen == [before] and _blas_threads() == before


def test_every_item_runs_on_one_blas_thread_wherever_it_runs():
    from dpverify.audit.executors import SerialExecutor

    assert SerialExecutor().map(_blas_threads, [0, 1]) == [1, 1]
    with ProcessExecutor(2, adaptive=False) as executor:
        assert executor.map(_blas_threads, range(4)) == [1] * 4 and executor.items_pooled == 4
    with ProcessExecutor(2) as executor:
        assert executor.map(_blas_threads, range(2)) == [1, 1]


class _HeldPool:
    """A stand-in pool whose items finish only when the test says so."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, object]] = []
        self.stopped = False

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        self.stopped = True

    def submit(self, fn, item):
        from concurrent.futures import Future

        future: Future = Future()
        self.sent.append((item, future))
        return future


def test_a_handout_keeps_slots_items_on_the_pool_and_the_rest_for_this_process():
    from dpverify._pools import Handout

    pool = _HeldPool()
    handout = Handout(pool, abs, [-i for i in range(10)], slots=2)  # type: ignore[arg-type]
    assert [item for item, _ in pool.sent] == [0, -1]  # the front, no more than the slots
    assert handout.take() == 9 and handout.take() == 8  # this process takes from the back
    pool.sent[0][1].set_result(0)  # a worker finishes: it is sent the next item from the front
    assert [item for item, _ in pool.sent] == [0, -1, -2]
    assert handout.take_all() == [3, 4, 5, 6, 7]  # every item not started; the pool is sent no more
    pool.sent[1][1].set_result(1)
    pool.sent[2][1].set_result(2)
    assert len(pool.sent) == 3 and handout.take() is None
    assert handout.results() == {0: 0, 1: 1, 2: 2}


def test_a_handout_raises_the_first_failure_of_the_pool():
    from dpverify._pools import Handout

    pool = _HeldPool()
    handout = Handout(pool, abs, [1, 2, 3], slots=1)  # type: ignore[arg-type]
    pool.sent[0][1].set_exception(ValueError("from a worker"))
    assert len(pool.sent) == 1  # a failed item sends no other
    with pytest.raises(ValueError, match="from a worker"):
        handout.results()
    assert pool.stopped  # the pool abandoned


def _frozen_objects(_: object = None) -> int:
    import gc

    return gc.get_freeze_count()


def test_executor_workers_freeze_what_they_inherit():
    with ProcessExecutor(2, adaptive=False) as executor:
        assert all(count > 1000 for count in executor.map(_frozen_objects, range(2)))
