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
