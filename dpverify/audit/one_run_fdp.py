"""One-run audits against a claimed trade-off curve: Mahloujifar, Melis & Chaudhuri (2025), "Auditing
f-differential privacy in one run" (ICML 2025).

The game is the one of :mod:`dpverify.audit.one_run` (Steinke, Nasr & Jagielski 2023): m canaries, canary i
in or out by an independent fair coin S_i, ONE run of the mechanism, k guesses fixed in number before the
output is seen (abstaining on the rest), C of them correct. Steinke et al. bound P[C ≥ v] from an (ε, δ)
claim; here the bound comes from the claimed trade-off curve f (Dong, Roth & Su 2022: every test of
"S_i = 0" against "S_i = 1" at type-I error α has type-II error ≥ f(α)). For a Gaussian mechanism the curve
of μ-GDP is far tighter than any (ε, δ) pair, and so is the audit.

**The bound** (our derivation, along the lines of Mahloujifar et al. 2025, Section 4). Write
g(α) = 1 − f(α), the most power a test at level α can have (concave and non-decreasing, as f is convex and
non-increasing), and α(y) = inf{α : g(α) ≥ y} its inverse (convex). Fix u ≥ 1 and canary i; condition on
all other coins S_{−i}. The auditor's guesses T and the number C_{−i} of correct guesses on the *other*
canaries are functions of the output and S_{−i}, so "guess 1 on i and C_{−i} ≥ u − 1" is a test of S_i = 0
against S_i = 1, and "guess 0 on i and C_{−i} ≥ u − 1" one of S_i = 1 against S_i = 0 (the relation is
symmetric, so f bounds both). Their level is the probability of a *wrong* guess on i together with the
event, their power that of a *right* one; averaging the two (the coin is fair) and using concavity of g
twice (over the two tests and over S_{−i}), then over the m canaries (Jensen):

    A_u ≤ m · g(B_{u−1} / m),   A_u = E[C · 1{C ≥ u}],   B_{u−1} = E[(k − C) · 1{C ≥ u − 1}],

since a right guess on i with C_{−i} ≥ u − 1 means C ≥ u, and a wrong one means C = C_{−i}. These k
constraints, linear in the law p_0..p_k of C (with Σ p = 1), cut out a convex set; the largest P[C ≥ v]
over it bounds the probability of v or more correct guesses under the claim.

**Two routes to that maximum**, tested for agreement:

* :func:`_least_mass` (fast, used by the audits): put the mass τ at C = v exactly (mass above v only adds
  right guesses) and, going down u = v … 1, the least mass at C = u − 1 that satisfies constraint u; the
  claim allows P[C ≥ v] = τ only if that total mass is ≤ 1, so "P[C ≥ v] ≤ α under the claim" holds when
  the least mass for τ = α exceeds 1. α(·) is evaluated slightly low (:data:`RELATIVE_SAFETY`), which can
  only lower the mass and so only make the test more cautious.
* :func:`tail_bound_lp`: the maximum of the linear programme whose constraints are tangents of g
  (a relaxation of the convex set, so every iterate is a valid upper bound), refined by cutting planes.

A test that rejects the claim when the least mass at τ = α exceeds 1 errs with probability ≤ α; larger μ
(or ε) gives a larger g and a smaller least mass, so the rejected claims form an interval and the largest
rejected μ is a lower bound on the true μ with confidence 1 − α (:func:`fdp_one_run_mu_lower_bound`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from scipy import optimize, special

from dpverify import _validate
from dpverify.audit.one_run import _check_counts
from dpverify.errors import InvalidParameterError, NumericalError

#: The method name of the f-DP one-run analysis.
FDP_ONE_RUN_METHOD = "one-run f-DP (Mahloujifar, Melis & Chaudhuri 2025)"
#: α(y) is multiplied by 1 − RELATIVE_SAFETY: a smaller α(y) lowers the least mass (cautious test).
RELATIVE_SAFETY = 1e-10
#: The largest μ (and ε) the lower-bound searches look at; a count rejecting it reports it (conservative).
_MU_SEARCH_MAX = 64.0
#: The searches over μ, ε and τ: grids of GRID points, _PASSES times refined (resolution range / 32⁵).
GRID = 33
_PASSES = 5


class TradeOffCurve(Protocol):
    """A claimed trade-off curve f, given through g = 1 − f and its inverse (module docstring)."""

    @property
    def label(self) -> str:
        """How the claim reads ("1-GDP", "(1, 1e-05)-DP")."""
        ...

    def power(self, alpha: np.ndarray) -> np.ndarray:
        """g(α): the largest power of a test at type-I error α under the claim."""
        ...

    def least_alpha(self, power: np.ndarray) -> np.ndarray:
        """α(y) = inf{α : g(α) ≥ y}: the least type-I error at which a test can reach power y."""
        ...

    def power_slope(self, alpha: float) -> float:
        """A supergradient of g at α (for the tangents of :func:`tail_bound_lp`)."""
        ...


def _gaussian_least_alpha(power: np.ndarray, mu: np.ndarray | float) -> np.ndarray:
    """α(y) = Φ(Φ⁻¹(y) − μ) of μ-GDP; ``mu`` may be an array (a grid of curves)."""
    return special.ndtr(special.ndtri(np.clip(power, 0.0, 1.0)) - mu)


def _epsilon_delta_least_alpha(power: np.ndarray, epsilon: np.ndarray | float, delta: float) -> np.ndarray:
    """α(y) = max((y − δ)e^{−ε}, 1 − δ − e^ε(1 − y)) of (ε, δ)-DP, in [0, 1]; ``epsilon`` may be an array."""
    y = np.clip(power, 0.0, 1.0)
    e = np.exp(np.minimum(epsilon, 700.0))
    return np.clip(np.maximum((y - delta) / e, 1.0 - delta - e * (1.0 - y)), 0.0, 1.0)


@dataclass(frozen=True)
class GaussianCurve:
    """μ-GDP (Dong, Roth & Su 2022, Definition 2.5): g(α) = Φ(Φ⁻¹(α) + μ), α(y) = Φ(Φ⁻¹(y) − μ)."""

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", _validate.non_negative("mu", self.mu))

    @property
    def label(self) -> str:
        return f"{self.mu:.6g}-GDP"

    def power(self, alpha: np.ndarray) -> np.ndarray:
        return special.ndtr(special.ndtri(np.clip(alpha, 0.0, 1.0)) + self.mu)

    def least_alpha(self, power: np.ndarray) -> np.ndarray:
        return _gaussian_least_alpha(power, self.mu)

    def power_slope(self, alpha: float) -> float:
        z = float(special.ndtri(min(max(alpha, 1e-300), 1.0 - 1e-16)))
        return math.exp(-0.5 * (z + self.mu) ** 2 + 0.5 * z * z)


@dataclass(frozen=True)
class EpsilonDeltaCurve:
    """(ε, δ)-DP as a trade-off curve (Dong, Roth & Su 2022, Proposition 2.5; Kairouz et al. 2015):
    g(α) = min(1, δ + e^ε α, 1 − e^{−ε}(1 − δ − α))."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _validate.non_negative("epsilon", self.epsilon))
        d = _validate.non_negative("delta", self.delta)
        if d >= 1.0:
            raise InvalidParameterError("delta", "must be < 1", d)
        object.__setattr__(self, "delta", d)

    @property
    def label(self) -> str:
        return f"({self.epsilon:.6g}, {self.delta:g})-DP"

    def power(self, alpha: np.ndarray) -> np.ndarray:
        a = np.clip(alpha, 0.0, 1.0)
        e = math.exp(min(self.epsilon, 700.0))
        return np.minimum(1.0, np.minimum(self.delta + e * a, 1.0 - (1.0 - self.delta - a) / e))

    def least_alpha(self, power: np.ndarray) -> np.ndarray:
        return _epsilon_delta_least_alpha(power, self.epsilon, self.delta)

    def power_slope(self, alpha: float) -> float:
        e = math.exp(min(self.epsilon, 700.0))
        return e if self.delta + e * alpha <= 1.0 - (1.0 - self.delta - alpha) / e else 1.0 / e


