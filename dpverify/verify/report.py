"""The report of ``dpverify verify`` as text (terminal), Markdown, self-contained HTML and JSON.

Every form puts the verdict first, then the evidence (one line per section and the figures), then the
details (tables of every check, family, audit and bound). The HTML embeds its figures as base64 PNG and
its style inline: it needs no network and no other file to be read.
"""

from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path
from typing import Any

from dpverify._io import atomic_write_text
from dpverify.verify.figures import figure_alt, write_figures
from dpverify.verify.result import (
    AUDIT_VIOLATION,
    CONSISTENT,
    FAIL,
    NOT_APPLICABLE,
    NOT_RUN,
    PASS,
    REFUTED,
    Check,
    VerifyReport,
)

FILES = ("report.html", "report.md", "report.json")


# ---- numbers and one-line summaries --------------------------------------------------------------------


def fmt(value: Any, digits: int = 4) -> str:
    """A number as a reader wants it: ∞ for infinity, — for missing, %g otherwise."""
    if value is None:
        return "—"
    if isinstance(value, float):
        if math.isnan(value):
            return "—"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        if 1e3 <= abs(value) < 1e7:
            return f"{value:,.0f}"
        return f"{value:.{digits}g}"
    return str(value)


def unit(report: VerifyReport) -> str:
    """What one of the K users has: an "episode", or a bandit's "round" (the environment's ``unit``)."""
    return str((report.utility.environment or {}).get("unit", "episode"))


def headline(report: VerifyReport) -> str:
    s = report.settings
    return (f"{report.verdict.verdict} — {s.agent} on {s.env}: claim (ε = {s.epsilon:g}, δ = {s.delta:g}) over "
            f"K = {s.episodes} {unit(report)}s, budget {s.budget}")


def whitebox_line(report: VerifyReport) -> str:
    w = report.whitebox
    if not w.checks:
        return f"not run: {w.reason}"
    failed = [c.name for c in w.checks if c.status == FAIL]
    unrun = [c.name for c in w.checks if c.status == NOT_RUN]
    passed = sum(c.status == PASS for c in w.checks)
    text = f"{passed} of {len(w.checks)} checks passed at K = {w.episodes}"
    if failed:
        text += f"; failed: {', '.join(failed)}"
    if unrun:
        text += f"; could not run: {', '.join(unrun)}"
    if w.sensitivity:
        best = max(w.sensitivity, key=lambda f: f.ratio)
        text += f"; largest realised sensitivity fraction {fmt(best.ratio, 3)} ({best.family})"
    if w.epsilon_lower is not None:
        text += f"; witnessed ε {fmt(w.epsilon_lower, 3)}"
    return text


def claim_line(report: VerifyReport) -> str:
    c = report.claim
    if c.status == NOT_RUN:
        return f"not run: {c.reason}"
    at_claim = c.ledger_epsilon.get(c.claim_conversion or "")
    relation = "≤" if c.status == PASS else ">"
    return (f"ledger ε = {fmt(at_claim)} {relation} claimed ε = {fmt(c.claimed_epsilon)} ({c.claim_conversion}, "
            f"{c.accounting}); {c.n_releases} releases, worst user ρ = {fmt(c.worst_user_rho)}")


def structure_line(report: VerifyReport) -> str:
    st = report.structure
    if not st.checks:
        return f"not run: {st.reason}"
    counts = {status: sum(c.status == status for c in st.checks) for status in (PASS, FAIL, NOT_RUN)}
    failed = [c.name for c in st.checks if c.status == FAIL]
    waived = [c.name for c in st.checks if c.status == NOT_APPLICABLE]
    text = f"{counts[PASS]} of {len(st.checks)} contract checks passed"
    if failed:
        text += f"; failed: {', '.join(failed)}"
    if counts[NOT_RUN]:
        text += f"; {counts[NOT_RUN]} did not run"
    if waived:
        text += f"; not applicable: {', '.join(waived)}"
    return text


def audit_line(report: VerifyReport) -> str:
    a = report.audits
    if not a.runs:
        return f"not run: {a.reason}"
    violations = [f"{r.notion} {r.route}" for r in a.runs if r.verdict == AUDIT_VIOLATION]
    missing = [f"{r.notion} {r.route}" for r in a.runs if r.verdict == NOT_RUN]
    bounds = [r.epsilon_lower for r in a.runs if r.epsilon_lower is not None]
    text = f"{len(a.runs)} audits; " + (f"VIOLATION found by {', '.join(violations)}" if violations
                                         else "no violation found")
    if bounds:
        text += f"; largest ε lower bound {fmt(max(bounds), 3)} (claimed {fmt(report.settings.epsilon)})"
    if missing:
        text += f"; could not run: {', '.join(missing)}"
    return text


