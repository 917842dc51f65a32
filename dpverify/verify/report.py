"""The report of ``dpverify verify``: one description, as text (terminal), Markdown, self-contained HTML, JSON.

:func:`describe` builds the report's one description (:mod:`dpverify.verify.document`) from a
:class:`~dpverify.verify.result.VerifyReport`: the verdict first, then the evidence (one line per section and
the figures), then the details (tables of every check, family, audit and bound). :func:`to_text` is the
terminal's form; :func:`write_report` writes report.html and report.md (the renderers of
:mod:`~dpverify.verify.document`), report.json (the report's own
:meth:`~dpverify.verify.result.VerifyReport.to_dict`) and the figures.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from dpverify._io import atomic_write_text
from dpverify.checks import FAIL, NOT_APPLICABLE, NOT_RUN, PASS
from dpverify.verify import document as doc
from dpverify.verify.claim import LEDGER_TOLERANCE
from dpverify.verify.figures import figure_alt, write_figures
from dpverify.verify.result import AUDIT_VIOLATION, CONSISTENT, REFUTED, VerifyReport

FILES = ("report.html", "report.md", "report.json")

#: The forms a block shows in (doc.Block.forms), when not every form.
_TEXT, _MD, _HTML = frozenset({doc.TEXT}), frozenset({doc.MARKDOWN}), frozenset({doc.HTML})
_FILES, _NOT_HTML = doc.BOTH_FILES, frozenset({doc.TEXT, doc.MARKDOWN})

# ---- numbers and one-line summaries --------------------------------------------------------------------


def fmt(value: float | int | str | None, digits: int = 4) -> str:
    """A number as a reader wants it: ∞ for infinity, — for missing, %g otherwise."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
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


def _whitebox_line(report: VerifyReport) -> str:
    w = report.whitebox
    if not w.checks:
        return f"not run: {w.reason}"
    failed = [c.name + ("" if c.claim is None else f" (records wrong, the claim {c.claim})") for c in w.checks
              if c.status == FAIL]
    unrun = [c.name for c in w.checks if c.status == NOT_RUN]
    waived = [c.name for c in w.checks if c.status == NOT_APPLICABLE]
    passed = sum(c.status == PASS for c in w.checks)
    text = f"{passed} of {len(w.checks)} checks passed at K = {w.episodes}"
    if failed:
        text += f"; failed: {', '.join(failed)}"
    if unrun:
        text += f"; could not run: {', '.join(unrun)}"
    if waived:
        text += f"; not applicable: {', '.join(waived)}"
    if w.sensitivity:
        best = max(w.sensitivity, key=lambda f: f.ratio)
        text += f"; largest realised sensitivity fraction {fmt(best.ratio, 3)} ({best.family})"
    if w.epsilon_lower is not None:
        text += f"; witnessed ε {fmt(w.epsilon_lower, 3)}"
    return text


_SYMBOL = {"pure": "ε", "approximate": "ε", "zcdp": "ρ", "gdp": "μ"}


def _claim_line(report: VerifyReport) -> str:
    c = report.claim
    if c.status == NOT_RUN:
        return f"not run: {c.reason}"
    symbol = _SYMBOL.get(c.claim_measure, "ε")
    claimed = {"zcdp": c.claimed_rho}.get(c.claim_measure, c.claimed_epsilon)
    ledger_check = next((check for check in c.checks if check.name == "ledger meets the claim"), None)
    if ledger_check is not None and ledger_check.status == NOT_RUN:
        ledger = f"ledger vs {c.claim or 'the claim'}: {ledger_check.reason}"
    elif c.ledger_value is None or claimed is None or c.claim_measure == "gdp":
        ledger = f"ledger vs {c.claim}: {ledger_check.reason if ledger_check else 'not compared'}"
    else:  # the comparison as the numbers have it (a failed check of another kind is named after it)
        relation = "≤" if c.ledger_value <= claimed * (1.0 + LEDGER_TOLERANCE) else ">"
        ledger = (f"ledger {symbol} = {fmt(c.ledger_value)} {relation} claimed {symbol} = {fmt(claimed)} "
                  f"({c.comparison_route}, {c.accounting})")
    failed = [check.name for check in c.checks if check.status == FAIL]
    return (ledger + f"; {c.n_releases} releases, worst user ρ = {fmt(c.worst_user_rho)}"
            + (f"; failed: {', '.join(failed)}" if failed else ""))


