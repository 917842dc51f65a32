"""Privacy loss distributions (PLDs) of mixed compositions, discretised on the safe side, and dp-accounting interop.

A release's privacy loss under its :class:`~dpverify.mechanisms.DominatingPair` (P, Q) is L = log(dP/dQ)
at an output drawn from P; the composition's loss is the sum of independent losses, and its privacy profile
is δ(ε) = P(L = ∞) + E[(1 − e^{ε − L})₊] (Meiser & Mohammadi 2018; Koskela, Jälkö & Honkela 2020; Doroshenko,
Ghazi, Kamath, Kumar & Manurangsi 2022). Rounding every loss *up* to a grid can only raise δ(ε) (the integrand
grows with L), so a PLD discretised that way gives an ε never below the truth ("pessimistic"); rounding down
gives a lower bound ("optimistic").

:func:`composed_epsilon` composes what one user's releases amount to:

- the Gaussian releases as *one* Gaussian, μ² = Σμᵢ² (exact: Dong, Roth & Su 2019, Corollary 3.3);
- each group of identical pure pairs as one PLD on a grid fitted to the pair: n binary randomized responses
  exactly (their loss ε(n − 2b), b binomial, lies on the grid ε); k-ary ones and Laplace pairs by an FFT power
  on a Chernoff window (the self-composition of Doroshenko et al. 2022 that Google's dp-accounting uses), a
  k-ary pair's losses ±ε, 0 exactly on the grid ε, a Laplace pair's atoms ±ε0 exactly on the grid ε0/2^j (a
  power of two divides a float exactly) with only its continuous part rounded — by less than a cell on a mass
  of (1 − e^{−ε0})/2, a relative error ≈ 2^{−j−1} of the ε;
- then every group is rounded once to a common power-of-two grid (:data:`GRID_PRECISION` of the ε) and the
  groups are convolved, the Gaussian discretised on that grid.

So a group of n releases costs one rounding, not n: the ε stays within a few 10⁻³ of the exact one where a
per-event PLD on a fixed grid drifts with n. The floating-point error of each FFT is bounded
(:func:`_fft_allowance`) and added to δ (subtracted for the optimistic bound); below the δ that bound allows,
the route reports ∞ and stands aside.

dp-accounting is the independent reference and the interop: :func:`dp_events` states one user's releases as its
``DpEvent``s, :func:`dp_accounting_epsilon` composes them with its own PLDs (imported lazily: never on the
start-up path of the command line).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import signal, special

from dpverify.conversions import DELTA_SAFETY
from dpverify.errors import NumericalError
from dpverify.mechanisms import DominatingPair
from dpverify.numerics import round_down, round_up

_U = 2.0**-53  # unit roundoff
#: Mass a part may truncate from its tails, relative to δ (counted at loss ∞, or dropped for a lower bound).
TAIL_MASS = 1e-10
#: The most cells of one group's self-composed PLD; the Laplace grid is coarsened until it fits.
MAX_GROUP_CELLS = 1 << 20
#: The most cells of the composed PLD; the common grid is coarsened until it fits.
MAX_CELLS = 1 << 22
#: Relative precision the common grid aims at: rounding each of G groups once moves ε by < GRID_PRECISION·ε·G/(G+1).
GRID_PRECISION = 2e-3
#: The finest Laplace grid, ε0/2^j, j ≤ this.
MAX_LAPLACE_LEVEL = 7


@dataclass(frozen=True)
class _Pmf:
    """Masses ``probs`` at losses (lower + i)·step, and the mass at loss ∞; ``error``: a bound on the total
    floating-point error of ``probs`` (an ℓ1 norm)."""

    step: float
    lower: int
    probs: np.ndarray
    infinity: float
    error: float


def _fft_allowance(length: int, power: int) -> float:
    """A bound on Σ|error| of an FFT convolution raised to ``power`` over ``length`` cells, for inputs of unit
    mass: the FFT's relative error is O(u·log₂L) per coefficient (Higham 2002, §24.1), raising to the n-th power
    multiplies it by n, |x̂| ≤ 1, Parseval, and ‖e‖₁ ≤ √L‖e‖₂ — with a factor 4 of room. Checked against exact
    binomial composition in tests/dpverify/test_pld.py."""
    return 4.0 * _U * math.sqrt(length) * (power + 5.0 * math.log2(max(length, 2)))


def _chernoff_window(base: np.ndarray, n: int, tail: float) -> tuple[int, int]:
    """Indices [first, last] of the n-fold sum of draws from ``base`` (masses at 0..m−1) outside which each tail
    holds at most tail/2: by the Chernoff bound P(S ≥ a) ≤ e^{n·K(t) − t·a} for t > 0 (and its mirror for t < 0),
    K the log moment generating function, at a few orders t around the optimal one of an n-fold sum
    (≈ ±8/(√n·sd)) — the window of Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022 (dp-accounting's
    ``compute_self_convolve_bounds``), evaluated at once."""
    index = np.arange(base.size)
    mean = float(base @ index)
    sd = math.sqrt(max(float(base @ (index - mean) ** 2), 1e-300))
    scale = 8.0 / (math.sqrt(n) * sd)
    orders = np.geomspace(0.2 * scale, min(5.0 * scale, 700.0 / max(base.size, 1)), 6)
    orders = np.concatenate([orders, -orders])
    with np.errstate(divide="ignore"):
        log_mgf = special.logsumexp(np.outer(orders, index), b=base, axis=1)
    bounds = (n * log_mgf + math.log(2.0 / tail)) / orders
    positive = orders > 0
    last = min((base.size - 1) * n, math.ceil(float(np.min(bounds[positive]))))
    first = max(0, math.floor(float(np.max(bounds[~positive]))))
    return first, max(first, last)


def _self_compose(base: np.ndarray, lower: int, step: float, n: int, pessimistic: bool, tail: float) -> _Pmf:
    """n-fold self-composition of the masses ``base`` at (lower + i)·step: the FFT raised to the n-th power, on
    the Chernoff window outside which at most ``tail`` lies (:func:`_chernoff_window`)."""
    if n == 1:
        return _Pmf(step, lower, base, 0.0, 0.0)
    from scipy import fft

    first, last = _chernoff_window(base, n, tail)
    length = last - first + 1
    size = fft.next_fast_len(max(length, base.size))
    probs = np.roll(fft.irfft(fft.rfft(base, size) ** n, size), -first)[:length]
    error = _fft_allowance(size, n)
    # The truncated tails (≤ tail) wrap into the window: count them at ∞ (or as float error, for a lower bound).
    return _Pmf(step, lower * n + first, np.clip(probs, 0.0, None), tail if pessimistic else 0.0,
                error + (0.0 if pessimistic else tail))


def _randomized_response(pair: DominatingPair, n: int, pessimistic: bool, tail: float) -> _Pmf:
    """n k-RR pairs: losses +ε (the input), −ε (the neighbour's input), 0 (the k − 2 others), on the grid ε. For
    k = 2 the n-fold PMF is binomial (loss ε(n − 2b) with b ~ Binomial(n, 1/(1 + e^ε))), taken exactly within 40
    standard deviations; beyond, the high losses' mass goes to ∞ and the low ones' to the lowest cell (or both
    are dropped). For k > 2 the FFT power of the three-point PMF."""
    eps, k = pair.parameter, pair.categories
    q = 1.0 / (math.exp(eps) + k - 1.0) if eps < 700 else 0.0
    keep = 1.0 / (1.0 + (k - 1.0) * math.exp(-eps))
    if k > 2 or n == 1:
        return _self_compose(np.array([q, (k - 2.0) * q, keep]), -1, eps, n, pessimistic, tail)
    from scipy import stats

    spread = 40.0 * math.sqrt(n * q * (1.0 - q)) + 1.0
    first, last = max(0, math.floor(n * q - spread)), min(n, math.ceil(n * q + spread))
    b = np.arange(last, first - 1, -1)  # increasing loss n − 2b
    probs = np.zeros(2 * (last - first) + 1)
    probs[::2] = stats.binom.pmf(b, n, q)
    high = float(stats.binom.cdf(first - 1, n, q)) if first > 0 else 0.0  # b < first: losses above the window
    low = float(stats.binom.sf(last, n, q)) if last < n else 0.0  # b > last: below it
    if pessimistic:
        probs[0] += low
    # scipy's binomial masses are accurate to a few ulps each: 64 ulps of their sum bound the error
    return _Pmf(eps, n - 2 * last, probs, high if pessimistic else 0.0, 64.0 * _U)


def _laplace_level(pair: DominatingPair, n: int) -> int:
    """j of the Laplace grid ε0/2^j: as fine as :data:`MAX_LAPLACE_LEVEL`, coarse enough that the n-fold PLD
    (about 16√n·ε0 wide, the Chernoff window) fits in :data:`MAX_GROUP_CELLS` cells."""
    level = MAX_LAPLACE_LEVEL
    while level > 1 and 16.0 * math.sqrt(n) * (1 << level) + (2 << level) > MAX_GROUP_CELLS:
        level -= 1
    return level


def _laplace(pair: DominatingPair, n: int, pessimistic: bool, tail: float) -> _Pmf:
    """n Laplace pairs Lap(0, 1) vs Lap(ε0, 1). The loss of one is ε0 with mass ½ (outputs ≤ 0), −ε0 with mass
    e^{−ε0}/2 (outputs ≥ ε0) and ε0 − 2x in between (x the output, density e^{−x}/2): the mass of the loss in
    (a, c] ⊂ (−ε0, ε0) is ½(e^{(c−ε0)/2} − e^{(a−ε0)/2}). On the grid ε0/2^j each cell's mass goes to its upper
    end (pessimistic) or its lower end."""
    eps = pair.parameter
    cells = 1 << _laplace_level(pair, n)
    step = eps / cells  # exact: a division by a power of two
    edges = np.arange(-cells, cells + 1) * step  # exact multiples of the step
    middle = 0.5 * np.exp((edges[1:] - eps) / 2.0) * -math.expm1(-step / 2.0)  # mass of each open cell
    probs = np.zeros(2 * cells + 1)
    probs[0] += 0.5 * math.exp(-eps)
    probs[-1] += 0.5
    if pessimistic:
        probs[1:] += middle
    else:
        probs[:-1] += middle
    return _self_compose(probs, -cells, step, n, pessimistic, tail)


def _gaussian(mu: float, step: float, pessimistic: bool, tail: float) -> _Pmf:
    """N(0, 1) vs N(μ, 1): the loss is N(μ²/2, μ²); its mass in each cell of ``step`` goes to the cell's upper
    (pessimistic) or lower end; beyond the window of mass ``tail`` on each side, the upper tail goes to ∞ and
    the lower one to the first cell (or both are dropped)."""
    centre, spread = mu * mu / 2.0, mu
    reach = max(6.0, -float(special.ndtri(tail)))
    low = math.floor((centre - reach * spread) / step)
    high = math.ceil((centre + reach * spread) / step)
    z = ((np.arange(low, high + 1) * step) - centre) / spread
    # Φ(z_i) − Φ(z_{i−1}) from the tail on each side (no cancellation)
    upper_tail = special.ndtr(-z)
    lower_tail = special.ndtr(z)
    mass = np.where(z[1:] <= 0, lower_tail[1:] - lower_tail[:-1], upper_tail[:-1] - upper_tail[1:])
    probs = np.zeros(z.size)
    if pessimistic:
        probs[1:] = mass
        probs[0] = lower_tail[0]
    else:
        probs[:-1] = mass
    beyond = float(upper_tail[-1])
    return _Pmf(step, low, np.clip(probs, 0.0, None), beyond if pessimistic else 0.0, 64.0 * _U * z.size)


def _on_grid(pmf: _Pmf, step: float, pessimistic: bool) -> _Pmf:
    """The PMF with every loss rounded up (pessimistic) or down to a multiple of ``step``. Both steps are a
    float times a power of two, so their ratio is exact; the product with the index is nudged outward by 2⁻⁴⁰
    relative, far past its rounding."""
    if pmf.step == step:
        return pmf
    position = (pmf.lower + np.arange(pmf.probs.size)) * (pmf.step / step)
    nudge = 2.0**-40 * np.abs(position)
    index = (np.ceil(position + nudge) if pessimistic else np.floor(position - nudge)).astype(np.int64)
    lower = int(index[0])
    probs = np.bincount(index - lower, weights=pmf.probs)
    # each new cell sums at most ⌈step/pmf.step⌉ + 1 positive masses: its rounding is that many ulps of it
    return _Pmf(step, lower, probs, pmf.infinity,
                pmf.error + _U * (step / pmf.step + 2.0) * float(probs.sum()))


def _convolve(a: _Pmf, b: _Pmf) -> _Pmf:
    probs = signal.fftconvolve(a.probs, b.probs)
    error = a.error + b.error + _fft_allowance(probs.size, 2)
    infinity = a.infinity + b.infinity - a.infinity * b.infinity
    return _Pmf(a.step, a.lower + b.lower, np.clip(probs, 0.0, None), infinity, error)


def _epsilon_of(pmf: _Pmf, delta: float, pessimistic: bool) -> float:
    """The root ε ≥ 0 of F(ε) = P(∞) + Σ_{ℓᵢ > ε} wᵢ(1 − e^{ε − ℓᵢ}) = δ, moved by the margins to the safe side:
    for an upper bound (``pessimistic``) δ is lowered by DELTA_SAFETY relative, the PMF's float error and the
    rounding of the suffix sums near the root (≤ 2Lu of them), and the root rounded up; for a lower bound δ is
    raised by as much and the root rounded down.

    F is decreasing and, between consecutive losses ℓ_{k−1} < ε ≤ ℓ_k, equal to P(∞) + S1_k − e^{ε−c}·S2_k with
    the suffix sums S1_k = Σ_{i≥k} wᵢ and S2_k = Σ_{i≥k} wᵢe^{c−ℓᵢ} (c the least loss ≥ 0, so no term exceeds
    wᵢ): the root is located on the grid, then solved in closed form."""
    margin = delta * DELTA_SAFETY + pmf.error
    all_losses = (pmf.lower + np.arange(pmf.probs.size)) * pmf.step
    start = int(np.searchsorted(all_losses, 0.0))  # the losses ≥ 0: only they count at ε ≥ 0
    losses, probs = all_losses[start:], pmf.probs[start:]
    if probs.size == 0:
        return 0.0 if delta - margin - pmf.infinity >= 0 or not pessimistic else math.inf
    c = float(losses[0])
    if float(losses[-1]) - c > 700.0:
        raise NumericalError("the composed privacy losses span more than 700: no finite ε to report")
    s1 = np.cumsum(probs[::-1])[::-1]
    s2 = np.cumsum((probs * np.exp(c - losses))[::-1])[::-1]
    at_grid = np.append(s1[1:], 0.0) - np.exp(losses - c) * np.append(s2[1:], 0.0)  # F(ℓ_k) − P(∞)
    at_zero = float(s1[0]) - math.exp(-c) * float(s2[0])
    summed = 2.0 * _U * probs.size  # the relative rounding of a suffix sum of ≤ L positive terms
    base = delta + (-margin if pessimistic else margin) - pmf.infinity
    k = _root_cell(at_grid, base)
    for _ in range(4):  # the sums' rounding is relative to the suffix at the root (the larger, the earlier cell)
        target = base + (-1.0 if pessimistic else 1.0) * summed * float(s1[k])
        moved = _root_cell(at_grid, target)
        if moved >= k:
            break
        k = moved
    if target < 0:
        return math.inf
    if at_zero <= target:
        return 0.0  # F(0) ≤ δ
    k = _root_cell(at_grid, target)  # F at the largest loss is P(∞) ≤ δ: some k qualifies
    low = float(losses[k - 1]) if k > 0 else 0.0
    ratio = (float(s1[k]) - target) / float(s2[k]) if s2[k] > 0 else 0.0
    epsilon = c + math.log(ratio) if ratio > 0 else low
    epsilon = min(max(epsilon, low), float(losses[k]))
    return round_up(epsilon, 4) if pessimistic else max(0.0, round_down(epsilon, 4))


def _root_cell(at_grid: np.ndarray, target: float) -> int:
    """The first cell k with F(ℓ_k) − P(∞) ≤ target (the last cell when target < 0)."""
    meets = at_grid <= target
    return int(np.argmax(meets)) if meets.any() else at_grid.size - 1


def _common_step(estimate: float, groups: int) -> float:
    """A power of two below GRID_PRECISION·ε/(groups + 1): rounding every group once moves ε by less."""
    scale = max(estimate, 1e-3) * GRID_PRECISION / (groups + 1)
    return 2.0 ** math.floor(math.log2(scale))


def composed_epsilon(gaussian_mu: float, groups: Sequence[tuple[DominatingPair, int]], delta: float,
                     estimate: float, pessimistic: bool = True) -> float:
    """ε at δ of one Gaussian with ``gaussian_mu`` (0: none) composed with ``count`` releases of each pure pair
    (module docstring): an upper bound (``pessimistic``) or a lower bound of the composition's ε. ``estimate``:
    an upper bound of the ε, which sets the common grid (refined once from the ε found, when coarser than
    :data:`GRID_PRECISION` of it)."""
    parts: list[_Pmf] = []
    tail = TAIL_MASS * delta / (len(groups) + 1)
    for pair, count in groups:
        if count <= 0:
            continue
        if pair.law == "laplace":
            parts.append(_laplace(pair, count * pair.copies, pessimistic, tail))
        elif pair.law == "randomized-response":
            parts.append(_randomized_response(pair, count * pair.copies, pessimistic, tail))
        else:
            raise NumericalError(f"a {pair.law} pair is not a pure group")
    if not parts and gaussian_mu <= 0:
        return 0.0
    if len(parts) == 1 and gaussian_mu <= 0:
        return _epsilon_of(parts[0], delta, pessimistic)  # on its own grid: no rounding at all
    count = len(parts) + (gaussian_mu > 0)
    step = _common_step(estimate, count)
    epsilon = _composed_on(parts, gaussian_mu, step, delta, pessimistic, tail)
    finer = _common_step(epsilon, count) if math.isfinite(epsilon) else step
    if finer < step:
        again = _composed_on(parts, gaussian_mu, finer, delta, pessimistic, tail)
        epsilon = min(epsilon, again) if pessimistic else max(epsilon, again)  # both are bounds
    return epsilon


def _composed_on(parts: list[_Pmf], gaussian_mu: float, step: float, delta: float, pessimistic: bool,
                 tail: float) -> float:
    """The parts rounded to a common grid (as fine as ``step``, coarser until :data:`MAX_CELLS` fit), with the
    Gaussian, convolved; their ε at δ."""
    while sum(p.probs.size * p.step for p in parts) / step + 20.0 * gaussian_mu / step > MAX_CELLS:
        step *= 2.0
    grid = [_on_grid(p, step, pessimistic) for p in parts]
    if gaussian_mu > 0:
        grid.append(_gaussian(gaussian_mu, step, pessimistic, tail))
    total = grid[0]
    for part in grid[1:]:
        total = _convolve(total, part)
    return _epsilon_of(total, delta, pessimistic)


# ------------------------------------------------------------------------------------------------------------
# Interop with dp-accounting


def pair_event(pair: DominatingPair, count: int = 1) -> Any:
    """The dp-accounting ``DpEvent`` of ``count`` releases with this dominating pair: a Gaussian with noise
    multiplier 1/μ, a Laplace with noise multiplier 1/ε0 (sensitivity 1 in dp-accounting's terms), a k-ary
    randomized response with noise parameter k/(e^ε + k − 1) (dp-accounting's randomized response outputs a
    uniform bucket with that probability), self-composed ``count``·copies times."""
    import dp_accounting

    if pair.law == "gaussian":
        event = dp_accounting.GaussianDpEvent(1.0 / pair.parameter)
    elif pair.law == "laplace":
        event = dp_accounting.LaplaceDpEvent(1.0 / pair.parameter)
    else:
        k = pair.categories
        event = dp_accounting.RandomizedResponseDpEvent(k / (math.exp(pair.parameter) + k - 1.0), k)
    total = count * pair.copies
    return event if total == 1 else dp_accounting.SelfComposedDpEvent(event, total)


def dp_events(gaussian_mu: float, groups: Sequence[tuple[DominatingPair, int]]) -> Any:
    """One user's releases as a dp-accounting ``ComposedDpEvent``: the Gaussian part as one Gaussian event
    (μ² = Σμᵢ²), each pure group as a self-composed event (:func:`pair_event`)."""
    import dp_accounting

    events = [pair_event(DominatingPair("gaussian", gaussian_mu))] if gaussian_mu > 0 else []
    events += [pair_event(pair, count) for pair, count in groups if count > 0]
    return dp_accounting.ComposedDpEvent(events)


def dp_accounting_epsilon(event: Any, delta: float, pessimistic: bool = True,
                          value_discretization_interval: float = 1e-4) -> float:
    """ε at δ of a ``DpEvent`` made by :func:`dp_events`, composed by dp-accounting's own PLDs on its fixed grid:
    Gaussian and Laplace events as its add/remove PLDs of sensitivity 1 (the pairs 0 vs 1), randomized response
    as its replace-one PLD (input vs another input), every self-composition by ``self_compose`` (dp-accounting
    0.6's ``PLDAccountant`` drops the count of a self-composed randomized response, so the events are walked
    here). An independent reference for :func:`composed_epsilon`."""
    import dp_accounting
    from dp_accounting.pld import privacy_loss_distribution as pld

    grid = value_discretization_interval

    def build(e: Any) -> Any:
        if isinstance(e, dp_accounting.ComposedDpEvent):
            if not e.events:
                raise NumericalError("an empty ComposedDpEvent has no PLD to compose")
            out = build(e.events[0])
            for inner in e.events[1:]:
                out = out.compose(build(inner))
            return out
        if isinstance(e, dp_accounting.SelfComposedDpEvent):
            if isinstance(e.event, dp_accounting.GaussianDpEvent):
                return build(dp_accounting.GaussianDpEvent(e.event.noise_multiplier / math.sqrt(e.count)))
            return build(e.event).self_compose(e.count)
        if isinstance(e, dp_accounting.GaussianDpEvent):
            return pld.from_gaussian_mechanism(e.noise_multiplier, pessimistic_estimate=pessimistic,
                                               value_discretization_interval=grid)
        if isinstance(e, dp_accounting.LaplaceDpEvent):
            return pld.from_laplace_mechanism(e.noise_multiplier, pessimistic_estimate=pessimistic,
                                              value_discretization_interval=grid, use_connect_dots=pessimistic)
        if isinstance(e, dp_accounting.RandomizedResponseDpEvent):
            return pld.from_randomized_response(e.noise_parameter, e.num_buckets, pessimistic_estimate=pessimistic,
                                                value_discretization_interval=grid)
        raise NumericalError(f"no PLD for the event {type(e).__name__}")

    return float(build(event).get_epsilon_for_delta(delta))
