"""One-run audits: an ε lower bound from ONE run of a mechanism with m randomly included canaries.

Steinke, Nasr & Jagielski (2023), "Privacy auditing with one (1) training run" (NeurIPS 2023),
Theorem 3 (their main theorem). The set-up:

- m canaries; canary i is included (S_i = +1) or not (S_i = −1) by an independent fair coin;
- the mechanism M runs ONCE on the input that S selects, and is (ε, δ)-DP as a function of S: flipping
  one coordinate of S changes its input to a neighbouring one under the relation the claim is made for
  (for a replace-one claim: canary i's record replaces an ordinary record, or not);
- an auditor looks only at the output and makes guesses T ∈ {−1, 0, +1}^m (0 = abstain) with
  ‖T‖₁ = r fixed in advance; W = Σᵢ max(0, Tᵢ Sᵢ) is the number of correct guesses.

**Theorem** (Steinke, Nasr & Jagielski 2023, Theorem 3). Let f(v) = P[Binomial(r, e^ε/(1 + e^ε)) ≥ v].
Then for every v,

    P[W ≥ v] ≤ f(v) + 2 m δ · max_{i ∈ {1, …, m}} (f(v − i) − f(v)) / i.

With δ = 0 this says that W is stochastically dominated by Binomial(r, e^ε/(1 + e^ε)): r guesses are no
better than r independent randomized-response bits at ε. (f(v − i) − f(v) = P[v − i ≤ B < v] for
B ~ Binomial(r, ·); for i ≥ v it equals (1 − f(v))/i, decreasing in i, so the maximum is over i ≤ v.)

How this module turns the theorem into a test and a bound (each step keeps validity):

1. :func:`theorem_tail_bound` is the right-hand side above, computed with the binomial of *wrong*
   guesses, Binomial(r, 1/(1 + e^ε)), so that large ε loses no precision, and nudged up by
   :data:`RELATIVE_SAFETY`.
2. :func:`one_run_p_value` is h(v) = min_{v' ≤ v} (theorem bound at v'). Since P[W ≥ v] ≤ P[W ≥ v'] for
   v' ≤ v, h is still an upper bound on P[W ≥ v], never larger than the theorem's, and non-increasing in
   v, so rejecting "(ε, δ)-DP" when h(observed v) ≤ α errs with probability ≤ α.
3. :func:`one_run_epsilon_lower_bound` reports an ε at which the observation is rejected at
   α = 1 − confidence, found by doubling then bisection (bounded iteration counts) that only ever moves
   its lower end to a *certified* rejected ε. Validity does not need p to be monotone in ε: if the
   reported ε exceeded the true ε*, some ε' ≥ ε* would be rejected; an (ε*, δ)-DP mechanism is
   (ε', δ)-DP, so inf_{ε' ≥ ε*} h_ε' is a non-increasing tail bound of W, and that event has
   probability ≤ α. A reported 0 means "nothing refuted".

:func:`run_one_run_audit` is the harness: coin flips from an explicit Generator, one run of the
experiment, top-k / bottom-k guesses with k fixed before the data are seen (several fixed rules are
allowed; they share α by Bonferroni), and the bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from dpverify import _validate
from dpverify.errors import InvalidParameterError, NumericalError

#: The method name recorded in every :class:`OneRunResult`.
ONE_RUN_METHOD = "one-run (Steinke, Nasr & Jagielski 2023, Theorem 3)"

#: Relative upward margin on every tail bound (absorbs the rounding of the binomial routines).
RELATIVE_SAFETY = 1e-9

#: Doubling steps for the upper end of the ε search (from ε = 1), and bisection steps after it.
_MAX_DOUBLINGS = 12
_MAX_BISECTIONS = 60
#: Bisection stops once the bracket is narrower than this (absolute, in ε).
_EPSILON_TOLERANCE = 1e-7


def _check_counts(m: object, r: object, v: object) -> tuple[int, int, int]:
    m_ = _validate.integer("m", m, minimum=1)
    r_ = _validate.integer("r", r, minimum=0)
    v_ = _validate.integer("v", v, minimum=0)
    if r_ > m_:
        raise InvalidParameterError("r", f"must be <= m={m_} (at most one guess per canary)", r_)
    if v_ > r_:
        raise InvalidParameterError("v", f"must be <= r={r_} (correct guesses are among the guesses)", v_)
    return m_, r_, v_


def _check_delta(delta: object) -> float:
    d = _validate.non_negative("delta", delta)
    if d >= 1.0:
        raise InvalidParameterError("delta", "must be in [0, 1)", delta)
    return d


def _binom() -> Any:
    """scipy.stats.binom, imported on first use (scipy.stats costs ~0.2 s of import time)."""
    from scipy import stats

    return stats.binom


def _wrong_probability(epsilon: float) -> float:
    """1/(1 + e^ε): the error rate of ε-randomized response (accurate for large ε)."""
    return float(special.expit(-epsilon))


def _finish(p: float) -> float:
    if math.isnan(p):
        raise NumericalError("one-run tail bound is NaN")
    return min(1.0, p * (1.0 + RELATIVE_SAFETY))


def _bound_at(m: int, r: int, v: int, p_wrong: float, delta: float, tail: float) -> float:
    """The theorem's right-hand side at v, given tail = f(v) (unsafe: no margin)."""
    if delta == 0.0 or v == 0:
        return tail
    # f(v − i) − f(v) = P[v − i ≤ correct ≤ v − 1] = P[r − v + 1 ≤ wrong ≤ r − v + i], i = 1..v.
    wrong = np.arange(r - v + 1, r + 1)
    window = np.cumsum(_binom().pmf(wrong, r, p_wrong))
    term = float(np.max(window / np.arange(1, v + 1)))
    return tail + 2.0 * m * delta * term


