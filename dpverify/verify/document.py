"""A report as one description — sections of blocks — and the renderers that read it.

:func:`dpverify.verify.report.describe` describes a verification once; :func:`render_text` (the terminal),
:func:`render_markdown` (report.md) and :func:`render_html` (report.html: self-contained, its style inline,
its figures embedded as base64 PNG) turn that description into each form. A block names the forms it shows
in (``forms``): the terminal shows a summary, the files every table, and where the files word a sentence
differently each has its own block. The renderers know blocks, not verification.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dpverify.checks import CheckResult

TEXT, MARKDOWN, HTML = "text", "markdown", "html"
EVERY: frozenset[str] = frozenset({TEXT, MARKDOWN, HTML})
BOTH_FILES: frozenset[str] = frozenset({MARKDOWN, HTML})


@dataclass(frozen=True)
class Span:
    """Words set apart in HTML (``style`` "b", "code", "strong"), or with no style prose as written (its
    apostrophes not escaped); text and Markdown show the words alone. A plain string is escaped whole."""

    text: str
    style: str = ""


Inline = str | Span


@dataclass(frozen=True, kw_only=True)
class Block:
    forms: frozenset[str] = EVERY  # the forms the block shows in


@dataclass(frozen=True)
class Heading(Block):
    text: str
    level: int = 3


@dataclass(frozen=True)
class Para(Block):
    parts: tuple[Inline, ...] | str
    style: str = ""  # "note" (a side remark: "note:" on the terminal) or "quote"


@dataclass(frozen=True)
class Items(Block):
    items: tuple[str, ...]
    note: bool = False  # each item a side remark
    title: str = ""  # a list under a title (folded away in HTML)


@dataclass(frozen=True)
class Table(Block):
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    status_column: int | None = None  # its cells are statuses (badges in HTML)


@dataclass(frozen=True)
class Checks(Block):
    checks: tuple[CheckResult, ...]


@dataclass(frozen=True)
class Summary(Block):
    rows: tuple[tuple[str, str, str], ...]  # (section, status, finding)


@dataclass(frozen=True)
class FigureRef:
    name: str  # the file's
    alt: str  # what it shows, with its numbers
    caption: str


@dataclass(frozen=True)
class Figures(Block):
    figures: tuple[FigureRef, ...]  # shown when they were drawn
    size: str = ""  # "", "one" or "small"


@dataclass(frozen=True)
class Banner(Block):
    """The verdict at the top of the page (a caveat of None: none shown)."""

    verdict: str
    kind: str
    header: str
    lead: str
    reasons: tuple[str, ...]
    caveat: str | None


@dataclass(frozen=True)
class Footer(Block):
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Section:
    title: str | None  # a heading in the files (the terminal shows none)
    blocks: tuple[Block, ...]
    forms: frozenset[str] = EVERY


@dataclass(frozen=True)
class Document:
    title: str
    sections: tuple[Section, ...]


def _words(parts: tuple[Inline, ...] | str) -> str:
    return parts if isinstance(parts, str) else "".join(p if isinstance(p, str) else p.text for p in parts)


# ---- text --------------------------------------------------------------------------------------------


def _text_table(headers: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> list[str]:
    widths = [max(len(x) for x in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        return "  " + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(headers), "  " + "  ".join("-" * w for w in widths)] + [line(row) for row in rows]


def _text_block(block: Block) -> list[str]:
    if isinstance(block, Para):
        return [("  note: " if block.style == "note" else "") + _words(block.parts)]
    if isinstance(block, Items):
        return [("  note: " if block.note else "  - ") + item for item in block.items]
    if isinstance(block, Table):
        return _text_table(block.headers, block.rows)
    if isinstance(block, Checks):
        return [f"  [{c.status}] {c.name}: {c.reason}" for c in block.checks]
    if isinstance(block, Summary):
        return [f"{title} [{status}]: {line}" for title, status, line in block.rows]
    return [block.text] if isinstance(block, Heading) else []


def render_text(document: Document) -> str:
    """The terminal form: each section's lines, a blank line after each."""
    lines: list[str] = []
    for section in document.sections:
        body = [line for b in section.blocks if TEXT in b.forms for line in _text_block(b)]
        lines += body + [""] if body and TEXT in section.forms else []
    return "\n".join(lines).rstrip() + "\n"


# ---- Markdown ----------------------------------------------------------------------------------------


