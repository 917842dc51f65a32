"""The exact argmax of an expensive score over many candidates, computing few of the scores.

The threshold selection scores several hundred candidate thresholds by a *projected* bound, and each
score costs four beta quantiles (2–3 µs each). The scores are built from a few increasing functions of
one count each — "the projected upper bound on the false-positive rate given fp false positives", and
so on — so two facts make most of them unnecessary:

* **Computed once.** A :class:`CountFunction` remembers every value it computed, and one table serves
  every candidate, event, direction and feature that needs the same function.
* **Bounded in between.** Each function is monotone and, as a function of the count, concave (the
  upper confidence limits) or convex (the lower ones): the Clopper–Pearson limit moves like
  k/n ± z·√k/n, and the √k term bends it. Between two computed counts, the chord is then a lower bound
  of a concave function and an upper bound of a convex one, tight to second order in the gap; beyond
  the computed range, monotonicity and the range [0, 1] bound it. :meth:`CountFunction.outer_bound`
  returns these bounds, widened by :data:`CHORD_MARGIN` (relative) to cover the quantile routine's own
  error, which reaches about 1e-6 relative.

:func:`bounded_argmax` computes a coarse grid of candidates, bounds all others from above with the
tables, drops those that cannot reach the best computed score (or tie it at a lower index), computes
the most promising of the rest, and repeats. Its answer is that of computing every score and taking
``np.argmax`` whenever the computed functions keep their shape within the margin;
``tests/dpverify/audit/test_bounded_argmax.py`` checks that shape over a sweep of sample sizes, levels
and counts, and ``test_selection.py`` the whole selection against the direct computation.
If the shape ever failed, the search could return a near-best candidate instead of the best: a loss of
power, never of validity, because the chosen test is evaluated on fresh trials.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: Relative widening of every chord or monotone bound (covers the beta-quantile routine's error).
CHORD_MARGIN = 1e-5


class CountFunction:
    """An increasing function of a count, computed on demand and remembered, with bounds in between.

    ``func`` maps an array of counts to values in [0, 1] element by element (so a value does not depend
    on which other counts were computed with it). ``concave`` says on which side its chords lie: below a
    concave function (chords give lower bounds) or above a convex one (upper bounds).
    """

    def __init__(self, func: Callable[[np.ndarray], np.ndarray], *, concave: bool) -> None:
        self.func = func
        self.concave = concave
        self.counts = np.empty(0)
        self.values = np.empty(0)

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        """The exact values at ``counts``, computing only those not computed before."""
        counts = np.asarray(counts, dtype=float)
        pos = np.searchsorted(self.counts, counts)
        if len(self.counts):
            known = (pos < len(self.counts)) & (self.counts[np.minimum(pos, len(self.counts) - 1)] == counts)
        else:
            known = np.zeros(counts.shape, dtype=bool)
        if not known.all():
            new = np.unique(counts[~known])
            merged = np.concatenate([self.counts, new])
            order = np.argsort(merged, kind="stable")
            self.counts = merged[order]
            self.values = np.concatenate([self.values, self.func(new)])[order]
            pos = np.searchsorted(self.counts, counts)
        return self.values[pos]

    def outer_bound(self, counts: np.ndarray) -> np.ndarray:
        """A bound on the values at ``counts``: from below if concave, from above if convex.

        Between two computed counts the chord, beyond them the nearest computed value (monotonicity)
        or the end of [0, 1]; every bound widened by :data:`CHORD_MARGIN`.
        """
        counts = np.asarray(counts, dtype=float)
        size = len(self.counts)
        if size == 0:
            return np.full(counts.shape, 0.0 if self.concave else 1.0)
        right = np.searchsorted(self.counts, counts)            # first computed count >= x
        r = np.minimum(right, size - 1)
        l_ = np.maximum(right - 1, 0)
        x0, x1 = self.counts[l_], self.counts[r]
        y0, y1 = self.values[l_], self.values[r]
        with np.errstate(divide="ignore", invalid="ignore"):
            chord = np.where(x1 > x0, y0 + (y1 - y0) * ((counts - x0) / (x1 - x0)), y1)
        exact = (right < size) & (x1 == counts)
        below, above = right == 0, right == size              # outside the computed range
        if self.concave:  # lower bounds
            bound = np.where(above, y1, chord) * (1.0 - CHORD_MARGIN)
            bound = np.where(below, 0.0, bound)
        else:  # upper bounds
            bound = np.minimum(1.0, np.where(below, y1, chord) * (1.0 + CHORD_MARGIN) + 1e-300)
            bound = np.where(above, 1.0, bound)
        return np.where(exact, y1, bound)


#: Candidates computed per round of :func:`bounded_argmax` (the most promising by their bounds).
BATCH = 8


def bounded_argmax(
    size: int,
    evaluate: Callable[[np.ndarray], np.ndarray],
    upper_bounds: Callable[[np.ndarray], np.ndarray],
    step: int,
    batch: int = BATCH,
) -> tuple[int, float]:
    """``(int(np.argmax(v)), float(v.max()))`` of the scores v ≥ 0, or ``(0, 0.0)`` if all are 0.

    ``evaluate(idx)`` returns the scores at the indices ``idx``; ``upper_bounds(idx)`` bounds them from
    above. Every ``step``-th candidate (and the last) is computed first; then, in rounds, candidates
    whose bound is below the best computed score (or not positive) are dropped for good — the best only
    grows — and the ``batch`` with the highest bounds are computed. A candidate whose bound reaches the
    best is kept, so a tie at a lower index is found and the first maximum is returned.
    """
    scores = np.full(size, np.nan)
    grid = np.unique(np.concatenate([np.arange(0, size, max(1, step)), [size - 1]])).astype(np.int64)
    scores[grid] = evaluate(grid)
    alive = np.ones(size, dtype=bool)
    alive[grid] = False
    best = float(np.max(scores[grid]))
    candidates = np.flatnonzero(alive)
    while len(candidates):
        bound = upper_bounds(candidates)
        keep = (bound >= best) & (bound > 0)
        candidates, bound = candidates[keep], bound[keep]
        if not len(candidates):
            break
        if len(candidates) > batch:
            top = np.argpartition(-bound, batch - 1)[:batch]
            pick = candidates[top]
            rest = np.ones(len(candidates), dtype=bool)
            rest[top] = False
            candidates = candidates[rest]
        else:
            pick, candidates = candidates, candidates[:0]
        scores[pick] = evaluate(pick)
        best = max(best, float(np.max(scores[pick])))
    if not best > 0.0:
        return 0, 0.0
    return int(np.flatnonzero(scores == best)[0]), best
