"""Seed plumbing for code that draws from numpy's global generator.

Code written without dpverify often calls ``np.random.normal(...)`` (the legacy global ``RandomState``), or
seeds it once with ``np.random.seed(seed)``. Nothing the auditor seeds reaches such draws, so a replay is not
the same run and no behavioural check can run (the white-box checks say so, naming the global generator when
pinning it makes the runs agree: :func:`uses_global_rng`).

:class:`SeededGlobalRng` makes such code auditable: while the code runs (between :meth:`~SeededGlobalRng.enter`
and :meth:`~SeededGlobalRng.leave`, or in a ``with`` block) numpy's global generator is one of its own,
seeded from a generator the auditor controls — an agent that adds its own noise passes
``billboard.noise_source()``, so that its global-generator noise follows the billboard's noise seed. Outside
those stretches the caller's global state is back untouched, and the code's own stream continues where it
left off at the next stretch (two agents, or dpverify's tests, never share one global stream). A stretch holds
a process-wide lock: two threads (a Dask worker's) take turns at the one global generator. A swap costs about
65 µs each way (numpy copies the Mersenne Twister's state): inside :func:`keep_installed`, for a caller that
never draws from the global generator itself (dpverify: NPY002), a stream stays installed between its stretches
and is swapped once per run of the user's code, not at every step.

What it cannot fix, said by the white-box checks: code that draws its *coins* (tie-breaking, exploration)
and its noise from the one global stream. Then the noise seed moves the coins too, the replays with another
noise seed deploy other policies, and the noise check reports that it could not hold the coins fixed.
"""

from __future__ import annotations

import contextlib
import operator
import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

import numpy as np

from dpverify.errors import InvalidParameterError


class SeededGlobalRng:
    """numpy's global generator, seeded from ``source`` (a ``numpy.random.Generator``), while user code runs.

    ``enter()``/``leave()`` bracket each stretch of the user's code (a ``with`` block does both); stretches
    nest. The global stream is a legacy ``RandomState`` (what ``np.random.*`` draws from) on an MT19937 seeded by
    128 bits drawn once from ``source``; ``np.random.seed(...)`` inside the code reseeds this stream only.
    """

    def __init__(self, source: np.random.Generator) -> None:
        if not isinstance(source, np.random.Generator):
            raise InvalidParameterError("source", "must be a numpy.random.Generator", type(source).__name__)
        seed = np.random.SeedSequence(int(source.integers(0, 2**63)) << 64 | int(source.integers(0, 2**63)))
        key = seed.generate_state(624, np.uint32)  # MT19937(seed)'s state, without its slow copy (~60 µs)
        key[0] = 0x80000000
        self._state: Any = ("MT19937", key, 623, 0, 0.0)
        self._caller: Any = None  # the caller's global state while the code's stream is swapped in
        self._depth = 0

    def enter(self) -> None:
        """Swap the code's stream in (the caller's global state kept); a nested enter changes nothing."""
        if self._depth == 0:
            _LOCK.acquire()
            if _HERE.kept is self:  # still installed (keep_installed): the lock it held passes to this stretch
                _HERE.kept = None
                _LOCK.release()
            else:
                _put_back()
                self._caller = np.random.get_state()
                np.random.set_state(self._state)
            _HERE.open += 1
        self._depth += 1

    def leave(self) -> None:
        """Swap the caller's global state back (the code's stream kept for its next stretch), unless kept."""
        if self._depth == 0:
            raise InvalidParameterError("leave()", "must follow enter()", None)
        self._depth -= 1
        if self._depth == 0:
            _HERE.open -= 1
            if _HERE.keeping and not _HERE.open:
                _HERE.kept = self
            else:
                self._swap_out()

    def _swap_out(self) -> None:
        self._state = np.random.get_state()
        np.random.set_state(self._caller)
        self._caller = None
        _LOCK.release()

    def __enter__(self) -> SeededGlobalRng:
        self.enter()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.leave()


class _Here(threading.local):
    """This thread's ``keep_installed`` blocks, stretches open, and stream kept installed (its lock held)."""

    keeping, open = 0, 0
    kept: SeededGlobalRng | None = None


_LOCK, _HERE = threading.RLock(), _Here()  # the lock: held from a stretch's enter to its swap out


def _put_back() -> None:
    """Swap out the stream this thread kept installed, if any (the caller's global state back)."""
    kept, _HERE.kept = _HERE.kept, None
    if kept is not None:
        kept._swap_out()


@contextlib.contextmanager
def keep_installed() -> Iterator[None]:
    """Within the block (in this thread), a stream whose stretch ends stays installed until another stream
    enters, :func:`uses_global_rng` probes or the block ends: for a caller that never draws from numpy's global
    generator itself (code run between the stretches draws from the kept stream)."""
    _HERE.keeping += 1
    try:
        yield
    finally:
        _HERE.keeping -= 1
        if not _HERE.keeping:
            _put_back()


#: The fixed global state two probing runs share (:func:`uses_global_rng`).
_PROBE_SEED = 0x5EED


def uses_global_rng(run: Callable[[], Any], same: Callable[[Any, Any], bool] = operator.eq) -> bool:
    """Whether ``run()`` (a callable returning a record of one controlled run) differs between two calls only
    because of numpy's global generator: two calls with the global generator pinned to one state agree by
    ``same`` (``==`` by default). The caller has seen two unpinned calls differ; the caller's global state
    is restored."""
    with _LOCK:
        _put_back()
        saved = np.random.get_state()
        try:
            records = []
            for _ in range(2):
                np.random.seed(_PROBE_SEED)
                try:
                    records.append(run())
                finally:
                    _put_back()
        finally:
            np.random.set_state(saved)
    return bool(same(records[0], records[1]))
