"""The conversion registry: the built-in routes, and a new registered route used everywhere."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest

from dpverify import conversions
from dpverify.agents.dp_lsvi_ucb_pp.schedule import dp_lsvi_ucbpp_schedule
from dpverify.calibration import calibrate
from dpverify.conversions import (
    CONVERSION_REGISTRY,
    CONVERSIONS,
    Conversion,
    epsilon_bun_steinke,
    epsilon_from_rho,
    get_conversion,
    register_conversion,
    rho_for_epsilon_delta,
)
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import GaussianMechanism, LaplaceMechanism


def test_builtins_are_registered_loosest_first():
    assert CONVERSIONS == tuple(CONVERSION_REGISTRY) == ("bun-steinke", "cks", "exact")
    assert [c.gaussian_only for c in CONVERSION_REGISTRY.values()] == [False, False, True]
    with pytest.raises(InvalidParameterError, match="conversion must be one of bun-steinke, cks, exact"):
        get_conversion("renyi")


def test_registration_rejects_duplicates_and_non_conversions(monkeypatch):
    monkeypatch.setattr(conversions, "_REGISTRY", dict(conversions._REGISTRY))
    with pytest.raises(InvalidParameterError, match="conversion.name"):
        register_conversion(get_conversion("cks"))
    with pytest.raises(InvalidParameterError, match="Conversion"):
        register_conversion("cks")  # type: ignore[arg-type]


def _doubled(rho: float, delta: float) -> float:
    return 2.0 * epsilon_bun_steinke(rho, delta)


def _doubled_inverse(epsilon: float, delta: float) -> float:
    return rho_for_epsilon_delta(epsilon / 2.0, delta, "bun-steinke")


def test_a_registered_conversion_reaches_ledger_calibration_and_cli(monkeypatch):
    from dpverify.cli import main

    monkeypatch.setitem(conversions._REGISTRY, "doubled", Conversion("doubled", "twice Bun-Steinke", _doubled,
                                                                      _doubled_inverse))
    assert epsilon_from_rho(0.1, 1e-5, "doubled") == 2 * epsilon_from_rho(0.1, 1e-5, "bun-steinke")
    ledger = PrivacyLedger("replace-one")
    ledger.record("x", 1, 1, LaplaceMechanism(1.0, 2.0), users="current")
    assert "doubled" in ledger.account(1e-5).epsilon and "exact" not in ledger.account(1e-5).epsilon
    cal = calibrate(dp_lsvi_ucbpp_schedule(2, 10, 3), 1.0, 1e-5, conversion="doubled")
    assert cal.accounted_epsilon <= 1.0
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["convert", "--rho", "0.1", "--json"]) == 0
    assert json.loads(out.getvalue())["notes"]["doubled"] == "twice Bun-Steinke"


def test_gaussian_only_routes_are_refused_for_other_releases():
    ledger = PrivacyLedger("replace-one")
    ledger.record("x", 1, 1, GaussianMechanism(1.0, 2.0), users="current")
    ledger.record("y", 1, 1, LaplaceMechanism(1.0, 2.0), users="current")
    with pytest.raises(InvalidParameterError, match="'exact' needs every release to be Gaussian"):
        ledger.guarantee(1e-5, "exact")