@dataclass(frozen=True, eq=False)
class _GaussianGrid:
    """μ-GDP curves for an array of μ (the searches' grids), by :class:`GaussianCurve`'s formula."""

    mu: np.ndarray

    def least_alpha(self, power: np.ndarray) -> np.ndarray:
        return _gaussian_least_alpha(power, self.mu)


@dataclass(frozen=True, eq=False)
class _EpsilonDeltaGrid:
    """(ε, δ) curves for an array of ε, by :class:`EpsilonDeltaCurve`'s formula."""

    epsilon: np.ndarray
    delta: float

    def least_alpha(self, power: np.ndarray) -> np.ndarray:
        return _epsilon_delta_least_alpha(power, self.epsilon, self.delta)


def _least_mass(m: int, k: int, v: int, tau: np.ndarray | float, curve: TradeOffCurve) -> np.ndarray:
    """The least total probability a law of C must have for P[C ≥ v] = τ under the claim (module
    docstring, the fast route); a value > 1 means the claim rules P[C ≥ v] ≥ τ out. ``tau`` and the
    curve's parameters broadcast (one pass over the levels serves a whole grid of τ or of curves)."""
    t = np.asarray(tau, dtype=float)
    a = v * t
    b = (k - v) * t
    total = t + 0.0 * curve.least_alpha(a / m)  # the broadcast shape of τ and the curve's grid
    a, b = a + 0.0 * total, b + 0.0 * total
    for u in range(v, 0, -1):
        need = m * curve.least_alpha(a / m) * (1.0 - RELATIVE_SAFETY) - b
        p = np.maximum(need, 0.0) / (k - u + 1)
        b = b + (k - u + 1) * p
        a = a + (u - 1) * p
        total = total + p
    if not np.all(np.isfinite(total)):
        raise NumericalError("one-run f-DP: the least mass is not finite")
    return total


