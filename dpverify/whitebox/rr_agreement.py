"""The flip probability of self-noised randomized response, from m runs that differ only in the noise seed.

An agent that applies randomized response itself (:meth:`~dpverify.agents.core.billboard.Billboard.publish_noised`)
hides the raw categories, so its offsets are never seen; but m runs with the same users, coins and transcript and
m noise seeds publish, at each coordinate, m independent draws Y₁, …, Y_m of x + Z (mod k) around the one unknown
raw category x. Any two of them agree with probability a(p) = p² + (1 − p)²/(k − 1) (p the keep probability),
whatever x is, and a(p) grows with p on p ≥ 1/k, so the number of agreeing pairs

    T_c = Σ_{r<s} 1{Y_rc = Y_sc} = Σ_v C(n_cv, 2)    (n_cv: the runs that published v at coordinate c)

summed over the coordinates, S = Σ_c T_c, is a U-statistic of the pairwise agreement rate (Hoeffding 1948) whose
null law is known exactly: the T_c are iid over coordinates (fresh coins per coordinate and run), each distributed
as C(N, 2) + Σ_v C(M_v, 2), N ~ Binomial(m, p) the runs that kept x and (M_v) ~ Multinomial(m − N, uniform over the
k − 1 other categories) (:func:`agreement_pmf`). More agreement than the recorded p allows is less noise — a larger
ε than recorded — and is tested with the Chernoff bound P(S ≥ s) ≤ exp(min_{λ≥0} n log E e^{λT} − λs) (Chernoff
1952), an upper bound on the exact tail for any n: valid at every size, a little conservative (a factor of about
z√(2π) at z standard deviations).

The number of runs comes from a power calculation (:func:`runs_needed`): the U-statistic's variance is about
C(m, 2)·a(1 − a) per coordinate, so its power grows with C(m, 2)·n; the fewest runs that detect a keep probability of
twice the recorded ε (the mechanism's ε₀ doubled) with probability :data:`TARGET_POWER` at the test's level are
made, up to a cap.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from dpverify.mechanisms import RandomizedResponse

#: The power the number of runs is chosen for, against the keep probability of twice the recorded ε₀.
TARGET_POWER = 0.99
#: Below this power at the cap, the flip-rate test is not run (it would pass bugs it cannot see).
MIN_POWER = 0.5
#: The alternative the runs are sized for: the recorded ε₀ times this.
ALTERNATIVE_FACTOR = 2.0


def agreements(runs: Sequence[np.ndarray]) -> np.ndarray:
    """T_c for every coordinate: the number of pairs of runs that published the same category there."""
    total = np.zeros(np.shape(runs[0]), dtype=np.int64)
    for r, first in enumerate(runs):
        for second in runs[r + 1:]:
            total += first == second
    return total


def _scaled(poly: np.ndarray, factor: float) -> np.ndarray:
    """poly(factor·x, y): the coefficients of x^i times factor^i."""
    return poly * factor ** np.arange(poly.shape[0])[:, None]


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The product of two polynomials in (x, y), truncated to a's shape (x-degree ≤ m; the y-degree of x^i is at
    most C(i, 2), so nothing is lost); direct sums of non-negative terms."""
    m, width = a.shape[0] - 1, a.shape[1]
    out = np.zeros_like(a)
    for i in range(m + 1):
        ai = a[i, :math.comb(i, 2) + 1]
        for j in range(m + 1 - i):
            bj = b[j, :math.comb(j, 2) + 1]
            product = np.convolve(ai, bj)
            out[i + j, :min(product.size, width)] += product[:width]
    return out


def _other_categories(m: int, others: int) -> np.ndarray:
    """P(Σ_v C(M_v, 2) = t | M = j), row j: j balls thrown uniformly into ``others`` bins. The generating function
    Σ_j x^j/j! E[y^{Σ C(M_v, 2)} | j] is g(x/K, y)^K with g = Σ_c x^c y^{C(c,2)}/c! and K = ``others``; it is built
    by binary powering with each factor kept as g(x/K′, y)^{K′}, whose x^j coefficients sum to 1/j! (no overflow)."""
    width = math.comb(m, 2) + 1
    base = np.zeros((m + 1, width))
    for c in range(m + 1):
        base[c, math.comb(c, 2)] = 1.0 / math.factorial(c)
    result: tuple[np.ndarray, int] | None = None
    power, count, remaining = base, 1, others
    while remaining:
        if remaining & 1:
            if result is None:
                result = (power, count)
            else:
                held, k = result
                total = k + count
                result = (_product(_scaled(held, k / total), _scaled(power, count / total)), total)
        remaining >>= 1
        if remaining:
            power, count = _product(_scaled(power, 0.5), _scaled(power, 0.5)), 2 * count
    if result is None:  # others >= 1 always; kept for the type checker
        raise ValueError("others must be at least 1")
    table = result[0] * np.array([math.factorial(j) for j in range(m + 1)], dtype=float)[:, None]
    return np.clip(table, 0.0, None)


