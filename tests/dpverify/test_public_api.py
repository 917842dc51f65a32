"""The package's public names: every one resolves to its defining module's object, lazily."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import dpverify


@pytest.mark.parametrize("name", [n for n in dpverify.__all__ if n != "__version__"])
def test_every_public_name_is_the_object_of_its_module(name: str) -> None:
    module = importlib.import_module(dpverify._EXPORTS[name])
    assert getattr(dpverify, name) is getattr(module, name)
    assert name in dir(dpverify)


def test_version_is_a_string() -> None:
    assert isinstance(dpverify.__version__, str) and dpverify.__version__


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        dpverify.no_such_name


def test_import_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, dpverify; "
        "heavy = [m for m in ('scipy.optimize', 'sympy', 'matplotlib', 'numpy') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_a_public_name_works_end_to_end() -> None:
    ledger = dpverify.PrivacyLedger("replace-one")
    ledger.record("x", 1, 1, dpverify.GaussianMechanism(1.0, 4.0), users="current")
    accounted = ledger.guarantee(1e-5, "exact").epsilon
    claimed = dpverify.GaussianMechanism(1.0, 4.0).claimed_epsilon(1e-5)
    assert accounted == pytest.approx(claimed, rel=1e-12) and accounted >= claimed  # the ledger rounds ρ up
