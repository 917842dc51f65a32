"""Numerical evaluation of registered bounds.

Parameters are validated before anything is computed: d, H, K, T, S, A must be finite reals ≥ 1,
ε > 0, δ in (0, 1). The number of steps T is tied to K and H by T = K·H (Liao et al. 2021, line 7):

* if the bound needs T and T is not given, T = K·H;
* if the bound needs K and K is not given, K = T / H;
* if T, K and H are all given, T must equal K·H (relative tolerance 1e-12) — never silently replaced.

Evaluation is done in 30-digit arithmetic (mpmath via sympy) and rounded once to a float, so
``1/(e^ε(e^ε − 1))`` at small ε or ``K^{3/5}`` at K = 1e30 lose nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import sympy

from dpverify import _validate
from dpverify.bounds.rates import split
from dpverify.bounds.registry import BoundEntry, get
from dpverify.bounds.symbols import VARIABLES
from dpverify.errors import InvalidParameterError, NumericalError

_AT_LEAST_ONE = ("d", "H", "K", "T", "S", "A")
_T_TOLERANCE = 1e-12
_DIGITS = 30


def validate_values(values: Mapping[str, object]) -> dict[str, float]:
    """Check every given variable against its rule and return them as floats (unknown names raise)."""
    out: dict[str, float] = {}
    for name, value in values.items():
        if name not in VARIABLES:
            raise InvalidParameterError(name, f"is not a bound variable (one of {', '.join(VARIABLES)})", value)
        if name in _AT_LEAST_ONE:
            x = _validate.real(name, value)
            if x < 1:
                raise InvalidParameterError(name, "must be >= 1", value)
        elif name == "epsilon":
            x = _validate.positive(name, value)
        else:  # delta
            x = _validate.open_unit(name, value)
        out[name] = x
    return out


def resolve(
    needed: tuple[str, ...], values: Mapping[str, object], *, entry_name: str = "the bound"
) -> dict[str, float]:
    """The values of the variables ``needed``, with T and K derived from each other through T = K·H.

    Raises:
        InvalidParameterError: a value breaks its rule, T ≠ K·H, or a needed variable is missing.
    """
    vals = validate_values(values)
    if {"T", "K", "H"} <= vals.keys():
        if not math.isclose(vals["T"], vals["K"] * vals["H"], rel_tol=_T_TOLERANCE):
            raise InvalidParameterError(
                "T", f"must equal K*H = {vals['K'] * vals['H']:g} when K and H are given", vals["T"]
            )
    if "T" in needed and "T" not in vals and {"K", "H"} <= vals.keys():
        vals["T"] = vals["K"] * vals["H"]
    if "K" in needed and "K" not in vals and {"T", "H"} <= vals.keys():
        vals["K"] = validate_values({"K": vals["T"] / vals["H"]})["K"]
    for name in needed:
        if name not in vals:
            hint = " (or K and H, with T = K*H)" if name == "T" else (" (or T and H)" if name == "K" else "")
            raise InvalidParameterError(name, f"is required by {entry_name}{hint}", None)
    return {name: vals[name] for name in needed}


def evaluate_expression(expr: sympy.Expr, values: Mapping[str, float]) -> float:
    """``expr`` at the given (already resolved) values, as a float; NumericalError if not finite > 0."""
    subs = {VARIABLES[name]: sympy.Float(repr(float(v)), _DIGITS) for name, v in values.items() if name in VARIABLES}
    result = sympy.N(expr.subs(subs), _DIGITS)
    if not result.is_real or result.free_symbols:
        raise NumericalError(f"bound did not evaluate to a real number: {result}")
    x = float(result)
    if math.isnan(x) or x < 0:
        raise NumericalError(f"bound evaluated to {x}")
    return x


@dataclass(frozen=True)
class Evaluation:
    """A bound evaluated at numbers.

    Attributes:
        name: the entry's machine name.
        values: the variables used (after deriving T or K).
        value: the bound (hidden constants taken as 1).
        non_private: the non-private term at these values (0 if the bound has none).
        privacy: the privacy-cost term at these values (0 if none).
        combine: ``"sum"`` or ``"max"``, how the two terms make the bound.
    """

    name: str
    values: Mapping[str, float]
    value: float
    non_private: float
    privacy: float
    combine: str

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "values": dict(self.values),
            "value": self.value,
            "non_private_term": self.non_private,
            "privacy_term": self.privacy,
            "combine": self.combine,
        }


def evaluate(entry: BoundEntry | str, **values: float) -> Evaluation:
    """Evaluate a registered bound, e.g. ``evaluate("ngo-2022/linear-mdp", d=10, H=20, K=1e5, epsilon=1)``.

    Variables the bound does not use may be given (they are still validated); T may be replaced by
    K and H. The hidden constants of the Õ/Ω notation are taken as 1, printed logarithms are kept.
    """
    entry = get(entry) if isinstance(entry, str) else entry
    used = resolve(entry.symbols, values, entry_name=f"bound {entry.name}")
    parts = split(entry)
    return Evaluation(
        name=entry.name,
        values=dict(used),
        value=evaluate_expression(entry.expression, used),
        non_private=evaluate_expression(parts.non_private, used),
        privacy=evaluate_expression(parts.privacy, used),
        combine=parts.combine,
    )