def _structure_line(report: VerifyReport) -> str:
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


def _audit_line(report: VerifyReport) -> str:
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


# ---- tables --------------------------------------------------------------------------------------------


def _family_table(report: VerifyReport) -> doc.Table:
    paper = report.claim.paper is not None
    headers: tuple[str, ...] = ("family", "releases", "mechanism", "sensitivity", "noise std", "worst-user ρ",
                                "naive ρ")
    headers += ("paper's printed std", "printed / used") if paper else ()
    rows = []
    for f in report.claim.families:
        row: tuple[str, ...] = (f.family, str(f.n_releases), ", ".join(f.mechanisms), fmt(f.sensitivity),
                                fmt(f.noise_std), fmt(f.worst_user_rho), fmt(f.naive_rho))
        if paper:
            ratio = (f.paper_noise_std / f.noise_std) if f.paper_noise_std and f.noise_std else None
            row += (fmt(f.paper_noise_std), fmt(ratio))
        rows.append(row)
    return doc.Table(headers, tuple(rows))


def _noise_table(report: VerifyReport) -> doc.Table:
    headers = ("family", "mechanism", "status", "values", "σ measured / recorded", "upper limit")
    return doc.Table(headers, tuple((f.family, f.mechanism, f.status, str(f.values), fmt(f.ratio), fmt(f.upper))
                                    for f in report.whitebox.noise), 2)


def _sensitivity_table(report: VerifyReport) -> doc.Table:
    headers = ("family", "norm", "recorded", "largest change", "fraction", "pair")
    return doc.Table(headers, tuple((f.family, f.norm, fmt(f.recorded), fmt(f.realised), fmt(f.ratio, 3), f.pair)
                                    for f in report.whitebox.sensitivity))


def _witness_table(report: VerifyReport, limit: int, forms: frozenset[str]) -> doc.Table:
    headers = ("environment", "K", "user", "pair", "releases changed", "μ", "ε (lower, this pair)", "noise verified")
    ranked = sorted(report.whitebox.witnesses, key=lambda w: (w.episodes != report.whitebox.episodes,
                                                                -w.epsilon_lower))[:limit]
    return doc.Table(headers, tuple((w.environment, str(w.episodes), str(w.user), w.canaries, str(w.changed_releases),
                                     fmt(w.mu, 3), fmt(w.epsilon_lower, 3), "yes" if w.noise_verified else "no")
                                    for w in ranked), forms=forms)


_WITNESS_NOTE = ("The ε of a witnessed pair composes the changes its user caused (μ² = Σ (‖Δ‖/σ)², σ at its "
                 "verified upper confidence limit) and converts exactly; it bounds the pair's ε from below when each "
                 "release's change does not depend on the values published before it, and is the pair's ε along "
                 "the replayed transcript otherwise.")


def _audit_table(report: VerifyReport) -> doc.Table:
    headers = ("notion", "route", "configuration", "verdict", "decided by", "(ε, δ) lower bound",
               "μ lower bound (Gaussian claims) / claimed μ", "ε of the ruled-out μ-GDP curve", "ceiling", "trials",
               "seconds")
    return doc.Table(headers, tuple(
        (r.notion, r.route, r.configuration, r.verdict, ", ".join(r.verdict_by) or "—", fmt(r.epsilon_lower),
         "—" if r.mu_lower is None else f"{fmt(r.mu_lower)} / {fmt(r.claimed_mu)}", fmt(r.gdp_epsilon_lower),
         fmt(r.ceiling), str(r.trials), f"{r.seconds:.1f}") for r in report.audits.runs))


def _utility_table(report: VerifyReport) -> doc.Table:
    u = report.utility
    rows = [(f"{c.label} ({label})", fmt(c.final_mean), fmt(c.final_std), fmt(c.final_mean / u.episodes))
            for c, label in ((u.agent, "private"), (u.counterpart, "non-private")) if c is not None]
    if u.random_per_episode is not None:
        rows.append(("uniformly random policy", fmt(u.random_per_episode * u.episodes), "0 (exact)",
                     fmt(u.random_per_episode)))
    # the data-free policy a private agent's regret must beat to show learning (a bandit's is the uniform one, above)
    if u.learning is not None and unit(report) != "round":
        greedy = float(u.learning["known_reward_greedy_per_episode"])
        rows.append(("known-reward greedy policy (needs no data)", fmt(greedy * u.episodes), "0 (exact)", fmt(greedy)))
    return doc.Table(("policy", "cumulative regret (mean)", "std", f"per {unit(report)}"), tuple(rows))


