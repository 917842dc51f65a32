"""Noise-norm bounds (coverage by simulation) and the floored inverse (two routes that must agree)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.agents.core.noise_bounds import (
    floored_inverse,
    floored_inverse_factor,
    gaussian_norm_bound,
    goe_norm_bound,
)


def _eigen_route(matrix: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray, int]:
    """The floored inverse straight from the eigendecomposition (the definition)."""
    sym = 0.5 * (matrix + np.swapaxes(matrix, -1, -2))
    values, vectors = np.linalg.eigh(sym)
    corrections = int(np.count_nonzero(values[..., 0] < floor))
    values = np.maximum(values, floor)
    inverse = np.einsum("...ij,...j,...kj->...ik", vectors, 1.0 / values, vectors)
    return inverse, np.log(values).sum(axis=-1), corrections


def _stack(rng: np.random.Generator, count: int, dim: int, shift: float) -> np.ndarray:
    z = rng.normal(size=(count, dim, dim))
    return z @ np.swapaxes(z, 1, 2) / dim + rng.normal(size=(count, dim, dim)) * 0.3 + shift * np.eye(dim)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), count=st.integers(1, 6), dim=st.integers(1, 8),
       shift=st.sampled_from([-1.0, 0.0, 0.5, 3.0, 50.0]), floor=st.sampled_from([1e-3, 0.5, 2.0]))
def test_factor_agrees_with_the_eigendecomposition(seed, count, dim, shift, floor):
    matrix = _stack(np.random.default_rng(seed), count, dim, shift)
    inverse, logdet, corrections = floored_inverse(matrix, floor)
    ref_inverse, ref_logdet, ref_corrections = _eigen_route(matrix, floor)
    scale = np.abs(ref_inverse).max()
    assert np.allclose(inverse, ref_inverse, rtol=1e-8, atol=1e-10 * scale)
    assert np.allclose(logdet, ref_logdet, rtol=1e-10, atol=1e-9)
    assert corrections == ref_corrections
    factor, _, _ = floored_inverse_factor(matrix, floor)
    x = np.random.default_rng(seed + 1).normal(size=(count, dim))
    # ‖Wᵀx‖² = xᵀA⁻¹x: the bonus without forming A⁻¹
    assert np.allclose(np.square(np.einsum("hji,hj->hi", factor, x)).sum(-1),
                       np.einsum("hi,hij,hj->h", x, ref_inverse, x), rtol=1e-8)


def test_each_matrix_is_factored_as_if_alone():
    """One matrix needing the floor sends the stack down the per-matrix route: the others are unchanged,
    bit for bit (a batched run and a single run of an agent must agree)."""
    rng = np.random.default_rng(0)
    good = _stack(rng, 3, 4, 5.0)
    bad = good.copy()
    bad[1] -= 10.0 * np.eye(4)  # eigenvalues below the floor
    alone = [floored_inverse_factor(good[i:i + 1], 1.0) for i in range(3)]
    factor, logdet, corrections = floored_inverse_factor(bad, 1.0)
    assert corrections == 1
    for i in (0, 2):
        assert np.array_equal(factor[i], alone[i][0][0]) and logdet[i] == alone[i][1][0]
    together, _, _ = floored_inverse_factor(good, 1.0)
    assert all(np.array_equal(together[i], alone[i][0][0]) for i in range(3))
    # the floored matrix: every eigenvalue of the implied A is at least the floor
    implied = np.linalg.inv(factor[1] @ factor[1].T)
    assert np.linalg.eigvalsh(implied).min() >= 1.0 - 1e-9


@pytest.mark.parametrize("dim", [2, 10])
def test_norm_bounds_hold_with_the_stated_probability(dim):
    """p = 0.05: at most 5% of 2000 draws exceed each bound (fixed seed; margin 3 sd)."""
    rng = np.random.default_rng(7)
    p, draws, s = 0.05, 2000, 0.7
    z = rng.normal(0.0, s, size=(draws, dim, dim))
    goe = np.linalg.norm((z + np.swapaxes(z, 1, 2)) / np.sqrt(2.0), ord=2, axis=(1, 2))
    gauss = np.linalg.norm(rng.normal(0.0, s, size=(draws, dim)), axis=1)
    limit = draws * p + 3 * np.sqrt(draws * p * (1 - p))
    assert np.count_nonzero(goe > goe_norm_bound(s, dim, p)) <= limit
    assert np.count_nonzero(gauss > gaussian_norm_bound(s, dim, p)) <= limit
