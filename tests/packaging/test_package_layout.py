"""The layout: agents/ and audits/ stay real folders at the repository root and are the packages
dpverify.agents and dpverify.audits through the committed relative links
dpverify/agents -> ../agents and dpverify/audits -> ../audits; every sub-package of the tree is
listed in pyproject.toml (a missing entry would be absent from a wheel)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dpverify"
LINKED = ("agents", "audits")


def _setuptools_table() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _source_packages() -> set[str]:
    """Every folder with an ``__init__.py`` under dpverify/, the linked folders followed."""
    found = set()
    for folder, _, files in os.walk(PACKAGE, followlinks=True):
        if "__init__.py" in files:
            found.add(".".join(Path(folder).relative_to(ROOT).parts))
    return found


def test_every_source_package_is_listed_for_installation():
    assert {"dpverify.agents.envs", "dpverify.audits.third_party"} <= _source_packages()
    assert set(_setuptools_table()["packages"]) == _source_packages()


def test_no_package_dir_mapping_is_needed():
    """The links carry the layout: setuptools, mypy and a bare checkout read the same tree."""
    assert "package-dir" not in _setuptools_table()


@pytest.mark.parametrize("name", LINKED)
def test_the_agents_and_audits_are_relative_links_to_the_top_level_folders(name):
    link = PACKAGE / name
    assert link.is_symlink(), f"dpverify/{name} must be the committed link to ../{name}, not a copy"
    assert os.readlink(link) == f"../{name}"
    assert (ROOT / name).is_dir() and not (ROOT / name).is_symlink()


def test_agents_and_audits_import_under_the_dpverify_namespace():
    for name in LINKED:
        module = importlib.import_module(f"dpverify.{name}")
        assert Path(module.__file__).parent == PACKAGE / name
        assert Path(module.__file__).resolve().parent == ROOT / name


def test_a_source_checkout_imports_the_agents_without_installation(tmp_path):
    """Run from the repository with no dpverify installed (only the checkout on sys.path), the agents and
    audits import under the dpverify namespace, from the checkout."""
    code = ("import sys; "
            # drop an editable install's import hooks, so only the checkout on sys.path can answer
            "sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in getattr(f, '__module__', '')]; "
            "sys.path_hooks[:] = [h for h in sys.path_hooks if '__editable__' not in getattr(h, '__module__', '')]; "
            "sys.path_importer_cache.clear(); sys.path.insert(0, sys.argv[1]); "
            "import dpverify.agents.core.base, dpverify.audits.zoo, dpverify; "
            "assert dpverify.__file__.startswith(sys.argv[1]), dpverify.__file__; "
            "base = dpverify.agents.core.base.__file__; assert base.startswith(sys.argv[1]), base")
    subprocess.run([sys.executable, "-c", code, str(ROOT)], check=True, cwd=tmp_path)


def test_the_pytest_plugin_loads_no_audit_engine_and_no_agents():
    """The plugin is loaded in every pytest session of a project that installs dpverify: it stays light."""
    code = ("import sys, dpverify.testing.pytest_plugin, dpverify.testing; "
            "heavy = [m for m in sys.modules if m.startswith(('dpverify.agents', 'dpverify.audit', 'scipy'))]; "
            "assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", code], check=True)
