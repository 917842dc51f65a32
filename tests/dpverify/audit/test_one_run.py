"""One-run audits (Steinke, Nasr & Jagielski 2023, Theorem 3): the tail bound against an independent
high-precision summation, the laws of the p-value and of the ε lower bound, input validation, the
harness, and validity by simulation (correct randomized-response canaries; fixed seeds; margin: the
0.999 binomial quantile of the false-alarm count).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpverify.audit.one_run import (
    ONE_RUN_METHOD,
    OneRunResult,
    count_correct,
    draw_inclusion,
    guesses_from_scores,
    one_run_epsilon_lower_bound,
    one_run_p_value,
    run_one_run_audit,
    theorem_tail_bound,
)
from dpverify.errors import InvalidParameterError

mpmath.mp.dps = 50


def reference_bound(m: int, r: int, v: int, eps: float, delta: float) -> float:
    """The theorem's right-hand side by direct summation at 50 digits, max over the full i = 1..m."""
    q = mpmath.e ** mpmath.mpf(eps) / (1 + mpmath.e ** mpmath.mpf(eps))

    def f(u: int) -> mpmath.mpf:  # P[Binomial(r, q) >= u]
        return mpmath.fsum(mpmath.binomial(r, k) * q**k * (1 - q) ** (r - k) for k in range(max(u, 0), r + 1))

    fv = f(v)
    if delta == 0:
        return float(fv)
    term = max((f(v - i) - fv) / i for i in range(1, m + 1))
    return float(min(1, fv + 2 * m * mpmath.mpf(delta) * term))


@pytest.mark.parametrize(("m", "r", "v", "eps", "delta"), [
    (10, 10, 10, 1.0, 0.0), (10, 10, 7, 0.5, 0.0), (20, 12, 9, 2.0, 0.0), (30, 30, 0, 1.0, 0.0),
    (10, 10, 10, 1.0, 1e-3), (20, 12, 9, 2.0, 1e-2), (25, 25, 20, 0.3, 1e-4), (40, 20, 20, 3.0, 1e-5),
    (40, 40, 25, 0.0, 1e-2), (15, 15, 15, 25.0, 1e-3), (40, 10, 1, 1.0, 0.05),
])
def test_theorem_bound_matches_direct_summation(m, r, v, eps, delta):
    ours = theorem_tail_bound(m, r, v, eps, delta)
    ref = reference_bound(m, r, v, eps, delta)
    assert ours >= ref  # never below the theorem (conservative margin)
    assert ours == pytest.approx(ref, rel=1e-8, abs=1e-300)


def test_pure_epsilon_is_the_binomial_tail():
    for r, v, eps in [(100, 70, 0.5), (1000, 800, 1.2), (500, 500, 4.0)]:
        q = math.exp(eps) / (1 + math.exp(eps))
        expected = stats.binom.sf(v - 1, r, q)
        assert one_run_p_value(r, r, v, eps) == pytest.approx(expected, rel=1e-8)
        assert one_run_p_value(r, r, v, eps) >= expected


