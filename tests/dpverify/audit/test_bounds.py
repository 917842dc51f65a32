"""ε and μ from error-rate bounds; the ceiling; distinguishers and threshold selection."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpverify.audit import bounds
from dpverify.audit import clopper_pearson as cp
from dpverify.audit.distinguishers import available_views, propose_features, view
from dpverify.audit.selection import ThresholdTest, candidate_ranks, choose
from dpverify.conversions import epsilon_exact_gaussian


def _rng(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


def test_epsilon_from_rates():
    assert bounds.epsilon_from_rates(0.01, 0.5, 0.0) == pytest.approx(math.log(50))
    assert bounds.epsilon_from_rates(0.01, 0.5, 0.1) == pytest.approx(math.log(40))
    assert bounds.epsilon_from_rates(0.5, 0.6, 0.0) == 0.0  # nothing shown is 0, never negative
    assert bounds.epsilon_from_rates(0.1, 1.0, 0.0) == 0.0


def test_mu_from_true_gaussian_rates_is_mu():
    """For N(0,1) vs N(μ,1) every threshold's true rates lie on G_μ (Dong, Roth & Su 2019)."""
    mu = 0.7
    for t in (-2.0, 0.0, 0.35, 3.0):
        fpr, fnr = stats.norm.sf(t), stats.norm.cdf(t - mu)
        assert bounds.mu_from_rates(fpr, fnr) == pytest.approx(mu, rel=1e-9)
    assert bounds.mu_from_rates(0.6, 0.6) == 0.0


def test_epsilon_of_mu():
    assert bounds.epsilon_of_mu(0.0, 1e-5) == 0.0
    assert bounds.epsilon_of_mu(0.5, 0.0) == math.inf
    assert bounds.epsilon_of_mu(0.5, 1e-5) == epsilon_exact_gaussian(0.5, 1e-5)


def test_ceiling_is_zero_error_bound():
    n, a = 10_000, 0.01875
    u = cp.upper_bound(0, n, a)
    assert bounds.ceiling(n, a, 1e-5) == pytest.approx(math.log((1 - 1e-5 - u) / u))
    assert bounds.ceiling(n, a, 1e-5) == pytest.approx(math.log(n / math.log(1 / a)), abs=0.01)
    assert bounds.ceiling(10 * n, a, 1e-5) > bounds.ceiling(n, a, 1e-5)


def test_views_of_a_transcript():
    x = np.arange(2 * 3 * 2, dtype=float).reshape(2, 3, 2)
    assert view(x, "release").shape == (2, 6)
    np.testing.assert_array_equal(view(x, "differences"), np.full((2, 4), 2.0))
    assert available_views((3, 2)) == ("release", "differences")
    assert available_views((5,)) == ("release",)


def test_differences_separate_reused_noise():
    rng = _rng(1)
    z = rng.normal(size=(500, 1))
    x0 = np.stack([z, z], axis=1)  # D: release 2 − release 1 = 0
    x1 = np.stack([z, z + 1.0], axis=1)  # D′: = 1, noise-free
    z2 = rng.normal(size=(500, 1))
    feats = propose_features(x0, x1)
    diff = [f for f in feats if f.which == "differences"]
    assert diff and np.all(diff[0].scores(np.stack([z2, z2], axis=1)) == 0.0)
    cp_choice, _ = choose(feats, x0, x1, 5000, 0.01875, 0.00625, 1e-5)
    s0 = cp_choice.test.feature.scores(x0)
    s1 = cp_choice.test.feature.scores(x1)
    t = cp_choice.test.threshold
    fp, fn = cp_choice.test.errors((int(np.sum(s0 > t)), int(np.sum(s1 > t))), 500)
    assert fp == 0 and fn == 0


def test_linear_direction_finds_the_shift():
    rng = _rng(2)
    shift = np.array([0.0, 0.0, 3.0, 0.0])
    x0 = rng.normal(size=(4000, 4))
    x1 = rng.normal(size=(4000, 4)) + shift
    lda = [f for f in propose_features(x0, x1) if "linear likelihood-ratio" in f.name][0]
    w = lda.weights / np.linalg.norm(lda.weights)
    assert abs(w[2]) > 0.99


def test_with_far_more_coordinates_than_rows_the_direction_needs_no_p_by_p_matrix(monkeypatch):
    # a one-run audit's pilot: tens of canary slots, each a view of tens of thousands of released values
    # (a 30 000 x 30 000 covariance is 7.2 GB: building one must fail the test, not the machine)
    import dpverify.audit.distinguishers as distinguishers

    monkeypatch.setattr(distinguishers, "_covariance", lambda z: pytest.fail("built a p x p covariance"))
    rng = _rng(3)
    p = 30_000
    x0 = rng.normal(size=(20, p))
    x1 = rng.normal(size=(20, p))
    x1[:, 7] += 6.0
    lda = [f for f in propose_features(x0, x1) if "linear likelihood-ratio" in f.name][0]
    assert lda.weights.shape == (p,) and np.all(np.isfinite(lda.weights))
    assert int(np.argmax(np.abs(lda.weights))) == 7  # the independence rule keeps the shifted coordinate


def test_threshold_test_errors_both_events_and_nulls():
    from dpverify.audit.distinguishers import LinearFeature

    f = LinearFeature("output", "release", np.ones(1))
    above = (10, 70)  # of 100 trials on D and on D′
    assert ThresholdTest(f, 0.0, "above", 0).errors(above, 100) == (10, 30)
    assert ThresholdTest(f, 0.0, "above", 1).errors(above, 100) == (70, 90)
    assert ThresholdTest(f, 0.0, "at-or-below", 0).errors(above, 100) == (90, 70)
    assert ThresholdTest(f, 0.0, "at-or-below", 1).errors(above, 100) == (30, 10)
    assert "D (null)" in ThresholdTest(f, 0.0, "above", 0).describe()


def test_candidate_ranks_reach_both_tails():
    r = candidate_ranks(100_000)
    assert r[0] == 0 and r[-1] == 99_999 and np.all(np.diff(r) > 0)
    assert set(range(50)) <= set(r.tolist())
    assert candidate_ranks(1).tolist() == [0]