def utility_line(report: VerifyReport) -> str:
    u = report.utility
    if u.agent is None:
        return f"not run: {u.reason}"
    text = f"regret after K = {u.episodes}: {u.agent.label} {fmt(u.agent.final_mean)} ± {fmt(u.agent.final_std, 3)}"
    if u.counterpart is not None:
        text += f", {u.counterpart_name} (non-private) {fmt(u.counterpart.final_mean)}"
    if u.random_per_episode is not None:
        text += f", random policy {fmt(u.random_per_episode * u.episodes)}"
    if u.learning_line:
        learned = None if u.learning is None else u.learning["learned"]
        text += "; learned from users: " + {True: "yes", False: "no", None: "cannot tell"}[learned]
    return text


def _sections(report: VerifyReport) -> list[tuple[str, str, str]]:
    """(title, status, one line) for the evidence summary."""
    return [
        ("White-box release checks", report.whitebox.status, whitebox_line(report)),
        ("Claim & accounting", report.claim.status, claim_line(report)),
        ("Contract checks", report.structure.status, structure_line(report)),
        ("Empirical audits", report.audits.status, audit_line(report)),
        ("Utility", report.utility.status, utility_line(report)),
    ]


# ---- tables shared by the text and Markdown forms ------------------------------------------------------


def _family_rows(report: VerifyReport) -> tuple[list[str], list[list[str]]]:
    paper = report.claim.paper is not None
    headers = ["family", "releases", "mechanism", "sensitivity", "noise std", "worst-user ρ", "naive ρ"]
    if paper:
        headers += ["paper's printed std", "printed / used"]
    rows = []
    for f in report.claim.families:
        row = [f.family, str(f.n_releases), ", ".join(f.mechanisms), fmt(f.sensitivity), fmt(f.noise_std),
               fmt(f.worst_user_rho), fmt(f.naive_rho)]
        if paper:
            ratio = (f.paper_noise_std / f.noise_std) if f.paper_noise_std and f.noise_std else None
            row += [fmt(f.paper_noise_std), fmt(ratio)]
        rows.append(row)
    return headers, rows


def _noise_rows(report: VerifyReport) -> tuple[list[str], list[list[str]]]:
    headers = ["family", "mechanism", "status", "values", "σ measured / recorded", "upper limit"]
    rows = [[f.family, f.mechanism, f.status, str(f.values), fmt(f.ratio), fmt(f.upper)]
            for f in report.whitebox.noise]
    return headers, rows


def _sensitivity_rows(report: VerifyReport) -> tuple[list[str], list[list[str]]]:
    headers = ["family", "norm", "recorded", "largest change", "fraction", "pair"]
    rows = [[f.family, f.norm, fmt(f.recorded), fmt(f.realised), fmt(f.ratio, 3), f.pair]
            for f in report.whitebox.sensitivity]
    return headers, rows


def _witness_rows(report: VerifyReport, limit: int = 6) -> tuple[list[str], list[list[str]]]:
    headers = ["environment", "K", "user", "pair", "releases changed", "μ", "ε (lower, this pair)", "noise verified"]
    ranked = sorted(report.whitebox.witnesses, key=lambda w: (w.episodes != report.whitebox.episodes,
                                                                -w.epsilon_lower))[:limit]
    rows = [[w.environment, str(w.episodes), str(w.user), w.canaries, str(w.changed_releases), fmt(w.mu, 3),
             fmt(w.epsilon_lower, 3), "yes" if w.noise_verified else "no"] for w in ranked]
    return headers, rows


WITNESS_NOTE = ("The ε of a witnessed pair composes the changes its user caused (μ² = Σ (‖Δ‖/σ)², σ at its verified "
                "upper confidence limit) and converts exactly; it bounds the pair's ε from below when each "
                "release's change does not depend on the values published before it, and is the pair's ε along "
                "the replayed transcript otherwise.")


