"""SeededGlobalRng: numpy's global generator seeded from the auditor's generator while user code runs (one
thread's stretches at a time; kept installed between stretches inside keep_installed); uses_global_rng: the
probe that names the global generator as the reason a run is not reproducible."""

from __future__ import annotations

import itertools
import threading
import time

import numpy as np
import pytest

from dpverify.adapters import SeededGlobalRng, uses_global_rng
from dpverify.adapters.global_rng import keep_installed
from dpverify.errors import InvalidParameterError


def _user_draws(seeded: SeededGlobalRng, n: int = 3) -> list[float]:
    with seeded:
        return [float(x) for x in np.random.normal(size=n)]


def test_the_code_s_draws_follow_the_source_seed() -> None:
    def draws(seed: int) -> list[float]:
        return _user_draws(SeededGlobalRng(np.random.default_rng(seed)))

    assert draws(1) == draws(1)
    assert draws(1) != draws(2)


def test_the_caller_s_global_state_is_untouched_and_the_code_s_stream_continues() -> None:
    np.random.seed(7)
    expected_caller = np.random.normal(size=4)
    one_stretch = SeededGlobalRng(np.random.default_rng(3))
    whole = _user_draws(one_stretch, 4)

    np.random.seed(7)
    seeded = SeededGlobalRng(np.random.default_rng(3))
    caller = [np.random.normal()]
    pieces = _user_draws(seeded, 2)
    caller.append(np.random.normal())
    pieces += _user_draws(seeded, 2)
    caller += list(np.random.normal(size=2))
    assert pieces == whole  # the code's stream continues across stretches
    assert caller == list(expected_caller)  # the caller's stream is as if the code had never run


def test_np_random_seed_inside_the_code_reseeds_its_stream_only() -> None:
    np.random.seed(11)
    expected = np.random.normal()
    np.random.seed(11)
    seeded = SeededGlobalRng(np.random.default_rng(0))
    with seeded:
        np.random.seed(5)
        inside = np.random.normal()
    assert np.random.normal() == expected
    np.random.seed(5)
    assert inside == np.random.normal()


def test_stretches_nest_and_leave_needs_enter() -> None:
    seeded, flat = SeededGlobalRng(np.random.default_rng(0)), SeededGlobalRng(np.random.default_rng(0))
    with seeded:
        first = np.random.normal()
        with seeded:  # a nested stretch continues the same stream (it never rewinds it)
            second = np.random.normal()
        third = np.random.normal()
    with flat:
        assert [first, second, third] == list(np.random.normal(size=3))
    with pytest.raises(InvalidParameterError, match="leave"):
        seeded.leave()
    with pytest.raises(InvalidParameterError, match="source"):
        SeededGlobalRng(np.random.RandomState(0))  # type: ignore[arg-type]


def test_the_probe_names_the_global_generator_and_nothing_else() -> None:
    def reads_global() -> float:
        return float(np.random.normal())

    counter = itertools.count()

    def reads_a_counter() -> int:
        return next(counter)

    state = np.random.get_state()
    assert uses_global_rng(reads_global)
    assert not uses_global_rng(reads_a_counter)
    assert not uses_global_rng(lambda: float(np.random.default_rng().normal()))  # fresh OS entropy, not global
    after = np.random.get_state()
    assert all(np.array_equal(a, b) for a, b in zip(state, after, strict=True))


def test_two_threads_take_turns_and_each_draws_from_its_own_stream() -> None:
    """numpy's global generator is one per process: a stretch holds it, so that code of two threads (a Dask
    worker's) interleaving their stretches still draws each from its own stream."""

    def draws(seed: int) -> list[float]:
        seeded, out = SeededGlobalRng(np.random.default_rng(seed)), []
        for _ in range(20):
            with seeded:
                out.append(float(np.random.normal()))
                time.sleep(0.001)  # the other thread runs meanwhile
                out.append(float(np.random.normal()))
        return out

    expected = {seed: draws(seed) for seed in (1, 2)}
    results: dict[int, list[float]] = {}
    threads = [threading.Thread(target=lambda s=seed: results.update({s: draws(s)})) for seed in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected


def test_a_kept_stream_stays_installed_until_another_enters_or_the_block_ends() -> None:
    np.random.seed(7)
    expected_caller = list(np.random.normal(size=2))
    reference = _user_draws(SeededGlobalRng(np.random.default_rng(3)), 4)
    other_reference = _user_draws(SeededGlobalRng(np.random.default_rng(4)), 1)

    np.random.seed(7)
    seeded, other = SeededGlobalRng(np.random.default_rng(3)), SeededGlobalRng(np.random.default_rng(4))
    with keep_installed():
        pieces = _user_draws(seeded, 1)
        pieces += [float(np.random.normal())]  # between stretches: the kept stream (no caller draws here)
        pieces += _user_draws(seeded, 1)
        assert _user_draws(other, 1) == other_reference  # another stream: the kept one swapped out first
        pieces += _user_draws(seeded, 1)
        assert uses_global_rng(lambda: float(np.random.normal()))  # the probe swaps a kept stream out too
    assert pieces == reference
    assert list(np.random.normal(size=2)) == expected_caller  # the caller's state back once the block ends