def _bound_table(report: VerifyReport) -> doc.Table:
    headers = ("bound", "statement", "value", "privacy term", "non-private term")
    return doc.Table(headers, tuple((b.name, b.stated, fmt(b.value), fmt(b.privacy_term), fmt(b.non_private_term))
                                    for b in (report.utility.bound, report.utility.counterpart_bound) if b is not None))


# ---- the description -----------------------------------------------------------------------------------

_CAPTIONS = {
    "privacy.png": "Every ε the verification produced, against the claimed ε (dashed). The ledger by the route "
                   "the claim was compared with (dark blue) must not cross the line; the other routes (light blue) "
                   "are looser bounds of the same ledger, shown for reference. An audit lower bound beyond the line "
                   "refutes the claim; grey ticks mark the largest ε each audit could have shown at its size.",
    "ledger.png": "What the worst-off user pays, per statistic family, against the claimed ρ.",
    "regret.png": "Mean cumulative regret ± 1 std across seeds; the dotted line is the uniformly random policy.",
}
_TRADEOFF_CAPTION = "Audit trade-off: the tested (FPR, FNR) points against the claimed curve."


def _figures(report: VerifyReport, names: tuple[str, ...], size: str = "") -> doc.Figures:
    refs = (doc.FigureRef(n, figure_alt(report, n), _CAPTIONS.get(n, _TRADEOFF_CAPTION)) for n in dict.fromkeys(names))
    return doc.Figures(tuple(refs), size, forms=_FILES)


def _not_run(reason: str) -> doc.Para:
    return doc.Para(f"Not run: {reason}", "note", forms=_FILES)


def _verdict(report: VerifyReport) -> doc.Section:
    s, v = report.settings, report.verdict
    claim = f"claim (ε = {s.epsilon:g}, δ = {s.delta:g}) over K = {s.episodes} {unit(report)}s"
    consistent = v.verdict == CONSISTENT
    blocks: list[doc.Block] = [
        doc.Heading(v.verdict, 1, forms=_MD),
        doc.Para(headline(report), forms=_TEXT),
        doc.Para(f"**{s.agent}** ({s.agent_source}) on **{s.env}** — {claim}, budget `{s.budget}`.", forms=_MD),
        doc.Items(v.reasons, forms=_NOT_HTML),
        *([doc.Para(v.caveat, "note", forms=_TEXT)] if consistent else []),
        doc.Para(v.caveat, "quote", forms=_MD),
        doc.Banner(v.verdict, {REFUTED: "refuted", CONSISTENT: "consistent"}.get(v.verdict, "inconclusive"),
                   f"dpverify verify · {s.agent} ({s.agent_source}) · {s.env} · budget {s.budget}",
                   f"{s.agent} on {s.env}: {claim}, {report.claim.notion.upper()} notion.", v.reasons,
                   v.caveat if consistent else None, forms=_HTML),
    ]
    return doc.Section(None, tuple(blocks))


def _evidence(report: VerifyReport) -> doc.Section:
    rows = (("White-box release checks", report.whitebox.status, _whitebox_line(report)),
            ("Claim & accounting", report.claim.status, _claim_line(report)),
            ("Contract checks", report.structure.status, _structure_line(report)),
            ("Empirical audits", report.audits.status, _audit_line(report)),
            ("Utility", report.utility.status, utility_line(report)))
    return doc.Section("Evidence", (doc.Summary(rows), _figures(report, ("privacy.png", "regret.png"))))