def test_large_epsilon_loses_no_precision():
    # All r guesses correct: f(r) = q^r; at eps = 40, 1 - q ~ 4e-18 (below double resolution of q).
    r = 50
    expected = float((1 - 1 / (1 + mpmath.e ** 40)) ** r)
    assert theorem_tail_bound(r, r, r, 40.0) == pytest.approx(expected, rel=1e-12)
    # Beyond double range of e^ε the bound is 1 (nothing rejected), never NaN.
    assert theorem_tail_bound(r, r, r, 1e4) == 1.0


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 40), data=st.data(), eps=st.floats(0, 6), delta=st.sampled_from([0.0, 1e-4, 1e-2, 0.1]))
def test_p_value_is_a_non_increasing_envelope_of_the_theorem(m, data, eps, delta):
    r = data.draw(st.integers(0, m))
    ps = [one_run_p_value(m, r, v, eps, delta) for v in range(r + 1)]
    for v, p in enumerate(ps):
        assert 0.0 <= p <= 1.0
        assert p <= theorem_tail_bound(m, r, v, eps, delta) * (1 + 1e-12)  # rounding of two summation orders
        # h(v) = min over v' <= v of the theorem's bound
        assert p == pytest.approx(min(theorem_tail_bound(m, r, u, eps, delta) for u in range(v + 1)), rel=1e-12)
    assert all(a >= b for a, b in zip(ps, ps[1:], strict=False))


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 300), data=st.data(), delta=st.sampled_from([0.0, 1e-6, 1e-3]),
       confidence=st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_reported_epsilon_is_certified_and_nearly_the_largest(m, data, delta, confidence):
    r = data.draw(st.integers(0, m))
    v = data.draw(st.integers(0, r))
    res = one_run_epsilon_lower_bound(m, r, v, delta=delta, confidence=confidence)
    alpha = 1 - confidence
    if res.epsilon_lower_bound > 0:
        assert one_run_p_value(m, r, v, res.epsilon_lower_bound, delta) <= alpha
    else:
        assert one_run_p_value(m, r, v, 0.0, delta) > alpha or res.epsilon_lower_bound == 0
    if delta == 0.0:  # the binomial tail is increasing in ε: just above the bound is not rejected
        assert one_run_p_value(m, r, v, res.epsilon_lower_bound + 1e-5, 0.0) > alpha or res.epsilon_lower_bound > 4000


@settings(max_examples=30, deadline=None)
@given(m=st.integers(2, 200), data=st.data(), delta=st.sampled_from([0.0, 1e-5, 1e-3]))
def test_bound_is_monotone_in_v_r_confidence_delta_and_m(m, data, delta):
    r = data.draw(st.integers(1, m))
    v = data.draw(st.integers(0, r - 1))

    def lb(m_=m, r_=r, v_=v, delta_=delta, conf=0.95):
        return one_run_epsilon_lower_bound(m_, r_, v_, delta=delta_, confidence=conf).epsilon_lower_bound

    tol = 1e-6
    base = lb()
    assert lb(v_=v + 1) >= base - tol                      # more correct guesses: at least as strong
    if r < m:
        assert lb(r_=r + 1) <= base + tol                  # one more guess, no more correct: no stronger
    assert lb(conf=0.99) <= base + tol <= lb(conf=0.8) + 2 * tol
    assert lb(delta_=delta * 10 + 1e-6) <= base + tol    # a weaker claim is harder to refute
    assert lb(m_=m + 50) <= base + tol                     # δ enters as 2mδ


def test_known_figures():
    # 1000 canaries, all of 1000 guesses: 800 correct refute ε ≈ 1.25 at 95%; all correct ≈ 6.
    assert one_run_epsilon_lower_bound(1000, 1000, 800).epsilon_lower_bound == pytest.approx(1.2543, abs=1e-3)
    res = one_run_epsilon_lower_bound(1000, 1000, 1000, delta=1e-5)
    q = math.exp(res.epsilon_lower_bound) / (1 + math.exp(res.epsilon_lower_bound))
    assert q**1000 < 0.05  # at δ = 1e-5 the δ term is tiny, so ≈ the pure bound ln(1000/ln 20)
    pure = math.log(1 / (0.05 ** (-1 / 1000) - 1))  # q^1000 = 0.05
    assert pure - 0.05 <= res.epsilon_lower_bound <= pure
    assert one_run_epsilon_lower_bound(1000, 1000, 500).epsilon_lower_bound == 0.0


