"""Examples in README.md and docs/*.md are executed, so they cannot rot.

A Markdown file opts in with the line ``<!-- examples: checked -->``. Then

- every ```python block runs (blocks of one file share a namespace, top to bottom); its asserts are
  the checks;
- every ```console block is a transcript: a line ``$ dpverify ARGS`` runs the command in-process and
  the lines up to the next ``$`` line must equal its standard output exactly.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from dpverify.cli import main

ROOT = Path(__file__).resolve().parents[2]
MARK = "<!-- examples: checked -->"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def checked_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    return [f for f in files if f.exists() and MARK in f.read_text(encoding="utf-8")]


def run_cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


def transcripts(block: str) -> list[tuple[list[str], str]]:
    items: list[tuple[list[str], str]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            argv = shlex.split(line[2:])
            assert argv[0] == "dpverify", f"console examples run dpverify only: {line}"
            items.append((argv[1:], ""))
        elif items:
            argv, text = items[-1]
            items[-1] = (argv, text + line + "\n")
    return items


#: Pages whose examples run audits for seconds: in the slow pass (``pytest -m slow``).
SLOW_PAGES = ("docs/auditing.md", "docs/testing.md", "docs/verify.md")


def example_params() -> list[object]:
    return [pytest.param(p, marks=pytest.mark.slow if str(p.relative_to(ROOT)) in SLOW_PAGES else (),
                         id=str(p.relative_to(ROOT))) for p in checked_files()]


@pytest.mark.parametrize("path", example_params())
def test_examples(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_example"}
    for lang, body in FENCE.findall(path.read_text(encoding="utf-8")):
        if lang == "python":
            exec(compile(body, str(path), "exec"), namespace)
        elif lang == "console":
            for argv, expected in transcripts(body):
                code, out = run_cli(argv)
                assert code == 0, f"{path.name}: dpverify {' '.join(argv)} exited {code}"
                assert out == expected, f"{path.name}: output of `dpverify {' '.join(argv)}` differs from the docs"


def test_readme_is_checked() -> None:
    assert ROOT / "README.md" in checked_files()
