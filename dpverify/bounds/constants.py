"""The explicit constants of DP-LSVI-UCB++ (Sahu 2025) as sympy expressions — the single source
the agents use.

All quotations are from Sahu 2025 ("Towards Optimal Differentially Private Regret Bounds in Linear MDPs",
arXiv:2504.09339):

* Algorithm 1, line 1: ρ0 = ρ/(4HK); φ1, φ2 ~ N(0, (2H²/ρ0) I_d),
  φ3 ~ N(0, (2H⁴/ρ0) I_d), K1 = (Z + Zᵀ)/√2 with Z_ij ~ N(0, 1/(4ρ0)); Λ̃_{1,h} = 2 λ̃_Λ I.
* Lemma A.1 (Appendix A), with probability ≥ 1 − δ, ‖φ1‖, ‖φ2‖ ≤ L, ‖φ3‖ ≤ H·L and
  ‖K1‖₂ ≤ λ̃_Λ, where

      L   = 4H √( (dHK/ρ) · log(10dKH/δ) )
      λ̃_Λ = √(8dHK/ρ) · ( 2 + ( log(5 c1 H/δ) / (c2 d) )^{2/3} ).

* Theorem 3.2 and Lemma C.5 (Appendix C), with ι₂ = log(HK⁴L²d / (δ λ̃_Λ)):

      β̂ = β̌ = H L √(d λ̃_Λ) + √(d³ H² ι₂²)
      β̄     = H² L² √(d λ̃_Λ) + √(d³ H⁴ ι₂²)
      β      = H L √(d λ̃_Λ) + √(d log²(1 + HK⁴L²d / (δ λ̃_Λ)))     (Lemma C.5 only)

  The paper states the β's inside O(·); the constant inside O is taken as 1 here. Agents that
  scale a radius should multiply these values and report the multiplier.
* Theorem 3.2: the number of policy updates is O(dH log(1 + K/(d λ̃_Λ))).

Here δ is the failure probability of the utility and regret analysis (Algorithm 1 input "Failure
probability δ"), not the privacy parameter δ′ of Theorem 3.1.

Caveat — these are the paper's expressions, for the algorithm as printed. Lemma A.1's
log(5c1H/δ) union-bounds over H Gram-noise matrices (one K1 per stage, as Algorithm 1 line 1 draws
it once); with fresh noise at each of the HK Gram releases (which the composition over 4HK releases
assumes) the union bound needs log(5c1HK/δ) instead. And Algorithm 1 line 26 adds K1 at every
episode, so Λ̃_{k,h} carries k − 1 noise matrices, whose sum is not bounded by λ̃_Λ. An agent that
fixes either point must re-derive λ̃_Λ rather than reuse this value silently.

**The universal constants c1, c2.** Lemma A.1 leaves them unspecified (they come from Lemma 19 of
Redberg & Wang 2021, a tail bound of the form P(‖W‖ > 2√d σ(1+t)) ≤ c1 exp(−c2 d t^{3/2}) for a GOE
matrix W with off-diagonal variance σ²). The defaults :data:`DEFAULT_C1` = 2 and
:data:`DEFAULT_C2` = 1 make Lemma A.1's statement about K1 true, by the following argument.
K1 is GOE with off-diagonal variance σ² = 1/(4ρ0) = HK/ρ; ‖K1‖₂ is a √2σ-Lipschitz function of the
d(d+1)/2 independent standard normals behind it and E λ_max(K1) ≤ 2√d σ (Slepian/Sudakov–Fernique
comparison, Davidson & Szarek 2001), so Gaussian concentration (Boucheron, Lugosi & Massart 2013,
Thm 5.6) applied to λ_max and −λ_min gives P(‖K1‖₂ ≥ 2√d σ + s) ≤ 2 exp(−s²/(4σ²)). The paper's
λ̃_Λ = 2√d σ · √2 (2 + t) with t = (log(5c1H/δ)/(c2 d))^{2/3}, i.e. s = 2√d σ (2√2 − 1 + √2 t), so
P(‖K1‖₂ ≥ λ̃_Λ) ≤ 2 exp(−d (2√2 − 1 + √2 t)²) ≤ 2 exp(−7 d t^{3/2}) (the minimum over t > 0 of
(2√2 − 1 + √2 t)² / t^{3/2} is ≈ 7.0) ≤ c1 exp(−c2 d t^{3/2}) = δ/(5H) with c1 = 2, c2 = 1 — the
per-stage failure probability the lemma's log(5c1H/δ) budgets for. Any c1 ≥ 2, c2 ≤ 7 would do;
smaller radii (c2 up to 7) are not worth the fragility.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import sympy

from dpverify import _validate
from dpverify.bounds.symbols import H, K, d, delta
from dpverify.errors import InvalidParameterError, NumericalError

rho = sympy.Symbol("rho", positive=True)
c1 = sympy.Symbol("c1", positive=True)
c2 = sympy.Symbol("c2", positive=True)
#: Symbols standing for L and λ̃_Λ in the "as printed" forms of the radii.
L_symbol = sympy.Symbol("L", positive=True)
lambda_symbol = sympy.Symbol("lambda_tilde", positive=True)

DEFAULT_C1 = 2.0
DEFAULT_C2 = 1.0

_iota2 = sympy.log(H * K**4 * L_symbol**2 * d / (delta * lambda_symbol))

#: The radii as printed in Theorem 3.2 / Lemma C.5, in terms of the symbols L and λ̃_Λ.
PRINTED: dict[str, sympy.Expr] = {
    "beta_hat": H * L_symbol * sympy.sqrt(d * lambda_symbol) + sympy.sqrt(d**3 * H**2 * _iota2**2),
    "beta_check": H * L_symbol * sympy.sqrt(d * lambda_symbol) + sympy.sqrt(d**3 * H**2 * _iota2**2),
    "beta_bar": H**2 * L_symbol**2 * sympy.sqrt(d * lambda_symbol) + sympy.sqrt(d**3 * H**4 * _iota2**2),
    "beta": H * L_symbol * sympy.sqrt(d * lambda_symbol)
    + sympy.sqrt(d * sympy.log(1 + H * K**4 * L_symbol**2 * d / (delta * lambda_symbol)) ** 2),
}

_L = 4 * H * sympy.sqrt(d * H * K / rho * sympy.log(10 * d * K * H / delta))
_lambda = sympy.sqrt(8 * d * H * K / rho) * (2 + (sympy.log(5 * c1 * H / delta) / (c2 * d)) ** sympy.Rational(2, 3))
_rho0 = rho / (4 * H * K)

#: Every constant as a sympy expression in d, H, K, rho, delta, c1, c2 (L and λ̃_Λ substituted).
EXPRESSIONS: dict[str, sympy.Expr] = {
    "rho0": _rho0,
    "vector_noise_variance": 2 * H**2 / _rho0,
    "phi3_noise_variance": 2 * H**4 / _rho0,
    "goe_entry_variance": 1 / (4 * _rho0),
    "L": _L,
    "lambda_tilde": _lambda,
    "initial_gram_diagonal": 2 * _lambda,
    **{name: expr.subs({L_symbol: _L, lambda_symbol: _lambda}) for name, expr in PRINTED.items()},
    "update_bound": d * H * sympy.log(1 + K / (d * _lambda)),
}

_ARGS = (d, H, K, rho, delta, c1, c2)


@functools.cache
def _compiled(name: str):
    return sympy.lambdify(_ARGS, EXPRESSIONS[name], modules="math")


@dataclass(frozen=True)
class DpLsviUcbppConstants:
    """The constants of DP-LSVI-UCB++ at given (d, H, K, ρ, δ), from :data:`EXPRESSIONS`.

    Attributes:
        d, H, K, rho, delta, c1, c2: the inputs (δ = failure probability of the analysis).
        rho0: zCDP budget per release, ρ/(4HK) (Algorithm 1, line 1).
        vector_noise_variance: variance of each coordinate of φ1, φ2: 2H²/ρ0 (Algorithm 1, line 1).
        phi3_noise_variance: variance of each coordinate of φ3: 2H⁴/ρ0 (Algorithm 1, line 1).
        goe_entry_variance: variance of Z_ij in K1 = (Z + Zᵀ)/√2: 1/(4ρ0) (Algorithm 1, line 1).
        L: bound on ‖φ1‖, ‖φ2‖ (and ‖φ3‖ ≤ H·L), Lemma A.1.
        lambda_tilde: λ̃_Λ, bound on ‖K1‖₂, Lemma A.1.
        initial_gram_diagonal: Λ̃_{1,h} = 2 λ̃_Λ I (Algorithm 1, line 1).
        beta_hat, beta_check: β̂ = β̌ (Theorem 3.2), O-constant 1.
        beta_bar: β̄ (Theorem 3.2), O-constant 1.
        beta: β (Lemma C.5), O-constant 1.
        update_bound: dH log(1 + K/(d λ̃_Λ)), the order of the number of policy updates (Theorem 3.2).
    """

    d: int
    H: int
    K: int
    rho: float
    delta: float
    c1: float
    c2: float
    rho0: float
    vector_noise_variance: float
    phi3_noise_variance: float
    goe_entry_variance: float
    L: float
    lambda_tilde: float
    initial_gram_diagonal: float
    beta_hat: float
    beta_check: float
    beta_bar: float
    beta: float
    update_bound: float

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def dp_lsvi_ucbpp_constants(
    *, d: int, H: int, K: int, rho: float, delta: float, c1: float = DEFAULT_C1, c2: float = DEFAULT_C2
) -> DpLsviUcbppConstants:
    """Evaluate the constants of Sahu 2025 (Lemma A.1, Theorem 3.2, Lemma C.5) at numbers.

    Args:
        d: feature dimension (integer ≥ 1).
        H: horizon (integer ≥ 1).
        K: number of episodes (integer ≥ 1).
        rho: total zCDP budget ρ > 0 of Algorithm 1.
        delta: failure probability δ in (0, 1) of the analysis (not the privacy δ′).
        c1, c2: the universal constants of Lemma A.1 (defaults justified in the module docstring).

    Example::

        c = dp_lsvi_ucbpp_constants(d=10, H=20, K=1000, rho=0.5, delta=0.01)
        c.beta_hat, c.lambda_tilde
    """
    values = (
        _validate.integer("d", d, minimum=1),
        _validate.integer("H", H, minimum=1),
        _validate.integer("K", K, minimum=1),
        _validate.positive("rho", rho),
        _validate.open_unit("delta", delta),
        _validate.positive("c1", c1),
        _validate.positive("c2", c2),
    )
    if 5 * values[5] * values[1] / values[4] <= 1:
        raise InvalidParameterError("c1", "must make 5*c1*H/delta > 1 (Lemma A.1 takes its logarithm)", c1)
    numbers = {}
    for name in EXPRESSIONS:
        try:
            x = float(_compiled(name)(*values))
        except (OverflowError, ValueError) as exc:
            raise NumericalError(f"constant {name} could not be evaluated: {exc}") from exc
        if not math.isfinite(x) or x < 0:
            raise NumericalError(f"constant {name} evaluated to {x}")
        numbers[name] = x
    return DpLsviUcbppConstants(
        d=values[0], H=values[1], K=values[2], rho=values[3], delta=values[4], c1=values[5], c2=values[6], **numbers
    )
