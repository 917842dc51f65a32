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


def _cholesky_factor(sym: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """(W = L⁻ᵀ, log det) of symmetric matrices (..., d, d) whose eigenvalues all exceed ``floor``
    (Cholesky of A − floor·I succeeds, so no flooring is due); LinAlgError for any other."""
    np.linalg.cholesky(sym - floor * np.eye(sym.shape[-1]))
    lower = np.linalg.cholesky(sym)
    return np.swapaxes(np.linalg.inv(lower), -1, -2), 2.0 * np.log(np.diagonal(lower, axis1=-2, axis2=-1)).sum(-1)


def _factor_one(sym: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray, bool]:
    """(W, log det, corrected) of one symmetric matrix: see :func:`floored_inverse_factor`."""
    try:
        factor, logdet = _cholesky_factor(sym, floor)
    except np.linalg.LinAlgError:
        values, vectors = np.linalg.eigh(sym)
        corrected = bool(values[0] < floor)  # eigh: ascending
        values = np.maximum(values, floor)
        return vectors / np.sqrt(values)[None, :], np.log(values).sum(), corrected
    return factor, logdet, False


def floored_inverse_factor(matrix: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray, int]:
    """(W, log det A, corrections) with W Wᵀ = A⁻¹, for a stack of symmetric matrices A (..., d, d) whose
    eigenvalues below ``floor`` are raised to ``floor`` (post-processing of published values).

    ‖W ᵀx‖² = xᵀA⁻¹x gives bonuses without forming A⁻¹. A matrix whose eigenvalues all exceed the floor
    (Cholesky of A − floor·I succeeds: the usual case, as the shift is chosen to make it so) needs no
    flooring and is factored by Cholesky, A = LLᵀ and W = L⁻ᵀ, about three times faster than an
    eigendecomposition; any other is floored through its eigendecomposition, W = V·diag(λ)^{-1/2}. The
    choice is made matrix by matrix (all at once when the whole stack passes), so a matrix's result does
    not depend on the stack it came in. The third value counts the matrices that needed flooring.
    """
    sym = 0.5 * (matrix + np.swapaxes(matrix, -1, -2))
    try:
        factor, logdet = _cholesky_factor(sym, floor)
    except np.linalg.LinAlgError:
        factor = np.empty_like(sym)
        logdet = np.empty(sym.shape[:-2])
        corrections = 0
        for index in np.ndindex(*sym.shape[:-2]):
            factor[index], logdet[index], corrected = _factor_one(sym[index], floor)
            corrections += corrected
        return factor, logdet, corrections
    return factor, logdet, 0


def floored_inverse(matrix: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray, int]:
    """(A⁻¹, log det A, corrections) for a stack of symmetric matrices (..., d, d), eigenvalues floored.

    Eigenvalues below ``floor`` are raised to ``floor`` (post-processing of published values); the
    third value counts the matrices that needed it (:func:`floored_inverse_factor`, A⁻¹ = WWᵀ).
    """
    factor, logdet, corrections = floored_inverse_factor(matrix, floor)
    return factor @ np.swapaxes(factor, -1, -2), logdet, corrections
