"""The layers the imports show: the core and the generic audit engine never import an agent or the CLI.

Every import statement of a core module is read — at module level and inside functions alike — so a lazy
import cannot hide an edge of the graph. The core is the accounting, calibration, conversion, mechanism and
bound modules and the generic audit engine ``dpverify/audit`` (the agent audits, ``dpverify/agent_audit``, sit
above the agents); ``dpverify/__init__.py`` is the façade and may name anything lazily.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dpverify"
#: Above the agents: they build and run agents (the CLI, verify, the white-box checks, the agent audits, the
#: users' test helpers and the adapters that wrap third-party agents).
ABOVE_THE_AGENTS = ("cli", "verify", "whitebox", "testing", "adapters", "agent_audit")


def _core_modules() -> list[Path]:
    files = [p for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    files += sorted((PACKAGE / "bounds").glob("*.py"))
    files += sorted((PACKAGE / "audit").glob("*.py"))
    return sorted(files)


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_core_list_is_not_empty_and_names_the_engine():
    names = {p.relative_to(PACKAGE).as_posix() for p in _core_modules()}
    assert {"calibration.py", "ledger.py", "audit/engine.py", "audit/one_run_fdp.py", "bounds/registry.py"} <= names
    assert not any(n.startswith(ABOVE_THE_AGENTS) for n in names)


@pytest.mark.parametrize("path", _core_modules(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_core_module_imports_an_agent(path: Path):
    bad = sorted(n for n in _imported_modules(path)
                 if n in ("dpverify.agents", "dpverify.cli") or n.startswith(("dpverify.agents.", "dpverify.audits",
                                                                              "dpverify.cli.")))
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_the_reader_sees_every_import_even_inside_a_function(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def f():\n    from dpverify.agents.registry import AGENTS\n    return AGENTS\n")
    assert "dpverify.agents.registry" in _imported_modules(planted)