def _whitebox(report: VerifyReport) -> doc.Section:
    w = report.whitebox
    if not w.checks:
        return doc.Section("White-box release checks", (_not_run(w.reason),))
    rerun = ("The agent rerun with users and seeds of the verification's choosing{} its releases checked against "
             "its own records from its behaviour (")
    sizes = f"; K = {w.episodes}, neighbour search at K = {w.search_episodes})."
    blocks: list[doc.Block] = [
        doc.Para(f"White-box release checks ({w.source}, K = {w.episodes}, search K = {w.search_episodes})",
                 forms=_TEXT),
        doc.Para(rerun.format(",") + w.source + sizes, forms=_MD),
        doc.Para((doc.Span(rerun.format(";")), doc.Span(w.source, "code"), sizes), forms=_HTML),
        doc.Checks(w.checks),
    ]
    if w.noise:
        blocks += [doc.Heading("Noise per statistic family", forms=_HTML), _noise_table(report)]
    if w.sensitivity:
        blocks += [doc.Heading("Realised fraction of each family's recorded sensitivity", forms=_HTML),
                   _sensitivity_table(report)]
    if w.witnesses:
        blocks += [_witness_table(report, 3, _TEXT), doc.Heading("Witnessed pairs", forms=_HTML),
                   _witness_table(report, 6, _FILES), doc.Para(_WITNESS_NOTE, "note", forms=_FILES)]
    return doc.Section("White-box release checks", (*blocks, doc.Items(w.notes, note=True)))


def _claim(report: VerifyReport) -> doc.Section:
    c = report.claim
    ledger = _figures(report, ("ledger.png",), "one")
    if c.status == NOT_RUN:
        return doc.Section("Claim & accounting", (ledger, _not_run(c.reason)))
    at = c.claimed_delta if c.claim_measure == "approximate" else c.requested_delta
    conversions = (("route", f"ledger ε at δ = {fmt(at)}"), tuple((k, fmt(v)) for k, v in c.ledger_epsilon.items()))
    pays = f"ρ = {fmt(c.worst_user_rho)} (naive total {fmt(c.naive_rho)})."
    how = f" (calibrated by the {c.claim_conversion} conversion)" if c.claim_conversion else ""
    blocks: list[doc.Block] = [
        ledger,
        doc.Para("Claim & accounting", forms=_TEXT),
        doc.Para(f"Claimed {c.claim}{how}, compared by the {c.comparison_route or 'no'} route, {c.accounting} "
                 f"accounting, relation {c.relation}; ledger after {c.episodes_run} episodes: {c.n_releases} "
                 f"releases, {c.n_users} users, worst user #{c.worst_user} pays {pays}", forms=_MD),
        doc.Para(("Claimed ", doc.Span(c.claim, "b"), f"{how}, compared by the ",
                  doc.Span(c.comparison_route or "no", "code"), f" route, {c.accounting} accounting, relation "
                  f"{c.relation}. Ledger after {c.episodes_run} episodes: ", doc.Span(str(c.n_releases), "b"),
                  f" releases over {c.n_users} users; the worst user (#{c.worst_user}) pays {pays}"), forms=_HTML),
        doc.Table(*conversions, forms=_MD),
        doc.Checks(c.checks),
        doc.Heading("ε of the ledger by every route", forms=_HTML),
        doc.Table(*conversions, forms=_HTML),
        doc.Heading("Per statistic family", forms=_HTML),
        _family_table(report),
    ]
    if c.paper is not None:
        p = c.paper
        eps = ", ".join(f"{k} {fmt(v)}" for k, v in p.true_epsilon.items())
        blocks += [
            doc.Para(f"Paper's printed calibration ({p.source}): claims ρ = {fmt(p.claimed_rho)}, true worst-user "
                     f"ρ = {fmt(p.true_rho)}; true ε {eps} — {'FALLS SHORT of' if p.falls_short else 'meets'} its "
                     f"claim ε = {fmt(p.claimed_epsilon)}. {p.note}.", forms=_MD),
            doc.Para((doc.Span("Paper's printed calibration ("), f"{p.source}): it claims ρ = {fmt(p.claimed_rho)}, "
                      f"the true worst-user ρ is {fmt(p.true_rho)}; true ε {eps} — it ",
                      doc.Span("falls short of", "b") if p.falls_short else "meets",
                      f" its claim ε = {fmt(p.claimed_epsilon)}. {p.note}. The agent above uses its own calibration, "
                      "not the printed noise."), "note", forms=_HTML),
        ]
    assumptions = doc.Items(c.assumptions, title="Assumptions of the accounting", forms=_FILES)
    return doc.Section("Claim & accounting", (*blocks, assumptions))


def _contract(report: VerifyReport) -> doc.Section:
    st = report.structure
    if not st.checks:
        return doc.Section("Contract checks", (_not_run(st.reason),))
    return doc.Section("Contract checks", (doc.Para(f"Contract checks ({st.source})", forms=_TEXT),
                                           doc.Checks(st.checks)))


