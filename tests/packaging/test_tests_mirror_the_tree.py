"""The test tree mirrors the source tree (CONTRIBUTING.md, "Layout and dependency direction").

* Every folder of test modules mirrors a source package: ``tests/dpverify/<p>/`` ↔ ``dpverify/<p>/``,
  ``tests/agents/<p>/`` ↔ ``agents/<p>/``, ``tests/audits/`` ↔ ``audits/``, ``tests/cli/`` ↔ ``dpverify/cli/``;
  ``tests/docs/`` and ``tests/packaging/`` test the documentation and the repository itself.
* A test file named after a module of its mirrored package tests that module (``test_<module>.py``); any
  other name is a concern that spans modules (``test_validity.py``), and never repeats the package's own name
  as a prefix (``tests/dpverify/verify/test_verify_core.py`` would be ``test_core.py``).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
#: Test folders that test something other than a source package.
OWN_SUBJECT = {"docs", "packaging"}


def _mirrored_package(folder: Path) -> Path | None:
    parts = folder.relative_to(TESTS).parts
    if not parts:
        return ROOT / "dpverify"
    if parts[0] in OWN_SUBJECT:
        return None
    if parts[0] == "cli":
        return ROOT / "dpverify" / "cli" / Path(*parts[1:])
    return ROOT / Path(*parts)


def _test_folders() -> list[Path]:
    return sorted({p.parent for p in TESTS.rglob("test_*.py")})


def test_every_test_folder_mirrors_a_source_package() -> None:
    unmatched = [str(f.relative_to(ROOT)) for f in _test_folders()
                 if (package := _mirrored_package(f)) is not None and not (package / "__init__.py").exists()]
    assert unmatched == []


def test_no_test_file_repeats_its_package_name_as_a_prefix() -> None:
    offenders = []
    for folder in _test_folders():
        package = _mirrored_package(folder)
        if package is None:
            continue
        for test in folder.glob("test_*.py"):
            name = test.stem.removeprefix("test_")
            if name.startswith(package.name + "_") and not (package / f"{name}.py").exists():
                offenders.append(str(test.relative_to(ROOT)))
    assert offenders == []


def test_the_rule_catches_a_prefixed_name(tmp_path: Path) -> None:
    # The negative control: the prefix rule flags the name it forbids and clears the mirrored one.
    package = ROOT / "dpverify" / "verify"
    flagged = [n for n in ("verify_core", "core") if n.startswith(package.name + "_")
               and not (package / f"{n}.py").exists()]
    assert flagged == ["verify_core"]
