"""Every relative link of README.md and docs/ leads somewhere: the file exists and, with a #fragment, one of
its headings has that anchor (GitHub's rule: lower case, punctuation dropped, spaces to hyphens)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def anchor(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a page's headings; a repeated one gets -1, -2, … as GitHub numbers them."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for line in text.splitlines():
        if line.startswith("#"):
            base = anchor(line.lstrip("#"))
            found.add(base if base not in seen else f"{base}-{seen[base]}")
            seen[base] = seen.get(base, 0) + 1
    return found


def broken_links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http(s) and mailto links are not checked here
        file, _, fragment = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        if not path.exists():
            broken.append(target)
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            broken.append(target)
    return broken


def test_the_anchor_rule() -> None:
    assert anchor("Step-level agents: `act(h, state)`") == "step-level-agents-acth-state"
    assert anchor("Clopper–Pearson bounds are verified") == "clopperpearson-bounds-are-verified"


def test_every_relative_link_resolves() -> None:
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("**/*.md"))]
    found = {str(p.relative_to(ROOT)): broken_links(p) for p in pages}
    assert {page: links for page, links in found.items() if links} == {}
