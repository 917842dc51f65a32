"""Noise check: is every published value noised as its recorded mechanism says?

The noise of a release is observed from behaviour in one of two ways (:mod:`.runs`):

* a release the billboard noised itself (:meth:`~dpverify.agents.core.billboard.Billboard.publish`) keeps the
  noise it added — the published value minus the raw value the agent handed over — from the run as the
  agent makes it, with the generator the agent passes;
* a release the agent noised itself (:meth:`~dpverify.agents.core.billboard.Billboard.publish_noised`) is
  compared with the same release of a replay on the same users with the same coins and transcript and
  another billboard noise seed: the raw statistic cancels exactly and the difference is two
  independent noise draws.

Standardised (:meth:`~dpverify.mechanisms.NoiseMechanism.standardised_noise`), the noise must be iid
N(0, 1) for a mechanism whose law is normal (Gaussian, GOE; a difference is divided by √2), iid Lap(1)
for the Laplace mechanism (a difference: L₁ − L₂). Per statistic family the check runs exact tests:

* **scale** — normal law: S = Σz² ~ χ²_n exactly; Laplace: S₁ = Σ|z| ~ Gamma(n, 1) (drawn), or
  Gamma(n + B, 1) with B ~ Binomial(n, ½) for differences (|L₁ − L₂| is an equal mixture of Gamma(1, 1)
  and Gamma(2, 1)), an exact mixture CDF;
* **shape** — normal law: the ratio of two independent centred normals of equal variance is standard
  Cauchy, whatever the variance, so the KS test of z₂ᵢ/z₂ᵢ₊₁ against the Cauchy CDF is exact and blind to
  the scale (noise larger than recorded is not a failure); and the sample kurtosis against the normal's 3
  (Anscombe & Glynn 1983, :func:`scipy.stats.kurtosistest`: asymptotic, run from a thousand values;
  also scale-free, and far more powerful against bounded or heavy-tailed noise of the recorded
  variance); Laplace: KS against the exact CDF of Lap(1) or of L₁ − L₂, F(x) = 1 − ½(1 + x/2)e⁻ˣ for x ≥ 0
  (not counted against noise larger than recorded);
* **independence** — Pearson's r on non-overlapping pairs (z of release 2i against release 2i + 1,
  coordinate by coordinate; adjacent coordinates of one release): t = r√((m − 2)/(1 − r²)) ~ t_{m−2} exactly
  for iid normal pairs (asymptotic for Laplace);
* **exactness** — no release may carry no noise, no coordinate may be left un-noised while others are
  noised, and no two releases may share a draw up to sign (reused or broadcast noise): events of
  probability zero under the recorded mechanism, decided without spending level.

Randomized response (law ``"randomized-response"``) has no scale: its noise is the offset Z = output − input
(mod k) of each coordinate, 0 with probability e^ε/(e^ε + k − 1). Per mechanism of the family, the number of
coordinates that changed is Binomial(n, 1 − P(Z = 0)) exactly for drawn offsets, and the **flip** test is that
exact binomial test (fewer changes than recorded fail: less noise; more are reported). Self-noised offsets are
never seen: m runs with the same users and coins and m noise seeds give the pairwise agreement U-statistic, whose
exact null law is tested through Chernoff's bound, m chosen by a power calculation against twice the recorded ε₀
(:mod:`.rr_agreement`; a test with power below one half at the cap says so in its detail, naming the remedy);
for k > 2 the changed coordinates' offsets must be uniform on 1..k−1
(χ² test, run from five expected counts per value), and the changes of consecutive releases independent
(Pearson's r). Equal offsets are frequent under this law, so the shared-draw and cross-family tests skip it.

Across the whole run, whatever the families, shapes and stages (**run-wide independence**, normal laws): every
release is a *slot* — its family, mechanism, stage and occurrence in its episode — that recurs from episode to
episode, and every pair of slot coordinates, at one episode or at consecutive ones, is tested for correlation
over the episodes (up to :data:`MAX_SLOT_EPISODES` of them, evenly spaced): the uncentred r of n iid N(0, 1)
pairs gives t = r√((n − 1)/(1 − r²)) ~ t_{n−1} exactly (the known zero mean: r is a coordinate of a uniform
point on the sphere), Bonferroni over the pairs, one share of the level for the whole test. Two families of
different shapes whose generators were seeded alike, or one stream shared between stages, share some standard
normals in every episode: those coordinates correlate at r = ±1 (±1/√2 through a GOE symmetrisation), which
fails the test at any size, and the pair is named. The Laplace laws (drawn noise and differences) get the same
test among their own slots with another statistic, since the t law is the normal's: the self-normalised sum
S = Σxᵢyᵢ/√Σxᵢ²yᵢ², whose terms are symmetric and independent for independent symmetric noise, so that given
their sizes their signs are fair coins and P(|S| ≥ s) ≤ 2e^(−s²/2) exactly (Hoeffding's inequality conditional on
the |xᵢyᵢ|; Efron 1969): a valid bound for any symmetric law, which two families sharing Laplace draws (S ≈ 0.4√n)
exceed at a few hundred episodes.

**Fresh noise** (with ``reseeded``, a replay with other coins *and* another noise seed): a release whose
noise — the kept noise of a billboard-drawn release, the value of a self-noised one — is the same up to
rounding carries noise that no seed of the auditor moves, a function of public quantities (the episode, the
stage, a fixed seed, the clock): for fresh noise an event of probability zero, decided without level. A family
whose values did not change with the noise seed but did with the coins draws from a generator of its own: the
check cannot run on it, and says how to make it checkable.

The false-alarm level α is split equally (Bonferroni) over every test run; the scale test fails on the
low side only (at half its share): noise *smaller* than recorded refutes the claim, larger noise is
reported and passes. A self-noised family whose values did not change at all with the billboard's noise
seed draws its noise from elsewhere than :meth:`~dpverify.agents.core.billboard.Billboard.noise_source` (or has
none): the check cannot run on it.

For a family with too little noise the result also carries the ε that the agent's own accounting gives
with the noise actually drawn (the recorded σ times the scale ratio's upper confidence limit).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from dpverify.accounting import epsilon_routes, tightest
from dpverify.agents.core.billboard import PublishedRelease
from dpverify.checks import FAIL, NOT_RUN, PASS
from dpverify.conversions import get_conversion
from dpverify.ledger import PrivacyLedger
from dpverify.whitebox.result import FamilyNoise, NoiseCheck
from dpverify.whitebox.rr_agreement import (
    ALTERNATIVE_FACTOR,
    MIN_POWER,
    RunsPlan,
    agreement_pmf,
    agreements,
    lower_tail,
    power,
    runs_needed,
    upper_tail,
)
from dpverify.whitebox.stacks import Stack, stacks

#: The default false-alarm level of the whole noise check (every family and test together).
DEFAULT_LEVEL = 1e-3
#: Fewest standardised values a family needs for its tests (fewer: the family is not tested).
MIN_VALUES = 8
#: Fewest values for the kurtosis test (its normal approximation, accurate in the tails from about a thousand).
MIN_KURTOSIS_VALUES = 1000
#: The level-spending tests of one family: scale, shape (ratio KS), kurtosis, two independence tests (the
#: run-wide independence test spends one share more).
TESTS_PER_FAMILY = 5


@dataclass(frozen=True, eq=False)
class _Family:
    """One family's standardised noise, one (n, m) block per mechanism (rows: releases in publication order);
    ``law`` is "normal", "laplace" (drawn noise) or "laplace-difference" (a difference of two draws)."""

    family: str
    law: str
    blocks: tuple[tuple[Stack, np.ndarray], ...]
    differences: bool
    #: Self-noised randomized response: per block, the agreeing pairs of runs at each coordinate
    #: (:func:`~dpverify.whitebox.rr_agreement.agreements`) over ``runs`` runs that differ in the noise seed only.
    agreements: tuple[np.ndarray, ...] = ()
    runs: int = 2

    @property
    def values(self) -> np.ndarray:
        return np.concatenate([z.ravel() for _, z in self.blocks])

    @property
    def releases(self) -> int:
        return sum(z.shape[0] for _, z in self.blocks)

    def unchanged(self) -> tuple[int, str | None]:
        """(releases whose noise is all zero, the first of them)."""
        count, first = 0, None
        for stack, z in self.blocks:
            rows = np.flatnonzero(~np.any(z != 0.0, axis=1))
            count += rows.size
            if rows.size and first is None:
                first = stack.label(int(rows[0]))
        return count, first

    def unnoised_coordinates(self) -> int:
        """Coordinates left at exactly zero in releases whose other coordinates carry noise."""
        total = 0
        for _, z in self.blocks:
            noised = np.any(z != 0.0, axis=1)
            total += int(np.count_nonzero(z[noised] == 0.0))
        return total


def _standardised(stack: Stack, recorded: Sequence[PublishedRelease], other: Sequence[PublishedRelease] | None
                  ) -> tuple[np.ndarray, bool] | None:
    """(standardised noise (n, m), whether it is a difference of two draws), or None when not observable."""
    mechanism = stack.mechanism
    noise = stack.noise(recorded)
    if noise is not None:
        return mechanism.standardised_noise(noise), False
    if other is None:
        return None
    z = mechanism.standardised_noise(stack.values(other) - stack.values(recorded))
    return (z / math.sqrt(2.0) if mechanism.noise_law == "normal" else z), True


def _families(recorded: Sequence[PublishedRelease], other: Sequence[PublishedRelease] | None,
              replays: Sequence[Sequence[PublishedRelease]] = ()) -> tuple[list[_Family], list[str]]:
    """Group the standardised noise by family; families whose noise cannot be observed are listed apart.
    ``replays``: more runs with other noise seeds, for self-noised randomized response."""
    grouped: dict[str, dict] = {}
    unobserved: list[str] = []
    all_stacks, unrecorded = stacks(recorded)
    if unrecorded:
        unobserved.append(f"{len(unrecorded)} release(s) without a recorded mechanism")
    for stack in all_stacks:
        mechanism = stack.mechanism
        observed = None if mechanism.noise_law is None else _standardised(stack, recorded, other)
        if observed is None:
            why = ("its mechanism declares no noise law" if mechanism.noise_law is None
                   else "self-noised releases need a replay with another noise seed")
            if f"{stack.family}: {why}" not in unobserved:
                unobserved.append(f"{stack.family}: {why}")
            continue
        z, difference = observed
        law = mechanism.noise_law if mechanism.noise_law == "normal" or not difference else (
            f"{mechanism.noise_law}-difference")
        entry = grouped.setdefault(stack.family, {"blocks": [], "law": law, "difference": difference, "agree": []})
        entry["blocks"].append((stack, z))
        if difference and mechanism.noise_law == _RR and other is not None:
            entry["agree"].append(agreements([stack.values(run) for run in (recorded, other, *replays)]))
    families = [_Family(name, e["law"], tuple(e["blocks"]), e["difference"], tuple(e["agree"]), 2 + len(replays))
                for name, e in grouped.items()]
    return families, unobserved


# ---- exact tests ----------------------------------------------------------------------------------------


def _pearson_p(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p-value of Pearson's r = 0 for m iid pairs (exact t_{m−2} law for normal pairs)."""
    m = x.size
    if m < 4:
        return 1.0
    x = x - x.mean()
    y = y - y.mean()
    denominator = math.sqrt(float(x @ x) * float(y @ y))
    if denominator == 0.0:
        return 0.0 if np.array_equal(x, y) else 1.0
    r = max(-1.0, min(1.0, float(x @ y) / denominator))
    if abs(r) == 1.0:
        return 0.0
    t = r * math.sqrt((m - 2) / (1.0 - r * r))
    return float(2.0 * stats.t.sf(abs(t), m - 2))


