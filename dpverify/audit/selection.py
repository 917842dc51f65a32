"""Threshold tests, and their choice on the selection split.

A :class:`ThresholdTest` is a feature, a threshold t, an event ("score > t" or "score ≤ t") and the
dataset playing the null hypothesis (D or D′). Choosing the event and the null covers both
directions of the privacy inequality (D vs D′ and D′ vs D).

Every choice (pair, feature, threshold, event, null) is made on the selection split by maximising the
bound the test is *projected* to give on the evaluation split: pessimistic selection estimates of the
rates (their one-sided Clopper–Pearson bounds at about 1.6 standard errors, :data:`SELECTION_ALPHA`)
are plugged into the Clopper–Pearson bounds at the evaluation size. Plain plug-in estimates would
prefer thresholds far in a tail whose few selection counts happen to be lucky (a winner's curse that
costs the evaluation bound dearly); the pessimistic estimates charge each candidate for its noise. In
the tail, where the Clopper–Pearson optimum lives, the log-ratio of the two tail counts is in addition
smoothed across thresholds by a weighted quadratic fit (:func:`_smoothed_tail_projection`).
Because none of these choices look at the evaluation data, the evaluation split tests a single
pre-registered hypothesis per bound and needs no correction for them (only for the number of bounds).

The candidate thresholds lie halfway between consecutive pooled selection scores, at every rank near
both ends and at geometrically spaced ranks inside: the tight (ε, δ) event of a Gaussian mechanism lives far in the tail
(at (1, 1e-5) its false-positive rate is about 5.6e-5), where a uniform grid of quantiles would have no points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpverify.audit import bounds
from dpverify.audit import clopper_pearson as cp
from dpverify.audit.distinguishers import Feature, LinearFeature

EVENTS: tuple[str, ...] = ("above", "at-or-below")
DATASET_NAMES: tuple[str, ...] = ("D", "D'")

#: Smallest tail counts (on both datasets) where the log-ratio fit of the tail is used.
SMOOTHING_MIN_COUNT = 5
#: The fit covers events whose false-positive rate is at most this (the tail, where CP bounds live).
SMOOTHING_MAX_RATE = 0.2


#: One-sided level of the pessimistic selection estimates (about 1.6 standard errors).
SELECTION_ALPHA = 0.05


#: The μ-GDP test only considers thresholds between these pooled quantiles. For a Gaussian mechanism
#: every threshold has the same true μ, so the choice among them is driven by noise alone and the
#: noisiest (tail) thresholds would win it; a perfect separation still shows up in the bulk.
GDP_BULK = 0.1


@dataclass(frozen=True, eq=False)
class ThresholdTest:
    """Reject "the data are <null>" when the feature's score falls in the event."""

    feature: Feature
    threshold: float
    event: str
    null: int

    def describe(self) -> str:
        op = ">" if self.event == "above" else "<="
        alt = DATASET_NAMES[1 - self.null]
        return (
            f"{self.feature.name} {op} {self.threshold:.6g}: "
            f"{DATASET_NAMES[self.null]} (null) vs {alt}"
        )

    def errors(self, above: tuple[int, int], trials: int) -> tuple[int, int]:
        """(false positives, false negatives) from the counts of scores > threshold on D and on D′."""
        in_event = [above[0], above[1]] if self.event == "above" else [trials - above[0], trials - above[1]]
        false_positives = int(in_event[self.null])
        false_negatives = int(trials - in_event[1 - self.null])
        return false_positives, false_negatives


@dataclass(frozen=True, eq=False)
class Choice:
    """The test chosen for one bound and the value it was projected to reach."""

    test: ThresholdTest
    projected: float


