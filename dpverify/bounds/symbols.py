"""The sympy symbols every regret bound is written in, and the substitution T = K·H.

All symbols are declared positive, so sympy may simplify ``sqrt(H**4)`` to ``H**2`` and
``log(1/delta)`` to ``-log(delta)`` without case splits.

* ``d`` feature dimension, ``H`` horizon, ``K`` number of episodes, ``T = K·H`` number of steps
  (Sahu 2025 Section 2; Liao et al. 2021 line 7: "T = KH is the number of interactions");
* ``epsilon`` and ``delta`` the privacy parameters (in Theorem 3.2 of Sahu 2025 the privacy δ is
  written δ′; see each entry's note for what δ means there);
* ``S`` and ``A`` the numbers of states and actions (tabular entries only).
"""

from __future__ import annotations

import sympy

d = sympy.Symbol("d", positive=True)
H = sympy.Symbol("H", positive=True)
K = sympy.Symbol("K", positive=True)
T = sympy.Symbol("T", positive=True)
epsilon = sympy.Symbol("epsilon", positive=True)
delta = sympy.Symbol("delta", positive=True)
S = sympy.Symbol("S", positive=True)
A = sympy.Symbol("A", positive=True)

#: Every variable a bound may use, by name, in a fixed display order.
VARIABLES: dict[str, sympy.Symbol] = {
    "d": d,
    "H": H,
    "K": K,
    "T": T,
    "epsilon": epsilon,
    "delta": delta,
    "S": S,
    "A": A,
}

#: Variables whose polynomial rate is reported (δ enters every bound only through logarithms).
RATE_VARIABLES: tuple[str, ...] = ("d", "H", "K", "T", "S", "A", "epsilon")


def in_episodes(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with T replaced by K·H, so that bounds stated in T and in K can be compared."""
    return expr.subs(T, K * H)
