"""The installed layout: agents/ and audits/ map under the dpverify namespace, and every sub-package
of the source tree is listed in pyproject.toml (a missing entry would be absent from a wheel)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]


def _setuptools_table() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _source_packages() -> set[str]:
    mapping = {value: key for key, value in _setuptools_table()["package-dir"].items()}
    found = set()
    for folder, package in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *relative)))
    return found


def test_every_source_package_is_listed_for_installation():
    assert set(_setuptools_table()["packages"]) == _source_packages()


def test_agents_and_audits_import_under_the_dpverify_namespace():
    assert Path(importlib.import_module("dpverify.agents").__file__).parent == ROOT / "agents"
    assert Path(importlib.import_module("dpverify.audits").__file__).parent == ROOT / "audits"


def test_a_source_checkout_imports_the_agents_without_installation(tmp_path):
    """Run from the repository with no dpverify installed (only the checkout on sys.path), the agents and
    audits still import under the dpverify namespace."""
    import subprocess
    import sys

    code = ("import sys; "
            # drop an editable install's import hooks, so only the checkout on sys.path can answer
            "sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]; "
            "sys.path_hooks[:] = [h for h in sys.path_hooks if '__editable__' not in getattr(h, '__module__', '')]; "
            "sys.path_importer_cache.clear(); sys.path.insert(0, sys.argv[1]); "
            "import dpverify.agents.base, dpverify.audits.zoo, dpverify; "
            "assert dpverify.__file__.startswith(sys.argv[1]), dpverify.__file__")
    subprocess.run([sys.executable, "-c", code, str(ROOT)], check=True, cwd=tmp_path)


def test_the_pytest_plugin_loads_no_audit_engine_and_no_agents():
    """The plugin is loaded in every pytest session of a project that installs dpverify: it stays light."""
    import subprocess
    import sys

    code = ("import sys, dpverify.testing.pytest_plugin, dpverify.testing; "
            "heavy = [m for m in sys.modules if m.startswith(('dpverify.agents', 'dpverify.audit', 'scipy'))]; "
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)