def candidate_ranks(size: int, dense_ends: int = 256, inner: int = 256) -> np.ndarray:
    """Ranks into a sorted array of ``size`` values: all near both ends, geometric inside."""
    half = max(1, size // 2)
    ends = np.arange(min(dense_ends, size))
    geo = np.unique(np.geomspace(1, half, inner).astype(np.int64)) if half > 1 else np.zeros(1, np.int64)
    low = np.unique(np.concatenate([ends, geo]))
    ranks = np.unique(np.concatenate([low, size - 1 - low]))
    return ranks[(ranks >= 0) & (ranks < size)]


def _smoothed_tail_projection(
    thresholds: np.ndarray, fp: np.ndarray, tp: np.ndarray, n: int, m: float, alpha: float, delta: float
) -> tuple[np.ndarray, np.ndarray] | None:
    """Projected ε with the tail's log-likelihood-ratio curve smoothed by a weighted quadratic fit.

    In the tail the projected bound is driven by log(TP/FP), whose selection estimate at each threshold
    is noisy (a few hundred counts) while its true value varies slowly: an argmax over raw estimates
    picks noise. A quadratic in the threshold, fitted to log(TP/FP) with inverse-variance weights
    (Var ≈ 1/TP + 1/FP), borrows strength across thresholds. It only steers the choice: the chosen
    test is evaluated on fresh data, so a poor fit costs power, never validity. Returns the region
    of candidates where the fit applies and their projected ε, or None if too few points qualify.
    """
    region = (fp >= SMOOTHING_MIN_COUNT) & (tp >= SMOOTHING_MIN_COUNT) & (fp <= SMOOTHING_MAX_RATE * n)
    if np.count_nonzero(region) < 8:
        return None
    t = thresholds[region]
    span = float(t.max() - t.min())
    if span <= 0:
        return None
    x = (t - t.mean()) / span
    k0, k1 = fp[region].astype(float), tp[region].astype(float)
    log_ratio = np.log(k1 / k0)
    weights = 1.0 / np.sqrt(1.0 / k0 + 1.0 / k1)
    coeffs = np.polyfit(x, log_ratio, 2, w=weights)
    with np.errstate(over="ignore"):
        tp_smooth = np.minimum(k0 * np.exp(np.polyval(coeffs, x)), float(n))
    fpr_u = cp.upper_bound(_pessimistic_upper(k0, n) * m, m, alpha)
    tpr_l = cp.lower_bound(tp_smooth / n * m, m, alpha)
    return region, bounds.epsilon_from_rates(fpr_u, 1.0 - tpr_l, delta)


def _midpoints(pooled: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Thresholds halfway between the pooled value at each rank and the next one (the last stays).

    "score > t" then splits the sample exactly as at the value itself, but a gap between two clusters
    (a perfect separation) is cut in its middle instead of at the edge of one cluster, where fresh
    evaluation trials would spill over.
    """
    nxt = np.minimum(ranks + 1, len(pooled) - 1)
    return pooled[ranks] / 2.0 + pooled[nxt] / 2.0


def _tail_counts(scores0: np.ndarray, scores1: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    above0 = len(scores0) - np.searchsorted(np.sort(scores0), thresholds, side="right")
    above1 = len(scores1) - np.searchsorted(np.sort(scores1), thresholds, side="right")
    return above0, above1


def _pessimistic_upper(k: np.ndarray, n: int) -> np.ndarray:
    """An upper estimate of a rate from selection counts: its Clopper–Pearson bound at SELECTION_ALPHA."""
    return cp.upper_bound(k, n, SELECTION_ALPHA)


def _pessimistic_lower(k: np.ndarray, n: int) -> np.ndarray:
    return cp.lower_bound(k, n, SELECTION_ALPHA)


def choose(
    features: list[Feature],
    x0: np.ndarray,
    x1: np.ndarray,
    evaluation_trials: int,
    cp_alpha: float,
    gdp_alpha: float,
    delta: float,
) -> tuple[Choice, Choice]:
    """The (Clopper–Pearson, μ-GDP) tests with the best projected bounds on the selection outputs."""
    n = x0.shape[0]
    m = float(evaluation_trials)
    best_cp: Choice | None = None
    best_gdp: Choice | None = None
    for feature in features:
        s0, s1 = feature.scores(x0), feature.scores(x1)
        if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
            continue
        pooled = np.unique(np.concatenate([s0, s1]))
        ranks = candidate_ranks(len(pooled))
        thresholds = _midpoints(pooled, ranks)
        above0, above1 = _tail_counts(s0, s1, thresholds)
        below0, below1 = n - above0, n - above1
        # Clopper–Pearson: (event, null) -> (false-positive count, true-positive count)
        cp_cases = {
            ("above", 0): (above0, above1),
            ("above", 1): (above1, above0),
            ("at-or-below", 0): (below0, below1),
            ("at-or-below", 1): (below1, below0),
        }
        for (event, null), (fp, tp) in cp_cases.items():
            fpr_u = cp.upper_bound(_pessimistic_upper(fp, n) * m, m, cp_alpha)
            tpr_l = cp.lower_bound(_pessimistic_lower(tp, n) * m, m, cp_alpha)
            eps = bounds.epsilon_from_rates(fpr_u, 1.0 - tpr_l, delta)
            smooth = _smoothed_tail_projection(thresholds, fp, tp, n, m, cp_alpha, delta)
            if smooth is not None:
                region, eps_smooth = smooth
                eps = eps.copy()
                eps[region] = eps_smooth
            i = int(np.argmax(eps))
            if best_cp is None or eps[i] > best_cp.projected:
                best_cp = Choice(ThresholdTest(feature, float(thresholds[i]), event, null), float(eps[i]))
        # μ-GDP: the trade-off bound is symmetric in the two error rates, so the null does not matter.
        # Only thresholds in the bulk of the pooled scores are candidates (see GDP_BULK).
        bulk = (ranks >= GDP_BULK * len(pooled)) & (ranks <= (1.0 - GDP_BULK) * len(pooled))
        if not np.any(bulk):
            bulk = np.ones_like(ranks, dtype=bool)
        gdp_cases = {"above": (above0, below1), "at-or-below": (below0, above1)}
        for event, (fp, fn) in gdp_cases.items():
            fpr_u = cp.upper_bound(_pessimistic_upper(fp[bulk], n) * m, m, gdp_alpha)
            fnr_u = cp.upper_bound(_pessimistic_upper(fn[bulk], n) * m, m, gdp_alpha)
            mu = bounds.mu_from_rates(fpr_u, fnr_u)
            i = int(np.argmax(mu))
            if best_gdp is None or mu[i] > best_gdp.projected:
                t = float(thresholds[bulk][i])
                best_gdp = Choice(ThresholdTest(feature, t, event, 0), float(mu[i]))
    if best_cp is None or best_gdp is None:
        # Every feature overflowed: fall back to the first coordinate of the raw output.
        w = np.zeros(int(np.prod(x0.shape[1:])))
        w[0] = 1.0
        fallback = ThresholdTest(LinearFeature("output coordinate 0", "release", w), 0.0, "above", 0)
        return Choice(fallback, 0.0), Choice(fallback, 0.0)
    return best_cp, best_gdp
