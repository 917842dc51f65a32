"""Sensitivities of the sums that private RL agents release, with their assumptions named.

A private linear-MDP agent releases sums over users of per-user terms (Sahu 2025, Algorithm 1,
lines 6–8 and 26):

    vector statistics   Σᵢ wᵢ · φᵢ · yᵢ        (‖φᵢ‖₂ ≤ F, 0 ≤ wᵢ ≤ W, |yᵢ| ≤ B)
    Gram statistic      Σᵢ wᵢ · φᵢ φᵢᵀ

One user's term has ℓ2 norm ≤ W·F·B (vector) or Frobenius norm ≤ W·F² (Gram). Hence
(docs/derivations.md, "Sensitivities of the released sums"):

================  =====================  ===========================
relation          vector sum (ℓ2)        Gram sum (Frobenius)
================  =====================  ===========================
add/remove one    W·F·B                  W·F²
replace one       2·W·F·B                √2·W·F²
================  =====================  ===========================

The replacement bound for the Gram sum: ‖w xxᵀ − w′ yyᵀ‖_F² = w²‖x‖⁴ + w′²‖y‖⁴ − 2ww′(xᵀy)²
≤ w² F⁴ + w′² F⁴ ≤ 2W²F⁴ (attained when x ⊥ y). For the vector sum the bound 2WFB is attained by
y = −x with both targets at B.

These bounds hold only where the code enforces the assumptions: targets clipped to [0, B], weights
in [0, W], feature norms checked ≤ F at run time (docs/derivations.md, "Assumptions the code must
enforce").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpverify import _validate
from dpverify.errors import InvalidParameterError
from dpverify.neighbouring import Neighbouring


@dataclass(frozen=True)
class SumBound:
    """Bounds on one user's term of a weighted sum.

    Attributes:
        max_weight: W, an upper bound on the per-user weight (e.g. σ̄⁻² ≤ 1/H² in Sahu 2025).
        feature_norm: F, an upper bound on ‖φ‖₂.
        target_bound: B, an upper bound on |y| (e.g. H for V ∈ [0, H], H² for V²). Unused for Gram sums.
    """

    max_weight: float
    feature_norm: float
    target_bound: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_weight", _validate.positive("max_weight", self.max_weight))
        object.__setattr__(self, "feature_norm", _validate.positive("feature_norm", self.feature_norm))
        object.__setattr__(self, "target_bound", _validate.positive("target_bound", self.target_bound))


def _check_bound(bound: object) -> None:
    if not isinstance(bound, SumBound):
        raise InvalidParameterError("bound", "must be a SumBound", type(bound).__name__)


def _finite(bound: SumBound, sensitivity: float) -> float:
    if not math.isfinite(sensitivity):
        raise InvalidParameterError("bound", "gives no finite sensitivity (its product overflows)", bound)
    return sensitivity


def vector_sum_sensitivity(bound: SumBound, relation: Neighbouring | str) -> float:
    """ℓ2 sensitivity of Σᵢ wᵢ φᵢ yᵢ: W·F·B (add/remove) or 2·W·F·B (replace)."""
    _check_bound(bound)
    relation = Neighbouring.parse(relation)
    per_user = bound.max_weight * bound.feature_norm * bound.target_bound
    return _finite(bound, per_user if relation is Neighbouring.ADD_REMOVE_ONE else 2.0 * per_user)


def gram_sum_sensitivity(bound: SumBound, relation: Neighbouring | str) -> float:
    """Frobenius sensitivity of Σᵢ wᵢ φᵢφᵢᵀ: W·F² (add/remove) or √2·W·F² (replace)."""
    _check_bound(bound)
    relation = Neighbouring.parse(relation)
    per_user = bound.max_weight * bound.feature_norm * bound.feature_norm
    return _finite(bound, per_user if relation is Neighbouring.ADD_REMOVE_ONE else math.sqrt(2.0) * per_user)