def _refine(allowed: Any, lo: float, hi: float) -> tuple[float, float]:
    """A bracket [lo′, hi′] of the largest x in [lo, hi] with ``allowed(x)`` True, by grid refinement
    (:data:`GRID` points, :data:`_PASSES` passes): lo′ was found True, hi′ found False or is ``hi`` (then lo′ = hi′
    when ``hi`` itself was found True). ``allowed(lo)`` must be True."""
    for _ in range(_PASSES):
        grid = np.linspace(lo, hi, GRID)
        flags = np.asarray(allowed(grid), dtype=bool)
        flags[0] = True  # lo was found True before
        i = int(np.flatnonzero(flags)[-1])
        if i == GRID - 1:
            return float(grid[-1]), float(grid[-1])
        lo, hi = float(grid[i]), float(grid[i + 1])
    return lo, hi


def tail_bound(m: int, k: int, v: int, curve: TradeOffCurve) -> float:
    """The largest P[C ≥ v] the claim allows (fast route): the upper end of the last grid cell on τ, so never
    below the maximum."""
    m_, k_, v_ = _check_counts(m, k, v)
    if v_ == 0 or _least_mass(m_, k_, v_, 1.0, curve)[()] <= 1.0:
        return 1.0
    return _refine(lambda taus: _least_mass(m_, k_, v_, taus, curve) <= 1.0, 0.0, 1.0)[1]


