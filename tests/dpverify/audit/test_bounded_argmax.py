"""The exact argmax search and its count tables: computed once, bounds that hold, the np.argmax answer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.audit.bounded_argmax import CHORD_MARGIN, CountFunction, bounded_argmax
from dpverify.audit.selection import ProjectedRates


def test_each_count_is_computed_once():
    calls: list[int] = []

    def f(k):
        calls.append(len(k))
        return np.sqrt(k) / 10.0

    table = CountFunction(f, concave=True)
    assert np.array_equal(table(np.array([4.0, 9.0, 4.0])), [0.2, 0.3, 0.2])
    assert np.array_equal(table(np.array([9.0, 16.0, 4.0])), [0.3, 0.4, 0.2])
    assert calls == [2, 1]


@pytest.mark.parametrize("concave", [True, False])
def test_outer_bounds_hold_and_are_exact_where_computed(concave):
    f = (lambda k: np.sqrt(k) / 10.0) if concave else (lambda k: (k / 100.0) ** 2)
    table = CountFunction(f, concave=concave)
    table(np.array([4.0, 25.0, 64.0]))
    x = np.linspace(0.0, 100.0, 1001)
    bound, truth = table.outer_bound(x), f(x)
    assert np.all(bound <= truth) if concave else np.all(bound >= truth)
    at = np.array([4.0, 25.0, 64.0])
    assert np.array_equal(table.outer_bound(at), f(at))
    # Beyond the computed range: 0 below a concave (lower-bounded) function, 1 above a convex one.
    assert table.outer_bound(np.array([1.0]))[0] == (0.0 if concave else pytest.approx(f(4.0) * (1 + CHORD_MARGIN)))
    assert table.outer_bound(np.array([90.0]))[0] == (pytest.approx(f(64.0) * (1 - CHORD_MARGIN)) if concave else 1.0)


@settings(max_examples=60, deadline=None)
@given(
    n=st.sampled_from([2, 7, 60, 1000, 20_000, 200_000]),
    ratio=st.sampled_from([0.25, 1.0, 4.0, 10.0]),
    cp_alpha=st.sampled_from([1e-6, 0.00625, 0.01875, 0.2, 0.375]),
    fractions=st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3, unique=True),
)
def test_projected_rates_keep_their_shape(n, ratio, cp_alpha, fractions):
    """What the search relies on: each projected rate lies beyond its chords (within the margin)."""
    counts = np.unique(np.round(np.sort(fractions) * n))
    if len(counts) < 3:
        return
    lo, mid, hi = counts
    rates = ProjectedRates(n, max(1.0, round(n * ratio)), cp_alpha, cp_alpha / 3)
    for table in (rates.cp_fpr, rates.cp_tpr, rates.cp_tpr_smoothed, rates.gdp_rate):
        fresh = CountFunction(table.func, concave=table.concave)
        fresh(np.array([lo, hi]))
        bound = fresh.outer_bound(np.array([mid]))[0]  # from the chord, before mid is computed
        value = fresh(np.array([mid]))[0]
        assert value >= bound if table.concave else value <= bound


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.25, 2.0, 3.0]), min_size=1, max_size=300),
    slack=st.floats(0.0, 2.0),
    step=st.integers(1, 40),
    seed=st.integers(0, 1000),
)
def test_bounded_argmax_is_np_argmax(values, slack, step, seed):
    v = np.array(values)
    extra = np.random.default_rng(seed).uniform(0.0, slack, len(v))
    computed: list[np.ndarray] = []

    def evaluate(idx):
        computed.append(idx)
        return v[idx]

    i, best = bounded_argmax(len(v), evaluate, lambda idx: v[idx] + extra[idx], step)
    if v.max() > 0:
        assert (i, best) == (int(np.argmax(v)), float(v.max()))
    else:
        assert (i, best) == (0, 0.0)
    done = np.concatenate(computed)
    assert len(done) == len(np.unique(done))  # nothing computed twice