def agreement_pmf(keep: float, categories: int, runs: int) -> np.ndarray:
    """The law of T_c (module docstring) for m = ``runs`` runs: P(T_c = t), t = 0..C(m, 2)."""
    m = runs
    others = _other_categories(m, categories - 1)
    kept = stats.binom.pmf(np.arange(m + 1), m, keep)
    pmf = np.zeros(math.comb(m, 2) + 1)
    for n in range(m + 1):
        shift = math.comb(n, 2)
        pmf[shift:] += kept[n] * others[m - n, :pmf.size - shift]
    return pmf / pmf.sum()


def _log_mgf(pmf: np.ndarray, lam: float) -> float:
    support = np.flatnonzero(pmf > 0.0)
    return float(special.logsumexp(lam * support, b=pmf[support]))


def upper_tail(pmf: np.ndarray, n: int, total: float) -> float:
    """Chernoff's bound on P(S ≥ total), S the sum of n iid draws of ``pmf``: exp(min_{λ≥0} n log M(λ) − λ·total),
    1 at or below the mean; 0 above the largest possible sum only if no draw can reach it."""
    t = np.arange(pmf.size)
    mean = float(pmf @ t)
    top = int(np.flatnonzero(pmf > 0.0)[-1])
    if total <= n * mean:
        return 1.0
    if total > n * top:
        return 0.0
    if total == n * top:
        return float(pmf[top]) ** n

    def exponent(lam: float) -> float:
        return n * _log_mgf(pmf, lam) - lam * total

    upper = 1.0
    while exponent(upper) < exponent(upper / 2.0) and upper < 1e6:
        upper *= 2.0
    best = optimize.minimize_scalar(exponent, bounds=(0.0, upper), method="bounded",
                                    options={"xatol": 1e-12 * max(upper, 1.0)})
    return float(math.exp(min(0.0, float(best.fun))))


def lower_tail(pmf: np.ndarray, n: int, total: float) -> float:
    """Chernoff's bound on P(S ≤ total) (the same bound, reflected)."""
    return upper_tail(pmf[::-1], n, n * (pmf.size - 1) - total)


def _moments(pmf: np.ndarray) -> tuple[float, float]:
    t = np.arange(pmf.size)
    mean = float(pmf @ t)
    return mean, float(pmf @ (t - mean) ** 2)


def critical_total(pmf: np.ndarray, n: int, alpha: float) -> float:
    """The least total the Chernoff bound rejects at ``alpha``: the bound is ≤ α exactly when
    n log M(λ) + log(1/α) ≤ λ·total for some λ > 0, so it is min_λ (n log M(λ) + log(1/α))/λ."""
    mean, var = _moments(pmf)
    if var == 0.0:
        return math.inf
    scale = 1.0 / math.sqrt(n * var)  # the optimal λ is near z/√(n var)

    def total(lam: float) -> float:
        return (n * _log_mgf(pmf, lam) + math.log(1.0 / alpha)) / lam

    best = optimize.minimize_scalar(total, bounds=(scale * 1e-3, scale * 1e3), method="bounded",
                                    options={"xatol": scale * 1e-9})
    return float(best.fun)


def power(recorded: float, alternative: float, categories: int, runs: int, n: int, alpha: float) -> float:
    """The probability that the test at ``alpha`` rejects when the keep probability is ``alternative`` (normal
    approximation of S under the alternative: a design figure, not a test)."""
    critical = critical_total(agreement_pmf(recorded, categories, runs), n, alpha)
    mean, var = _moments(agreement_pmf(alternative, categories, runs))
    if var == 0.0:
        return float(n * mean >= critical)
    return float(stats.norm.sf((critical - n * mean) / math.sqrt(n * var)))


@dataclass(frozen=True)
class RunsPlan:
    """How many runs the flip-rate test of one mechanism uses, and its power against the alternative there."""

    runs: int
    power: float
    alternative_epsilon: float


def runs_needed(mechanism: RandomizedResponse, n: int, alpha: float, cap: int) -> RunsPlan:
    """The fewest runs m ≥ 2 (at most ``cap``) whose test at ``alpha`` over ``n`` coordinates detects the keep
    probability of :data:`ALTERNATIVE_FACTOR` × the recorded ε₀ with probability :data:`TARGET_POWER` (else the
    cap, with its power). Power rises with m, so the search doubles, then bisects."""
    epsilon = mechanism.local_epsilon
    keep = dataclasses.replace(mechanism, local_epsilon=ALTERNATIVE_FACTOR * epsilon).keep_probability
    recorded_keep, k = mechanism.keep_probability, mechanism.categories
    cap = max(cap, 2)

    def power_at(m: int) -> float:
        return power(recorded_keep, keep, k, m, n, alpha)

    low, high = 1, 2
    while high < cap and power_at(high) < TARGET_POWER:
        low, high = high, min(2 * high, cap)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if power_at(mid) < TARGET_POWER else (low, mid)
    return RunsPlan(high, power_at(high), ALTERNATIVE_FACTOR * epsilon)
