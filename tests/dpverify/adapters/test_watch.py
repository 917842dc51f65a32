"""watch_calls: a module global's function seen (and its result replaced) for the registering context only
(its thread, or its greenlet)."""

from __future__ import annotations

import threading
import types
from typing import Any

import numpy as np
import pytest

greenlet = pytest.importorskip("greenlet", reason="greenlet, a dependency of dpverify, is not installed here")

from dpverify.adapters import watch_calls  # noqa: E402
from dpverify.errors import InvalidParameterError  # noqa: E402


def _module() -> types.ModuleType:
    """Opaque code: a module whose function calls np.linalg.solve and np.random.choice through its global."""
    module = types.ModuleType("opaque_code")
    exec(
        "import numpy as np\n"
        "def solve(a, b):\n"
        "    return np.linalg.solve(a, b)\n"
        "def choose():\n"
        "    return np.random.choice([0, 1])\n"
        "def det(a):\n"
        "    return np.linalg.det(a)\n",
        module.__dict__,
    )
    return module


A, B = np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 4.0])


def test_the_watched_call_is_reported_and_may_be_replaced() -> None:
    code = _module()
    seen: list[Any] = []
    with watch_calls(code, "np.linalg.solve", lambda a, b: seen.append((a, b))):
        assert np.allclose(code.solve(A, B), [1.0, 1.0])  # None: the original result
    assert len(seen) == 1 and seen[0][0] is A
    with watch_calls(code, "np.linalg.solve", lambda a, b: np.zeros(2)):
        assert np.array_equal(code.solve(A, B), [0.0, 0.0])
        assert code.det(A) == pytest.approx(8.0)  # the rest of np, even below linalg, is the original's
        assert code.np.pi == np.pi
    assert code.np is np  # restored


def test_other_threads_and_other_modules_are_untouched() -> None:
    code, other = _module(), _module()
    results: dict[str, Any] = {}
    with watch_calls(code, "np.linalg.solve", lambda a, b: np.full(2, 9.0)):
        worker = threading.Thread(target=lambda: results.update(thread=code.solve(A, B)))
        worker.start()
        worker.join()
        results["other module"] = other.solve(A, B)
        results["numpy"] = np.linalg.solve(A, B)
        results["here"] = code.solve(A, B)
    assert np.allclose(results["thread"], 1.0) and np.allclose(results["other module"], 1.0)
    assert np.allclose(results["numpy"], 1.0) and np.allclose(results["here"], 9.0)


def test_two_functions_below_one_global_and_watches_ending_in_any_order() -> None:
    code = _module()
    solve_watch = watch_calls(code, "np.linalg.solve", lambda a, b: np.full(2, 5.0))
    choice_watch = watch_calls(code, "np.random.choice", lambda options: 7)
    solve_watch.__enter__()
    choice_watch.__enter__()
    assert code.choose() == 7 and np.allclose(code.solve(A, B), 5.0)
    solve_watch.__exit__(None, None, None)  # the first to start ends first
    assert code.choose() == 7 and np.allclose(code.solve(A, B), 1.0)
    choice_watch.__exit__(None, None, None)
    assert code.np is np and code.choose() in (0, 1)


def test_two_threads_each_with_its_own_watch() -> None:
    code = _module()
    barrier = threading.Barrier(2)
    results: dict[int, list[float]] = {}

    def agent(value: float) -> None:
        with watch_calls(code, "np.linalg.solve", lambda a, b: np.full(2, value)):
            barrier.wait()
            results[int(value)] = [float(code.solve(A, B)[0]) for _ in range(50)]
            barrier.wait()

    threads = [threading.Thread(target=agent, args=(v,)) for v in (3.0, 4.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {3: [3.0] * 50, 4: [4.0] * 50}
    assert code.np is np


def test_two_greenlets_of_one_thread_each_with_its_own_watch() -> None:
    """Two closed loops of one module, interleaved in one thread (each in its greenlet): each sees its own."""
    code = _module()
    main = greenlet.getcurrent()
    seen: dict[int, list[float]] = {3: [], 4: []}

    def agent(value: float) -> None:
        with watch_calls(code, "np.linalg.solve", lambda a, b: np.full(2, value)):
            for _ in range(3):
                seen[int(value)].append(float(code.solve(A, B)[0]))
                main.switch()

    loops = [greenlet.greenlet(agent) for _ in range(2)]
    for _ in range(4):
        for loop, value in zip(loops, (3.0, 4.0), strict=True):
            loop.switch(value)
            assert np.allclose(code.solve(A, B), 1.0)  # the main greenlet registered nothing
    assert seen == {3: [3.0] * 3, 4: [4.0] * 3} and all(loop.dead for loop in loops)
    assert code.np is np


def test_bad_arguments_are_named_and_leave_the_module_as_it_was() -> None:
    code = _module()
    with pytest.raises(InvalidParameterError, match="dotted"):
        with watch_calls(code, "solve", lambda: None):
            pass
    with pytest.raises(InvalidParameterError, match="module"):
        with watch_calls(code, "scipy.linalg.solve", lambda: None):
            pass
    with pytest.raises(InvalidParameterError, match="callable below 'np'"):
        with watch_calls(code, "np.linalg.nonesuch", lambda: None):
            pass
    with pytest.raises(InvalidParameterError, match="on_call"):
        with watch_calls(code, "np.linalg.solve", None):  # type: ignore[arg-type]
            pass
    assert code.np is np
