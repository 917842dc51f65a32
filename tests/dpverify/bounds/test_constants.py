"""The constants of Sahu 2025 (Lemma A.1, Theorem 3.2, Lemma C.5) against hand computation."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import sympy

from dpverify.bounds import constants
from dpverify.bounds.constants import EXPRESSIONS, PRINTED, dp_lsvi_ucbpp_constants
from dpverify.errors import InvalidParameterError

ARGS = {"d": 10, "H": 20, "K": 1000, "rho": 0.5, "delta": 0.01}


def _by_hand(d, H, K, rho, delta, c1=2.0, c2=1.0) -> dict[str, float]:
    L = 4 * H * math.sqrt(d * H * K / rho * math.log(10 * d * K * H / delta))
    lam = math.sqrt(8 * d * H * K / rho) * (2 + (math.log(5 * c1 * H / delta) / (c2 * d)) ** (2 / 3))
    iota2 = math.log(H * K**4 * L**2 * d / (delta * lam))
    return {
        "rho0": rho / (4 * H * K),
        "L": L,
        "lambda_tilde": lam,
        "beta_hat": H * L * math.sqrt(d * lam) + math.sqrt(d**3 * H**2 * iota2**2),
        "beta_bar": H**2 * L**2 * math.sqrt(d * lam) + math.sqrt(d**3 * H**4 * iota2**2),
        "beta": H * L * math.sqrt(d * lam) + math.sqrt(d * math.log(1 + H * K**4 * L**2 * d / (delta * lam)) ** 2),
        "update_bound": d * H * math.log(1 + K / (d * lam)),
    }


@pytest.mark.parametrize(
    "args",
    [
        ARGS,
        {"d": 2, "H": 3, "K": 50, "rho": 10.0, "delta": 0.1},
        {"d": 5, "H": 6, "K": 10**4, "rho": 0.01, "delta": 1e-6},
    ],
)
def test_constants_match_hand_computation(args: dict) -> None:
    c = dp_lsvi_ucbpp_constants(**args)
    for name, value in _by_hand(**args).items():
        assert getattr(c, name) == pytest.approx(value, rel=1e-12), name
    assert c.beta_check == c.beta_hat
    assert c.initial_gram_diagonal == pytest.approx(2 * c.lambda_tilde, rel=1e-15)
    rho0 = args["rho"] / (4 * args["H"] * args["K"])
    assert c.vector_noise_variance == pytest.approx(2 * args["H"] ** 2 / rho0, rel=1e-14)
    assert c.phi3_noise_variance == pytest.approx(2 * args["H"] ** 4 / rho0, rel=1e-14)
    assert c.goe_entry_variance == pytest.approx(1 / (4 * rho0), rel=1e-14)


def test_result_is_frozen_and_complete() -> None:
    c = dp_lsvi_ucbpp_constants(**ARGS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.L = 1.0  # type: ignore[misc]
    assert set(EXPRESSIONS) <= set(c.as_dict())


def test_expressions_are_the_printed_radii_with_l_and_lambda_substituted() -> None:
    for name, printed in PRINTED.items():
        substituted = printed.subs(
            {constants.L_symbol: EXPRESSIONS["L"], constants.lambda_symbol: EXPRESSIONS["lambda_tilde"]}
        )
        assert sympy.simplify(substituted - EXPRESSIONS[name]) == 0
    # Free symbols: only the documented inputs.
    allowed = {"d", "H", "K", "rho", "delta", "c1", "c2"}
    for expr in EXPRESSIONS.values():
        assert {s.name for s in expr.free_symbols} <= allowed


def test_sympy_evaluation_agrees_with_the_compiled_one() -> None:
    c = dp_lsvi_ucbpp_constants(**ARGS)
    subs = {sympy.Symbol(k, positive=True): v for k, v in {**ARGS, "c1": 2, "c2": 1}.items()}
    for name, expr in EXPRESSIONS.items():
        exact = float(sympy.N(expr.subs(subs), 30))
        assert getattr(c, name) == pytest.approx(exact, rel=1e-12), name


def test_noise_stays_within_the_lemma_a1_bounds() -> None:
    """Lemma A.1 with the default c1, c2: sampled noise norms are below L, H·L and λ̃ (seeded)."""
    c = dp_lsvi_ucbpp_constants(d=6, H=4, K=50, rho=1.0, delta=0.05)
    rng = np.random.default_rng(np.random.SeedSequence(2026))
    phi = rng.normal(0.0, math.sqrt(c.vector_noise_variance), size=(4000, 6))
    phi3 = rng.normal(0.0, math.sqrt(c.phi3_noise_variance), size=(4000, 6))
    assert np.linalg.norm(phi, axis=1).max() <= c.L
    assert np.linalg.norm(phi3, axis=1).max() <= c.H * c.L
    z = rng.normal(0.0, math.sqrt(c.goe_entry_variance), size=(2000, 6, 6))
    goe = (z + np.transpose(z, (0, 2, 1))) / math.sqrt(2)
    norms = np.abs(np.linalg.eigvalsh(goe)).max(axis=1)
    assert norms.max() <= c.lambda_tilde
    # The GOE bound used to justify c1 = 2, c2 = 1: E λ_max ≤ 2√d σ, so the mean norm is near it.
    assert norms.mean() <= 2 * math.sqrt(6) * math.sqrt(c.goe_entry_variance) * 1.1


@pytest.mark.parametrize(
    ("override", "match"),
    [
        ({"d": 0}, "d must be an integer >= 1"),
        ({"H": 2.5}, "H must be an integer"),
        ({"K": -3}, "K must be an integer >= 1"),
        ({"rho": 0}, "rho must be > 0"),
        ({"delta": 1.0}, "delta must be in the open interval"),
        ({"c2": -1}, "c2 must be > 0"),
        ({"c1": 1e-9}, "c1 must make 5\\*c1\\*H/delta > 1"),
    ],
)
def test_invalid_inputs_are_rejected(override: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        dp_lsvi_ucbpp_constants(**{**ARGS, **override})


def test_integral_floats_are_accepted() -> None:
    assert dp_lsvi_ucbpp_constants(**{**ARGS, "K": 1e3}).K == 1000


def test_the_constants_load_without_the_comparison_machinery() -> None:
    """An agent that reads only the constants does not import scipy.optimize (the package resolves lazily)."""
    import subprocess
    import sys

    code = (
        "import sys; from dpverify.bounds import constants; import dpverify.bounds as b; "
        "before = [m for m in ('scipy.optimize', 'dpverify.bounds.comparison') if m in sys.modules]; "
        "b.compare; after = 'dpverify.bounds.comparison' in sys.modules; "
        "print(','.join(before), after)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "True"  # nothing heavy before; the comparison module once a name of it is read