def _pairs(fam: _Family, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Non-overlapping pairs of each block's noise: along ``axis`` 0 (across releases), z of release 2i against
    release 2i + 1, coordinate by coordinate; along ``axis`` 1 (within releases), coordinates 2c against 2c + 1."""
    xs, ys = [], []
    for _, z in fam.blocks:
        n = z.shape[axis] // 2
        xs.append(np.take(z, np.arange(0, 2 * n, 2), axis=axis).ravel())
        ys.append(np.take(z, np.arange(1, 2 * n, 2), axis=axis).ravel())
    return np.concatenate(xs), np.concatenate(ys)


def _laplace_sum_cdf(s: float, n: int, upper: bool, difference: bool) -> float:
    """P(Σ|zᵢ| ≤ s) (or ≥ s) for n iid |Lap(1)| (Gamma(n, 1)) or |L₁ − L₂| (a Binomial(n, ½) mixture of
    Gamma(n + k, 1))."""
    if not difference:
        return float(special.gammaincc(n, s) if upper else special.gammainc(n, s))
    k = np.arange(n + 1)
    spread = 12.0 * math.sqrt(n) + 12.0
    k = k[np.abs(k - n / 2.0) <= spread]
    weights = stats.binom.pmf(k, n, 0.5)
    tail = special.gammaincc(n + k, s) if upper else special.gammainc(n + k, s)
    return float(min(1.0, np.sum(weights * tail)))


def _laplace_difference_cdf(x: np.ndarray) -> np.ndarray:
    """CDF of L₁ − L₂ for iid Lap(1): 1 − ½(1 + x/2)e^{−x} for x ≥ 0, symmetric about 0."""
    a = np.abs(x)
    upper = 0.5 * (1.0 + a / 2.0) * np.exp(-a)
    return np.where(x >= 0, 1.0 - upper, upper)


@dataclass(frozen=True)
class _Scale:
    ratio: float
    lower: float
    upper: float
    p_small: float
    p_large: float


def _normal_scale(z: np.ndarray, share: float) -> _Scale:
    n = z.size
    s = float(z @ z)
    ratio = math.sqrt(s / n)
    upper = math.sqrt(s / stats.chi2.ppf(share / 2.0, n)) if s > 0 else 0.0
    lower = math.sqrt(s / stats.chi2.isf(share / 2.0, n))
    return _Scale(ratio, lower, upper, float(stats.chi2.cdf(s, n)), float(stats.chi2.sf(s, n)))


def _laplace_scale(z: np.ndarray, share: float, difference: bool) -> _Scale:
    n = z.size
    s = float(np.abs(z).sum())
    # E|L| = 1, Var|L| = 1; E|L₁ − L₂| = 3/2, Var = 4 − 9/4 (normal approximation for the confidence limits only)
    mean, sd = (1.5 * n, math.sqrt(1.75 * n)) if difference else (float(n), math.sqrt(n))
    quantile = stats.norm.isf(share / 2.0)
    upper = s / max(mean - quantile * sd, 1e-300)
    lower = s / (mean + quantile * sd)
    return _Scale(s / mean, lower, upper, _laplace_sum_cdf(s, n, False, difference),
                  _laplace_sum_cdf(s, n, True, difference))


def _shape_p(z: np.ndarray, law: str) -> float:
    if law == "normal":
        m = z.size // 2
        ratios = z[0:2 * m:2] / z[1:2 * m:2]
        return float(stats.kstest(ratios, "cauchy").pvalue)
    if law == "laplace":
        return float(stats.kstest(z, "laplace").pvalue)
    return float(stats.kstest(z, _laplace_difference_cdf).pvalue)


def _kurtosis_p(z: np.ndarray, law: str) -> float:
    """Two-sided p-value of the kurtosis test of normality (NaN for other laws or too few values)."""
    if law != "normal" or z.size < MIN_KURTOSIS_VALUES:
        return math.nan
    return float(stats.kurtosistest(z).pvalue)


def _duplicates(families: Sequence[_Family]) -> list[str]:
    """Pairs of releases whose noise is equal up to sign (a reused or copied draw), among releases of one
    coordinate count (all families together)."""
    by_size: dict[int, list[tuple[Stack, np.ndarray]]] = {}
    for fam in families:
        for stack, z in fam.blocks:
            by_size.setdefault(z.shape[1], []).append((stack, z))
    found: list[str] = []
    for blocks in by_size.values():
        rows = np.concatenate([np.abs(z) for _, z in blocks])
        owners = [(stack, i) for stack, z in blocks for i in range(z.shape[0])]
        noised = np.flatnonzero(np.any(rows != 0.0, axis=1))
        _, inverse, counts = np.unique(rows[noised], axis=0, return_inverse=True, return_counts=True)
        for group in np.flatnonzero(counts > 1):
            members = noised[np.flatnonzero(inverse.ravel() == group)]
            a, b = owners[int(members[0])], owners[int(members[1])]
            found.append(f"{a[0].label(a[1])} and {b[0].label(b[1])}")
    return found


#: The laws of the Laplace mechanism's noise, drawn and as the difference of two draws (run-wide test of their own).
_LAPLACE_LAWS = ("laplace", "laplace-difference")
#: The most episodes the run-wide independence test reads (evenly spaced over the run): a shared draw shows at any
#: count, and the cost grows with the episodes times the square of the noise coordinates an episode publishes.
MAX_SLOT_EPISODES = 256
#: The most coordinates per episode the run-wide test compares pairwise (beyond it, each slot keeps its first ones).
MAX_SLOT_COLUMNS = 4096
#: Columns of one block of the pairwise products (memory: a block is BLOCK × columns floats, five of them).
_BLOCK = 512


@dataclass(frozen=True)
class _Slots:
    """The standardised noise of every release of one kind of law (normal, or Laplace) laid out by episode (rows, in
    the order of ``episodes``): one column per coordinate of each *slot* — a (family, mechanism, stage, occurrence in
    the episode) that recurs from episode to episode — and whether the slot was published at that episode."""

    values: np.ndarray   # (E, M), 0 where absent
    present: np.ndarray  # (E, M) bool
    episodes: np.ndarray  # (E,)
    labels: list[str]     # per column


def _slots(families: Sequence[_Family], laws: Sequence[str] = ("normal",)) -> _Slots | None:
    """The slots of the families whose law is one of ``laws``."""
    blocks = [(stack, z) for fam in families if fam.law in laws for stack, z in fam.blocks]
    if not blocks:
        return None
    episodes = np.unique(np.concatenate([stack.episodes for stack, _ in blocks]))
    labels: list[str] = []
    coordinates: list[int] = []
    placed = []  # per block: (rows, first column of each row's slot, width, noise)
    for stack, z in blocks:
        key = stack.episodes * (1 << 32) + stack.stages
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        starts = np.r_[0, np.flatnonzero(np.diff(sorted_key)) + 1]
        occurrence = np.empty(key.size, dtype=np.int64)
        occurrence[order] = np.arange(key.size) - np.repeat(starts, np.diff(np.r_[starts, key.size]))
        slot_keys, slot_of = np.unique(np.stack([stack.stages, occurrence], axis=1), axis=0, return_inverse=True)
        width = z.shape[1]
        first = len(labels)
        for stage, occ in slot_keys.tolist():
            labels += [f"{stack.family} (stage {stage}{f', #{occ + 1}' if occ else ''}, coordinate {c})"
                       for c in range(width)]
            coordinates += range(width)
        placed.append((np.searchsorted(episodes, stack.episodes), first + slot_of.ravel() * width, width, z))
    values = np.zeros((episodes.size, len(labels)))
    present = np.zeros((episodes.size, len(labels)), dtype=bool)
    for rows, columns, width, z in placed:
        cells = columns[:, None] + np.arange(width)
        values[rows[:, None], cells] = z
        present[rows[:, None], cells] = True
    coordinate = np.array(coordinates)
    keep = np.arange(len(labels))
    if len(labels) > MAX_SLOT_COLUMNS:  # each slot keeps its first coordinates
        keep = np.flatnonzero(coordinate < max(1, MAX_SLOT_COLUMNS // int(np.count_nonzero(coordinate == 0))))
    return _Slots(values[:, keep], present[:, keep], episodes, [labels[i] for i in keep])


def _run_wide_pairs(slots: _Slots, normal: bool = True) -> tuple[float, int, str]:
    """The run-wide independence test (module docstring): (the p-value of the most correlated pair of slot
    coordinates, at one episode or at consecutive episodes; the number of pairs tested; that pair described).
    ``normal``: the exact t test of normal noise; else the sign-symmetry bound of the self-normalised sum."""
    n_rows = slots.values.shape[0]
    pick = np.unique(np.linspace(0, n_rows - 1, min(n_rows, MAX_SLOT_EPISODES)).round().astype(int))
    follow = pick[pick + 1 < n_rows]
    follow = follow[slots.episodes[follow + 1] == slots.episodes[follow] + 1]
    best_p, best, count = 1.0, "", 0
    for rows_x, rows_y, lag in ((pick, pick, 0), (follow, follow + 1, 1)):
        if rows_x.size < 3:
            continue
        x, y = slots.values[rows_x], slots.values[rows_y]
        px, py = slots.present[rows_x], slots.present[rows_y]
        complete = bool(px.all() and py.all())
        for start in range(0, x.shape[1], _BLOCK):
            block = slice(start, start + _BLOCK)
            cross = x[:, block].T @ y
            if complete:
                n = np.full(cross.shape, float(rows_x.size))
                sx = np.broadcast_to(np.sum(x[:, block] ** 2, axis=0)[:, None], cross.shape)
                sy = np.broadcast_to(np.sum(y ** 2, axis=0)[None, :], cross.shape)
            else:
                n = px[:, block].T.astype(float) @ py.astype(float)
                sx = (x[:, block] ** 2).T @ py.astype(float)
                sy = px[:, block].T.astype(float) @ (y ** 2)
            valid = (n >= 3) & (sx > 0) & (sy > 0)
            if lag == 0:  # each unordered pair once, a coordinate not with itself
                valid &= np.arange(x.shape[1])[None, :] > np.arange(start, start + cross.shape[0])[:, None]
            squares = None if normal else (x[:, block] ** 2).T @ (y ** 2)  # Σxᵢ²yᵢ² (0 where either is absent)
            if squares is not None:
                valid &= squares > 0
            count += int(valid.sum())
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.clip(cross / np.sqrt(sx * sy), -1.0, 1.0)
                t = (np.abs(r) * np.sqrt(n - 1.0) / np.sqrt(1.0 - r * r) if squares is None
                     else np.abs(cross) / np.sqrt(squares))
            candidates = np.flatnonzero(valid & (t > 3.0))  # |t| ≤ 3 is never significant here (p > 0.0027)
            if not candidates.size:
                continue
            p = (2.0 * stats.t.sf(t.flat[candidates], n.flat[candidates] - 1.0) if squares is None
                 else np.minimum(1.0, 2.0 * np.exp(-0.5 * t.flat[candidates] ** 2)))
            i, j = np.unravel_index(candidates[int(np.argmin(p))], t.shape)
            if float(p.min()) < best_p:
                when = "at the same episode" if lag == 0 else "at consecutive episodes"
                best_p, best = float(p.min()), (f"{slots.labels[start + i]} and {slots.labels[j]} {when} (r = "
                                                f"{r[i, j]:.3g} over {int(n[i, j])} episodes)")
    return best_p, count, best


def _same_noise(recorded: Sequence[PublishedRelease], replay: Sequence[PublishedRelease]) -> list[str]:
    """Families whose noise did not change in a replay with other coins and another noise seed: per family, the
    releases whose kept noise (billboard-drawn) or value (self-noised: equal values mean equal noise, whatever
    the raw statistics did) is the same up to rounding, when at least two or all of them are."""
    out = []
    counts: dict[str, list[int]] = {}
    first: dict[str, str] = {}
    for stack in stacks(recorded)[0]:
        a, b = stack.noise(recorded), stack.noise(replay)
        values_a, values_b = stack.values(recorded), stack.values(replay)
        if a is None or b is None:
            a, b = values_a, values_b
        scale = np.maximum(np.abs(values_a), np.abs(values_b)).reshape(len(stack.index), -1).max(axis=1)
        tolerance = 16.0 * np.finfo(float).eps * np.maximum(1.0, scale)
        same = (np.abs(a - b).reshape(len(stack.index), -1).max(axis=1) <= tolerance)
        tally = counts.setdefault(stack.family, [0, 0])
        tally[0] += int(same.sum())
        tally[1] += same.size
        if same.any() and stack.family not in first:
            first[stack.family] = stack.label(int(np.flatnonzero(same)[0]))
    for family, (same_count, total) in counts.items():
        if same_count >= 2 or (same_count and same_count == total):
            out.append(f"{family}: {same_count} of {total} releases carry the same noise in a replay with other coins "
                       f"and another noise seed (first: {first[family]})")
    return out


# ---- accounting with the measured noise -----------------------------------------------------------------


def rescaled_ledger(ledger: PrivacyLedger, factors: dict[str, float]) -> PrivacyLedger:
    """The ledger with every mechanism of the families in ``factors`` given ``factor ×`` its noise scale."""
    out = PrivacyLedger(ledger.relation)
    for block in ledger.blocks:
        mechanism = block.mechanism
        factor = factors.get(block.family)
        if factor is not None:
            mechanism = type(mechanism).build(mechanism.sensitivity_value, mechanism.noise_scale * factor,
                                              mechanism.dim, mechanism.relation)
        out.record_block(block.family, block.episodes, block.stages, mechanism, block.users)
    return out


def _measured_epsilon(ledger: PrivacyLedger | None, factors: dict[str, float], delta: float, conversion: str,
                      accounting: str) -> float | None:
    """The ε of the ledger with the measured noise: by ``conversion`` where it applies, else the least of the
    routes that do (:mod:`dpverify.accounting`)."""
    if ledger is None or not factors:
        return None
    rescaled = rescaled_ledger(ledger, factors)
    if get_conversion(conversion).gaussian_only and not rescaled.all_gaussian:
        return tightest(epsilon_routes(rescaled, delta, accounting)).epsilon
    return float(rescaled.guarantee(delta, conversion, accounting).epsilon)


# ---- the check ------------------------------------------------------------------------------------------


def check_noise(recorded: Sequence[PublishedRelease], other: Sequence[PublishedRelease] | None = None, *,
                level: float = DEFAULT_LEVEL, ledger: PrivacyLedger | None = None, delta: float = 1e-5,
                conversion: str = "exact", accounting: str = "per-user",
                reseeded: Sequence[PublishedRelease] | None = None,
                replays: Sequence[Sequence[PublishedRelease]] = ()) -> NoiseCheck:
    """The noise check (module docstring) of a run's releases; ``other`` is the same-coins replay with another
    billboard noise seed, matched release by release (needed for self-noised releases only); ``reseeded`` a
    replay with other coins and another noise seed, which no noise may follow unchanged (freshness); ``replays``
    more same-coins replays with still other noise seeds, for the flip rate of self-noised randomized response
    (:func:`flip_runs` says how many).

    ``ledger`` (the recorded run's), ``delta``, ``conversion`` and ``accounting`` give the ε accounted with
    the measured noise for families with too little of it.
    """
    for run in (other, *replays):
        if run is not None and len(recorded) != len(run):
            return NoiseCheck(NOT_RUN, f"the runs made {len(recorded)} and {len(run)} releases", level)
    families, unobserved = _families(recorded, other, replays if other is not None else ())
    public = [] if reseeded is None or len(reseeded) != len(recorded) else _same_noise(recorded, reseeded)
    testable, not_run = _testable(families, {line.split(":")[0] for line in public}, reseeded is not None)
    not_run = unobserved + not_run
    if not testable and not public:
        return NoiseCheck(NOT_RUN, "; ".join(not_run) or "the agent published nothing", level,
                          not_checked=tuple(not_run))
    continuous = [fam for fam in testable if not fam.law.startswith(_RR)]
    run_wide = [(slots, normal) for slots, normal in ((_slots(continuous), True),
                                                        (_slots(continuous, _LAPLACE_LAWS), False))
                if slots is not None]
    n_tests = TESTS_PER_FAMILY * len(testable) + len(run_wide)
    share = level / max(n_tests, 1)
    results = [_family_result(fam, share, level) for fam in testable]
    duplicates = _duplicates(continuous)
    correlated: list[str] = []
    for slots, normal in run_wide:
        p, count, pair = _run_wide_pairs(slots, normal)
        if count and p < share / count:
            correlated.append(f"{pair}, p {'=' if normal else '≤'} {p:.2g} of {count} pairs tested")
    factors = {r.family: r.scale_upper for r in results if r.status == FAIL and r.scale_upper < 1.0}
    measured = _measured_epsilon(ledger, factors, delta, conversion, accounting)
    problems = [f"{r.family}: {r.detail}" for r in results if r.status == FAIL]
    not_run += [f"{r.family}: {r.detail}" for r, fam in zip(results, testable, strict=True)
                if r.status == NOT_RUN and fam.agreements]
    if duplicates:
        problems.append(f"{len(duplicates)} pair(s) of releases share a noise draw up to sign, e.g. {duplicates[0]}")
    if correlated:
        problems.append("the noise of two releases is correlated: " + correlated[0])
    if public:
        problems.append("no fresh noise: " + "; ".join(public) + ": it follows public quantities (the episode, the "
                        "stage, a fixed seed or the clock), not the seeds an auditor gives, so anyone who knows them "
                        "knows the noise")
    if measured is not None:
        problems.append(f"with the noise actually drawn the agent's own accounting gives ε = {measured:.4g}")
    status = FAIL if problems else (NOT_RUN if not_run else PASS)
    if problems:
        detail = "; ".join(problems)
    elif not_run:
        detail = "could not check " + "; ".join(not_run)
    else:
        detail = _passed(results, testable, level)
    return NoiseCheck(status, detail, level, tuple(results), tuple(duplicates), tuple(correlated), tuple(not_run),
                      measured, tuple(public))


def _testable(families: Sequence[_Family], stale: set[str], reseeded: bool) -> tuple[list[_Family], list[str]]:
    """The families the tests can read, and why the others cannot be: a self-noised family none of whose values
    changed with the billboard's noise seed (unless it is ``stale``: its noise follows no seed at all, a failure)."""
    testable: list[_Family] = []
    not_run: list[str] = []
    for fam in families:
        if not (fam.differences and fam.unchanged()[0] == fam.releases):
            testable.append(fam)
        elif fam.family not in stale:
            not_run.append(f"{fam.family}: no value changed with the billboard's noise seed" + (
                "; with other coins they did: its noise follows a generator of the agent's own, not "
                "billboard.noise_source() (draw it from noise_source(); for code that draws from numpy's global "
                "generator, seed that from it: dpverify.adapters.SeededGlobalRng)" if reseeded
                else " (its noise is not drawn from billboard.noise_source(), or it has none)"))
    return testable, not_run


#: The tests of a family (:func:`_tests_run`), in the order a report names them.
TEST_NAMES = ("scale", "shape", "kurtosis", "flip rate", "uniformity of the offsets", "independence across releases",
              "independence within releases")


def _tests_run(fam: _Family) -> tuple[set[str], set[str]]:
    """(the tests that ran, the tests that apply) on the family's values. A continuous law: the scale and shape
    tests always, the kurtosis test (normal law only) from :data:`MIN_KURTOSIS_VALUES` values; randomized
    response: the flip rate always, the offsets' uniformity where its χ² test can run (k > 2, five counts a
    value); either: each independence test from 4 pairs (two releases, two coordinates; randomized response is
    tested across releases only)."""
    if fam.law.startswith(_RR):
        applies = {"flip rate", "uniformity of the offsets", "independence across releases"}
        ran = {"flip rate"} | ({"uniformity of the offsets"} if not math.isnan(_uniform_offsets_p(fam)) else set())
    else:
        applies = {"scale", "shape", "independence across releases", "independence within releases"}
        applies |= {"kurtosis"} if fam.law == "normal" else set()
        ran = {"scale", "shape"} | ({"kurtosis"} if "kurtosis" in applies and fam.values.size >= MIN_KURTOSIS_VALUES
                                    else set())
    if _pairs(fam, 0)[0].size >= 4:
        ran.add("independence across releases")
    if "independence within releases" in applies and _pairs(fam, 1)[0].size >= 4:
        ran.add("independence within releases")
    return ran, applies


def _passed(results: Sequence[FamilyNoise], testable: Sequence[_Family], level: float) -> str:
    """What a passing check tested — and, where a flip-rate test was weak at the run's size, that it was: a pass
    claims no more than was tested."""
    said = (f"{sum(r.values for r in results)} noise values of {sum(r.releases for r in results)} releases "
            f"in {len(results)} families pass {_tests_said(testable)} and are independent across the run "
            f"(level {level:g})")
    weak = [r.family for r in results if "weak at this size" in r.detail]
    if weak:
        said += (f"; the flip-rate test of {', '.join(weak)} is weak at this size (power below {MIN_POWER:g} "
                 f"against twice the recorded ε₀; see the family): {POWERLESS_REMEDY}")
    return said


def _tests_said(families: Sequence[_Family]) -> str:
    """Which tests the families passed, and which could not run for too few values: a pass claims no more than
    was tested."""
    runs = [_tests_run(fam) for fam in families]
    counts = {t: sum(t in ran for ran, _ in runs) for t in TEST_NAMES}
    applied = {t: sum(t in applies for _, applies in runs) for t in TEST_NAMES}
    everywhere = [t for t in TEST_NAMES if applied[t] and counts[t] == applied[t]]
    said = "the " + (", ".join(everywhere[:-1]) + " and " if len(everywhere) > 1 else "") + everywhere[-1] + " tests"
    partly = [f"{t} in {counts[t]} of {applied[t]}" for t in TEST_NAMES if 0 < counts[t] < applied[t]]
    if partly:
        said += " (" + ", ".join(partly) + ")"
    untested = [t for t in TEST_NAMES if applied[t] and not counts[t]]
    if untested:
        said += "; not run, too few values: " + ", ".join(untested)
    return said


def _family_result(fam: _Family, share: float, level: float) -> FamilyNoise:
    z = fam.values
    law = fam.law
    kinds = sorted({stack.mechanism.kind for stack, _ in fam.blocks})
    base: dict[str, Any] = {"family": fam.family, "mechanism": ", ".join(kinds), "releases": fam.releases,
                            "values": int(z.size)}
    if law.startswith(_RR):
        return _flip_result(fam, share, base)
    problems: list[str] = []
    unchanged, first = fam.unchanged()
    if unchanged:
        what = "did not change with the noise seed" if fam.differences else "carry no noise"
        problems.append(f"{unchanged} release(s) {what} (first: {first})")
    unnoised = fam.unnoised_coordinates()
    if unnoised:
        problems.append(f"{unnoised} coordinate(s) published without noise")
    if z.size < MIN_VALUES:
        return FamilyNoise(**base, status=FAIL if problems else NOT_RUN,
                           detail="; ".join(problems) or f"only {z.size} noise values (at least {MIN_VALUES} needed)")
    scale = _normal_scale(z, share) if law == "normal" else _laplace_scale(z, share, law == "laplace-difference")
    excess = scale.p_large < share / 2.0
    p_shape = _shape_p(z[z != 0.0], law)
    p_kurtosis = _kurtosis_p(z[z != 0.0], law)
    p_across = _pearson_p(*_pairs(fam, 0))
    p_within = _pearson_p(*_pairs(fam, 1))
    notes: list[str] = []
    if scale.p_small < share / 2.0:
        problems.append(f"less noise than recorded: σ measured = {scale.ratio:.3g} × recorded (at most "
                        f"{scale.upper:.3g} ×, p = {scale.p_small:.2g})")
    elif excess:
        notes.append(f"more noise than recorded (σ measured = {scale.ratio:.3g} × recorded): the record understates "
                     "the noise, which does not harm the claim")
    if p_shape < share and not (law != "normal" and excess):
        problems.append(f"not distributed as the recorded {law.split('-')[0]} noise (KS p = {p_shape:.2g})")
    if p_kurtosis < share:
        kurtosis = float(stats.kurtosis(z[z != 0.0], fisher=False))
        problems.append(f"not normal: kurtosis {kurtosis:.3g} instead of 3 (p = {p_kurtosis:.2g})")
    if p_across < share:
        problems.append(f"consecutive releases' noise is correlated (p = {p_across:.2g})")
    if p_within < share:
        problems.append(f"a release's coordinates share noise (correlated, p = {p_within:.2g})")
    status = FAIL if problems else PASS
    detail = "; ".join(problems) if problems else (
        f"σ measured = {scale.ratio:.4g} × recorded ({scale.lower:.4g}–{scale.upper:.4g} at level {level:g}); "
        f"passes {_tests_said([fam])}" + ("; " + "; ".join(notes) if notes else ""))
    return FamilyNoise(**base, status=status, detail=detail, scale_ratio=scale.ratio, scale_lower=scale.lower,
                       scale_upper=scale.upper, p_small=scale.p_small, p_large=scale.p_large, p_shape=p_shape,
                       p_kurtosis=p_kurtosis, p_across=p_across, p_within=p_within)


# ---- randomized response ---------------------------------------------------------------------------------

_RR = "randomized-response"


def _flip_counts(fam: _Family, mechanism: Any, parts: list[np.ndarray], alpha: float) -> tuple[float, ...]:
    """(p of fewer flips, p of more flips, flips, flips expected, power) of one mechanism's coordinates: drawn
    offsets — the changed coordinates are Binomial(n, 1 − p) exactly; self-noised — the disagreeing pairs of
    ``fam.runs`` runs, from the agreement U-statistic's exact law through Chernoff's bound (:mod:`.rr_agreement`),
    with the power against ε₀ × :data:`~.rr_agreement.ALTERNATIVE_FACTOR` at ``alpha``."""
    keep, k = mechanism.keep_probability, mechanism.categories
    if not fam.differences:
        offsets = np.concatenate([b.ravel() for b in parts])
        n, changed, q = offsets.size, int(np.count_nonzero(offsets)), 1.0 - keep
        return (float(stats.binom.cdf(changed, n, q)), float(stats.binom.sf(changed - 1, n, q)), changed, n * q,
                math.nan)
    t = np.concatenate([b.ravel() for b in parts])
    pmf, pairs = agreement_pmf(keep, k, fam.runs), math.comb(fam.runs, 2)
    n, agreeing = t.size, float(t.sum())
    alternative = type(mechanism)(1, ALTERNATIVE_FACTOR * mechanism.local_epsilon, 1, k).keep_probability
    return (upper_tail(pmf, n, agreeing), lower_tail(pmf, n, agreeing), n * pairs - agreeing,
            n * (pairs - float(pmf @ np.arange(pmf.size))), power(keep, alternative, k, fam.runs, n, alpha))


def _epsilon_of(mechanism: Any, disagreeing: float, pairs: float) -> float:
    """The ε₀ whose keep probability p ≥ 1/k gives the observed agreement rate a = p² + (1 − p)²/(k − 1):
    p = (1 + √((k − 1)(ka − 1)))/k (0 when a ≤ 1/k: no sign of kept categories)."""
    k, a = mechanism.categories, 1.0 - disagreeing / pairs
    if a * k <= 1.0:
        return 0.0
    p = min((1.0 + math.sqrt((k - 1) * (k * a - 1.0))) / k, 1.0)
    return math.inf if p >= 1.0 else math.log(p * (k - 1) / (1.0 - p))


def _flip_result(fam: _Family, share: float, base: dict[str, Any]) -> FamilyNoise:
    """The flip, uniformity and independence tests of a randomized-response family (module docstring); the flip
    test's share is split over the family's mechanisms (each has its own flip probability). A self-noised family
    whose flip-rate test has power below :data:`~.rr_agreement.MIN_POWER` against twice the recorded ε₀ at the run
    cap passes what it tested, and its detail says how weak the test is and what would strengthen it (a correct
    agent that follows the protocol is never left undecided for the size of its run)."""
    by_mechanism: dict[Any, list[np.ndarray]] = {}
    for i, (stack, z) in enumerate(fam.blocks):
        by_mechanism.setdefault(stack.mechanism, []).append(fam.agreements[i] if fam.differences else z)
    problems: list[str] = []
    notes: list[str] = []
    weak: list[str] = []
    small = large = 1.0
    flips = expected = 0.0
    alpha = share / (2.0 * len(by_mechanism))
    for mechanism, parts in by_mechanism.items():
        p_small, p_large, changed, mean, strength = _flip_counts(fam, mechanism, parts, alpha)
        small, large = min(small, p_small), min(large, p_large)
        flips, expected = flips + changed, expected + mean
        what = (f"{changed:.0f} disagreeing pairs of {fam.runs} runs, {mean:.6g} expected" if fam.differences
                else f"{changed:.0f} of {sum(p.size for p in parts)} coordinates changed, {mean:.4g} expected")
        coordinates = sum(p.size for p in parts)
        said = f"ε₀ = {mechanism.local_epsilon:g}, k = {mechanism.categories}"
        if fam.differences:
            said += f"; measured ε₀ ≈ {_epsilon_of(mechanism, changed, coordinates * math.comb(fam.runs, 2)):.3g}"
        if p_small < alpha:
            problems.append(f"less noise than recorded: {what} ({said}; p ≤ {p_small:.2g})")
        elif p_large < alpha:
            notes.append(f"more noise than recorded ({what}): the record understates the noise, which does not harm "
                         "the claim")
        if fam.differences and strength < MIN_POWER:
            weak.append(f"{fam.runs} runs over {coordinates} coordinates at ε₀ = "
                        f"{mechanism.local_epsilon:g}, k = {mechanism.categories} see ε₀ × {ALTERNATIVE_FACTOR:g} "
                        f"with probability {strength:.2g} only")
        elif fam.differences:
            notes.append(f"{fam.runs} runs: power {strength:.3g} against ε₀ × {ALTERNATIVE_FACTOR:g}")
    p_uniform = _uniform_offsets_p(fam)
    if p_uniform < share:
        problems.append("the changed coordinates' offsets are not uniform on the other categories "
                        f"(p = {p_uniform:.2g})")
    x, y = _pairs(fam, 0)
    p_across = _pearson_p((x != 0).astype(float), (y != 0).astype(float))
    if p_across < share:
        problems.append(f"consecutive releases' flips are correlated (p = {p_across:.2g})")
    ratio = flips / expected if expected > 0 else math.nan
    flipped = "disagreeing pairs of runs" if fam.differences else "coordinates changed"
    detail = "; ".join(problems) if problems else (
        f"{int(flips)} {flipped}, {expected:.6g} expected ({ratio:.4g} ×); independent"
        + ("; " + "; ".join(notes) if notes else ""))
    if weak and not problems:  # passed, and says how little the pass shows: never more than was tested
        detail += ("; the flip-rate test is weak at this size — it would see a keep probability of twice the "
                   "recorded ε₀ with power below " + f"{MIN_POWER:g}: " + "; ".join(weak) + "; " + POWERLESS_REMEDY)
    return FamilyNoise(**base, status=FAIL if problems else PASS, detail=detail,
                       scale_ratio=ratio, p_small=small, p_large=large, p_shape=p_uniform, p_across=p_across)


#: What an agent whose self-noised randomized response the check cannot test can do.
POWERLESS_REMEDY = ("publish it with billboard.publish, whose drawn offsets the check sees exactly, or check more "
                    "coordinates or runs (more episodes, a larger budget, WhiteBoxPlan.max_noise_runs)")


def flip_runs(recorded: Sequence[PublishedRelease], level: float, cap: int) -> list[RunsPlan]:
    """The runs the flip-rate test of each self-noised randomized-response mechanism of ``recorded`` needs
    (:func:`~.rr_agreement.runs_needed`, at most ``cap``), at a share of ``level`` no larger than
    :func:`check_noise` gives it (every family counted as tested)."""
    found, _ = stacks(recorded)
    mechanisms: dict[str, set[Any]] = {}
    for stack in found:
        mechanisms.setdefault(stack.family, set()).add(stack.mechanism)
    share = level / (TESTS_PER_FAMILY * len(mechanisms) + 2)
    coordinates: dict[tuple[str, Any], int] = {}
    for stack in found:
        if stack.mechanism.noise_law == _RR and stack.noise(recorded) is None:
            key = (stack.family, stack.mechanism)
            coordinates[key] = coordinates.get(key, 0) + int(stack.values(recorded).size)
    return [runs_needed(mechanism, n, share / (2.0 * len(mechanisms[family])), cap)
            for (family, mechanism), n in coordinates.items()]


def _uniform_offsets_p(fam: _Family) -> float:
    """χ² p-value that the non-zero offsets are uniform on 1..k−1, per number of categories (the least); NaN
    when no group has five expected counts per value (k = 2: nothing to test)."""
    groups: dict[int, list[np.ndarray]] = {}
    for stack, z in fam.blocks:
        mechanism: Any = stack.mechanism  # a RandomizedResponse (the family's law says so)
        groups.setdefault(int(mechanism.categories), []).append(z.ravel())
    p = math.nan
    for k, parts in groups.items():
        offsets = np.concatenate(parts)
        offsets = offsets[offsets != 0].astype(np.int64)
        if k <= 2 or offsets.size < 5 * (k - 1):
            continue
        counts = np.bincount(offsets, minlength=k)[1:]
        value = float(stats.chisquare(counts).pvalue)
        p = value if math.isnan(p) else min(p, value)
    return p
