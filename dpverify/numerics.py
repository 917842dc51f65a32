"""Log-space numerics shared by the conversions: the one place floating-point subtleties live.

The exact privacy profile of a Gaussian mechanism (Balle & Wang 2018, Theorem 8; Dong, Roth & Su 2019,
Corollary 2.13)

    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)

is a difference of two terms that underflow together: evaluated naively it returns δ = 0 below about
1e-308 and NaN for ε ≥ 710 (e^ε overflows). Here it is evaluated as

    log δ = log Φ(a) + log1mexp(ε + log Φ(b) − log Φ(a)),   a = −ε/μ + μ/2,  b = −ε/μ − μ/2,

with ``scipy.special.log_ndtr`` (accurate far into the lower tail) and a ``log1mexp`` that switches
between ``log(−expm1(x))`` and ``log1p(−exp(x))`` at x = −ln 2 (Mächler 2012, "Accurately computing
log(1 − exp(−|a|))", the R package Rmpfr vignette).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import special

from dpverify.errors import NumericalError

_LN2 = math.log(2.0)
_SQRT2 = math.sqrt(2.0)


def log1mexp(x: float) -> float:
    """log(1 − e^x) for x ≤ 0, accurate at both ends (Mächler 2012). Returns −inf at x = 0."""
    if math.isnan(x) or x > 0:
        raise NumericalError(f"log1mexp needs x <= 0 (got {x!r})")
    if x == 0:
        return -math.inf
    if x > -_LN2:
        return math.log(-math.expm1(x))
    return math.log1p(-math.exp(x))


def log_ndtr(x: float) -> float:
    """log Φ(x), the log of the standard normal CDF, accurate in the far lower tail."""
    return float(special.log_ndtr(x))


def gaussian_log_delta(epsilon: float, mu: float) -> float:
    """log δ(ε) of a μ-GDP mechanism (exact for the Gaussian mechanism with Δ/σ = μ).

    Valid for ε ≥ 0 (any real ε works mathematically; negative ε is rejected upstream) and μ > 0.
    Returns −inf only when δ truly underflows even in log space (it does not for finite inputs in
    practice: log δ ≈ −(ε/μ)²/2 stays representable up to ε/μ ~ 1e154).
    """
    if not (mu > 0) or math.isinf(mu):
        raise NumericalError(f"mu must be finite and > 0 (got {mu!r})")
    if math.isnan(epsilon):
        raise NumericalError("epsilon is NaN")
    a = -epsilon / mu + mu / 2.0
    b = -epsilon / mu - mu / 2.0
    log_a = log_ndtr(a)
    if a < 0:
        # Both Φ arguments are in the lower tail. Write Φ(−t) = erfcx(t/√2)·e^{−t²/2}/2; the Gaussian
        # factors of e^ε Φ(b) / Φ(a) cancel exactly (their exponents differ by ε), leaving
        #   gap = log erfcx(−b/√2) − log erfcx(−a/√2),
        # a difference of two O(log ε/μ) numbers instead of two O((ε/μ)²) ones.
        gap = math.log(special.erfcx(-b / _SQRT2)) - math.log(special.erfcx(-a / _SQRT2))
    else:
        gap = epsilon + log_ndtr(b) - log_a
    if math.isnan(gap):
        raise NumericalError(f"log δ is NaN at epsilon={epsilon!r}, mu={mu!r}")
    if gap >= 0:
        # Mathematically gap < 0 always (δ > 0). Rounding can only push it to 0 when the two terms
        # agree to all digits, i.e. the true δ is below the resolution of Φ(a): report the bound
        # δ ≤ Φ(a)·2^-52, which is conservative (an upper bound on δ).
        return log_a + math.log(2.0**-52)
    return log_a + log1mexp(gap)


def round_up(x: float, ulps: int = 1) -> float:
    """The float ``ulps`` steps above x (towards +inf)."""
    for _ in range(ulps):
        x = float(np.nextafter(x, math.inf))
    return x


def round_down(x: float, ulps: int = 1) -> float:
    """The float ``ulps`` steps below x (towards −inf)."""
    for _ in range(ulps):
        x = float(np.nextafter(x, -math.inf))
    return x


# --------------------------------------------------------------------------------------------
# Bounded searches (no scipy.optimize: it costs ~0.35 s of start-up for two small loops)

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
SEARCH_ITERATIONS = 300  # every search below stops after this many steps


def golden_minimise(f: Callable[[float], float], lo: float, hi: float) -> tuple[float, float]:
    """(min f, argmin) of a unimodal ``f`` on [lo, hi] by golden-section search (Kiefer 1953).

    Bounded: at most :data:`SEARCH_ITERATIONS` evaluations, stopping once the bracket is a few ulps
    wide. For a function that is not unimodal the answer is still a value f takes (callers that only
    need an upper bound of the minimum, such as the CKS conversion, stay valid).
    """
    a, b = lo, hi
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(SEARCH_ITERATIONS):
        if not b - a > 4e-16 * max(abs(a), abs(b), 1.0):
            break
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = f(d)
    return (fc, c) if fc <= fd else (fd, d)


def decreasing_root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The smallest x in [lo, hi] found with f(x) <= 0, for f decreasing with f(lo) > 0 >= f(hi): the upper
    end of :func:`decreasing_bracket`."""
    return decreasing_bracket(f, lo, hi)[1]


def decreasing_bracket(f: Callable[[float], float], lo: float, hi: float) -> tuple[float, float]:
    """(lo, hi) with f(lo) > 0 >= f(hi) a few ulps apart, for f decreasing with f(lo) > 0 >= f(hi).

    Regula falsi with the Illinois modification (Dowell & Jarratt 1971), falling back to bisection,
    keeping the bracket [lo, hi] with f(lo) > 0 >= f(hi) throughout; stops once the bracket is 4 ulps wide
    or after :data:`SEARCH_ITERATIONS` steps. An upper bound of the root is hi, a lower bound lo.
    """
    flo, fhi = f(lo), f(hi)
    side = 0
    for i in range(SEARCH_ITERATIONS):
        if not hi - lo > 4 * 2.0**-52 * abs(hi) or fhi == 0:
            break
        x = (lo * fhi - hi * flo) / (fhi - flo) if i % 3 != 2 else 0.5 * (lo + hi)  # every third step bisects
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
        fx = f(x)
        if fx > 0:
            lo, flo = x, fx
            if side == -1:
                fhi *= 0.5
            side = -1
        else:
            hi, fhi = x, fx
            if side == 1:
                flo *= 0.5
            side = 1
    return lo, hi
