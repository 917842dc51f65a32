"""High-probability bounds on the privacy noise, and the floored inverse of a noisy Gram matrix.

The private agents add a multiple of a noise-norm bound to their released Gram matrices so that the
shifted matrix stays positive definite with high probability (the shifted regulariser of Shariff &
Sheffet 2018), widen their confidence radii by the norm of the noise on the released vectors, and
floor the eigenvalues of the shifted matrix in the rare event that the bound fails (post-processing).
"""

from __future__ import annotations

import math

import numpy as np


def goe_norm_bound(entry_std: float, dim: int, failure_probability: float) -> float:
    """A bound on ‖(Z + Zᵀ)/√2‖₂ (Z_ij iid N(0, s²)) holding with probability ≥ 1 − p.

    E‖Z‖₂ ≤ 2√d·s (Gordon's inequality), so E‖(Z + Zᵀ)/√2‖ ≤ √2·E‖Z‖ ≤ 2√(2d)·s; the map Z ↦ ‖(Z+Zᵀ)/√2‖
    is √2-Lipschitz in ‖Z‖_F, so Gaussian concentration (Tsirelson–Ibragimov–Sudakov) adds
    s·√(4 log(1/p)): bound = s·(2√(2d) + 2√(log(1/p))).
    """
    return entry_std * (2.0 * math.sqrt(2.0 * dim) + 2.0 * math.sqrt(math.log(1.0 / failure_probability)))


def gaussian_norm_bound(sigma: float, dim: int, failure_probability: float) -> float:
    """‖N(0, σ²I_dim)‖₂ ≤ σ(√dim + √(2 log(1/p))) with probability ≥ 1 − p (Laurent & Massart 2000)."""
    return sigma * (math.sqrt(dim) + math.sqrt(2.0 * math.log(1.0 / failure_probability)))


def floored_inverse(matrix: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray, int]:
    """(A⁻¹, log det A, corrections) for a stack of symmetric matrices (..., d, d), eigenvalues floored.

    Eigenvalues below ``floor`` are raised to ``floor`` (post-processing of published values); the
    third value counts the matrices that needed it.
    """
    sym = 0.5 * (matrix + np.swapaxes(matrix, -1, -2))
    values, vectors = np.linalg.eigh(sym)
    corrections = int(np.count_nonzero(values[..., 0] < floor))  # eigh: ascending, so the first is the least
    values = np.maximum(values, floor)
    inverse = np.einsum("...ij,...j,...kj->...ik", vectors, 1.0 / values, vectors)
    return inverse, np.log(values).sum(axis=-1), corrections
