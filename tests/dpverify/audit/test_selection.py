"""The fast threshold selection chooses exactly what computing every candidate's projected bound chooses.

``reference_choose`` below is the direct computation (every candidate, every beta quantile, np.argmax);
:func:`dpverify.audit.selection.choose` skips candidates by branch and bound and reuses sorted samples.
Any difference in the chosen test or its projected value is a bug, so the comparison is exact.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.audit import bounds
from dpverify.audit import clopper_pearson as cp
from dpverify.audit import selection as sel
from dpverify.audit.distinguishers import LinearFeature, propose_features
from dpverify.audit.trials import check_outputs
from dpverify.errors import InvalidParameterError


def _rate(counts, n, m, alpha, upper=True):
    """The projected rate of every count, computed directly (the selection's projection, no tables)."""
    guess = cp.upper_guess if upper else cp.lower_guess
    return guess(guess(np.asarray(counts, dtype=float), float(n), sel.SELECTION_ALPHA) * m, m, alpha)


def _reference_eps(thresholds, fp, tp, n, m, alpha, delta):
    fpr_u = _rate(fp, n, m, alpha)
    tpr_l = _rate(tp, n, m, alpha, upper=False)
    eps = np.array(bounds.epsilon_from_rates(fpr_u, 1.0 - tpr_l, delta), dtype=float, ndmin=1)
    fit = sel._smoothed_tail_fit(thresholds, fp, tp, n)
    if fit is not None:
        region, tp_smooth = fit[0], fit[1]
        tpr_s = cp.lower_guess(tp_smooth / n * m, m, alpha)
        eps[region] = bounds.epsilon_from_rates(np.asarray(fpr_u)[region], 1.0 - tpr_s, delta)
    return eps


def reference_choose(features, x0, x1, evaluation_trials, cp_alpha, gdp_alpha, delta):
    n = x0.shape[0]
    m = float(evaluation_trials)
    best_cp = best_gdp = None
    for feature in features:
        s0, s1 = feature.scores(x0), feature.scores(x1)
        if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
            continue
        pooled = np.unique(np.concatenate([s0, s1]))
        ranks = sel.candidate_ranks(len(pooled))
        thresholds = pooled[ranks] / 2.0 + pooled[np.minimum(ranks + 1, len(pooled) - 1)] / 2.0
        above0 = n - np.searchsorted(np.sort(s0), thresholds, side="right")
        above1 = n - np.searchsorted(np.sort(s1), thresholds, side="right")
        below0, below1 = n - above0, n - above1
        for (event, null), (fp, tp) in {("above", 0): (above0, above1), ("above", 1): (above1, above0),
                                        ("at-or-below", 0): (below0, below1),
                                        ("at-or-below", 1): (below1, below0)}.items():
            eps = _reference_eps(thresholds, fp, tp, n, m, cp_alpha, delta)
            i = int(np.argmax(eps))
            if best_cp is None or eps[i] > best_cp[0]:
                best_cp = (float(eps[i]), float(thresholds[i]), event, null, feature.name)
        bulk = (ranks >= sel.GDP_BULK * len(pooled)) & (ranks <= (1.0 - sel.GDP_BULK) * len(pooled))
        if not np.any(bulk):
            bulk = np.ones_like(ranks, dtype=bool)
        for event, (fp, fn) in {"above": (above0, below1), "at-or-below": (below0, above1)}.items():
            fpr_u = _rate(fp[bulk], n, m, gdp_alpha)
            fnr_u = _rate(fn[bulk], n, m, gdp_alpha)
            mu = np.array(bounds.mu_from_rates(fpr_u, fnr_u), dtype=float, ndmin=1)
            i = int(np.argmax(mu))
            if best_gdp is None or mu[i] > best_gdp[0]:
                best_gdp = (float(mu[i]), float(thresholds[bulk][i]), event, 0, feature.name)
    return best_cp, best_gdp


def _as_tuple(choice):
    t = choice.test
    return (choice.projected, t.threshold, t.event, t.null, t.feature.name)


def _outputs(kind: str, n: int, shift: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if kind == "gauss":
        return rng.normal(0, 1, (n, 1)), rng.normal(shift, 1, (n, 1))
    if kind == "laplace":
        return rng.laplace(0, 1, (n, 1)), rng.laplace(shift, 1, (n, 1))
    if kind == "discrete":  # many ties
        return rng.integers(0, 4, (n, 1)).astype(float), (rng.integers(0, 4, (n, 1)) + (rng.random((n, 1)) < shift))
    if kind == "separated":
        return rng.normal(0, 1, (n, 1)), rng.normal(0, 1, (n, 1)) + 50.0 * shift
    if kind == "vector":
        return rng.normal(0, 1, (n, 3)), rng.normal(0, 1, (n, 3)) + np.array([shift, 0.0, shift / 2])
    raise AssertionError(kind)


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["gauss", "laplace", "discrete", "separated", "vector"]),
       n=st.sampled_from([1, 2, 7, 60, 500, 3000, 20_000]), shift=st.floats(0.0, 3.0),
       seed=st.integers(0, 10_000), delta=st.sampled_from([0.0, 1e-5, 1e-2]),
       m=st.sampled_from([1, 50, 4000, 800_000]))