def tail_bound_lp(m: int, k: int, v: int, curve: TradeOffCurve, *, rounds: int = 40,
                  tolerance: float = 1e-12) -> float:
    """The same maximum by linear programming (the second route): constraints A_u ≤ m·(tangent of g at t)
    for tangent points t added by cutting planes where the current optimum breaks A_u ≤ m·g(B_{u−1}/m).
    Tangents lie above the concave g, so each programme relaxes the convex set and its optimum is an upper
    bound on P[C ≥ v]; the last one is returned."""
    m_, k_, v_ = _check_counts(m, k, v)
    if v_ == 0 or k_ == 0:
        return 1.0
    levels = np.arange(k_ + 1, dtype=float)
    right = [np.where(levels >= u, levels, 0.0) for u in range(k_ + 1)]
    wrong = [np.where(levels >= u, k_ - levels, 0.0) for u in range(k_ + 1)]
    cuts: dict[int, list[float]] = {u: [min(max(k_ / (2 * m_), 1e-12), 1 - 1e-12)] for u in range(1, k_ + 1)}
    objective = -np.where(levels >= v_, 1.0, 0.0)
    value = 1.0
    for _ in range(rounds):
        rows, rhs = [], []
        for u, points in cuts.items():
            for t in points:
                slope = curve.power_slope(t)
                rows.append(right[u] - slope * wrong[u - 1])
                rhs.append(m_ * (float(curve.power(np.asarray(t))) - slope * t))
        solved = optimize.linprog(objective, A_ub=np.array(rows), b_ub=np.array(rhs), A_eq=np.ones((1, k_ + 1)),
                                  b_eq=[1.0], bounds=(0.0, 1.0), method="highs")
        if solved.x is None:
            raise NumericalError(f"one-run f-DP: the linear programme failed: {solved.message}")
        value, p = float(-solved.fun), solved.x
        added = False
        for u in range(1, k_ + 1):
            a, b = float(right[u] @ p), float(wrong[u - 1] @ p)
            if a - m_ * float(curve.power(np.asarray(b / m_))) > tolerance:
                cuts[u].append(min(max(b / m_, 1e-12), 1 - 1e-12))
                added = True
        if not added:
            break
    return min(1.0, value)


def rejects(m: int, k: int, v: int, curve: TradeOffCurve, alpha: float) -> bool:
    """Whether v correct of k guesses on m canaries rejects the claim at level α (least mass at τ = α > 1)."""
    m_, k_, v_ = _check_counts(m, k, v)
    return v_ > 0 and bool(_least_mass(m_, k_, v_, _validate.open_unit("alpha", alpha), curve)[()] > 1.0)


def _largest_rejected(m: int, k: int, v: int, alpha: float, curve_at: Any, upper: float) -> float:
    """The largest parameter (μ or ε) in [0, upper] whose curve is rejected at level α, 0 when the parameter
    0 is not; the search only reports parameters it found rejected. ``curve_at`` builds a curve from an
    array of parameters (a grid of curves in one pass)."""
    def rejected(params: np.ndarray) -> np.ndarray:
        return _least_mass(m, k, v, alpha, curve_at(np.asarray(params, dtype=float))) > 1.0

    if v == 0 or not rejected(np.array([0.0]))[0]:
        return 0.0
    return _refine(rejected, 0.0, upper)[0]


