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
    merged.sort()
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


#: Spacing of the first grid of candidates computed exactly by :func:`_interval_argmax`, and the widest
#: interval it fills in at once (wider ones are halved).
COARSE_STEP = 32
FILL_WIDTH = 16
#: The same for the μ-GDP candidates (fewer: only the bulk of the scores).
GDP_STEP = 8


class _ProjectedEpsilon:
    """The projected Clopper–Pearson ε of the candidates of one (event, null) case, computed on demand.

    ε_j = bounds.epsilon_from_rates(FPR⁺_j, 1 − TPR⁻_j, δ) with FPR⁺_j = CP upper at the evaluation size m
    of the pessimistic selection rate of fp_j and TPR⁻_j = CP lower at m of the pessimistic rate of tp_j,
    or, inside the smoothed tail region (:func:`_smoothed_tail_fit`), of the smoothed rate. Values are
    computed element by element exactly as for the whole array at once.

    fp_j and tp_j are monotone in j (the thresholds increase with j), and FPR⁺, TPR⁻ are increasing
    functions of them, so over an index interval ε is bounded by the endpoints' FPR⁺ and TPR⁻ (and, in
    the region, by a bound on the smoothed count over the interval). :meth:`interval_bounds` returns
    such bounds; they let :func:`_best_clopper_pearson` skip intervals that cannot hold the maximum.
    """

    def __init__(self, thresholds: np.ndarray, fp: np.ndarray, tp: np.ndarray, n: int, m: float, alpha: float,
                 delta: float) -> None:
        self.fp, self.tp, self.n, self.m, self.alpha, self.delta = fp, tp, n, m, alpha, delta
        size = len(thresholds)
        self.fpr_u = np.full(size, np.nan)
        self.tpr_out = np.full(size, np.nan)   # TPR⁻ from the pessimistic rate of tp (outside the region)
        self.eps = np.full(size, np.nan)
        self.in_region = np.zeros(size, dtype=bool)
        self.smoothed = np.zeros(size)
        self.coeffs = np.zeros(3)
        self.x = np.zeros(size)
        self.region_span: tuple[int, int] | None = None
        self.contiguous = True
        fit = _smoothed_tail_fit(thresholds, fp, tp, n)
        if fit is not None:
            region, tp_smooth, coeffs, x = fit
            idx = np.flatnonzero(region)
            self.in_region, self.smoothed[region] = region, tp_smooth
            self.coeffs, self.x[region] = coeffs, x
            self.region_span = (int(idx[0]), int(idx[-1]))
            # The region is an index interval for monotone counts; if it ever is not, compute everything.
            self.contiguous = bool(np.all(region[idx[0]:idx[-1] + 1]))

    def _tpr_from_counts(self, idx: np.ndarray) -> np.ndarray:
        n, m = float(self.n), self.m
        pess = cp.lower_unchecked(self.tp[idx].astype(float), n, SELECTION_ALPHA)
        return cp.lower_unchecked(pess * m, m, self.alpha)

    def ensure_tpr_out(self, idx: np.ndarray) -> None:
        """TPR⁻ from the pessimistic rate of tp at ``idx`` (needed inside the region only as a bound)."""
        todo = np.unique(idx[np.isnan(self.tpr_out[idx])])
        if len(todo):
            self.tpr_out[todo] = self._tpr_from_counts(todo)

    def evaluate(self, idx: np.ndarray) -> None:
        """Compute FPR⁺ and ε at the indices ``idx`` (not yet computed), and TPR⁻ from tp outside the region.

        The same element-wise arithmetic as cp.upper_bound / cp.lower_bound (their checks are not needed:
        every count lies in [0, n] and every rate in [0, 1]).
        """
        if len(idx) == 0:
            return
        n, m, a = float(self.n), self.m, self.alpha
        pess = cp.upper_unchecked(self.fp[idx].astype(float), n, SELECTION_ALPHA)
        self.fpr_u[idx] = cp.upper_unchecked(pess * m, m, a)
        inside = self.in_region[idx]
        tpr = np.empty(len(idx))
        if np.any(~inside):
            out = idx[~inside]
            self.tpr_out[out] = tpr[~inside] = self._tpr_from_counts(out)
        if np.any(inside):
            tpr[inside] = cp.lower_unchecked(self.smoothed[idx[inside]] / n * m, m, a)
        self.eps[idx] = bounds.epsilon_from_rates(self.fpr_u[idx], 1.0 - tpr, self.delta)

    def _bound(self, fpr_low: np.ndarray, tpr_high: np.ndarray) -> np.ndarray:
        """An upper bound on the computed ε for any FPR⁺ ≥ fpr_low and TPR⁻ ≤ tpr_high (rounding covered)."""
        num = tpr_high * (1.0 + 1e-9) - self.delta + 1e-15
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(num > 0, np.log(np.maximum(num, 1e-300)) - np.log(fpr_low * (1.0 - 1e-9)), -np.inf)

    def interval_bounds(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Upper bounds on ε_j for lo < j < hi, for each interval (both ends already computed)."""
        fpr_low = np.minimum(self.fpr_u[lo], self.fpr_u[hi])
        out = np.full(len(lo), -np.inf)
        r0, r1 = self.region_span if self.region_span is not None else (len(self.fp), -1)
        outside = (lo + 1 < r0) | (hi - 1 > r1)  # some interior point lies outside the region
        if np.any(outside):
            self.ensure_tpr_out(np.concatenate([lo[outside], hi[outside]]))
            tpr_high = np.maximum(self.tpr_out[lo[outside]], self.tpr_out[hi[outside]])
            out[outside] = self._bound(fpr_low[outside], tpr_high)
        if self.region_span is not None:
            a = np.maximum(lo + 1, r0)
            b = np.minimum(hi - 1, r1)
            has = a <= b
            if np.any(has):
                a, b = a[has], b[has]
                # smoothed_j = min(fp_j · exp(q(x_j)), n): fp and x are monotone in j, q is a quadratic.
                fp_max = np.maximum(self.fp[a], self.fp[b]).astype(float)
                xa, xb = self.x[a], self.x[b]
                q_max = np.maximum(np.polyval(self.coeffs, xa), np.polyval(self.coeffs, xb))
                c2, c1 = self.coeffs[0], self.coeffs[1]
                if c2 < 0:
                    vertex = -c1 / (2.0 * c2)
                    inside = (vertex > np.minimum(xa, xb)) & (vertex < np.maximum(xa, xb))
                    q_max = np.where(inside, np.maximum(q_max, np.polyval(self.coeffs, vertex)), q_max)
                # Margin: Horner's rounding (|x| <= 1) is far below 1e-12 · Σ|c|; the rest covers exp and the product.
                q_high = q_max + 1e-12 * float(np.sum(np.abs(self.coeffs))) + 1e-9 * (1.0 + np.abs(q_max))
                with np.errstate(over="ignore"):
                    count_high = np.minimum(fp_max * np.exp(q_high) * (1.0 + 1e-9), float(self.n))
                tpr_region = cp.lower_unchecked(count_high / self.n * self.m, self.m, self.alpha)
                region_bound = self._bound(fpr_low[has], tpr_region)
                out[has] = np.maximum(out[has], region_bound)
        return out


def _interval_argmax(size: int, values: np.ndarray, evaluate: Callable[[np.ndarray], None],
                     interval_bounds: Callable[[np.ndarray, np.ndarray], np.ndarray],
                     step: int = 0, fill_width: int = 0) -> tuple[int, float]:
    """``np.argmax`` and ``max`` of ``values`` (≥ 0, NaN until computed), computing as few as possible.

    ``evaluate(idx)`` fills ``values[idx]``; ``interval_bounds(lo, hi)`` bounds the values strictly between
    computed indices lo and hi from above. A grid of every ``step``-th index (default :data:`COARSE_STEP`)
    is computed first; then every interval whose bound reaches the best computed value is filled in (or
    halved, if wider than ``fill_width``, default :data:`FILL_WIDTH`),
    until no interval can hold a larger value or a tie at a lower index (branch and bound). The result is
    exactly ``(int(np.argmax(v)), float(v.max()))`` of the fully computed array v.
    """
    step = step or COARSE_STEP
    fill_width = fill_width or FILL_WIDTH
    if size <= 2 * step:
        evaluate(np.arange(size))
    else:
        grid = np.unique(np.concatenate([np.arange(0, size, step), [size - 1]]))
        evaluate(grid)
        lo, hi = grid[:-1], grid[1:]
        while len(lo):
            best = float(np.nanmax(values))
            bound = interval_bounds(lo, hi)
            keep = (bound >= best) & (bound > 0) & (hi - lo > 1)
            lo, hi = lo[keep], hi[keep]
            short = hi - lo <= fill_width
            mid = (lo[~short] + hi[~short]) // 2
            new = [np.arange(a + 1, b) for a, b in zip(lo[short], hi[short], strict=True)]
            if len(lo):
                evaluate(np.unique(np.concatenate([mid, *new])).astype(np.int64))
            lo, hi = np.concatenate([lo[~short], mid]), np.concatenate([mid, hi[~short]])
    best = float(np.nanmax(values))
    if not best > 0.0:
        return 0, 0.0  # every value is 0: np.argmax gives the first
    return int(np.flatnonzero(values == best)[0]), best


def _best_clopper_pearson(
    thresholds: np.ndarray, fp: np.ndarray, tp: np.ndarray, n: int, m: float, alpha: float, delta: float
) -> tuple[int, float]:
    """``np.argmax`` and ``max`` of the projected Clopper–Pearson ε over the candidate thresholds.

    The result is exactly that of computing every candidate's ε (:class:`_ProjectedEpsilon`), but the
    beta quantiles are computed only where the maximum can be (:func:`_interval_argmax`).
    """
    # ε_j > 0 needs tp-estimate/n − δ > fp/n (FPR⁺ ≥ fp/n, TPR⁻ ≤ its estimate): otherwise ε_j = 0 exactly.
    proj = _ProjectedEpsilon(thresholds, fp, tp, n, m, alpha, delta)
    estimate = np.where(proj.in_region, proj.smoothed, tp) / n
    if not np.any(_may_be_positive(estimate, fp / n, delta)):
        return 0, 0.0
    if not proj.contiguous:
        proj.evaluate(np.arange(len(thresholds)))
        return int(np.argmax(proj.eps)), float(np.max(proj.eps))
    return _interval_argmax(len(thresholds), proj.eps, proj.evaluate, proj.interval_bounds)


class _ProjectedMu:
    """The projected μ-GDP bound of the bulk candidates of one event, computed on demand.

    μ_j = bounds.mu_from_rates(FPR⁺_j, FNR⁺_j), each rate the CP upper bound at the evaluation size m of
    the pessimistic selection rate of its count. Along the candidates one count rises and the other
    falls, and μ decreases in both rates, so the endpoints of an index interval bound μ inside it.
    """

    def __init__(self, fp: np.ndarray, fn: np.ndarray, n: int, m: float, alpha: float) -> None:
        self.fp, self.fn, self.n, self.m, self.alpha = fp, fn, float(n), m, alpha
        self.fpr_u = np.full(len(fp), np.nan)
        self.fnr_u = np.full(len(fp), np.nan)
        self.mu = np.full(len(fp), np.nan)

    def _rate(self, counts: np.ndarray) -> np.ndarray:
        # cp.upper_bound's arithmetic without its checks (counts lie in [0, n], rates in [0, 1]).
        pess = cp.upper_unchecked(counts.astype(float), self.n, SELECTION_ALPHA)
        return cp.upper_unchecked(pess * self.m, self.m, self.alpha)

    def evaluate(self, idx: np.ndarray) -> None:
        self.fpr_u[idx] = self._rate(self.fp[idx])
        self.fnr_u[idx] = self._rate(self.fn[idx])
        self.mu[idx] = bounds.mu_from_rates(self.fpr_u[idx], self.fnr_u[idx])

    def interval_bounds(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        fpr = np.minimum(self.fpr_u[lo], self.fpr_u[hi]) * (1.0 - 1e-9)
        fnr = np.minimum(self.fnr_u[lo], self.fnr_u[hi]) * (1.0 - 1e-9)
        with np.errstate(divide="ignore", invalid="ignore"):
            return -special.ndtri(fpr) - special.ndtri(fnr) + 1e-12


def _pessimistic_upper(k: np.ndarray, n: int) -> np.ndarray:
    """An upper estimate of a rate from selection counts: its Clopper–Pearson bound at SELECTION_ALPHA."""
    return np.asarray(cp.upper_bound(k, n, SELECTION_ALPHA))


def _pessimistic_lower(k: np.ndarray, n: int) -> np.ndarray:
    return np.asarray(cp.lower_bound(k, n, SELECTION_ALPHA))


def _all_finite(x: np.ndarray) -> bool:
    """No NaN or ±inf (min and max propagate NaN and reach ±inf; no temporary array)."""
    return bool(x.size == 0 or (np.isfinite(x.min()) and np.isfinite(x.max())))


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
    m = float(evaluation_trials)
    best_cp: Choice | None = None
    best_gdp: Choice | None = None
    for f, feature in enumerate(features):
        s0, s1 = feature.scores(x0), feature.scores(x1)
        if not (_all_finite(s0) and _all_finite(s1)):
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
            i, eps_i = _best_clopper_pearson(thresholds, fp, tp, n, m, cp_alpha, delta)
            if best_cp is None or eps_i > best_cp.projected:
                best_cp = Choice(ThresholdTest(feature, float(thresholds[i]), event, null), eps_i)
        # μ-GDP: the trade-off bound is symmetric in the two error rates, so the null does not matter.
        # Only thresholds in the bulk of the pooled scores are candidates (see GDP_BULK).
        bulk = (ranks >= GDP_BULK * len(pooled)) & (ranks <= (1.0 - GDP_BULK) * len(pooled))
        if not np.any(bulk):
            bulk = np.ones_like(ranks, dtype=bool)
        gdp_cases = {"above": (above0, below1), "at-or-below": (below0, above1)}
        for event, (fp, fn) in gdp_cases.items():
            proj_mu = _ProjectedMu(fp[bulk], fn[bulk], n, m, gdp_alpha)
            i, mu_i = _interval_argmax(len(proj_mu.mu), proj_mu.mu, proj_mu.evaluate, proj_mu.interval_bounds,
                                       step=GDP_STEP, fill_width=GDP_STEP)
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
