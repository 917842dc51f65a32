"""Rewrite the output of every ``$ dpverify …`` transcript in the opted-in Markdown files.

Run after changing a command's output:  python docs/update_examples.py
tests/docs/test_docs_examples.py fails until the docs match the commands again.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

from dpverify.cli import main

ROOT = Path(__file__).resolve().parents[1]
MARK = "<!-- examples: checked -->"
FENCE = re.compile(r"^```console\n(.*?)^```", re.S | re.M)


def render(block: str) -> str:
    lines: list[str] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                main(shlex.split(line[2:])[1:])
            lines.append(line)
            lines.extend(out.getvalue().splitlines())
    return "\n".join(lines) + "\n"


def update(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    new = FENCE.sub(lambda m: "```console\n" + render(m.group(1)) + "```", text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]:
        if p.exists() and MARK in p.read_text(encoding="utf-8") and update(p):
            print(f"updated {p.relative_to(ROOT)}")