@pytest.mark.parametrize(("kwargs", "parameter"), [
    (dict(m=10, r=11, v=3), "r"), (dict(m=10, r=5, v=6), "v"), (dict(m=0, r=0, v=0), "m"),
    (dict(m=10, r=5, v=-1), "v"), (dict(m=10, r=5, v=2.5), "v"), (dict(m=10, r=5, v=2, delta=1.0), "delta"),
    (dict(m=10, r=5, v=2, delta=-1e-9), "delta"), (dict(m=10, r=5, v=2, confidence=1.0), "confidence"),
    (dict(m=10, r=5, v=2, confidence=float("nan")), "confidence"),
])
def test_bad_input_names_the_parameter(kwargs, parameter):
    with pytest.raises(InvalidParameterError) as err:
        one_run_epsilon_lower_bound(**kwargs)
    assert err.value.parameter == parameter
    with pytest.raises(InvalidParameterError):
        one_run_p_value(10, 5, 2, float("inf"))


def test_result_is_frozen_and_validated():
    res = one_run_epsilon_lower_bound(100, 50, 45, delta=1e-5)
    assert res.method == ONE_RUN_METHOD and res.alpha_each == pytest.approx(0.05)
    with pytest.raises(AttributeError):
        res.v = 3  # type: ignore[misc]
    with pytest.raises(InvalidParameterError):
        OneRunResult(m=10, r=5, v=6, confidence=0.95, delta=0.0, epsilon_lower_bound=1.0)
    with pytest.raises(InvalidParameterError):
        OneRunResult(m=10, r=5, v=5, confidence=0.95, delta=0.0, epsilon_lower_bound=float("nan"))
    with pytest.raises(InvalidParameterError):
        OneRunResult(m=10, r=5, v=5, confidence=0.95, delta=0.0, epsilon_lower_bound=1.0, method="other")
    assert res.refutes(0.1) and not res.refutes(100.0)
    assert "one-run epsilon lower bound" in res.summary() and res.to_dict()["v"] == 45


def test_guesses_and_counts():
    scores = np.array([0.5, 3.0, -1.0, 3.0, 0.0, 2.0])
    t = guesses_from_scores(scores, 2, 1)
    assert t.tolist() == [0, 1, -1, 1, 0, 0]
    assert guesses_from_scores([1.0, 1.0, 1.0], 1, 1).tolist() == [-1, 0, 1]  # ties by index
    inclusion = np.array([True, True, False, False, False, True])
    assert count_correct(t, inclusion) == (3, 2)
    with pytest.raises(InvalidParameterError):
        guesses_from_scores(scores, 4, 3)
    with pytest.raises(InvalidParameterError):
        guesses_from_scores([1.0, float("nan")], 1, 0)
    with pytest.raises(InvalidParameterError):
        count_correct([2, 0], [True, False])


def test_inclusion_is_fair_read_only_and_seeded():
    a = draw_inclusion(10_000, np.random.default_rng(5))
    assert a.dtype == bool and not a.flags.writeable
    assert abs(a.mean() - 0.5) < 0.02
    assert np.array_equal(a, draw_inclusion(10_000, np.random.default_rng(5)))


def randomized_response(epsilon: float, reveal: float = 0.0):
    """Canary i's output bit is S_i with probability e^ε/(1 + e^ε), else flipped; with probability
    ``reveal`` it is S_i in the clear. Exactly (ε, reveal)-DP in each coin (Warner 1965)."""
    keep_p = math.exp(epsilon) / (1 + math.exp(epsilon))

    def experiment(inclusion, rng):
        s = np.asarray(inclusion)
        keep = rng.random(s.size) < keep_p
        bit = np.where(keep | (rng.random(s.size) < reveal), s, ~s)
        return bit + rng.random(s.size) * 0.5  # the jitter only orders equal bits (independent of S)

    return experiment