@dataclass(frozen=True)
class FdpOneRunResult:
    """The f-DP one-run analysis of one count (frozen).

    Attributes:
        m, r, v: canaries, guesses (fixed in number in advance), correct guesses.
        confidence: of the bounds (each rule tested at ``alpha_each`` = (1 − confidence)/guess_rules).
        mu_lower_bound: the largest μ whose μ-GDP curve the count rejects (0: none) — valid for μ-GDP claims.
        claimed_mu: the μ of the claim audited, or None; ``p_value``: the largest P[C ≥ v] that claim allows.
        epsilon_lower_bound: the largest ε whose (ε, ``delta``)-DP curve the count rejects — valid for any
            mechanism (an (ε, δ)-DP mechanism is f_{ε,δ}-DP).
        delta: the δ of ``epsilon_lower_bound``.
        guess_rules: pre-registered guess sizes that shared the error budget (Bonferroni).
    """

    m: int
    r: int
    v: int
    confidence: float
    mu_lower_bound: float
    claimed_mu: float | None
    p_value: float | None
    epsilon_lower_bound: float
    delta: float
    guess_rules: int = 1
    method: str = FDP_ONE_RUN_METHOD

    def __post_init__(self) -> None:
        _check_counts(self.m, self.r, self.v)
        _validate.open_unit("confidence", self.confidence)
        _validate.non_negative("mu_lower_bound", self.mu_lower_bound)
        _validate.non_negative("epsilon_lower_bound", self.epsilon_lower_bound)
        _validate.integer("guess_rules", self.guess_rules, minimum=1)
        if self.claimed_mu is not None:
            _validate.non_negative("claimed_mu", self.claimed_mu)

    @property
    def alpha_each(self) -> float:
        return (1.0 - self.confidence) / self.guess_rules

    def refutes_mu(self, mu: float) -> bool:
        """Whether the count refutes a μ-GDP claim with this μ."""
        return self.mu_lower_bound > _validate.non_negative("mu", mu)

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "alpha_each": self.alpha_each}

    def summary(self) -> str:
        claim = "" if self.claimed_mu is None else (
            f"; claimed mu {self.claimed_mu:.4f} allows P[>= {self.v} correct] <= {self.p_value:.3g}")
        return (f"f-DP one-run: mu lower bound {self.mu_lower_bound:.4f} (valid for a mu-GDP claim), (epsilon, delta) "
                f"lower bound {self.epsilon_lower_bound:.4f} at delta {self.delta:g}, confidence {self.confidence:g} "
                f"[{self.v} of {self.r} guesses correct, {self.m} canaries{claim}; {self.method}]")


def fdp_one_run_bounds(m: int, r: int, v: int, *, delta: float, confidence: float = 0.95,
                       claimed_mu: float | None = None, guess_rules: int = 1) -> FdpOneRunResult:
    """μ and (ε, δ) lower bounds of one count by the f-DP analysis, each at (1 − confidence)/guess_rules.

    The two bounds are two readings of one rejection rule, each valid on its own (a μ-GDP mechanism for the
    first, any (ε, δ)-DP mechanism for the second); do not combine them into one verdict without splitting
    the error budget.
    """
    m_, r_, v_ = _check_counts(m, r, v)
    conf = _validate.open_unit("confidence", confidence)
    rules = _validate.integer("guess_rules", guess_rules, minimum=1)
    d = _validate.non_negative("delta", delta)
    alpha = (1.0 - conf) / rules
    mu_lb = _largest_rejected(m_, r_, v_, alpha, _GaussianGrid, _MU_SEARCH_MAX)
    eps_lb = _largest_rejected(m_, r_, v_, alpha, lambda e: _EpsilonDeltaGrid(e, d), _MU_SEARCH_MAX)
    p_value = None if claimed_mu is None else tail_bound(m_, r_, v_, GaussianCurve(claimed_mu))
    return FdpOneRunResult(m=m_, r=r_, v=v_, confidence=conf, mu_lower_bound=mu_lb, claimed_mu=claimed_mu,
                           p_value=p_value, epsilon_lower_bound=eps_lb, delta=d, guess_rules=rules)


def best_of_rules(counts: Sequence[tuple[int, int]], m: int, *, delta: float, confidence: float = 0.95,
                  claimed_mu: float | None = None) -> FdpOneRunResult:
    """The f-DP bounds of several pre-registered guess rules' counts ((r, v) each), Bonferroni over the
    rules: the result with the largest μ lower bound (ties: the larger ε lower bound)."""
    if not counts:
        raise InvalidParameterError("counts", "must hold at least one (r, v) count", counts)
    results = [fdp_one_run_bounds(m, r, v, delta=delta, confidence=confidence, claimed_mu=claimed_mu,
                                  guess_rules=len(counts)) for r, v in counts]
    return max(results, key=lambda res: (res.mu_lower_bound, res.epsilon_lower_bound))
