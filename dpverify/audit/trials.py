"""Chunks of trials: what an executor runs, with a seed that depends only on the chunk's place.

The generator of every chunk is spawned deterministically from the audit seed and the chunk's
coordinates: ``SeedSequence(seed, spawn_key=(stage, pair, side, chunk))`` (numpy's documented way of
deriving independent streams). Chunk sizes are fixed by the spec, so the outputs — and therefore the
audit result — are identical whichever executor ran the chunks, in whichever order.

A mechanism under audit is any picklable callable ``mechanism(dataset, n, rng) -> array`` returning n
independent outputs with leading dimension n (a scalar, a vector, or a transcript (n, r, d)), drawing
all its randomness from ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.errors import InvalidParameterError

SELECTION, EVALUATION, PROBE = 0, 1, 2


def chunk_sizes(total: int, chunk_size: int) -> list[int]:
    """Split ``total`` trials into chunks of ``chunk_size`` (the last one shorter)."""
    full, rest = divmod(total, chunk_size)
    return [chunk_size] * full + ([rest] if rest else [])


def generator(seed: int, key: tuple[int, ...]) -> np.random.Generator:
    """The generator of one chunk: PCG64 seeded by SeedSequence(seed, spawn_key=key)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=key)))


def all_finite(x: np.ndarray) -> bool:
    """No NaN or ±inf in the float array ``x``, in one fast pass where possible.

    A NaN or an infinity propagates through every product and sum, so a finite sum of squares x·x
    (one BLAS dot product, no temporary array) shows that every value is finite. When it is not finite
    — a non-finite value, or the overflow of values beyond about 1e154 — min and max decide: they
    propagate NaN and reach ±inf exactly when some value is non-finite.
    """
    if x.size == 0:
        return True
    if x.dtype == np.float64 and (x.ndim == 1 or x.flags.c_contiguous):
        flat = x.reshape(-1)
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(np.dot(flat, flat)):
                return True
    return bool(np.isfinite(x.min()) and np.isfinite(x.max()))


def check_outputs(outputs: Any, n: int, shape: tuple[int, ...] | None) -> np.ndarray:
    """The mechanism's outputs as a float array of shape (n, *shape); a clear error otherwise."""
    try:
        arr = np.asarray(outputs, dtype=float)
    except (TypeError, ValueError):
        raise InvalidParameterError("mechanism output", "must be a numeric array", type(outputs).__name__) from None
    if arr.ndim == 0 or arr.shape[0] != n:
        raise InvalidParameterError("mechanism output", f"must have leading dimension n={n}", arr.shape)
    if shape is not None and arr.shape[1:] != shape:
        raise InvalidParameterError(
            "mechanism output", f"must have the same per-trial shape {shape} on every call and dataset", arr.shape[1:]
        )
    if not all_finite(arr):
        raise InvalidParameterError("mechanism output", "must be finite (no NaN or inf)", "non-finite values")
    return arr


@dataclass(frozen=True)
class ChunkFailure:
    """An InvalidParameterError raised inside a worker, carried back as data (it pickles reliably)."""

    parameter: str
    rule: str
    value: str

    def raise_(self) -> None:
        raise InvalidParameterError(self.parameter, self.rule, self.value)


@dataclass(frozen=True, eq=False)
class Chunk:
    """One unit of work: ``n`` trials of ``mechanism`` on ``dataset`` with the generator of ``key``.

    Without ``tests`` the chunk returns its outputs (selection); with ``tests`` — a tuple of
    (feature, thresholds) — it returns, for each threshold in order, how many scores exceed it.
    """

    mechanism: Callable[..., Any]
    dataset: Any
    n: int
    seed: int
    key: tuple[int, ...]
    shape: tuple[int, ...]
    tests: tuple[tuple[Any, tuple[float, ...]], ...] | None = None


def run_chunk(chunk: Chunk) -> np.ndarray | ChunkFailure:
    """Run one chunk (this is the function executors ship to workers)."""
    try:
        rng = generator(chunk.seed, chunk.key)
        outputs = check_outputs(chunk.mechanism(chunk.dataset, chunk.n, rng), chunk.n, chunk.shape)
        if chunk.tests is None:
            return outputs
        counts: list[int] = []
        for feature, thresholds in chunk.tests:
            scores = feature.scores(outputs)
            counts.extend(int(np.count_nonzero(scores > t)) for t in thresholds)
        return np.asarray(counts, dtype=np.int64)
    except InvalidParameterError as exc:
        return ChunkFailure(exc.parameter, exc.rule, repr(exc.value))
