"""From confidence bounds on a test's error rates to lower bounds on ε and on μ.

**(ε, δ) lower bound.** If a mechanism M is (ε, δ)-DP then for neighbours D, D′ and every event S,
P[M(D′) ∈ S] ≤ e^ε P[M(D) ∈ S] + δ. A test that rejects "the data are D" on S has false-positive rate
FPR = P[M(D) ∈ S] and false-negative rate FNR = 1 − P[M(D′) ∈ S], so ε ≥ ln((1 − δ − FNR)/FPR).
With one-sided upper confidence bounds on FPR and FNR this gives a lower bound on ε that holds with
the stated confidence (Jagielski, Ullman & Oprea 2020, "Auditing differentially private machine
learning: how private is private SGD?", NeurIPS; Nasr et al. 2021, "Adversary instantiation: lower
bounds for differentially private machine learning", IEEE S&P).

**μ-GDP lower bound.** A μ-GDP mechanism has every test's errors above the Gaussian trade-off curve
G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (Dong, Roth & Su 2019, "Gaussian differential privacy", Definition 2.5),
i.e. μ ≥ Φ⁻¹(1 − FPR) − Φ⁻¹(FNR). Upper bounds on FPR and FNR therefore give a lower bound on the
smallest μ for which the mechanism is μ-GDP. It refutes a *Gaussian-mechanism* claim (which is a μ-GDP
claim); it says nothing about an (ε, δ) claim of a non-Gaussian mechanism.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from dpverify.audit import clopper_pearson as cp
from dpverify.conversions import epsilon_exact_gaussian


def epsilon_from_rates(fpr_upper: object, fnr_upper: object, delta: float) -> np.ndarray | float:
    """ln((1 − δ − FNR_upper)/FPR_upper), floored at 0 (−∞ and negative values mean "nothing shown")."""
    fpr = np.asarray(fpr_upper, dtype=float)
    num = 1.0 - delta - np.asarray(fnr_upper, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.where((num > 0) & (fpr > 0), np.log(np.maximum(num, 1e-300)) - np.log(np.maximum(fpr, 1e-300)), 0.0)
    eps = np.maximum(eps, 0.0)
    return float(eps) if eps.ndim == 0 else eps


def mu_from_rates(fpr_upper: object, fnr_upper: object) -> np.ndarray | float:
    """Φ⁻¹(1 − FPR_upper) − Φ⁻¹(FNR_upper), floored at 0 (Dong, Roth & Su 2019, Def. 2.5)."""
    fpr = np.clip(np.asarray(fpr_upper, dtype=float), 0.0, 1.0)
    fnr = np.clip(np.asarray(fnr_upper, dtype=float), 0.0, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        mu = -special.ndtri(fpr) - special.ndtri(fnr)  # ndtri(1 − x) = −ndtri(x), accurate for small x
    mu = np.where(np.isnan(mu), 0.0, mu)
    mu = np.maximum(mu, 0.0)
    return float(mu) if mu.ndim == 0 else mu


def epsilon_of_mu(mu: float, delta: float) -> float:
    """ε at δ of a μ-GDP mechanism by the exact profile; for δ = 0 any μ > 0 gives ε = ∞."""
    if mu <= 0:
        return 0.0
    if not math.isfinite(mu):
        return math.inf
    if delta <= 0:
        return math.inf
    return epsilon_exact_gaussian(mu, delta)


@functools.lru_cache(maxsize=256)
def ceiling(trials: int, alpha_each: float, delta: float) -> float:
    """The largest ε a threshold test can certify with this many trials per side.

    A test with zero false positives and zero false negatives on ``trials`` trials per side gives
    FPR_upper = 1 − a^{1/n} and FNR_upper = 1 − a^{1/n} (a = ``alpha_each``), so
    ε_lb = ln((a^{1/n} − δ)/(1 − a^{1/n})) ≈ ln(n/ln(1/a)): no audit of this size can show more.
    """
    rate_u = cp.upper_bound(0, trials, alpha_each)
    return float(epsilon_from_rates(rate_u, rate_u, delta))
