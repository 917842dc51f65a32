"""The layers the imports show: the core and the generic audit engine never import an agent or the CLI, and
the agents' shared core (``agents/core``) never imports an agent family.

Every import statement of a core module is read — at module level and inside functions alike, relative
imports resolved — so a lazy import cannot hide an edge of the graph. The core is the accounting,
calibration, conversion, mechanism and bound modules and the generic audit engine ``dpverify/audit`` (the
agent audits, ``dpverify/agent_audit``, sit above the agents); ``dpverify/__init__.py`` is the façade and may
name anything lazily. Under ``agents/``, one package per family (``nonprivate``, ``dp_lsvi_ucb_pp``, …) stands
on ``agents/core`` and ``agents/envs``; the core reaches the families only by name, through the registry.
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
AGENTS = ROOT / "agents"
#: What ``agents/core`` may import of ``dpverify.agents``: itself, the environments and the registry (the runner
#: builds agents by their registered name; the registry names the families' factories as strings).
CORE_MAY_IMPORT = ("dpverify.agents.core", "dpverify.agents.envs", "dpverify.agents.registry")


def _core_modules() -> list[Path]:
    files = [p for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    files += sorted((PACKAGE / "bounds").glob("*.py"))
    files += sorted((PACKAGE / "audit").glob("*.py"))
    return sorted(files)


def _agents_core_modules() -> list[Path]:
    return sorted((AGENTS / "core").glob("*.py"))


def _package_of(path: Path) -> str:
    """The package a module's relative imports start from: agents/ is dpverify.agents (through the link)."""
    parts = path.resolve().relative_to(ROOT).parts[:-1]
    return ".".join(parts if parts[:1] == ("dpverify",) else ("dpverify", *parts))


def _imported_modules(path: Path, package: str | None = None) -> set[str]:
    """Every module an import statement of ``path`` names, relative imports resolved from ``package``
    (default: the package of ``path`` in the tree)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                parts = (package if package is not None else _package_of(path)).split(".")
                module = ".".join([*parts[:len(parts) - node.level + 1], *filter(None, [node.module])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
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
    planted.write_text("def f():\n    from dpverify.agents.registry import AGENTS\n    return AGENTS\n"
                       "def g():\n    from ..tree_lsvi.luyo import LuyoAgent\n    from .billboard import Billboard\n"
                       "    from .. import registry\n")
    names = _imported_modules(planted, package="dpverify.agents.core")
    assert {"dpverify.agents.registry", "dpverify.agents.tree_lsvi.luyo", "dpverify.agents.core.billboard"} <= names


def test_no_agents_core_module_imports_an_agent_family():
    """agents/core reads no family (nonprivate, dp_lsvi_ucb_pp, …), relative imports included."""
    modules = _agents_core_modules()
    assert {"base.py", "billboard.py", "private.py", "statistics.py", "runner.py"} <= {p.name for p in modules}
    bad = {p.relative_to(ROOT).as_posix(): sorted(
        n for n in _imported_modules(p)
        if n.startswith("dpverify.agents.") and not n.startswith(CORE_MAY_IMPORT)
        or n.startswith(("dpverify.audits", "dpverify.cli"))) for p in modules}
    assert not {path: names for path, names in bad.items() if names}