def _audits(report: VerifyReport) -> doc.Section:
    a = report.audits
    tradeoffs = _figures(report, tuple(r.figure for r in a.runs if r.figure is not None), "small")
    if not a.runs:
        return doc.Section("Empirical audits", (_not_run(a.reason), tradeoffs))
    blocks: list[doc.Block] = [
        doc.Para("Empirical audits", forms=_TEXT),
        _audit_table(report),
        doc.Items(tuple(f"{r.notion} {r.route}: {r.detail}" for r in a.runs if r.detail), note=True, forms=_HTML),
    ]
    if a.reason:
        blocks.append(doc.Para(a.reason, "note"))
    return doc.Section("Empirical audits", (*blocks, tradeoffs))


def _utility(report: VerifyReport) -> doc.Section:
    u = report.utility
    if u.agent is None:
        return doc.Section("Utility", (_not_run(u.reason),))
    blocks: list[doc.Block] = [
        doc.Para("Utility", forms=_TEXT),
        doc.Para(f"{u.seeds} seeds of K = {u.episodes} {unit(report)}s each; exact per-{unit(report)} regret.",
                 forms=_HTML),
        _utility_table(report),
    ]
    if u.learning_line:
        blocks += [doc.Para(f"  no-data control: {u.learning_line}", forms=_TEXT),
                   doc.Para((doc.Span("No-data control", "strong"),
                             f" (the same agent and seeds, every user slot empty): {u.learning_line}"), forms=_FILES)]
    if u.bound is None:
        none = doc.Para("No regret bound is registered for this agent.", "note", forms=_HTML)
        return doc.Section("Utility", (*blocks, none))
    blocks += [
        doc.Para("Registry bounds at the run's (d, H, K, ε, δ), hidden constants taken as 1:", forms=_MD),
        doc.Heading("Registry bounds at the run's (d, H, K, ε, δ)", forms=_HTML),
        _bound_table(report),
        doc.Para("Hidden constants and logarithms of the Õ statements taken as 1: orders of magnitude, not "
                 "predictions of the curve above.", "note", forms=_HTML),
    ]
    return doc.Section("Utility", tuple(blocks))


def _run(report: VerifyReport) -> tuple[doc.Section, doc.Section]:
    s = report.settings
    options = ""
    if s.agent_options or s.env_options:
        options = f" Options: agent {json.dumps(s.agent_options)}, environment {json.dumps(s.env_options)}."
    timings = ", ".join(f"{k} {t:.1f} s" for k, t in report.timings.items())
    versions = ", ".join(f"{k} {x}" for k, x in report.versions.items())
    footer = (f"Settings: seed {s.seed}, budget {s.budget}.{options} Timings: {timings}.", f"Versions: {versions}.",
              "An empirical audit can refute a privacy claim, never certify one.")
    seconds = ", ".join(f"{k} {v:.1f}" for k, v in report.timings.items())
    return (doc.Section("Run", (doc.Para(f"Timings (s): {seconds}"), doc.Para(f"Versions: {versions}")), forms=_MD),
            doc.Section(None, (doc.Footer(footer, forms=_HTML),), forms=_HTML))


def describe(report: VerifyReport) -> doc.Document:
    """The report's one description (module docstring), read by every form."""
    title = f"{report.verdict.verdict} — {report.settings.agent} — dpverify verify"
    return doc.Document(title, (_verdict(report), _evidence(report), _whitebox(report), _claim(report),
                            _contract(report), _audits(report), _utility(report), *_run(report)))


# ---- forms and files -----------------------------------------------------------------------------------


def to_text(report: VerifyReport) -> str:
    """The terminal form: verdict, reasons, one line per section, then the main tables."""
    return doc.render_text(describe(report))


def write_report(report: VerifyReport, out_dir: str | Path) -> dict[str, Path]:
    """Write report.html, report.md, report.json and the PNG figures into ``out_dir`` (each file atomically);
    name → path. The command line checks the directory before any work (``--force`` to replace)."""
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    figures = write_figures(report, directory)
    paths = {name: directory / name for name in FILES}
    document = describe(report)
    atomic_write_text(paths["report.html"], doc.render_html(document, figures))
    atomic_write_text(paths["report.md"], doc.render_markdown(document, figures))
    atomic_write_text(paths["report.json"], json.dumps(report.to_dict(), indent=1) + "\n")
    return {**paths, **figures}
