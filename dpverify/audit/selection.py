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

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from dpverify.audit import bounds
from dpverify.audit import clopper_pearson as cp
from dpverify.audit.bounded_argmax import CountFunction, bounded_argmax
from dpverify.audit.distinguishers import Feature, LinearFeature
from dpverify.audit.trials import all_finite

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


def _smoothed_tail_fit(
    thresholds: np.ndarray, fp: np.ndarray, tp: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The tail's log-likelihood-ratio curve smoothed by a weighted quadratic fit.

    In the tail the projected bound is driven by log(TP/FP), whose selection estimate at each threshold
    is noisy (a few hundred counts) while its true value varies slowly: an argmax over raw estimates
    picks noise. A quadratic in the threshold, fitted to log(TP/FP) with inverse-variance weights
    (Var ≈ 1/TP + 1/FP), borrows strength across thresholds. It only steers the choice: the chosen
    test is evaluated on fresh data, so a poor fit costs power, never validity. Returns the region of
    candidates where the fit applies, their smoothed true-positive counts, the fit's coefficients and the
    region's normalised thresholds x, or None if too few points qualify; the projected ε of a candidate
    in the region uses the smoothed count (unpessimised).
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
    return region, tp_smooth, coeffs, x


def _midpoints(pooled: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Thresholds halfway between the pooled value at each rank and the next one (the last stays).

    "score > t" then splits the sample exactly as at the value itself, but a gap between two clusters
    (a perfect separation) is cut in its middle instead of at the edge of one cluster, where fresh
    evaluation trials would spill over.
    """
    nxt = np.minimum(ranks + 1, len(pooled) - 1)
    return pooled[ranks] / 2.0 + pooled[nxt] / 2.0


def _sorted_and_pooled(scores0: np.ndarray, scores1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both score samples sorted (in place: the caller's arrays are consumed), and their pooled distinct
    values (the same as np.unique of both)."""
    scores0.sort()
    scores1.sort()
    merged = np.concatenate([scores0, scores1])
    merged.sort(kind="stable")  # two sorted runs: numpy's stable sort finds and merges them (~30% faster)
    keep = np.empty(merged.shape, dtype=bool)
    keep[:1] = True
    np.not_equal(merged[1:], merged[:-1], out=keep[1:])
    return scores0, scores1, (merged if keep.all() else merged[keep])


def _tail_counts(sorted0: np.ndarray, sorted1: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    above0 = len(sorted0) - np.searchsorted(sorted0, thresholds, side="right")
    above1 = len(sorted1) - np.searchsorted(sorted1, thresholds, side="right")
    return above0, above1


def _may_be_positive(tpr_estimate: np.ndarray, fpr_upper: np.ndarray, delta: float) -> np.ndarray:
    """Where ln((tpr − δ)/fpr) may be > 0 for some tpr ≤ ``tpr_estimate`` and fpr ≥ ``fpr_upper``.

    Everywhere else bounds.epsilon_from_rates(fpr, 1 − tpr, δ) is exactly 0 (its floor):
    1 − δ − (1 − tpr) ≤ tpr_estimate − δ + 3e-16 < fpr. The margins (relative 1e-9, absolute 1e-15)
    cover the rounding of both sides.
    """
    return (tpr_estimate - delta) >= fpr_upper * (1.0 - 1e-9) - 1e-15


#: Spacing of the first grid of candidates computed by :func:`bounded_argmax`, for the Clopper–Pearson
#: candidates and for the μ-GDP candidates (fewer: only the bulk of the scores).
COARSE_STEP = 32
GDP_STEP = 8


class ProjectedRates:
    """The projected error rates of one selection split, as functions of its counts (computed once).

    With n selection trials per side and m evaluation trials, a count k is first replaced by its
    pessimistic rate (the one-sided Clopper–Pearson bound at :data:`SELECTION_ALPHA`), which is then
    projected to the evaluation size by the Clopper–Pearson bound at the test's level:

    * ``cp_fpr(k)``: upper bound on a false-positive rate, Clopper–Pearson test (concave in k);
    * ``cp_tpr(k)``: lower bound on a true-positive rate, Clopper–Pearson test (convex);
    * ``cp_tpr_smoothed(s)``: the same from a smoothed (already unpessimised) count s (convex);
    * ``gdp_rate(k)``: upper bound on an error rate, μ-GDP test (concave).

    The quantiles are the raw guesses of :mod:`clopper_pearson` (they steer a choice; none is reported).
    One table of each serves every candidate, event, direction and feature of the split.
    """

    def __init__(self, n: int, m: float, cp_alpha: float, gdp_alpha: float) -> None:
        nf = float(n)
        self.n = n

        def upper(alpha: float) -> Callable[[np.ndarray], np.ndarray]:
            return lambda k: cp.upper_guess(cp.upper_guess(k, nf, SELECTION_ALPHA) * m, m, alpha)

        def lower(alpha: float) -> Callable[[np.ndarray], np.ndarray]:
            return lambda k: cp.lower_guess(cp.lower_guess(k, nf, SELECTION_ALPHA) * m, m, alpha)

        self.cp_fpr = CountFunction(upper(cp_alpha), concave=True)
        self.cp_tpr = CountFunction(lower(cp_alpha), concave=False)
        self.cp_tpr_smoothed = CountFunction(lambda s: cp.lower_guess(s / nf * m, m, cp_alpha), concave=False)
        self.gdp_rate = CountFunction(upper(gdp_alpha), concave=True)


def _epsilon_bound(fpr_low: np.ndarray, tpr_high: np.ndarray, delta: float) -> np.ndarray:
    """An upper bound on bounds.epsilon_from_rates(fpr, 1 − tpr, δ) for fpr ≥ fpr_low, tpr ≤ tpr_high."""
    num = tpr_high * (1.0 + 1e-9) - delta + 1e-15
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num > 0, np.log(np.maximum(num, 1e-300)) - np.log(fpr_low * (1.0 - 1e-9)), -np.inf)


def _best_clopper_pearson(
    rates: ProjectedRates, thresholds: np.ndarray, fp: np.ndarray, tp: np.ndarray, delta: float
) -> tuple[int, float]:
    """``np.argmax`` and ``max`` of the projected Clopper–Pearson ε over the candidate thresholds.

    ε_j = bounds.epsilon_from_rates(FPR⁺_j, 1 − TPR⁻_j, δ) with FPR⁺_j = cp_fpr(fp_j) and TPR⁻_j =
    cp_tpr(tp_j), or, inside the smoothed tail region (:func:`_smoothed_tail_fit`), cp_tpr_smoothed of
    the smoothed count. The result is exactly that of computing every candidate's ε; the beta quantiles
    are computed only where the maximum can be (:func:`bounded_argmax`).
    """
    n = rates.n
    in_region = np.zeros(len(thresholds), dtype=bool)
    smoothed = np.zeros(len(thresholds))
    fit = _smoothed_tail_fit(thresholds, fp, tp, n)
    if fit is not None:
        in_region, smoothed[fit[0]] = fit[0], fit[1]
    # ε_j > 0 needs tp-estimate/n − δ > fp/n (FPR⁺ ≥ fp/n, TPR⁻ ≤ its estimate): otherwise ε_j = 0 exactly.
    if not np.any(_may_be_positive(np.where(in_region, smoothed, tp) / n, fp / n, delta)):
        return 0, 0.0
    fp_f, tp_f = fp.astype(float), tp.astype(float)

    def tpr(idx: np.ndarray, exact: bool) -> np.ndarray:
        inside = in_region[idx]
        out = np.empty(len(idx))
        plain, smooth = rates.cp_tpr, rates.cp_tpr_smoothed
        if not inside.all():
            k = tp_f[idx[~inside]]
            out[~inside] = plain(k) if exact else plain.outer_bound(k)
        if inside.any():
            s = smoothed[idx[inside]]
            out[inside] = smooth(s) if exact else smooth.outer_bound(s)
        return out

    def evaluate(idx: np.ndarray) -> np.ndarray:
        fpr = rates.cp_fpr(fp_f[idx])
        return np.asarray(bounds.epsilon_from_rates(fpr, 1.0 - tpr(idx, True), delta), dtype=float)

    def upper_bounds(idx: np.ndarray) -> np.ndarray:
        return _epsilon_bound(rates.cp_fpr.outer_bound(fp_f[idx]), tpr(idx, False), delta)

    return bounded_argmax(len(thresholds), evaluate, upper_bounds, COARSE_STEP)


def _best_gaussian(rates: ProjectedRates, fp: np.ndarray, fn: np.ndarray) -> tuple[int, float]:
    """``np.argmax`` and ``max`` of the projected μ-GDP bound over the candidates (exactly).

    μ_j = bounds.mu_from_rates(gdp_rate(fp_j), gdp_rate(fn_j)), which decreases in both rates.
    """
    # μ_j > 0 needs FPR⁺ + FNR⁺ < 1. Both lie above their plain rates (a Clopper–Pearson upper limit
    # exceeds its estimate by far more than the quantile routine's error), so fp + fn > n rules it out:
    # the rates then sum to at least 1 + 1/n, far above the rounding of ndtri.
    if np.all(fp + fn > rates.n):
        return 0, 0.0
    fp_f, fn_f = fp.astype(float), fn.astype(float)
    table = rates.gdp_rate

    def evaluate(idx: np.ndarray) -> np.ndarray:
        return np.asarray(bounds.mu_from_rates(table(fp_f[idx]), table(fn_f[idx])), dtype=float)

    def upper_bounds(idx: np.ndarray) -> np.ndarray:
        fpr = table.outer_bound(fp_f[idx]) * (1.0 - 1e-9)
        fnr = table.outer_bound(fn_f[idx]) * (1.0 - 1e-9)
        with np.errstate(divide="ignore", invalid="ignore"):
            return -special.ndtri(fpr) - special.ndtri(fnr) + 1e-12

    return bounded_argmax(len(fp), evaluate, upper_bounds, GDP_STEP)


def choose(
    features: list[Feature],
    x0: np.ndarray,
    x1: np.ndarray,
    evaluation_trials: int,
    cp_alpha: float,
    gdp_alpha: float,
    delta: float,
    consume: bool = False,
) -> tuple[Choice, Choice]:
    """The (Clopper–Pearson, μ-GDP) tests with the best projected bounds on the selection outputs.

    With ``consume=True`` the caller gives up x0 and x1: the last feature's scores may be sorted in place
    even when they are a view of them (saving a copy of each sample).
    """
    n = x0.shape[0]
    rates = ProjectedRates(n, float(evaluation_trials), cp_alpha, gdp_alpha)
    best_cp: Choice | None = None
    best_gdp: Choice | None = None
    for f, feature in enumerate(features):
        s0, s1 = feature.scores(x0), feature.scores(x1)
        if not (all_finite(s0) and all_finite(s1)):
            continue
        # The scores are sorted in place below: a view of the outputs only when they are not needed again.
        mine = consume and f == len(features) - 1
        s0 = s0.copy() if not mine and np.may_share_memory(s0, x0) else s0
        s1 = s1.copy() if not mine and np.may_share_memory(s1, x1) else s1
        sorted0, sorted1, pooled = _sorted_and_pooled(s0, s1)
        ranks = candidate_ranks(len(pooled))
        thresholds = _midpoints(pooled, ranks)
        above0, above1 = _tail_counts(sorted0, sorted1, thresholds)
        below0, below1 = n - above0, n - above1
        # Clopper–Pearson: (event, null) -> (false-positive count, true-positive count)
        cp_cases = {
            ("above", 0): (above0, above1),
            ("above", 1): (above1, above0),
            ("at-or-below", 0): (below0, below1),
            ("at-or-below", 1): (below1, below0),
        }
        for (event, null), (fp, tp) in cp_cases.items():
            i, eps_i = _best_clopper_pearson(rates, thresholds, fp, tp, delta)
            if best_cp is None or eps_i > best_cp.projected:
                best_cp = Choice(ThresholdTest(feature, float(thresholds[i]), event, null), eps_i)
        # μ-GDP: the trade-off bound is symmetric in the two error rates, so the null does not matter.
        # Only thresholds in the bulk of the pooled scores are candidates (see GDP_BULK).
        bulk = (ranks >= GDP_BULK * len(pooled)) & (ranks <= (1.0 - GDP_BULK) * len(pooled))
        if not np.any(bulk):
            bulk = np.ones_like(ranks, dtype=bool)
        gdp_cases = {"above": (above0, below1), "at-or-below": (below0, above1)}
        for event, (fp, fn) in gdp_cases.items():
            i, mu_i = _best_gaussian(rates, fp[bulk], fn[bulk])
            if best_gdp is None or mu_i > best_gdp.projected:
                t = float(thresholds[bulk][i])
                best_gdp = Choice(ThresholdTest(feature, t, event, 0), mu_i)
    if best_cp is None or best_gdp is None:
        # Every feature overflowed: fall back to the first coordinate of the raw output.
        w = np.zeros(int(np.prod(x0.shape[1:])))
        w[0] = 1.0
        fallback = ThresholdTest(LinearFeature("output coordinate 0", "release", w), 0.0, "above", 0)
        return Choice(fallback, 0.0), Choice(fallback, 0.0)
    return best_cp, best_gdp