def _audit_rows(report: VerifyReport) -> tuple[list[str], list[list[str]]]:
    headers = ["notion", "route", "configuration", "verdict", "decided by", "(ε, δ) lower bound",
               "μ lower bound (Gaussian claims) / claimed μ", "ε of the ruled-out μ-GDP curve", "ceiling", "trials",
               "seconds"]
    rows = [[r.notion, r.route, r.configuration, r.verdict, ", ".join(r.verdict_by) or "—", fmt(r.epsilon_lower),
             "—" if r.mu_lower is None else f"{fmt(r.mu_lower)} / {fmt(r.claimed_mu)}", fmt(r.gdp_epsilon_lower),
             fmt(r.ceiling), str(r.trials), f"{r.seconds:.1f}"] for r in report.audits.runs]
    return headers, rows


def _utility_rows(report: VerifyReport) -> tuple[list[str], list[list[str]]]:
    u = report.utility
    headers = ["policy", "cumulative regret (mean)", "std", f"per {unit(report)}"]
    rows = []
    for curve, label in ((u.agent, "private"), (u.counterpart, "non-private")):
        if curve is not None:
            rows.append([f"{curve.label} ({label})", fmt(curve.final_mean), fmt(curve.final_std),
                         fmt(curve.final_mean / u.episodes)])
    if u.random_per_episode is not None:
        rows.append(["uniformly random policy", fmt(u.random_per_episode * u.episodes), "0 (exact)",
                     fmt(u.random_per_episode)])
    # the data-free policy a private agent's regret must beat to show learning (a bandit's is the uniform one, above)
    if u.learning is not None and unit(report) != "round":
        greedy = float(u.learning["known_reward_greedy_per_episode"])
        rows.append(["known-reward greedy policy (needs no data)", fmt(greedy * u.episodes), "0 (exact)", fmt(greedy)])
    return headers, rows


def _bound_rows(report: VerifyReport) -> tuple[list[str], list[list[str]]]:
    headers = ["bound", "statement", "value", "privacy term", "non-private term"]
    rows = [[b.name, b.stated, fmt(b.value), fmt(b.privacy_term), fmt(b.non_private_term)]
            for b in (report.utility.bound, report.utility.counterpart_bound) if b is not None]
    return headers, rows


