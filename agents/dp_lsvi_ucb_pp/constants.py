"""The constants of Sahu 2025 (Lemma A.1, Theorem 3.2) evaluated for the noise DP-LSVI-UCB++ actually adds.

The paper states L, λ̃_Λ and the radii β̂, β̌, β̄ for its printed noise (φ1, φ2 ~ N(0, 2H²/ρ0), K1 with entry
variance 1/(4ρ0); Algorithm 1 line 1). The noise added by :class:`dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp.
DpLsviUcbPlusPlus` is the calibrated one, so the constants are evaluated at the ρ at which the printed noise
*equals* the calibrated noise: for the GOE entry std s, ρ_Λ = HK/s² (then 1/(4ρ0) = s²) gives λ̃_Λ; for the
vector std σ̂, ρ_L = 8H³K/σ̂² (then 2H²/ρ0 = σ̂²) gives L (and ‖φ3‖ ≤ H·L holds because σ̄/σ̂ = H in both
sensitivity models). The radii are then β̂ = β̌ = HL√(dλ̃_Λ) + √(d³H²ι₂²) and β̄ = H²L²√(dλ̃_Λ) + √(d³H⁴ι₂²)
with ι₂ = max{1, log(HK⁴L²d/(p λ̃_Λ))} (:data:`dpverify.bounds.constants.PRINTED`, the single source; the max
keeps the O(·) logarithm ≥ 1 when the noise is tiny). Each radius is split into its privacy term (the one with
L) and its statistical term, which the agent multiplies by separate multipliers.
"""

from __future__ import annotations

import functools
import math

import sympy

from dpverify.bounds import constants as paper_constants
from dpverify.bounds.symbols import H as H_symbol
from dpverify.bounds.symbols import K as K_symbol
from dpverify.bounds.symbols import d as d_symbol
from dpverify.bounds.symbols import delta as delta_symbol
from dpverify.calibration import Calibration


@functools.cache
def _printed_radius(name: str, part: str):
    """One term of β of Theorem 3.2 as printed (in L and λ̃_Λ), with ι₂ floored at 1 (module docstring).

    ``part="privacy"`` is the term with L (HL√(dλ̃_Λ), or H²L²√(dλ̃_Λ) for β̄: it covers the privacy
    noise), ``part="statistical"`` the rest (√(d³H²ι₂²), or √(d³H⁴ι₂²): the non-private radius).
    """
    iota = sympy.Symbol("iota2", positive=True)
    expr = paper_constants.PRINTED[name]
    log_term = sympy.log(H_symbol * K_symbol**4 * paper_constants.L_symbol**2 * d_symbol
                         / (delta_symbol * paper_constants.lambda_symbol))
    expr = expr.subs(log_term, iota)
    privacy = sympy.Add(*[t for t in sympy.Add.make_args(expr) if t.has(paper_constants.L_symbol)])
    term = privacy if part == "privacy" else sympy.simplify(expr - privacy)
    args = (d_symbol, H_symbol, K_symbol, delta_symbol, paper_constants.L_symbol, paper_constants.lambda_symbol, iota)
    return sympy.lambdify(args, term, modules="math")


def noise_constants(calibration: Calibration, dim: int, horizon: int, episodes: int,
                    failure_probability: float) -> dict[str, float]:
    """L, λ̃_Λ (Lemma A.1) and β̂, β̌, β̄ (Theorem 3.2, O-constant 1) for the calibrated noise.

    Lemma A.1 is stated for the printed noise at budget ρ; it is evaluated at the ρ for which the
    printed noise equals the calibrated one: ρ_Λ = HK/s² for the GOE entry std s, ρ_L = 8H³K/σ̂² for
    the std σ̂ of the w_hat/w_check noise, the largest over the stages where it differs by stage (module
    docstring).
    """
    sigma_hat = max(calibration.mechanism("w_hat", h).noise_scale  # the largest over the stages
                    for h in calibration.released_stages("w_hat"))
    return noise_constants_for_std(calibration.mechanism("gram").noise_scale,  # the GOE entry std
                                   sigma_hat, dim, horizon, episodes, failure_probability)


def noise_constants_for_std(s: float, sigma_hat: float, dim: int, horizon: int, episodes: int,
                            failure_probability: float) -> dict[str, float]:
    """:func:`noise_constants` for a Gram noise of GOE entry std ``s`` and a noise of std ``sigma_hat`` per
    coordinate on the ŵ/w̌ sums (the tree variant passes the std of its prefix sums)."""
    rho_lambda = horizon * episodes / s**2
    rho_l = 8.0 * horizon**3 * episodes / sigma_hat**2
    lam = paper_constants.dp_lsvi_ucbpp_constants(d=dim, H=horizon, K=episodes, rho=rho_lambda,
                                                  delta=failure_probability).lambda_tilde
    big_l = paper_constants.dp_lsvi_ucbpp_constants(d=dim, H=horizon, K=episodes, rho=rho_l,
                                                    delta=failure_probability).L
    iota2 = max(1.0, math.log(horizon * float(episodes) ** 4 * big_l**2 * dim / (failure_probability * lam)))
    values = {"L": big_l, "lambda_tilde": lam, "iota2": iota2, "rho_lambda": rho_lambda, "rho_L": rho_l}
    for name in ("beta_hat", "beta_check", "beta_bar"):
        for part in ("privacy", "statistical"):
            values[f"{name}_{part}"] = float(
                _printed_radius(name, part)(dim, horizon, episodes, failure_probability, big_l, lam, iota2))
        values[name] = values[f"{name}_privacy"] + values[f"{name}_statistical"]
    return values


__all__ = ["noise_constants", "noise_constants_for_std"]
