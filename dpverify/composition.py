"""Closed forms for composing pure ε-DP releases, and the μ-GDP of one.

- **Basic composition** (Dwork, McSherry, Nissim & Smith 2006): n releases that are ε_i-DP are Σε_i-DP.
  For releases whose worst-case neighbours attain their ε (Laplace, randomized response) this pure ε is
  exact: the outputs at the ends of every release's range attain Σε_i together.
- **Randomized response composed** (:func:`rr_delta`): the exact privacy profile of n releases of k-ary
  randomized response with parameter ε (Warner 1965 for k = 2; Kairouz, Oh & Viswanath 2016 for k-RR). For
  k = 2 it is the optimal composition theorem of Kairouz, Oh & Viswanath 2015 (Theorem 3.3; IEEE Trans.
  Inf. Theory 2017): *any* n adaptively chosen ε-DP releases are (ε', δ_n(ε'))-DP with

      δ_n(ε') = Σ_{b : ε(n − 2b) > ε'} C(n, b) pⁿ⁻ᵇ qᵇ (1 − e^{ε' − ε(n − 2b)}),   p = e^ε/(1 + e^ε), q = 1 − p,

  and n binary randomized responses attain it. For k > 2 a coordinate lands on the input (loss +ε), on the
  neighbour's input (loss −ε) or elsewhere (loss 0); given the number N of coordinates that land on either,
  the first count is Binomial(N, p), so the k-ary profile is the Binomial(n, (e^ε + 1)/(e^ε + k − 1))
  mixture of the binary ones (docs/derivations.md).
- **Heterogeneous ε** (:func:`kov_heterogeneous_epsilon`): Kairouz, Oh & Viswanath 2015, Theorem 3.5 — n
  releases with ε_i-DP are (ε̃, δ)-DP with ε̃ the least of Σε_i,
  Σε_i·tanh(ε_i/2) + √(2Σε_i² · log(e + √(Σε_i²)/δ)) and Σε_i·tanh(ε_i/2) + √(2Σε_i² · log(1/δ)).
  (ε·tanh(ε/2) = (e^ε − 1)ε/(e^ε + 1).)
- **μ-GDP of an ε-DP release** (:func:`gdp_mu_of_pure`): ε-DP implies μ-GDP with μ = 2Φ⁻¹(e^ε/(1 + e^ε)),
  tight for binary randomized response (docs/derivations.md; trade-off functions of Dong, Roth & Su 2019).

Every ε here is conservative (never below the true ε of its statement); inverting a profile keeps the margin
:data:`dpverify.conversions.DELTA_SAFETY` on δ and takes the root on the safe side of its bracket.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

from dpverify import _validate
from dpverify.conversions import DELTA_SAFETY
from dpverify.errors import InvalidParameterError
from dpverify.numerics import decreasing_bracket, round_down, round_up

#: Binomial masses further than this many standard deviations from the mean are counted in full at every ε'.
_WINDOW_SDS = 40.0
#: The largest n of a k-ary (k > 2) profile: its mixture costs ~(80√n)² binomial masses.
MAX_KARY_COMPOSITIONS = 4096


@dataclass(frozen=True, eq=False)
class _Lattice:
    """The loss of n k-RR pairs in units of ε, D = (#coordinates on the input) − (#on the neighbour's input):
    masses ``probs`` at D = ``first`` + i, taken exactly within 40 standard deviations of each binomial, and
    ``outside`` — the mass left out, counted in full by :meth:`delta` (so δ is an upper bound)."""

    epsilon: float
    first: int
    probs: np.ndarray
    outside: float

    def delta(self, epsilon_prime: float) -> float:
        d = self.first + np.arange(self.probs.size)
        above = d * self.epsilon > epsilon_prime
        terms = self.probs[above] * -np.expm1(epsilon_prime - self.epsilon * d[above])
        return min(1.0, math.fsum(terms.tolist()) + self.outside)


def _window(n: int, p: float) -> tuple[int, int]:
    spread = _WINDOW_SDS * math.sqrt(n * p * (1.0 - p)) + 1.0
    return max(0, math.floor(n * p - spread)), min(n, math.ceil(n * p + spread))


@lru_cache(maxsize=64)
def _lattice(epsilon: float, n: int, categories: int) -> _Lattice:
    """n k-RR pairs: given the number N of coordinates on either input (Binomial(n, (e^ε + 1)/(e^ε + k − 1));
    N = n for k = 2), the count on the input is Binomial(N, e^ε/(1 + e^ε)) and D = 2A − N."""
    from scipy import stats  # only when a profile is evaluated (scipy.stats costs a second of start-up)

    keep = float(special.expit(epsilon))  # e^ε/(1 + e^ε)
    r = 1.0 if categories == 2 else (math.exp(epsilon) + 1.0) / (math.exp(epsilon) + categories - 1.0)
    lo_n, hi_n = (n, n) if categories == 2 else _window(n, r)
    probs = np.zeros(2 * n + 1)  # D = −n..n
    outside = 0.0
    if categories > 2:
        outside += (float(stats.binom.cdf(lo_n - 1, n, r)) if lo_n > 0 else 0.0) + float(stats.binom.sf(hi_n, n, r))
    weights = stats.binom.pmf(np.arange(lo_n, hi_n + 1), n, r) if categories > 2 else np.ones(1)
    for count, weight in zip(range(lo_n, hi_n + 1), weights, strict=True):
        lo_a, hi_a = _window(count, keep)
        a = np.arange(lo_a, hi_a + 1)
        probs[2 * a - count + n] += weight * stats.binom.pmf(a, count, keep)
        left = (float(stats.binom.cdf(lo_a - 1, count, keep)) if lo_a > 0 else 0.0)
        outside += float(weight) * (left + float(stats.binom.sf(hi_a, count, keep)))
    nonzero = np.flatnonzero(probs)
    first, last = (int(nonzero[0]), int(nonzero[-1])) if nonzero.size else (n, n)
    return _Lattice(epsilon, first - n, probs[first:last + 1].copy(), outside)


def rr_delta(epsilon: float, n: int, epsilon_prime: float, categories: int = 2) -> float:
    """The exact privacy profile δ(ε') of n releases of k-ary randomized response with parameter ε (an upper
    bound within ~1e-13 relative: every mass left out of the binomial windows counted in full). For k = 2
    also the optimal bound for any n ε-DP releases."""
    epsilon = _validate.positive("epsilon", epsilon)
    n = _validate.integer("n", n, minimum=0)
    epsilon_prime = _validate.non_negative("epsilon_prime", epsilon_prime)
    categories = _validate.integer("categories", categories, minimum=2)
    if n == 0:
        return 0.0
    if categories > 2 and n > MAX_KARY_COMPOSITIONS:
        raise InvalidParameterError("n", f"must be <= {MAX_KARY_COMPOSITIONS} for k-ary randomized response "
                                    "(use the ledger's PLD route for more)", n)
    return _lattice(epsilon, n, categories).delta(epsilon_prime)


def epsilon_for_profile(delta_of: Callable[[float], float], delta: float, ceiling: float,
                        lower: bool = False) -> float:
    """The smallest ε' ≥ 0 with ``delta_of(ε') <= δ`` (upper bound, with the margin
    :data:`~dpverify.conversions.DELTA_SAFETY` on δ: the profiles here are evaluated to ~1e-13 relative),
    or with ``lower=True`` the largest ε' with ``delta_of(ε') > δ(1 + DELTA_SAFETY)`` (a lower bound); for a
    decreasing profile that vanishes at ``ceiling``."""
    delta = _validate.open_unit("delta", delta)
    target = delta * (1.0 + DELTA_SAFETY) if lower else delta * (1.0 - DELTA_SAFETY)
    f = lambda x: delta_of(x) - target  # noqa: E731  (decreasing in x)
    if f(0.0) <= 0:
        return 0.0
    if f(ceiling) > 0:
        raise InvalidParameterError("ceiling", "must be an ε at which the profile meets δ", ceiling)
    lo, hi = decreasing_bracket(f, 0.0, ceiling)
    return max(0.0, round_down(lo, 1)) if lower else round_up(hi, 1)


def rr_epsilon(epsilon: float, n: int, delta: float, categories: int = 2, lower: bool = False) -> float:
    """ε at δ of n releases of k-ary randomized response (exact profile, :func:`rr_delta`), rounded up
    (``lower=True``: a lower bound, rounded down). For k = 2 also the optimal composition theorem of
    Kairouz, Oh & Viswanath 2015 (Theorem 3.3) for any n ε-DP releases."""
    epsilon = _validate.positive("epsilon", epsilon)
    n = _validate.integer("n", n, minimum=0)
    if n == 0:
        return 0.0
    ceiling = round_up(n * epsilon, 2)
    return epsilon_for_profile(lambda x: rr_delta(epsilon, n, x, categories), delta, ceiling, lower)


def kov_heterogeneous_epsilon(epsilons: Iterable[tuple[float, int]], delta: float) -> float:
    """Kairouz, Oh & Viswanath 2015, Theorem 3.5 with every δ_i = 0: the ε̃ at δ of releases that are ε_i-DP,
    given as (ε_i, number of such releases) pairs (module docstring), rounded up."""
    delta = _validate.open_unit("delta", delta)
    total = mean = squares = 0.0
    for eps, count in epsilons:
        eps = _validate.positive("epsilon", eps)
        count = _validate.integer("count", count, minimum=0)
        total += count * eps
        mean += count * eps * math.tanh(eps / 2.0)
        squares += count * eps * eps
    if total == 0:
        return 0.0
    second = mean + math.sqrt(2.0 * squares * math.log(math.e + math.sqrt(squares) / delta))
    third = mean + math.sqrt(2.0 * squares * -math.log(delta))
    # each term is a sum of a few rounded products: 8 ulps cover the rounding of every one of them
    return round_up(min(total, second, third), 8)


def gdp_mu_of_pure(epsilon: float) -> float:
    """μ with which an ε-DP release is μ-GDP: 2Φ⁻¹(e^ε/(1 + e^ε)) (tight for binary randomized response;
    docs/derivations.md), raised by 1e-12 relative to cover the evaluation of Φ⁻¹. ∞ for ε = ∞."""
    if epsilon == math.inf:
        return math.inf
    epsilon = _validate.non_negative("epsilon", epsilon)
    if epsilon == 0:
        return 0.0
    mu = -2.0 * float(special.ndtri(special.expit(-epsilon)))  # Φ⁻¹ of the small tail: no cancellation
    return round_up(mu * (1.0 + 1e-12), 1)
