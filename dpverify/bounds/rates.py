"""Polynomial rates of a bound: leading exponents, and the split into non-private and privacy terms.

The *leading exponent* of a bound f in a variable x is the p with f ≍ x^p in the limit that matters
for x, all other variables held fixed and positive:

* x → ∞ for d, H, K, T, S, A (the size of the problem);
* x → 0⁺ for ε (the strong-privacy limit), so ``/ε`` has exponent −1 and ``1/(e^ε(e^ε−1))`` too.

Logarithms count as exponent 0 (Õ and Ω̃ hide them). The *terms* of a bound are the summands of a
sum or the arguments of a max (``max{a, b}`` ≍ ``a + b``); the *privacy-cost terms* are those that
contain ε, the rest form the *non-private term*.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sympy

from dpverify._validate import one_of
from dpverify.bounds.registry import BoundEntry
from dpverify.bounds.symbols import RATE_VARIABLES, VARIABLES, epsilon, in_episodes
from dpverify.errors import InvalidParameterError


def _order_at_zero(expr: sympy.Expr, x: sympy.Symbol) -> sympy.Rational:
    """The p with expr ≍ x^p as x → 0⁺ (expr positive near 0, other symbols fixed)."""
    if not expr.has(x):
        return sympy.Integer(0)
    if expr == x:
        return sympy.Integer(1)
    if isinstance(expr, sympy.Max):  # the largest near 0 has the smallest exponent
        return min(_order_at_zero(a, x) for a in expr.args)
    if isinstance(expr, sympy.Min):
        return max(_order_at_zero(a, x) for a in expr.args)
    if isinstance(expr, sympy.Mul):
        return sum((_order_at_zero(a, x) for a in expr.args), sympy.Integer(0))
    if isinstance(expr, sympy.Pow) and not expr.exp.has(x):
        return expr.exp * _order_at_zero(expr.base, x)
    if isinstance(expr, sympy.log):
        return sympy.Integer(0)
    if isinstance(expr, sympy.Add) and all(_is_positive_term(a) for a in expr.args):
        return min(_order_at_zero(a, x) for a in expr.args)
    # Cancellation (e^x − 1) or a transcendental function: ask sympy for the leading term.
    lead = sympy.limit(sympy.log(expr) / sympy.log(x), x, 0, "+")
    if not (lead.is_rational and lead.is_finite):
        raise InvalidParameterError("expression", "must behave like a power of the variable", str(expr))
    return sympy.Rational(lead)


def _is_positive_term(term: sympy.Expr) -> bool:
    coeff, _ = term.as_coeff_Mul()
    return bool(coeff.is_positive)


def leading_exponent(expr: sympy.Expr, variable: str) -> sympy.Rational:
    """Exponent p with ``expr`` ≍ variable^p (variable → ∞; for ``epsilon``, ε → 0⁺).

    Args:
        expr: a positive sympy expression over the symbols of :mod:`dpverify.bounds.symbols`.
        variable: one of :data:`~dpverify.bounds.symbols.RATE_VARIABLES`.
    """
    name = one_of("variable", variable, RATE_VARIABLES)
    x = VARIABLES[name]
    if x == epsilon:
        return _order_at_zero(expr, x)
    return -_order_at_zero(expr.subs(x, 1 / x), x)


def rates(expr: sympy.Expr) -> dict[str, sympy.Rational]:
    """Leading exponent of ``expr`` in every rate variable it uses (a variable it ignores is left out)."""
    return {name: leading_exponent(expr, name) for name in RATE_VARIABLES if expr.has(VARIABLES[name])}


def terms(expr: sympy.Expr) -> tuple[sympy.Expr, ...]:
    """The summands of a sum, the arguments of a max, or the expression itself."""
    if isinstance(expr, (sympy.Add, sympy.Max)):
        return tuple(expr.args)
    return (expr,)


def term_rates(expr: sympy.Expr) -> tuple[dict[str, sympy.Rational], ...]:
    """The polynomial rates of each term, with every used rate variable listed (0 if absent).

    Two statements have *the same rates under Õ* when these multisets agree.
    """
    used = [name for name in RATE_VARIABLES if expr.has(VARIABLES[name])]
    return tuple({name: leading_exponent(t, name) for name in used} for t in terms(expr))


@dataclass(frozen=True)
class TermSplit:
    """A bound split into the part without ε and the part with ε.

    Attributes:
        non_private: the term(s) without ε combined as in the bound (0 if none).
        privacy: the term(s) containing ε, combined as in the bound (0 if none).
        combine: ``"sum"`` or ``"max"``: how the two parts make the bound.
    """

    non_private: sympy.Expr
    privacy: sympy.Expr
    combine: str

    def __post_init__(self) -> None:
        one_of("combine", self.combine, ("sum", "max"))


def split(entry_or_expr: BoundEntry | sympy.Expr) -> TermSplit:
    """Split a bound into its non-private term and its privacy-cost term (those containing ε)."""
    expr = entry_or_expr.expression if isinstance(entry_or_expr, BoundEntry) else entry_or_expr
    parts = terms(expr)
    combine = "max" if isinstance(expr, sympy.Max) else "sum"
    op = sympy.Max if combine == "max" else sympy.Add
    private = [t for t in parts if t.has(epsilon)]
    public = [t for t in parts if not t.has(epsilon)]
    return TermSplit(
        non_private=op(*public) if public else sympy.Integer(0),
        privacy=op(*private) if private else sympy.Integer(0),
        combine=combine,
    )


def entry_rates(entry: BoundEntry, *, in_k: bool = False) -> Mapping[str, sympy.Rational]:
    """Leading exponents of an entry, as stated or (``in_k=True``) after substituting T = K·H."""
    expr = in_episodes(entry.expression) if in_k else entry.expression
    return rates(expr)