def test_choose_equals_the_direct_computation(kind, n, shift, seed, delta, m):
    x0, x1 = _outputs(kind, n, shift, seed)
    features = propose_features(x0, x1) if x0.shape[1] > 1 and n >= 4 else [LinearFeature("output", "release",
                                                                                            np.ones(x0.shape[1]))]
    fast = sel.choose(features, x0.astype(float), x1.astype(float), m, 0.01875, 0.00625, delta)
    ref = reference_choose(features, x0.astype(float), x1.astype(float), m, 0.01875, 0.00625, delta)
    assert _as_tuple(fast[0]) == ref[0]
    assert _as_tuple(fast[1]) == ref[1]


@pytest.mark.parametrize("n", [200_000])
def test_choose_equals_the_direct_computation_at_audit_scale(n):
    """The size of a 10⁶-trial audit's selection split, where branch and bound skips most candidates."""
    for seed, shift in [(1, 0.27), (2, 0.5), (3, 0.0)]:
        x0, x1 = _outputs("gauss", n, shift, seed)
        features = [LinearFeature("output", "release", np.ones(1))]
        fast = sel.choose(features, x0, x1, 800_000, 0.01875, 0.00625, 1e-5)
        ref = reference_choose(features, x0, x1, 800_000, 0.01875, 0.00625, 1e-5)
        assert _as_tuple(fast[0]) == ref[0] and _as_tuple(fast[1]) == ref[1]


def test_choose_leaves_the_outputs_alone():
    x0, x1 = _outputs("gauss", 1000, 1.0, 0)
    c0, c1 = x0.copy(), x1.copy()
    sel.choose([LinearFeature("output", "release", np.ones(1))], x0, x1, 4000, 0.01875, 0.00625, 1e-5)
    assert np.array_equal(x0, c0) and np.array_equal(x1, c1)


def test_reported_bounds_are_the_guesses_where_those_pass_the_check():
    """At ordinary sizes the verified bounds are the nudged guesses the projection uses."""
    k = np.array([0.0, 2.5, 17.0, 99.0, 100.0])
    for a in (0.05, 0.01875):
        assert np.array_equal(cp.upper_guess(k, 100.0, a), cp.upper_bound(k, 100, a))
        assert np.array_equal(cp.lower_guess(k, 100.0, a), cp.lower_bound(k, 100, a))


def test_one_coordinate_scores_equal_the_matrix_product():
    x = np.random.default_rng(0).normal(size=(1000, 1)) * 1e3
    for w in (1.0, -2.5, 3e-7):
        feature = LinearFeature("f", "release", np.array([w]))
        assert np.array_equal(feature.scores(x), x.reshape(1000, -1) @ np.array([w]))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_outputs_are_caught(bad):
    x = np.zeros((5, 2))
    x[3, 1] = bad
    with pytest.raises(InvalidParameterError, match="finite"):
        check_outputs(x, 5, (2,))
    check_outputs(np.zeros((5, 0)), 5, (0,))  # nothing to check