def test_harness_is_seeded_and_checks_the_experiment():
    exp = randomized_response(2.0)
    a = run_one_run_audit(exp, 200, np.random.default_rng(3), guesses=(50, 50))
    b = run_one_run_audit(exp, 200, np.random.default_rng(3), guesses=(50, 50))
    assert a == b and a.r == 100 and a.epsilon_lower_bound > 0.5
    both = run_one_run_audit(exp, 200, np.random.default_rng(3), guesses=[(50, 50), (100, 100)])
    assert both.guess_rules == 2 and both.alpha_each == pytest.approx(0.025)
    with pytest.raises(InvalidParameterError) as err:
        run_one_run_audit(lambda inc, rng: np.zeros(3), 200, np.random.default_rng(0), guesses=(1, 1))
    assert err.value.parameter == "experiment"
    with pytest.raises(InvalidParameterError):
        run_one_run_audit(exp, 200, np.random.default_rng(0), guesses=(150, 100))
    with pytest.raises(InvalidParameterError):
        run_one_run_audit(exp, 200, 0, guesses=(1, 1))  # type: ignore[arg-type]

    def mutating(inclusion, rng):
        inclusion[0] = True
        return np.zeros(inclusion.size)

    with pytest.raises(ValueError):
        run_one_run_audit(mutating, 10, np.random.default_rng(0), guesses=(1, 1))


def false_alarms(runs: int, m: int, eps: float, reveal: float, delta: float, seed: int) -> int:
    """How often the p-value at the TRUE (ε, δ) of randomized-response canaries is <= 0.05 when every
    canary is guessed by its output bit (r = m), the case where the theorem is tight for δ = 0."""
    rng = np.random.default_rng(seed)
    keep_p = math.exp(eps) / (1 + math.exp(eps))
    count = 0
    for _ in range(runs):
        s = rng.integers(0, 2, size=m).astype(bool)
        bit = np.where((rng.random(m) < keep_p) | (rng.random(m) < reveal), s, ~s)
        r, v = count_correct(np.where(bit, 1, -1), s)
        count += one_run_p_value(m, r, v, eps, delta) <= 0.05
    return count


def test_false_alarm_rate_at_the_true_epsilon_is_within_the_level():
    runs, m, eps = 3000, 200, 1.0
    alarms = false_alarms(runs, m, eps, 0.0, 0.0, seed=11)
    q = math.exp(eps) / (1 + math.exp(eps))
    exact = stats.binom.sf(int(stats.binom.isf(0.05, m, q)), m, q)  # P[p-value <= 0.05], W ~ Bin(m, q)
    assert exact <= 0.05
    assert alarms <= stats.binom.ppf(0.999, runs, 0.05)
    assert alarms >= stats.binom.ppf(0.001, runs, exact)  # and the test has teeth: close to its level
    # (ε, δ)-DP canaries (a δ chance of revealing the coin): still within the level.
    assert false_alarms(1000, m, eps, 1e-3, 1e-3, seed=12) <= stats.binom.ppf(0.999, 1000, 0.05)


@pytest.mark.slow
def test_harness_lower_bound_exceeds_true_epsilon_no_more_than_nominal():
    runs, eps = 300, 1.0
    exp = randomized_response(eps)
    rng = np.random.default_rng(2024)
    over = sum(run_one_run_audit(exp, 400, g, guesses=[(100, 100), (200, 200)]).epsilon_lower_bound > eps
               for g in rng.spawn(runs))
    assert over <= stats.binom.ppf(0.999, runs, 0.05)


def test_largest_window_mean_matches_brute_force_in_both_tails():
    """The O(r log r) maximum over windows (used by the p-value) against exact sums of every window."""
    from dpverify.audit.one_run import _max_window_means

    rng = np.random.default_rng(7)
    for _ in range(60):
        r = int(rng.integers(1, 400))
        v = int(rng.integers(0, r + 1))
        eps = float(rng.uniform(0, 8))
        pmf = stats.binom.pmf(np.arange(r + 1), r, 1 / (1 + math.exp(eps)))
        got = _max_window_means(pmf, r, v)
        assert got[0] == 0.0
        for vp in range(1, v + 1, max(1, v // 7)):
            seg = pmf[r - vp + 1:]
            ref = max(math.fsum(seg[:i]) / i for i in range(1, vp + 1))
            assert got[vp] >= ref * (1 - 1e-12)  # covered many times over by the 1e-9 safety margin
            assert got[vp] <= ref * (1 + 1e-12) + 1e-300