def theorem_tail_bound(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """Steinke, Nasr & Jagielski (2023), Theorem 3: an upper bound on P[W ≥ v] under (ε, δ)-DP.

    ``f(v) + 2 m δ · max_{1 ≤ i ≤ m} (f(v − i) − f(v))/i`` with f(v) = P[Binomial(r, e^ε/(1+e^ε)) ≥ v],
    nudged up by :data:`RELATIVE_SAFETY` and capped at 1. Exactly the binomial tail f(v) when δ = 0.
    """
    m_, r_, v_ = _check_counts(m, r, v)
    eps = _validate.non_negative("epsilon", epsilon)
    d = _check_delta(delta)
    p_wrong = _wrong_probability(eps)
    tail = float(_binom().cdf(r_ - v_, r_, p_wrong))  # P[wrong ≤ r − v] = P[correct ≥ v]
    return _finish(_bound_at(m_, r_, v_, p_wrong, d, tail))


def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """P-value of "M is (ε, δ)-DP" after v correct out of r guesses on m canaries.

    h(v) = min_{v' ≤ v} :func:`theorem_tail_bound` (m, r, v', ε, δ): an upper bound on P[W ≥ v] that is
    non-increasing in v (so P[h(W) ≤ α] ≤ α) and never above the theorem's bound at v. Equal to the
    theorem's bound when δ = 0.
    """
    m_, r_, v_ = _check_counts(m, r, v)
    eps = _validate.non_negative("epsilon", epsilon)
    d = _check_delta(delta)
    return _p_value(m_, r_, v_, eps, d)


def _max_window_means(pmf_wrong: np.ndarray, r: int, v: int) -> np.ndarray:
    """D(v') = max_{1 ≤ i ≤ v'} P[v' − i ≤ correct ≤ v' − 1] / i for v' = 0..v (D(0) = 0), in O(r log r).

    In wrong-guess counts the window is wrong ∈ [r − v' + 1, r − v' + i], so D(v') is the largest mean of
    the pmf over windows that start at r − v' + 1 and grow to the right. The binomial pmf is unimodal
    (log-concave), and the mean of a growing window of a unimodal sequence rises while the next term
    exceeds it and falls from the first term that does not (after the mode the terms only shrink). So
    the best length is the first i whose next term is at most the mean, found for every v' at once by
    bisection; the means at the neighbouring lengths and at both ends are included, which absorbs
    rounding where the next term and the mean nearly tie.
    """
    out = np.zeros(v + 1)
    if v == 0:
        return out
    # Window masses from whichever cumulative sum is small at the window (no cancellation in either tail):
    # prefix[j] = P[wrong < j] (summed from w = 0), suffix[j] = P[wrong ≥ j] (summed from w = r).
    prefix = np.concatenate([[0.0], np.cumsum(pmf_wrong)])
    suffix = np.concatenate([np.cumsum(pmf_wrong[::-1])[::-1], [0.0]])
    vp = np.arange(1, v + 1)
    base = r - vp + 1
    upper_tail = suffix[base] <= 0.5

    def mean(i: np.ndarray) -> np.ndarray:
        mass = np.where(upper_tail, suffix[base] - suffix[base + i], prefix[base + i] - prefix[base])
        return mass / i

    lo = np.ones(v, dtype=np.int64)
    hi = vp.copy()
    while True:
        active = lo < hi
        if not np.any(active):
            break
        mid = (lo + hi) // 2
        nxt = pmf_wrong[np.minimum(base + mid, r)]
        rising = active & (nxt > mean(np.maximum(mid, 1)))
        lo = np.where(rising, mid + 1, lo)
        hi = np.where(active & ~rising, mid, hi)
    best = np.maximum(mean(np.ones(v, dtype=np.int64)), mean(vp))
    for k in range(-2, 3):
        best = np.maximum(best, mean(np.clip(lo + k, 1, vp)))
    out[1:] = best
    return out


def _p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    p_wrong = _wrong_probability(epsilon)
    if delta == 0.0 or v == 0:  # f is non-increasing: its envelope is itself
        return _finish(float(_binom().cdf(r - v, r, p_wrong)))
    # f(v') for v' = 0..v, and the theorem's bound g(v') = f(v') + 2mδ·D(v'); h(v) = min over v' ≤ v.
    tails = _binom().cdf(r - np.arange(v + 1), r, p_wrong)
    pmf_wrong = _binom().pmf(np.arange(r + 1), r, p_wrong)
    bound = tails + 2.0 * m * delta * _max_window_means(pmf_wrong, r, v)
    return _finish(float(np.min(bound)))


@dataclass(frozen=True)
class OneRunResult:
    """The outcome of a one-run audit (Steinke, Nasr & Jagielski 2023, Theorem 3), frozen.

    Attributes:
        m: number of canaries (each included by an independent fair coin).
        r: number of guesses made (the rest abstained), fixed before the output was seen.
        v: number of correct guesses.
        confidence: with this probability (over the coins and the mechanism's randomness), an
            (ε, δ)-DP mechanism with ε < ``epsilon_lower_bound`` would not have produced such a count.
        delta: the δ of the tested claims.
        epsilon_lower_bound: the largest ε found to be rejected (0 when nothing is rejected).
        method: :data:`ONE_RUN_METHOD`.
        guess_rules: how many pre-registered guess rules shared the error budget (Bonferroni); r and v
            are those of the rule that gave the reported bound.
        alpha_each: the error level each rule was tested at, (1 − confidence)/guess_rules.
    """

    m: int
    r: int
    v: int
    confidence: float
    delta: float
    epsilon_lower_bound: float
    method: str = ONE_RUN_METHOD
    guess_rules: int = 1
    alpha_each: float | None = None

    def __post_init__(self) -> None:
        _check_counts(self.m, self.r, self.v)
        _validate.open_unit("confidence", self.confidence)
        _check_delta(self.delta)
        _validate.non_negative("epsilon_lower_bound", self.epsilon_lower_bound)
        _validate.one_of("method", self.method, (ONE_RUN_METHOD,))
        j = _validate.integer("guess_rules", self.guess_rules, minimum=1)
        expected = (1.0 - self.confidence) / j
        if self.alpha_each is None:
            object.__setattr__(self, "alpha_each", expected)
        elif not math.isclose(_validate.open_unit("alpha_each", self.alpha_each), expected, rel_tol=1e-12):
            raise InvalidParameterError("alpha_each", f"must equal (1 - confidence)/guess_rules = {expected!r}",
                                        self.alpha_each)

    def refutes(self, epsilon: float) -> bool:
        """Whether this result refutes an (ε, ``delta``) claim (ε_lb > ε)."""
        return self.epsilon_lower_bound > _validate.non_negative("epsilon", epsilon)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def summary(self) -> str:
        return (f"one-run epsilon lower bound: {self.epsilon_lower_bound:.4f} at delta {self.delta:g}, "
                f"confidence {self.confidence:g}  [{self.v} of {self.r} guesses correct, {self.m} canaries"
                + (f"; best of {self.guess_rules} pre-registered guess rules, Bonferroni" if self.guess_rules > 1
                   else "") + f"; {self.method}]")


def _largest_rejected_epsilon(m: int, r: int, v: int, delta: float, alpha: float) -> float:
    def rejects(eps: float) -> bool:
        return _p_value(m, r, v, eps, delta) <= alpha

    if not rejects(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(_MAX_DOUBLINGS):
        if not rejects(hi):
            break
        lo, hi = hi, 2.0 * hi
    else:
        return lo  # still rejected at 2^_MAX_DOUBLINGS / 2: report the certified end (conservative)
    for _ in range(_MAX_BISECTIONS):
        if hi - lo <= _EPSILON_TOLERANCE:
            break
        mid = 0.5 * (lo + hi)
        if rejects(mid):
            lo = mid
        else:
            hi = mid
    return lo


def one_run_epsilon_lower_bound(m: int, r: int, v: int, *, delta: float = 0.0, confidence: float = 0.95,
                                guess_rules: int = 1) -> OneRunResult:
    """The ε lower bound of a one-run audit: v correct of r guesses on m canaries.

    Every ε up to the reported one that the search visited is rejected at α = (1 − confidence)/guess_rules
    by :func:`one_run_p_value`; the reported value is always such a certified ε (bisection keeps its
    lower end certified), so it never exceeds what the theorem supports. ``guess_rules`` > 1 records
    that this count is one of several pre-registered rules sharing the error budget.
    """
    m_, r_, v_ = _check_counts(m, r, v)
    d = _check_delta(delta)
    conf = _validate.open_unit("confidence", confidence)
    j = _validate.integer("guess_rules", guess_rules, minimum=1)
    alpha = (1.0 - conf) / j
    eps = _largest_rejected_epsilon(m_, r_, v_, d, alpha)
    return OneRunResult(m=m_, r=r_, v=v_, confidence=conf, delta=d, epsilon_lower_bound=eps, guess_rules=j)


def draw_inclusion(m: int, rng: np.random.Generator) -> np.ndarray:
    """m independent fair coins (True = canary included), read-only bool array."""
    m_ = _validate.integer("m", m, minimum=1)
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError("rng", "must be a numpy.random.Generator", type(rng).__name__)
    inclusion = rng.integers(0, 2, size=m_).astype(bool)
    inclusion.flags.writeable = False
    return inclusion


def guesses_from_scores(scores: object, k_plus: int, k_minus: int = 0) -> np.ndarray:
    """Guesses in {−1, 0, +1}: +1 (included) for the k_plus highest scores, −1 for the k_minus lowest.

    Ties are broken by canary index (a stable sort of the scores), so the guesses are a function of
    the scores alone, as the theorem requires. k_plus + k_minus ≤ m.
    """
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size == 0:
        raise InvalidParameterError("scores", "must be a non-empty 1-D array (one score per canary)", s.shape)
    if not np.all(np.isfinite(s)):
        raise InvalidParameterError("scores", "must be finite", "non-finite")
    kp = _validate.integer("k_plus", k_plus, minimum=0)
    km = _validate.integer("k_minus", k_minus, minimum=0)
    if kp + km > s.size:
        raise InvalidParameterError("k_plus + k_minus", f"must be <= m={s.size}", kp + km)
    order = np.argsort(s, kind="stable")  # ascending; equal scores in index order
    t = np.zeros(s.size, dtype=np.int8)
    if km:
        t[order[:km]] = -1
    if kp:
        t[order[s.size - kp:]] = 1
    return t


def count_correct(guesses: object, inclusion: object) -> tuple[int, int]:
    """(r, v): the number of non-abstaining guesses and how many of them match the inclusion coins."""
    t = np.asarray(guesses)
    inc = np.asarray(inclusion, dtype=bool)
    if t.shape != inc.shape or t.ndim != 1:
        raise InvalidParameterError("guesses", "must be a 1-D array of the inclusion vector's shape", t.shape)
    if not np.all(np.isin(t, (-1, 0, 1))):
        raise InvalidParameterError("guesses", "must be in {-1, 0, +1}", "other values")
    r = int(np.count_nonzero(t))
    v = int(np.count_nonzero((t == 1) & inc) + np.count_nonzero((t == -1) & ~inc))
    return r, v


def _guess_rules(guesses: object, m: int) -> list[tuple[int, int]]:
    items: Sequence[Any]
    if (isinstance(guesses, Sequence) and len(guesses) == 2
            and all(not isinstance(g, Sequence) for g in guesses)):
        items = [guesses]
    elif isinstance(guesses, Sequence) and len(guesses) > 0:
        items = list(guesses)
    else:
        raise InvalidParameterError("guesses", "must be a (k_plus, k_minus) pair or a non-empty sequence of pairs",
                                    guesses)
    rules = []
    for g in items:
        if not (isinstance(g, Sequence) and len(g) == 2):
            raise InvalidParameterError("guesses", "each rule must be a (k_plus, k_minus) pair", g)
        kp = _validate.integer("k_plus", g[0], minimum=0)
        km = _validate.integer("k_minus", g[1], minimum=0)
        if kp + km > m:
            raise InvalidParameterError("k_plus + k_minus", f"must be <= m={m}", kp + km)
        rules.append((kp, km))
    return rules


def one_run_counts(experiment: Callable[[np.ndarray, np.random.Generator], object], m: int,
                   rng: np.random.Generator, *, guesses: object) -> list[tuple[int, int]]:
    """Run ONE experiment with m coin-flipped canaries; the (r, v) count of every pre-registered guess rule.

    The arguments are those of :func:`run_one_run_audit` (which analyses these counts with Theorem 3; the
    f-DP analysis of :mod:`dpverify.audit.one_run_fdp` reads the same counts)."""
    m_ = _validate.integer("m", m, minimum=1)
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError("rng", "must be a numpy.random.Generator", type(rng).__name__)
    if not callable(experiment):
        raise InvalidParameterError("experiment", "must be callable as experiment(inclusion, rng)", experiment)
    rules = _guess_rules(guesses, m_)
    coin_rng, run_rng = rng.spawn(2)
    inclusion = draw_inclusion(m_, coin_rng)
    scores = np.asarray(experiment(inclusion, run_rng), dtype=float)
    if scores.shape != (m_,):
        raise InvalidParameterError("experiment", f"must return one score per canary, shape ({m_},)", scores.shape)
    return [count_correct(guesses_from_scores(scores, kp, km), inclusion) for kp, km in rules]


def best_rule(counts: Sequence[tuple[int, int]], m: int, *, delta: float = 0.0,
              confidence: float = 0.95) -> OneRunResult:
    """Theorem 3 on each rule's (r, v) count at (1 − confidence)/len(counts) (Bonferroni); the largest bound."""
    d = _check_delta(delta)
    conf = _validate.open_unit("confidence", confidence)
    best: OneRunResult | None = None
    for r, v in counts:
        res = one_run_epsilon_lower_bound(m, r, v, delta=d, confidence=conf, guess_rules=len(counts))
        if best is None or res.epsilon_lower_bound > best.epsilon_lower_bound:
            best = res
    if best is None:
        raise InvalidParameterError("counts", "must hold at least one (r, v) count", counts)
    return best


def run_one_run_audit(experiment: Callable[[np.ndarray, np.random.Generator], object], m: int,
                      rng: np.random.Generator, *, guesses: object, delta: float = 0.0,
                      confidence: float = 0.95) -> OneRunResult:
    """Run ONE experiment with m coin-flipped canaries and return the one-run ε lower bound.

    Args:
        experiment: ``experiment(inclusion, rng) -> scores``: runs the mechanism once with canary i
            included exactly when ``inclusion[i]`` (a read-only bool array of length m) and returns one
            finite score per canary, higher meaning "more likely included". All its randomness must
            come from the Generator it is given (spawned from ``rng``, independent of the coins).
        m: number of canaries.
        rng: the audit's Generator; the coins and the experiment's Generator are spawned from it.
        guesses: a ``(k_plus, k_minus)`` pair (guess "included" for the k_plus highest scores and
            "excluded" for the k_minus lowest, abstain on the rest), or a sequence of such pairs. Every
            rule must be fixed before the scores are seen; with J rules each is tested at
            (1 − confidence)/J and the largest bound is reported (Bonferroni), which keeps validity.
        delta: δ of the claims tested.
        confidence: probability that the reported bound holds.
    """
    d = _check_delta(delta)
    conf = _validate.open_unit("confidence", confidence)
    counts = one_run_counts(experiment, m, rng, guesses=guesses)
    return best_rule(counts, m, delta=d, confidence=conf)
