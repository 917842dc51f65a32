"""Fixture ``paper_text``: the plain-text renderings of the papers the registry quotes, where they are present.

The texts are not part of the repository. A checkout may sit next to a folder holding them: the
directory named by the environment variable ``DPVERIFY_PAPERS_DIR`` is searched first, then every
``papers`` folder one level below an ancestor of the repository. A text is recognised by its first
line, the paper's title (:data:`dpverify.bounds.registry.PAPER_TEXTS`); tests that need a text skip
with the reason when it is not found.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from dpverify.bounds.registry import PAPER_TEXTS

ENV_VAR = "DPVERIFY_PAPERS_DIR"
_REPO = Path(__file__).resolve().parents[3]


def _candidate_dirs() -> list[Path]:
    dirs = [Path(os.environ[ENV_VAR])] if os.environ.get(ENV_VAR) else []
    for ancestor in _REPO.parents:
        dirs.extend(sorted(p for p in ancestor.glob("*/papers") if p.is_dir()))
    return dirs


def _first_line(path: Path) -> str:
    try:
        with path.open(encoding="utf-8") as f:
            return f.readline().strip()
    except (OSError, UnicodeDecodeError):
        return ""


@functools.cache
def paper_lines(key: str) -> list[str] | None:
    """The lines of the text of paper ``key`` (a key of PAPER_TEXTS), or None when it is not found."""
    title = PAPER_TEXTS[key]
    for directory in _candidate_dirs():
        for path in sorted(directory.glob("*.txt")):
            if _first_line(path) == title:
                return path.read_text(encoding="utf-8").splitlines()
    return None


@pytest.fixture
def paper_text() -> Callable[[str], list[str]]:
    """``paper_text(key)``: the lines of that paper's text; skips the test, saying why, when absent."""

    def lines_of(key: str) -> list[str]:
        lines = paper_lines(key)
        if lines is None:
            pytest.skip(
                f"the text of {PAPER_TEXTS[key]!r} was not found (set {ENV_VAR} to a folder holding it "
                "as a .txt file whose first line is the title)"
            )
        return lines

    return lines_of
