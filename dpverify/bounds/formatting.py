"""One-line text forms of bounds and rates, shared by the command line and the generated docs."""

from __future__ import annotations

import re
from collections.abc import Mapping

import sympy

_GREEK = (("epsilon", "ε"), ("delta", "δ"), ("lambda_tilde", "λ̃"))


def expression_text(expr: sympy.Expr) -> str:
    """``expr`` on one line: ``^`` for powers, Greek letters, ``*`` kept (``d*sqrt(H^3*K)``)."""
    text = sympy.sstr(expr, order="none").replace("**", "^")
    for name, letter in _GREEK:
        text = re.sub(rf"\b{name}\b", letter, text)
    text = re.sub(r"\^\((\d+)/(\d+)\)", r"^{\1/\2}", text)
    return text


def rates_text(rates: Mapping[str, sympy.Rational]) -> str:
    """``d^{7/6} H^{9/2} K^{1/2} ε^{-1}``; variables with exponent 0 are left out."""
    parts = []
    for name, power in rates.items():
        if power == 0:
            continue
        letter = dict(_GREEK).get(name, name)
        parts.append(letter if power == 1 else f"{letter}^{{{power}}}")
    return " ".join(parts) or "1"