def _md_table(headers: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> list[str]:
    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return [line(headers), "|" + "---|" * len(headers)] + [line(row) for row in rows] + [""]


def _md_block(block: Block, figures: Mapping[str, Path]) -> list[str]:
    if isinstance(block, Heading):
        return ["#" * block.level + " " + block.text, ""]
    if isinstance(block, Para):
        return [("> " if block.style == "quote" else "") + _words(block.parts), ""]
    if isinstance(block, Items):
        head = [f"{block.title}:", ""] if block.title else []
        return head + [f"- {item}" for item in block.items] + [""] if block.items else []
    if isinstance(block, Table):
        return _md_table(block.headers, block.rows)
    if isinstance(block, Checks):
        return _md_table(("check", "status", "detail"), tuple((c.name, c.status, c.reason) for c in block.checks))
    if isinstance(block, Summary):
        return _md_table(("section", "status", "finding"), block.rows)
    if isinstance(block, Figures):
        return [f"![{f.alt.replace('[', '(').replace(']', ')')}]({f.name})\n" for f in block.figures
                if f.name in figures]
    return []


def render_markdown(document: Document, figures: Mapping[str, Path]) -> str:
    """report.md: every section under its heading, the drawn figures linked by file name."""
    out: list[str] = []
    for section in document.sections:
        if MARKDOWN in section.forms:
            out += [f"## {section.title}", ""] if section.title else []
            out += [line for b in section.blocks if MARKDOWN in b.forms for line in _md_block(b, figures)]
    return "\n".join(out)


# ---- HTML --------------------------------------------------------------------------------------------

_CSS = """
:root { --ink:#111827; --muted:#4b5563; --line:#e5e7eb; --bg:#f9fafb; --pass:#15803d; --fail:#b91c1c;
        --skip:#b45309; --na:#6b7280; }
* { box-sizing:border-box; }
body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
       color:var(--ink); background:var(--bg); }
main { max-width:1080px; margin:0 auto; padding:28px 24px 48px; overflow-wrap:anywhere; }
header.top { color:var(--muted); font-size:13px; margin-bottom:10px; }
.verdict { border-radius:12px; padding:22px 26px; color:#fff; margin-bottom:22px; }
.verdict h1 { margin:0 0 4px; font-size:30px; letter-spacing:.02em; }
.verdict .what { font-size:16px; opacity:.95; }
.verdict ul { margin:12px 0 0; padding-left:20px; }
.verdict .caveat { margin-top:12px; font-size:13px; opacity:.9; }
.v-refuted { background:linear-gradient(135deg,#991b1b,#dc2626); }
.v-consistent { background:linear-gradient(135deg,#166534,#16a34a); }
.v-inconclusive { background:linear-gradient(135deg,#92400e,#d97706); }
h2 { font-size:19px; margin:30px 0 10px; padding-bottom:6px; border-bottom:1px solid var(--line); }
h3 { font-size:15px; margin:18px 0 6px; }
.cards { display:grid; grid-template-columns:repeat(auto-fit,minmax(230px,1fr)); gap:12px; }
.card { background:#fff; border:1px solid var(--line); border-left:5px solid var(--muted); border-radius:8px;
        padding:12px 14px; min-width:0; }
.card.pass { border-left-color:var(--pass); } .card.fail { border-left-color:var(--fail); }
.card.not-run { border-left-color:var(--skip); }
.card .title { font-weight:600; display:flex; justify-content:space-between; align-items:flex-start; gap:8px; }
.card .title .badge { flex-shrink:0; margin-top:2px; } .card .title > span:first-child { min-width:0; }
.card .line { color:var(--muted); font-size:13.5px; margin-top:4px; overflow-wrap:anywhere; }
td { overflow-wrap:anywhere; hyphens:manual; } th { overflow-wrap:normal; }
.badge { display:inline-block; font-size:11.5px; font-weight:700; text-transform:uppercase; letter-spacing:.04em;
         border-radius:999px; padding:1px 9px; color:#fff; background:var(--muted); white-space:nowrap; }
.badge.pass { background:var(--pass); } .badge.fail { background:var(--fail); }
.badge.not-run { background:var(--skip); } .badge.not-applicable { background:var(--na); }
.figs { display:grid; grid-template-columns:repeat(auto-fit,minmax(min(440px,100%),1fr)); gap:14px;
        margin-top:14px; }
.figs.one { grid-template-columns:minmax(0,720px); margin-bottom:10px; }
.figs.small { grid-template-columns:repeat(auto-fit,minmax(300px,360px)); }
figure { margin:0; background:#fff; border:1px solid var(--line); border-radius:8px; padding:10px; min-width:0; }
figure img { width:100%; height:auto; display:block; }
figcaption { color:var(--muted); font-size:12.5px; margin-top:6px; }
table { border-collapse:collapse; width:100%; background:#fff; font-size:13.5px; margin:6px 0 12px; }
th, td { border:1px solid var(--line); padding:5px 8px; text-align:left; vertical-align:top; }
th { background:#f3f4f6; font-weight:600; }
td.num { text-align:right; font-variant-numeric:tabular-nums; }
p.note { color:var(--muted); font-size:13.5px; }
details { margin-top:6px; } summary { cursor:pointer; color:var(--muted); }
footer { margin-top:36px; color:var(--muted); font-size:12.5px; border-top:1px solid var(--line); padding-top:10px; }
code { background:#f3f4f6; padding:0 4px; border-radius:4px; }
"""


def _e(value: str) -> str:
    return html.escape(value, quote=True)


def _badge(status: str) -> str:
    return f'<span class="badge {status.replace(" ", "-")}">{_e(status)}</span>'


def _numeric(text: str) -> bool:
    try:
        float(text.replace("∞", "inf").replace("−", "-").replace(",", ""))
    except ValueError:
        return False
    return True


def _html_table(headers: tuple[str, ...], rows: tuple[tuple[str, ...], ...], status_column: int | None = None) -> str:
    def cell(i: int, value: str) -> str:
        if i == status_column:
            return f"<td>{_badge(value)}</td>"
        return f'<td class="num">{_e(value)}</td>' if _numeric(value) else f"<td>{_e(value)}</td>"

    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(cell(i, v) for i, v in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _inline(parts: tuple[Inline, ...] | str) -> str:
    def one(part: Inline) -> str:
        if isinstance(part, str):
            return _e(part)
        text = html.escape(part.text, quote=False) if not part.style else _e(part.text)
        return f"<{part.style}>{text}</{part.style}>" if part.style else text

    return _e(parts) if isinstance(parts, str) else "".join(one(p) for p in parts)


def _figure(ref: FigureRef, path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure><img alt="{_e(ref.alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_e(ref.caption)}</figcaption></figure>")


def _banner(b: Banner) -> str:
    caveat = f'<div class="caveat">{_e(b.caveat)}</div>' if b.caveat is not None else ""
    reasons = "".join(f"<li>{_e(r)}</li>" for r in b.reasons)
    return (f'<header class="top">{_e(b.header)}</header>\n<section class="verdict v-{b.kind}" id="verdict">\n'
            f'<h1>{_e(b.verdict)}</h1>\n<div class="what">{_e(b.lead)}</div>\n<ul>{reasons}</ul>{caveat}\n</section>')


def _items(block: Items) -> str:
    if block.note:
        return "".join(f'<p class="note">{_e(item)}</p>' for item in block.items)
    items = f"<ul>{''.join(f'<li>{_e(item)}</li>' for item in block.items)}</ul>" if block.items else ""
    return f"<details><summary>{_e(block.title)}</summary>{items}</details>" if block.title and items else items


def _html_block(block: Block, figures: Mapping[str, Path]) -> str:
    if isinstance(block, Heading):
        return f"<h{block.level}>{html.escape(block.text, quote=False)}</h{block.level}>"
    if isinstance(block, Para):
        tag = "blockquote" if block.style == "quote" else "p"
        attribute = f' class="{block.style}"' if block.style == "note" else ""
        return f"<{tag}{attribute}>{_inline(block.parts)}</{tag}>"
    if isinstance(block, Items):
        return _items(block)
    if isinstance(block, Table):
        return _html_table(block.headers, block.rows, block.status_column)
    if isinstance(block, Checks):
        return _html_table(("check", "status", "detail"), tuple((c.name, c.status, c.reason) for c in block.checks),
                           status_column=1)
    if isinstance(block, Summary):
        cards = "".join(f'<div class="card {status.replace(" ", "-")}"><div class="title"><span>{_e(title)}</span>'
                        f'{_badge(status)}</div><div class="line">{_e(line)}</div></div>'
                        for title, status, line in block.rows)
        return f'<div class="cards">{cards}</div>'
    if isinstance(block, Figures):
        shown = "".join(_figure(f, figures[f.name]) for f in block.figures if f.name in figures)
        return f'<div class="figs{" " + block.size if block.size else ""}">{shown}</div>'
    if isinstance(block, Banner):
        return _banner(block)
    return f"<footer>{'<br>'.join(_e(line) for line in block.lines)}</footer>" if isinstance(block, Footer) else ""


def render_html(document: Document, figures: Mapping[str, Path]) -> str:
    """report.html: self-contained (inline CSS, figures as base64 PNG, no script, no network)."""
    sections = []
    for section in document.sections:
        if HTML in section.forms:
            title = f"<h2>{html.escape(section.title, quote=False)}</h2>" if section.title else ""
            sections.append(title + "".join(_html_block(b, figures) for b in section.blocks if HTML in b.forms))
    body = "\n".join(sections)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(document.title)}</title>
<style>{_CSS}</style></head>
<body><main>
{body}
</main></body></html>
"""
