"""Comparing two bounds: their ratio, where they cross, and where "A improves over B" holds.

Both bounds are compared after substituting T = K·H. The hidden constants of Õ/Ω are taken as 1
(the comparison is of the expressions as stated, which is what a claim "A improves over B" rests on).

**Crossovers.** The values of one variable x (K by default; ε, d, H, S or A also work) where
f_A(x) = f_B(x), the other variables fixed. When f_A − f_B is a sum of powers of x whose exponents
are multiples of a common step g with at most three distinct exponents, sympy ``solve`` gives the
roots in closed form (a linear or quadratic equation in y = x^g). Otherwise (logarithms of x, max,
exponentials of ε) the roots are found numerically: sign changes of log f_A − log f_B on a grid of
4001 log-spaced points over the search interval, refined by Brent's method. Every root is verified
by substitution at 30 digits (relative residual ≤ 1e-9) or a NumericalError is raised.

**Region.** On a log-spaced (K, ε) grid, where f_A < f_B; the boundary curve is the set of ε roots
at each grid K, found as above and verified by substitution.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import sympy
from scipy.optimize import brentq

from dpverify._validate import integer, one_of, positive
from dpverify.bounds.evaluation import evaluate_expression, resolve, validate_values
from dpverify.bounds.rates import leading_exponent
from dpverify.bounds.registry import BoundEntry, get
from dpverify.bounds.symbols import VARIABLES, epsilon, in_episodes
from dpverify.errors import InvalidParameterError, NumericalError

#: Variables a crossover may be sought in.
CROSSOVER_VARIABLES: tuple[str, ...] = ("K", "epsilon", "d", "H", "S", "A")
#: Default search interval for a crossover in each variable.
DEFAULT_SEARCH: dict[str, tuple[float, float]] = {
    "K": (1.0, 1e60),
    "epsilon": (1e-8, 1e8),
    "d": (1.0, 1e12),
    "H": (1.0, 1e12),
    "S": (1.0, 1e12),
    "A": (1.0, 1e12),
}
_GRID_POINTS = 4001
_RESIDUAL_TOLERANCE = 1e-9


def _entry(x: BoundEntry | str) -> BoundEntry:
    return get(x) if isinstance(x, str) else x


def _solve_symbolic(g: sympy.Expr, x: sympy.Symbol) -> tuple[list[sympy.Expr], sympy.Rational] | None:
    """Closed-form roots of g(x) = 0 when g is a short sum of powers of x; None otherwise.

    Returns the roots ``y`` of the polynomial in y = x^step and ``step``: a root x = y^(1/step)
    exists only where y is real and positive, which the caller checks after substituting numbers.
    """
    if g.has(sympy.Max, sympy.Min, sympy.exp):
        return None
    groups: dict[sympy.Expr, sympy.Expr] = defaultdict(lambda: sympy.Integer(0))
    for term in sympy.Add.make_args(sympy.expand(g)):
        coeff, power = term.as_coeff_exponent(x)
        if coeff.has(x) or not power.is_rational:
            return None
        groups[power] += coeff
    groups = {p: c for p, c in groups.items() if sympy.simplify(c) != 0}
    if len(groups) <= 1:
        return [], sympy.Integer(1)  # identical, or g is a single power of x: never zero for x > 0
    powers = sorted(groups)
    step = sympy.Integer(0)
    for p in powers[1:]:
        step = sympy.gcd(step, p - powers[0])
    degrees = [int((p - powers[0]) / step) for p in powers]
    if max(degrees) > 2:
        return None
    y = sympy.Dummy("y", positive=True)
    polynomial = sum((groups[p] * y**deg for p, deg in zip(powers, degrees, strict=True)), sympy.Integer(0))
    return list(sympy.solve(polynomial, y)), step


def _numeric_function(expr: sympy.Expr, x: sympy.Symbol, fixed: Mapping[str, float]) -> Callable:
    subs = {VARIABLES[n]: v for n, v in fixed.items()}
    return sympy.lambdify(x, expr.subs(subs), modules="numpy")


def _log_gap(fa: Callable, fb: Callable) -> Callable[[np.ndarray], np.ndarray]:
    def h(u):
        with np.errstate(all="ignore"):
            xs = np.exp(u)
            return np.log(np.asarray(fa(xs), dtype=float)) - np.log(np.asarray(fb(xs), dtype=float))

    return h


def _numeric_roots(h: Callable, lo: float, hi: float, points: int = _GRID_POINTS) -> list[float]:
    us = np.linspace(math.log(lo), math.log(hi), points)
    vals = h(us)
    roots: list[float] = []
    for i in range(points - 1):
        a, b = vals[i], vals[i + 1]
        if not (np.isfinite(a) and np.isfinite(b)):
            continue
        if a == 0:
            roots.append(float(math.exp(us[i])))
        elif a * b < 0:
            u = brentq(lambda t: float(h(np.array([t]))[0]), us[i], us[i + 1], xtol=1e-14, rtol=1e-15)
            roots.append(float(math.exp(u)))
    return roots


def _verify_root(fa: sympy.Expr, fb: sympy.Expr, values: Mapping[str, float]) -> float:
    a = evaluate_expression(fa, values)
    b = evaluate_expression(fb, values)
    residual = abs(a - b) / max(a, b)
    if not residual <= _RESIDUAL_TOLERANCE:
        raise NumericalError(f"crossover failed verification by substitution: relative residual {residual:.3g}")
    return residual


@dataclass(frozen=True)
class Crossover:
    """A value of the compared variable where the two bounds are equal.

    Attributes:
        value: the root.
        residual: |f_A − f_B| / max(f_A, f_B) at the root, from substitution at 30 digits.
        method: ``"symbolic"`` (sympy solve) or ``"numeric"`` (grid + Brent).
    """

    value: float
    residual: float
    method: str


@dataclass(frozen=True)
class Segment:
    """An interval of the compared variable on which one bound is strictly below the other."""

    low: float
    high: float
    lower: str


@dataclass(frozen=True)
class Comparison:
    """The comparison of bound ``a`` with bound ``b`` in the variable ``over``.

    Attributes:
        a, b: machine names.
        over: the variable the crossover is sought in.
        values: the other variables, fixed (empty when not all were given).
        ratio: f_A / f_B (T = K·H), simplified.
        asymptotic_exponent: p with f_A / f_B ≍ over^p (over → ∞; for ε, ε → 0⁺).
        symbolic_crossovers: closed-form roots in terms of the other variables, or None when sympy
            could not give them (numeric roots are then used).
        crossovers: numeric roots in the search interval, each verified by substitution (empty
            when the other variables were not all given).
        segments: the search interval cut at the crossovers, with the lower bound on each piece.
        missing: variables that would be needed for numeric results but were not given.
    """

    a: str
    b: str
    over: str
    values: Mapping[str, float]
    ratio: sympy.Expr
    asymptotic_exponent: sympy.Rational
    symbolic_crossovers: tuple[sympy.Expr, ...] | None
    search: tuple[float, float]
    crossovers: tuple[Crossover, ...] = ()
    segments: tuple[Segment, ...] = ()
    missing: tuple[str, ...] = field(default=())

    @property
    def lower_beyond_last_crossover(self) -> str | None:
        """The bound that is lower beyond the last crossover (up to the end of the search interval)."""
        return self.segments[-1].lower if self.segments else None

    def as_dict(self) -> dict[str, object]:
        return {
            "a": self.a,
            "b": self.b,
            "over": self.over,
            "values": dict(self.values),
            "ratio": str(self.ratio),
            "asymptotic_exponent": str(self.asymptotic_exponent),
            "symbolic_crossovers": None
            if self.symbolic_crossovers is None
            else [str(r) for r in self.symbolic_crossovers],
            "search": list(self.search),
            "crossovers": [{"value": c.value, "residual": c.residual, "method": c.method} for c in self.crossovers],
            "segments": [{"low": s.low, "high": s.high, "lower": s.lower} for s in self.segments],
            "lower_beyond_last_crossover": self.lower_beyond_last_crossover,
            "missing": list(self.missing),
        }


@functools.lru_cache(maxsize=256)
def _symbolic_parts(ea: BoundEntry, eb: BoundEntry, over: str):
    """Ratio, asymptotic exponent and closed-form roots; cached (entries are immutable)."""
    x = VARIABLES[over]
    fa, fb = in_episodes(ea.expression), in_episodes(eb.expression)
    ratio = sympy.simplify(fa / fb)
    exponent = leading_exponent(fa, over) - leading_exponent(fb, over) if (fa.has(x) or fb.has(x)) else sympy.Integer(0)
    solved = _solve_symbolic(fa - fb, x)
    return ratio, exponent, None if solved is None else (tuple(solved[0]), solved[1])


def compare(
    a: BoundEntry | str,
    b: BoundEntry | str,
    *,
    over: str = "K",
    values: Mapping[str, float] | None = None,
    search: tuple[float, float] | None = None,
) -> Comparison:
    """Compare two registered bounds in one variable.

    Args:
        a, b: entries or machine names.
        over: the variable to find crossovers in (one of :data:`CROSSOVER_VARIABLES`).
        values: the other variables (T may be omitted; K or T is ignored when ``over`` is K).
        search: the interval searched for numeric roots (default :data:`DEFAULT_SEARCH`).

    Example: ``compare("luyo-2021/linear-mdp", "dp-lsvi-ucb++/theorem-3.2",
    values=dict(d=10, H=20, epsilon=1, delta=1e-5))`` finds the K beyond which Theorem 3.2 is lower.
    """
    ea, eb = _entry(a), _entry(b)
    over = one_of("over", over, CROSSOVER_VARIABLES)
    x = VARIABLES[over]
    lo, hi = search if search is not None else DEFAULT_SEARCH[over]
    lo, hi = positive("search low", lo), positive("search high", hi)
    if not lo < hi:
        raise InvalidParameterError("search", "must be an interval (low, high) with low < high", (lo, hi))
    fa, fb = in_episodes(ea.expression), in_episodes(eb.expression)
    vals = validate_values(values or {})
    if over == "K":
        vals.pop("T", None)
    elif over == "H" and "T" in vals:
        raise InvalidParameterError("T", "cannot be fixed while comparing over H (T = K*H); give K", vals["T"])
    vals.pop(over, None)
    needed = tuple(sorted({s.name for s in (fa.free_symbols | fb.free_symbols)} - {over}, key=list(VARIABLES).index))
    missing = tuple(n for n in needed if n not in vals and not (n == "K" and {"T", "H"} <= vals.keys()))
    ratio, exponent, solved = _symbolic_parts(ea, eb, over)
    symbolic = None if solved is None else tuple(r ** (1 / solved[1]) for r in solved[0])
    base = Comparison(
        a=ea.name,
        b=eb.name,
        over=over,
        values={},
        ratio=ratio,
        asymptotic_exponent=exponent,
        symbolic_crossovers=symbolic,
        search=(lo, hi),
        missing=missing,
    )
    if missing:
        return base
    fixed = resolve(needed, vals, entry_name=f"the comparison of {ea.name} with {eb.name}")
    roots: list[tuple[float, str]] = []
    if solved is not None:
        subs = {VARIABLES[n]: v for n, v in fixed.items()}
        for y_root in solved[0]:
            y_value = complex(sympy.N(y_root.subs(subs), 30))
            if abs(y_value.imag) > 1e-12 * max(1.0, abs(y_value.real)) or y_value.real <= 0:
                continue  # y = x^step must be real and positive
            value = float(sympy.N(sympy.Float(y_value.real, 30) ** (1 / solved[1]), 30))
            if lo <= value <= hi:
                roots.append((value, "symbolic"))
    else:
        h = _log_gap(_numeric_function(fa, x, fixed), _numeric_function(fb, x, fixed))
        roots = [(r, "numeric") for r in _numeric_roots(h, lo, hi)]
    roots.sort()
    crossovers = tuple(
        Crossover(value=r, residual=_verify_root(fa, fb, {**fixed, over: r}), method=m) for r, m in roots
    )
    cuts = [lo] + [c.value for c in crossovers] + [hi]
    segments = []
    for left, right in zip(cuts[:-1], cuts[1:], strict=True):
        mid = math.sqrt(left * right)
        va = evaluate_expression(fa, {**fixed, over: mid})
        vb = evaluate_expression(fb, {**fixed, over: mid})
        lower = ea.name if va < vb else (eb.name if vb < va else "equal")
        segments.append(Segment(low=left, high=right, lower=lower))
    return replace(base, values=fixed, crossovers=crossovers, segments=tuple(segments))


@dataclass(frozen=True)
class Region:
    """Where on a (K, ε) grid ``improver`` is strictly below ``baseline``.

    Attributes:
        improver, baseline: machine names.
        values: the other variables, fixed.
        k_values, epsilon_values: the log-spaced grid.
        holds: ``holds[i][j]`` is True when f_improver < f_baseline at (k_values[i], epsilon_values[j]).
        boundary: (K, ε) points where the two bounds are equal, verified by substitution.
    """

    improver: str
    baseline: str
    values: Mapping[str, float]
    k_values: tuple[float, ...]
    epsilon_values: tuple[float, ...]
    holds: tuple[tuple[bool, ...], ...]
    boundary: tuple[tuple[float, float], ...]

    @property
    def fraction(self) -> float:
        """Fraction of grid points where the claim holds."""
        cells = [c for row in self.holds for c in row]
        return sum(cells) / len(cells)

    def summary(self) -> str:
        """One sentence: where the claim holds on the grid."""
        k_lo, k_hi = self.k_values[0], self.k_values[-1]
        e_lo, e_hi = self.epsilon_values[0], self.epsilon_values[-1]
        where = f"K in [{k_lo:.3g}, {k_hi:.3g}], ε in [{e_lo:.3g}, {e_hi:.3g}]"
        eps_star = [e for _, e in self.boundary]
        if self.fraction == 1.0:
            return f"holds on the whole grid ({where})"
        if self.fraction == 0.0:
            extra = f"; equality at ε ≈ {min(eps_star):.3g}..{max(eps_star):.3g}" if eps_star else ""
            return f"fails on the whole grid ({where}){extra}"
        span = f"; boundary ε from {min(eps_star):.3g} to {max(eps_star):.3g}" if eps_star else ""
        return f"holds on {100 * self.fraction:.1f}% of the grid ({where}){span}"

    def as_dict(self) -> dict[str, object]:
        return {
            "improver": self.improver,
            "baseline": self.baseline,
            "values": dict(self.values),
            "k_values": list(self.k_values),
            "epsilon_values": list(self.epsilon_values),
            "holds": [list(r) for r in self.holds],
            "fraction": self.fraction,
            "boundary": [list(p) for p in self.boundary],
            "summary": self.summary(),
        }


def improvement_region(
    improver: BoundEntry | str,
    baseline: BoundEntry | str,
    *,
    values: Mapping[str, float],
    k_range: tuple[float, float] = (1e2, 1e8),
    epsilon_range: tuple[float, float] = (1e-2, 1e1),
    points: int = 25,
    boundary_search: tuple[float, float] | None = None,
) -> Region:
    """The part of a (K, ε) grid where the claim "improver improves over baseline" holds.

    Args:
        values: the remaining variables (d, H, δ, S, A as the bounds need them).
        k_range, epsilon_range: the grid's corners; ``points`` log-spaced values on each axis.
        boundary_search: the ε interval searched for the boundary at each grid K (default: the
            grid's ε range).
    """
    ei, eb = _entry(improver), _entry(baseline)
    n = integer("points", points, minimum=2)
    k_lo, k_hi = (positive("k_range", v) for v in k_range)
    e_lo, e_hi = (positive("epsilon_range", v) for v in epsilon_range)
    if not (k_lo < k_hi and e_lo < e_hi):
        raise InvalidParameterError("range", "must be (low, high) with low < high", (k_range, epsilon_range))
    fi, fb = in_episodes(ei.expression), in_episodes(eb.expression)
    others = tuple(
        sorted({s.name for s in (fi.free_symbols | fb.free_symbols)} - {"K", "epsilon"}, key=list(VARIABLES).index)
    )
    fixed = resolve(
        others,
        {k: v for k, v in values.items() if k not in ("K", "T", "epsilon")},
        entry_name=f"the comparison of {ei.name} with {eb.name}",
    )
    ks = np.geomspace(k_lo, k_hi, n)
    es = np.geomspace(e_lo, e_hi, n)
    subs = {VARIABLES[k]: v for k, v in fixed.items()}
    K, E = VARIABLES["K"], epsilon
    gi = sympy.lambdify((K, E), fi.subs(subs), modules="numpy")
    gb = sympy.lambdify((K, E), fb.subs(subs), modules="numpy")
    kk, ee = np.meshgrid(ks, es, indexing="ij")
    with np.errstate(all="ignore"):
        vi = np.broadcast_to(np.asarray(gi(kk, ee), dtype=float), kk.shape)
        vb = np.broadcast_to(np.asarray(gb(kk, ee), dtype=float), kk.shape)
    holds = tuple(tuple(bool(v) for v in row) for row in (vi < vb))
    lo, hi = boundary_search if boundary_search is not None else (e_lo, e_hi)
    boundary: list[tuple[float, float]] = []
    for k in ks:
        h = _log_gap(lambda e, k=k: gi(k, e), lambda e, k=k: gb(k, e))
        for root in _numeric_roots(h, lo, hi, points=801):
            _verify_root(fi, fb, {**fixed, "K": float(k), "epsilon": root})
            boundary.append((float(k), root))
    return Region(
        improver=ei.name,
        baseline=eb.name,
        values=fixed,
        k_values=tuple(map(float, ks)),
        epsilon_values=tuple(map(float, es)),
        holds=holds,
        boundary=tuple(boundary),
    )