def _text_table(headers: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows, strict=True)]
    lines = [indent + "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
             indent + "  ".join("-" * w for w in widths)]
    lines += [indent + "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return lines


def _check_lines(checks: tuple[Check, ...]) -> list[str]:
    return [f"  [{c.status}] {c.name}: {c.detail}" for c in checks]


# ---- text --------------------------------------------------------------------------------------------


def _whitebox_text(report: VerifyReport) -> list[str]:
    w = report.whitebox
    if not w.checks:
        return []
    lines = [f"White-box release checks ({w.source}, K = {w.episodes}, search K = {w.search_episodes})"]
    lines += _check_lines(w.checks)
    for present, table in ((w.noise, _noise_rows), (w.sensitivity, _sensitivity_rows)):
        if present:
            lines += _text_table(*table(report))
    if w.witnesses:
        lines += _text_table(*_witness_rows(report, limit=3))
    return lines + [f"  note: {n}" for n in w.notes] + [""]


def to_text(report: VerifyReport) -> str:
    """The terminal form: verdict, reasons, one line per section, then the main tables."""
    lines = [headline(report)]
    lines += [f"  - {reason}" for reason in report.verdict.reasons]
    if report.verdict.verdict == CONSISTENT:
        lines.append(f"  note: {report.verdict.caveat}")
    lines.append("")
    for title, status, line in _sections(report):
        lines.append(f"{title} [{status}]: {line}")
    lines.append("")
    lines += _whitebox_text(report)
    if report.claim.checks:
        lines.append("Claim & accounting")
        lines += _check_lines(report.claim.checks)
        lines += _text_table(*_family_rows(report))
        lines.append("")
    if report.structure.checks:
        lines.append(f"Contract checks ({report.structure.source})")
        lines += _check_lines(report.structure.checks)
        lines.append("")
    if report.audits.runs:
        lines.append("Empirical audits")
        lines += _text_table(*_audit_rows(report))
        if report.audits.reason:
            lines.append(f"  note: {report.audits.reason}")
        lines.append("")
    if report.utility.agent is not None:
        lines.append("Utility")
        lines += _text_table(*_utility_rows(report))
        if report.utility.learning_line:
            lines.append(f"  no-data control: {report.utility.learning_line}")
        if report.utility.bound is not None:
            lines += _text_table(*_bound_rows(report))
    return "\n".join(lines).rstrip() + "\n"


# ---- Markdown ----------------------------------------------------------------------------------------


def _utility_md(report: VerifyReport) -> list[str]:
    u = report.utility
    if u.agent is None:
        return [f"Not run: {u.reason}", ""]
    out = _md_table(*_utility_rows(report))
    if u.learning_line:
        out += [f"No-data control (the same agent and seeds, every user slot empty): {u.learning_line}", ""]
    if u.bound is not None:
        out += ["Registry bounds at the run's (d, H, K, ε, δ), hidden constants taken as 1:", ""]
        out += _md_table(*_bound_rows(report))
    return out


def _md_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    def cell(x: str) -> str:
        return str(x).replace("|", "\\|")

    return (["| " + " | ".join(map(cell, headers)) + " |", "|" + "---|" * len(headers)]
            + ["| " + " | ".join(map(cell, row)) + " |" for row in rows] + [""])


def to_markdown(report: VerifyReport, figures: dict[str, Path] | None = None) -> str:
    """report.md: the same content as the HTML, figures linked by file name."""
    figures = figures or {}
    s = report.settings
    out = [f"# {report.verdict.verdict}", "",
           f"**{s.agent}** ({s.agent_source}) on **{s.env}** — claim (ε = {s.epsilon:g}, δ = {s.delta:g}) over "
           f"K = {s.episodes} {unit(report)}s, budget `{s.budget}`.", ""]
    out += [f"- {reason}" for reason in report.verdict.reasons] + [""]
    out += [f"> {report.verdict.caveat}", "", "## Evidence", ""]
    out += _md_table(["section", "status", "finding"], [[t, st, line] for t, st, line in _sections(report)])
    out += [_md_image(report, n) for n in figures if n in ("privacy.png", "regret.png")]
    out += ["## White-box release checks", ""]
    w = report.whitebox
    if w.checks:
        out += [f"The agent rerun with users and seeds of the verification's choosing, its releases checked against "
                f"its own records from its behaviour ({w.source}; K = {w.episodes}, neighbour search at K = "
                f"{w.search_episodes}).", ""]
        out += _md_table(["check", "status", "detail"], [[c.name, c.status, c.detail] for c in w.checks])
        if w.noise:
            out += _md_table(*_noise_rows(report))
        if w.sensitivity:
            out += _md_table(*_sensitivity_rows(report))
        if w.witnesses:
            out += _md_table(*_witness_rows(report)) + [WITNESS_NOTE, ""]
        out += [f"- {n}" for n in w.notes] + ([""] if w.notes else [])
    else:
        out += [f"Not run: {w.reason}", ""]
    out += ["## Claim & accounting", ""]
    out += [_md_image(report, n) for n in figures if n == "ledger.png"]
    if report.claim.status == NOT_RUN:
        out += [f"Not run: {report.claim.reason}", ""]
    else:
        c = report.claim
        out += [f"Claimed ({fmt(c.claimed_epsilon)}, {fmt(c.claimed_delta)}) by the {c.claim_conversion} conversion, "
                f"{c.accounting} accounting, relation {c.relation}; ledger after {c.episodes_run} episodes: "
                f"{c.n_releases} releases, {c.n_users} users, worst user #{c.worst_user} pays "
                f"ρ = {fmt(c.worst_user_rho)} (naive total {fmt(c.naive_rho)}).", ""]
        out += _md_table(["conversion", "ledger ε"], [[k, fmt(v)] for k, v in c.ledger_epsilon.items()])
        out += _md_table(["check", "status", "detail"], [[ch.name, ch.status, ch.detail] for ch in c.checks])
        out += _md_table(*_family_rows(report))
        if c.paper is not None:
            p = c.paper
            eps = ", ".join(f"{k} {fmt(v)}" for k, v in p.true_epsilon.items())
            out += [f"Paper's printed calibration ({p.source}): claims ρ = {fmt(p.claimed_rho)}, true worst-user "
                    f"ρ = {fmt(p.true_rho)}; true ε {eps} — "
                    f"{'FALLS SHORT of' if p.falls_short else 'meets'} its claim ε = {fmt(p.claimed_epsilon)}. "
                    f"{p.note}.", ""]
        if c.assumptions:
            out += ["Assumptions of the accounting:", ""] + [f"- {a}" for a in c.assumptions] + [""]
    out += ["## Contract checks", ""]
    if report.structure.checks:
        out += _md_table(["check", "status", "detail"], [[ch.name, ch.status, ch.detail]
                                                         for ch in report.structure.checks])
    else:
        out += [f"Not run: {report.structure.reason}", ""]
    out += ["## Empirical audits", ""]
    if report.audits.runs:
        out += _md_table(*_audit_rows(report))
        out += [f"{report.audits.reason}", ""] if report.audits.reason else []
        out += [_md_image(report, n) for n in figures if n.startswith("audit_")]
    else:
        out += [f"Not run: {report.audits.reason}", ""]
    out += ["## Utility", ""] + _utility_md(report)
    out += ["## Run", "", "Timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in report.timings.items()), "",
            "Versions: " + ", ".join(f"{k} {v}" for k, v in report.versions.items()), ""]
    return "\n".join(out)


# ---- HTML --------------------------------------------------------------------------------------------

_CSS = """
:root { --ink:#111827; --muted:#4b5563; --line:#e5e7eb; --bg:#f9fafb; --pass:#15803d; --fail:#b91c1c;
        --skip:#b45309; --na:#6b7280; }
* { box-sizing:border-box; }
body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
       color:var(--ink); background:var(--bg); }
main { max-width:1080px; margin:0 auto; padding:28px 24px 48px; }
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
        padding:12px 14px; }
.card.pass { border-left-color:var(--pass); } .card.fail { border-left-color:var(--fail); }
.card.not-run { border-left-color:var(--skip); }
.card .title { font-weight:600; display:flex; justify-content:space-between; align-items:flex-start; gap:8px; }
.card .title .badge { flex-shrink:0; margin-top:2px; }
.card .line { color:var(--muted); font-size:13.5px; margin-top:4px; overflow-wrap:anywhere; }
td { overflow-wrap:break-word; hyphens:manual; } th { word-break:keep-all; }
.badge { display:inline-block; font-size:11.5px; font-weight:700; text-transform:uppercase; letter-spacing:.04em;
         border-radius:999px; padding:1px 9px; color:#fff; background:var(--muted); white-space:nowrap; }
.badge.pass { background:var(--pass); } .badge.fail { background:var(--fail); }
.badge.not-run { background:var(--skip); } .badge.not-applicable { background:var(--na); }
.figs { display:grid; grid-template-columns:repeat(auto-fit,minmax(440px,1fr)); gap:14px; margin-top:14px; }
.figs.one { grid-template-columns:minmax(0,720px); margin-bottom:10px; }
.figs.small { grid-template-columns:repeat(auto-fit,minmax(300px,360px)); }
figure { margin:0; background:#fff; border:1px solid var(--line); border-radius:8px; padding:10px; }
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

_VERDICT_CLASS = {REFUTED: "v-refuted", CONSISTENT: "v-consistent"}
_CAPTIONS = {
    "privacy.png": "Every ε the verification produced, against the claimed ε (dashed). The ledger under the claim's "
                   "own conversion (dark blue) must not cross the line; the other conversions (light blue) are "
                   "looser routes from the same ledger, shown for reference. An audit lower bound beyond the line "
                   "refutes the claim; grey ticks mark the largest ε each audit could have shown at its size.",
    "ledger.png": "What the worst-off user pays, per statistic family, against the claimed ρ.",
    "regret.png": "Mean cumulative regret ± 1 std across seeds; the dotted line is the uniformly random policy.",
}


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _badge(status: str) -> str:
    return f'<span class="badge {status.replace(" ", "-")}">{_e(status)}</span>'


def _html_table(headers: list[str], rows: list[list[str]], status_column: int | None = None) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for i, value in enumerate(row):
            if i == status_column:
                cells.append(f"<td>{_badge(str(value))}</td>")
            else:
                numeric = _looks_numeric(str(value))
                cells.append(f'<td class="num">{_e(value)}</td>' if numeric else f"<td>{_e(value)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _looks_numeric(text: str) -> bool:
    try:
        float(text.replace("∞", "inf").replace("−", "-").replace(",", ""))
    except ValueError:
        return False
    return True


def _checks_table(checks: tuple[Check, ...]) -> str:
    return _html_table(["check", "status", "detail"], [[c.name, c.status, c.detail] for c in checks], status_column=1)


def _md_image(report: VerifyReport, name: str) -> str:
    alt = figure_alt(report, name).replace("[", "(").replace("]", ")")
    return f"![{alt}]({name})\n"


def _figure(report: VerifyReport, name: str, path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    caption = _CAPTIONS.get(name, "Audit trade-off: the tested (FPR, FNR) points against the claimed curve.")
    return (f'<figure><img alt="{_e(figure_alt(report, name))}" src="data:image/png;base64,{data}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _claim_html(report: VerifyReport) -> str:
    c = report.claim
    if c.status == NOT_RUN:
        return f'<p class="note">Not run: {_e(c.reason)}</p>'
    parts = [
        f"<p>Claimed <b>({fmt(c.claimed_epsilon)}, {fmt(c.claimed_delta)})</b> by the <code>{_e(c.claim_conversion)}"
        f"</code> conversion, {_e(c.accounting)} accounting, relation {_e(c.relation)}. Ledger after "
        f"{c.episodes_run} episodes: <b>{c.n_releases}</b> releases over {c.n_users} users; the worst user "
        f"(#{c.worst_user}) pays ρ = {fmt(c.worst_user_rho)} (naive total {fmt(c.naive_rho)}).</p>",
        _checks_table(c.checks),
        "<h3>ε of the ledger by every conversion</h3>",
        _html_table(["conversion", "ledger ε"], [[k, fmt(v)] for k, v in c.ledger_epsilon.items()]),
        "<h3>Per statistic family</h3>",
        _html_table(*_family_rows(report)),
    ]
    if c.paper is not None:
        p = c.paper
        eps = ", ".join(f"{k} {fmt(v)}" for k, v in p.true_epsilon.items())
        verdict = "<b>falls short of</b>" if p.falls_short else "meets"
        parts.append(f'<p class="note">Paper\'s printed calibration ({_e(p.source)}): it claims ρ = '
                     f"{fmt(p.claimed_rho)}, the true worst-user ρ is {fmt(p.true_rho)}; true ε {_e(eps)} — it "
                     f"{verdict} its claim ε = {fmt(p.claimed_epsilon)}. {_e(p.note)}. The agent above uses its own "
                     "calibration, not the printed noise.</p>")
    if c.assumptions:
        items = "".join(f"<li>{_e(a)}</li>" for a in c.assumptions)
        parts.append(f"<details><summary>Assumptions of the accounting</summary><ul>{items}</ul></details>")
    return "".join(parts)


def _whitebox_html(report: VerifyReport) -> str:
    w = report.whitebox
    if not w.checks:
        return f'<p class="note">Not run: {_e(w.reason)}</p>'
    parts = [f"<p>The agent rerun with users and seeds of the verification's choosing; its releases checked against "
             f"its own records from its behaviour (<code>{_e(w.source)}</code>; K = {w.episodes}, neighbour search at "
             f"K = {w.search_episodes}).</p>", _checks_table(w.checks)]
    if w.noise:
        parts += ["<h3>Noise per statistic family</h3>", _html_table(*_noise_rows(report), status_column=2)]
    if w.sensitivity:
        parts += ["<h3>Realised fraction of each family's recorded sensitivity</h3>",
                  _html_table(*_sensitivity_rows(report))]
    if w.witnesses:
        parts += ["<h3>Witnessed pairs</h3>", _html_table(*_witness_rows(report)),
                  f'<p class="note">{_e(WITNESS_NOTE)}</p>']
    parts += [f'<p class="note">{_e(n)}</p>' for n in w.notes]
    return "".join(parts)


def _utility_html(report: VerifyReport) -> str:
    u = report.utility
    if u.agent is None:
        return f'<p class="note">Not run: {_e(u.reason)}</p>'
    parts = [f"<p>{u.seeds} seeds of K = {u.episodes} {unit(report)}s each; exact per-{unit(report)} regret.</p>",
             _html_table(*_utility_rows(report))]
    if u.learning_line:
        parts.append(f"<p><strong>No-data control</strong> (the same agent and seeds, every user slot empty): "
                     f"{_e(u.learning_line)}</p>")
    if u.bound is not None:
        parts += ["<h3>Registry bounds at the run's (d, H, K, ε, δ)</h3>", _html_table(*_bound_rows(report)),
                  '<p class="note">Hidden constants and logarithms of the Õ statements taken as 1: orders of '
                  "magnitude, not predictions of the curve above.</p>"]
    else:
        parts.append('<p class="note">No regret bound is registered for this agent.</p>')
    return "".join(parts)


def to_html(report: VerifyReport, figures: dict[str, Path]) -> str:
    """report.html: self-contained (inline CSS, figures as base64 PNG, no script, no network)."""
    s, v = report.settings, report.verdict
    cls = _VERDICT_CLASS.get(v.verdict, "v-inconclusive")
    reasons = "".join(f"<li>{_e(r)}</li>" for r in v.reasons)
    caveat = f'<div class="caveat">{_e(v.caveat)}</div>' if v.verdict == CONSISTENT else ""
    cards = "".join(
        f'<div class="card {status.replace(" ", "-")}"><div class="title"><span>{_e(title)}</span>{_badge(status)}'
        f'</div><div class="line">{_e(line)}</div></div>'
        for title, status, line in _sections(report)
    )
    evidence = "".join(_figure(report, n, p) for n, p in figures.items() if n in ("privacy.png", "regret.png"))
    ledger = "".join(_figure(report, n, p) for n, p in figures.items() if n == "ledger.png")
    tradeoffs = "".join(_figure(report, n, p) for n, p in figures.items() if n.startswith("audit_"))
    structure = (_checks_table(report.structure.checks) if report.structure.checks
                 else f'<p class="note">Not run: {_e(report.structure.reason)}</p>')
    audits = (_html_table(*_audit_rows(report), status_column=None) if report.audits.runs
              else f'<p class="note">Not run: {_e(report.audits.reason)}</p>')
    audit_notes = "".join(f'<p class="note">{_e(r.notion)} {_e(r.route)}: {_e(r.detail)}</p>'
                          for r in report.audits.runs if r.detail)
    if report.audits.runs and report.audits.reason:
        audit_notes += f'<p class="note">{_e(report.audits.reason)}</p>'

    timings = ", ".join(f"{_e(k)} {t:.1f} s" for k, t in report.timings.items())
    versions = ", ".join(f"{_e(k)} {_e(x)}" for k, x in report.versions.items())
    options = ""
    if s.agent_options or s.env_options:
        options = f" Options: agent {_e(json.dumps(s.agent_options))}, environment {_e(json.dumps(s.env_options))}."
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(v.verdict)} — {_e(s.agent)} — dpverify verify</title>
<style>{_CSS}</style></head>
<body><main>
<header class="top">dpverify verify · {_e(s.agent)} ({_e(s.agent_source)}) · {_e(s.env)} ·
budget {_e(s.budget)}</header>
<section class="verdict {cls}" id="verdict">
<h1>{_e(v.verdict)}</h1>
<div class="what">{_e(s.agent)} on {_e(s.env)}: claim (ε = {s.epsilon:g}, δ = {s.delta:g}) over K = {s.episodes}
{unit(report)}s, {_e(report.claim.notion.upper())} notion.</div>
<ul>{reasons}</ul>{caveat}
</section>
<h2>Evidence</h2>
<div class="cards">{cards}</div>
<div class="figs">{evidence}</div>
<h2>White-box release checks</h2>{_whitebox_html(report)}
<h2>Claim &amp; accounting</h2><div class="figs one">{ledger}</div>{_claim_html(report)}
<h2>Contract checks</h2>{structure}
<h2>Empirical audits</h2>{audits}{audit_notes}<div class="figs small">{tradeoffs}</div>
<h2>Utility</h2>{_utility_html(report)}
<footer>Settings: seed {s.seed}, budget {_e(s.budget)}.{options} Timings: {timings}.<br>Versions: {versions}.<br>
An empirical audit can refute a privacy claim, never certify one.</footer>
</main></body></html>
"""


# ---- files -------------------------------------------------------------------------------------------


def write_report(report: VerifyReport, out_dir: str | Path) -> dict[str, Path]:
    """Write report.html, report.md, report.json and the PNG figures into ``out_dir`` (each file atomically);
    name → path. The command line checks the directory before any work (``--force`` to replace)."""
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    figures = write_figures(report, directory)
    paths = {
        "report.html": directory / "report.html",
        "report.md": directory / "report.md",
        "report.json": directory / "report.json",
    }
    atomic_write_text(paths["report.html"], to_html(report, figures))
    atomic_write_text(paths["report.md"], to_markdown(report, figures))
    atomic_write_text(paths["report.json"], json.dumps(report.to_dict(), indent=1) + "\n")
    return {**paths, **figures}
