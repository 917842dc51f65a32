"""Small linear-algebra helpers shared by the agents: rank-one updates of an inverse and of a log-determinant.

All functions are batched over leading axes, so an agent updates the H per-stage matrices of an episode
in one call.

* Sherman–Morrison (Sherman & Morrison 1950): for A ≻ 0, w ≥ 0,
  (A + w x xᵀ)⁻¹ = A⁻¹ − w (A⁻¹x)(A⁻¹x)ᵀ / (1 + w xᵀA⁻¹x).
* Matrix determinant lemma: log det(A + w x xᵀ) = log det A + log(1 + w xᵀA⁻¹x).
* Weighted norms: ‖φ‖²_{A⁻¹} = φᵀA⁻¹φ for many φ at once, and its rank-one downdate
  φᵀ(A + w x xᵀ)⁻¹φ = φᵀA⁻¹φ − w (φᵀA⁻¹x)² / (1 + w xᵀA⁻¹x) (used to keep every bonus current in O(SAd)).
"""

from __future__ import annotations

import numpy as np


def rank_one_terms(inverse: np.ndarray, x: np.ndarray,
                   weight: np.ndarray | float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(u, ratio) = (A⁻¹x, 1 + w xᵀA⁻¹x), the terms every rank-one update A + w x xᵀ below needs."""
    weight = np.asarray(weight, dtype=np.float64)
    u = np.einsum("...ij,...j->...i", inverse, x)
    return u, 1.0 + weight * np.einsum("...i,...i->...", x, u)


def sherman_morrison(inverse: np.ndarray, x: np.ndarray, weight: np.ndarray | float = 1.0,
                     terms: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Return ((A + w x xᵀ)⁻¹, 1 + w xᵀA⁻¹x) from A⁻¹ (shape (..., d, d)), x (..., d), w (...).

    The second value is the determinant ratio det(A + w x xᵀ)/det(A) (matrix determinant lemma).
    ``terms`` are :func:`rank_one_terms` of the same arguments, when already computed.
    """
    weight = np.asarray(weight, dtype=np.float64)
    u, ratio = rank_one_terms(inverse, x, weight) if terms is None else terms
    updated = inverse - (weight / ratio)[..., None, None] * u[..., :, None] * u[..., None, :]
    return updated, ratio


def weighted_norms_squared(features: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    """φᵀA⁻¹φ for features of shape (H, ..., d) and per-stage inverses (H, d, d) → shape (H, ...)."""
    flat = features.reshape(features.shape[0], -1, features.shape[-1])
    values = np.einsum("hnd,hde,hne->hn", flat, inverse, flat)
    return values.reshape(features.shape[:-1])


def downdate_weighted_norms(
    norms_squared: np.ndarray, features: np.ndarray, inverse: np.ndarray, x: np.ndarray,
    weight: np.ndarray | float = 1.0, terms: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """φᵀ(A + w x xᵀ)⁻¹φ from φᵀA⁻¹φ for all φ: shapes (H, N), (H, N, d), A⁻¹ (H, d, d), x (H, d), w (H,)."""
    weight = np.asarray(weight, dtype=np.float64)
    u, ratio = rank_one_terms(inverse, x, weight) if terms is None else terms
    projections = np.einsum("hnd,hd->hn", features, u)
    return norms_squared - (weight / ratio)[:, None] * projections**2
