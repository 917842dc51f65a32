"""The report's figures (matplotlib, Agg backend), each written as a PNG.

* ``privacy.png`` — the ε evidence on one axis: the claimed ε, the ledger's ε by every conversion, the
  true ε of the paper's printed noise (where there is one), every audit's ε lower bound with the
  ceiling its size allows, and the ε the white-box checks' witnessed pair implies. A claim is refuted
  when a lower bound lies right of the claim line, or the ledger does.
* ``ledger.png`` — the worst user's ρ per statistic family against the claimed ρ.
* ``regret.png`` — mean cumulative regret ± one std of the agent, its non-private counterpart and the
  uniformly random policy.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

from dpverify._io import atomic_write_bytes
from dpverify.agent_audit.plot import claimed_curve
from dpverify.checks import NOT_RUN
from dpverify.verify.result import AUDIT_VIOLATION, AuditRun, VerifyReport

COLOURS = {"claim": "#1f2937", "ledger": "#1d4ed8", "ledger-other": "#93c5fd", "paper": "#9333ea",
           "pass": "#15803d", "fail": "#b91c1c", "ceiling": "#6b7280", "agent": "#2563eb",
           "counterpart": "#15803d", "random": "#b45309"}


#: Longest label a legend shows whole (an agent named by a long import path is shortened in the middle).
LEGEND_LABEL = 48


def short_label(text: str, width: int = LEGEND_LABEL) -> str:
    """``text``, or its start and end around "…" when longer than ``width`` (the file and factory of a path
    stay readable)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 3
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def _save(plt: Any, figure: Any, path: Path) -> None:
    """PNG at 110 dpi, written atomically (a reader never sees half a file)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    atomic_write_bytes(path, buffer.getvalue())


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _privacy_rows(report: VerifyReport) -> list[tuple[str, float, str, float | None]]:
    """(label, ε, colour key, ceiling) of every ε the report holds, the ledger's by the comparison's route first."""
    claim, audits = report.claim, report.audits
    rows: list[tuple[str, float, str, float | None]] = []
    for route, eps in claim.ledger_epsilon.items():
        if route == claim.comparison_route:
            over = claim.claimed_epsilon is not None and eps > claim.claimed_epsilon * (1 + 1e-9)
            rows.insert(0, (f"ledger, {route} (the comparison's route)", eps, "fail" if over else "ledger", None))
        else:
            rows.append((f"ledger, {route}", eps, "ledger-other", None))
    if claim.paper is not None:
        for conversion, eps in claim.paper.true_epsilon.items():
            rows.append((f"paper's printed noise, {conversion}", eps, "paper", None))
    for run in audits.runs:
        if run.verdict != NOT_RUN and run.epsilon_lower is not None:
            key = "fail" if run.verdict == AUDIT_VIOLATION else "pass"
            rows.append((f"audit: {run.notion} {run.route}", run.epsilon_lower, key, run.ceiling))
    witnessed = report.whitebox.epsilon_lower
    if witnessed is not None:
        key = "fail" if witnessed > report.settings.epsilon else "pass"
        rows.append((f"white-box witnessed pair (K = {report.whitebox.episodes})", witnessed, key, None))
    return rows


#: Width of a value's label on the evidence axis, as a share of the axis.
LABEL_WIDTH = 0.07
#: The evidence axis reaches at most this many times the claimed ε (or the largest value within it).
AXIS_CLAIM_MULTIPLE = 10.0


def evidence_axis(values: list[float], claimed: float) -> tuple[float, bool]:
    """(right end of the ε axis, whether some value lies beyond it). The axis shows every value when they
    all lie within :data:`AXIS_CLAIM_MULTIPLE` × the claim; otherwise it is cut there, so that a ledger
    accounting to 10²² (or ∞) does not squeeze the claim line and the audits that matter against 0."""
    finite = [v for v in values if math.isfinite(v)]
    natural = max(finite + [claimed]) * 1.6 or 1.0
    cut = AXIS_CLAIM_MULTIPLE * claimed
    if all(v <= cut for v in values):
        return natural, False
    within = [v for v in finite if v <= cut]
    return max(within + [claimed]) * 1.6, True


def figure_alt(report: VerifyReport, name: str) -> str:
    """A figure's ``alt`` text: what it shows, with its numbers (for a reader who cannot see it)."""
    claimed = report.settings.epsilon
    if name == "privacy.png":
        shown = "; ".join(f"{label}: {value:.3g}" if math.isfinite(value) else f"{label}: infinite"
                          for label, value, _, _ in _privacy_rows(report))
        return f"Bar chart of ε at δ = {report.settings.delta:g} against the claimed ε = {claimed:g}. {shown}."
    if name == "ledger.png":
        families = "; ".join(f"{f.family}: ρ = {f.worst_user_rho:.3g}" for f in report.claim.families)
        return f"Bar chart of the worst user's ρ per statistic family ({families}), against the claimed ρ."
    if name == "regret.png":
        u = report.utility
        curves = [c for c in (u.agent, u.counterpart) if c is not None]
        finals = "; ".join(f"{c.label}: {c.final_mean:.4g}" for c in curves)
        per_episode = u.random_per_episode
        random = "" if per_episode is None else f"; uniformly random policy: {per_episode:.3g} an episode"
        return f"Cumulative regret over {u.episodes} episodes, final means: {finals}{random}."
    run = next((r for r in report.audits.runs if r.figure == name), None)
    if run is not None:
        return (f"Trade-off plot of the {run.notion} {run.route} audit: the tested (FPR, FNR) points against the "
                f"claimed ε = {claimed:g} curve; verdict {run.verdict}.")
    return f"Figure {name} of the verification report."


def label_position(value: float, claimed: float, right: float) -> float:
    """Where a bar's value label starts: right of the bar, or right of the claim line when the bar ends just
    short of it (a label never crosses the line)."""
    at = value + right * 0.01
    return claimed + right * 0.01 if value < claimed < at + right * LABEL_WIDTH else at


def privacy_figure(report: VerifyReport, path: Path) -> bool:
    """The ε evidence (module docstring); False when there is nothing to plot."""
    rows = _privacy_rows(report)
    if not rows:
        return False
    plt = _pyplot()
    claimed = report.settings.epsilon
    right, clipped = evidence_axis([v for _, v, _, _ in rows], claimed)
    figure, axes = plt.subplots(figsize=(7.2, 0.34 * len(rows) + 1.8))
    for i, (_label, value, key, ceiling) in enumerate(rows):
        y = len(rows) - 1 - i
        beyond = not value <= right
        shown = right if beyond else value
        axes.barh(y, shown, color=COLOURS[key], alpha=0.85, height=0.55, hatch="//" if beyond else None)
        text = (f"{value:.3g}" if math.isfinite(value) else "∞") + (" →" if beyond else "")
        if beyond:  # written inside the clipped bar's end
            axes.text(right * 0.99, y, text, va="center", ha="right", fontsize=8, color="white", fontweight="bold")
        else:
            axes.text(label_position(shown, claimed, right), y, text, va="center", fontsize=8)
        if ceiling is not None and math.isfinite(ceiling):
            if ceiling <= right:
                axes.plot([ceiling] * 2, [y - 0.3, y + 0.3], color=COLOURS["ceiling"], lw=2)
            else:
                axes.text(right * 0.99, y, f"ceiling {ceiling:.3g} →", va="center", ha="right", fontsize=7,
                          color=COLOURS["ceiling"])
    axes.axvline(claimed, color=COLOURS["claim"], ls="--", lw=1.5, label=f"claimed ε = {claimed:g}")
    axes.set_yticks(range(len(rows)))
    axes.set_yticklabels([r[0] for r in reversed(rows)], fontsize=7.5)
    axes.set_xlim(0, right)
    note = f" (axis cut at {right:.3g}: larger values are written on hatched bars)" if clipped else ""
    axes.set_xlabel(f"ε at δ = {report.settings.delta:g}{note}", fontsize=8.5 if clipped else None)
    has_ceiling = any(c is not None for *_, c in rows)
    axes.set_title("ε evidence: the ledger and every audit lower bound against the claim", fontsize=9)
    handles, labels = axes.get_legend_handles_labels()
    if has_ceiling:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], color=COLOURS["ceiling"], lw=2))
        labels.append("audit ceiling (largest ε its size can show)")
    # along the figure's foot: inside the axes it would hide the bars it explains
    figure.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    figure.tight_layout(rect=(0.0, 0.3 / figure.get_figheight(), 1.0, 1.0))
    _save(plt, figure, path)
    return True


def ledger_figure(report: VerifyReport, path: Path) -> bool:
    """Worst user's ρ per family against the claimed ρ; False when the ledger was not read."""
    claim = report.claim
    if not claim.families:
        return False
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7.2, 2.6))
    names = [f.family for f in claim.families]
    values = [f.worst_user_rho for f in claim.families]
    left = 0.0
    for name, value in zip(names, values, strict=True):
        axes.barh(0, value, left=left, height=0.5, label=name, alpha=0.85)
        left += value
    if claim.claimed_rho:  # a claim that states no ρ (0) draws no line
        axes.axvline(claim.claimed_rho, color=COLOURS["claim"], ls="--", lw=1.5,
                     label=f"claimed ρ = {claim.claimed_rho:.4g}")
    axes.set_yticks([0])
    axes.set_yticklabels([f"worst user (#{claim.worst_user})"], fontsize=8)
    axes.set_xlabel("ρ (zCDP) paid, stacked by statistic family")
    axes.set_title(f"Ledger: {claim.n_releases} releases, per-user ρ = {claim.worst_user_rho:.4g}", fontsize=10)
    axes.set_ylim(-0.45, 1.0)  # room above the bar for the legend
    axes.legend(loc="upper center", ncol=min(5, len(names) + 1), fontsize=8, frameon=False)
    figure.tight_layout()
    _save(plt, figure, path)
    return True


def regret_figure(report: VerifyReport, path: Path) -> bool:
    """Cumulative regret of the agent, the counterpart and the random policy; False when not run."""
    utility = report.utility
    if utility.agent is None:
        return False
    import numpy as np

    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(7.2, 4.0))
    for key, curve in (("agent", utility.agent), ("counterpart", utility.counterpart)):
        if curve is None:
            continue
        x, mean, std = np.array(curve.episodes), np.array(curve.mean), np.array(curve.std)
        label = f"{short_label(curve.label)} ({'private' if key == 'agent' else 'non-private'}, {utility.seeds} seeds)"
        axes.plot(x, mean, color=COLOURS[key], label=label)
        axes.fill_between(x, mean - std, mean + std, color=COLOURS[key], alpha=0.2)
    if utility.random_per_episode is not None:
        x = np.array([1, utility.episodes])
        axes.plot(x, x * utility.random_per_episode, color=COLOURS["random"], ls=":",
                  label="uniformly random policy (exact)")
    axes.set_xlabel("episode k")
    axes.set_ylabel("cumulative regret")
    axes.set_title(f"Utility on {report.settings.env}: what the privacy costs", fontsize=10)
    axes.legend(loc="upper left", fontsize=8)
    figure.tight_layout()
    _save(plt, figure, path)
    return True


def tradeoff_figure(run: AuditRun, path: Path) -> bool:
    """A two-world audit's tested (FPR, FNR) points, with their Clopper–Pearson upper corners, against the
    smallest FNR the claim allows; False when the run has no tested points."""
    import numpy as np

    points = run.raw.get("points") or []
    audit = run.raw.get("audit") or {}
    if not points or not audit:
        return False
    plt = _pyplot()
    mu = audit.get("claimed_mu") if run.raw.get("gaussian_claim") else None
    delta = float(run.raw.get("delta", 0.0))
    grid = np.linspace(0.0, 1.0, 401)
    figure, axes = plt.subplots(figsize=(4.2, 4.0))
    label = f"claimed {'μ-GDP' if mu is not None else '(ε, δ)'} trade-off (ε = {run.claimed_epsilon:g})"
    axes.plot(grid, claimed_curve(grid, run.claimed_epsilon, delta, mu), color=COLOURS["claim"], label=label)
    axes.fill_between(grid, 0, claimed_curve(grid, run.claimed_epsilon, delta, mu), color="#fee2e2",
                      label="forbidden by the claim")
    colour = COLOURS["fail"] if run.verdict == AUDIT_VIOLATION else COLOURS["pass"]
    for i, (fpr, fnr, fpr_up, fnr_up) in enumerate(points):
        axes.plot([fpr], [fnr], "o", color=colour, label="tested (FPR, FNR)" if i == 0 else None)
        axes.add_patch(_rectangle(fpr, fnr, fpr_up, fnr_up, colour, i == 0))
    axes.set_xlim(0, 1)
    axes.set_ylim(0, 1)
    axes.set_xlabel("false-positive rate")
    axes.set_ylabel("false-negative rate")
    axes.set_title(f"{run.notion} {run.route}: {run.verdict}", fontsize=10)
    axes.legend(loc="upper right", fontsize=7)
    figure.tight_layout()
    _save(plt, figure, path)
    return True


def _rectangle(fpr: float, fnr: float, fpr_up: float, fnr_up: float, colour: str, first: bool) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((fpr, fnr), max(fpr_up - fpr, 1e-3), max(fnr_up - fnr, 1e-3), fill=False, ec=colour, ls="--",
                     label="confidence region (upper bounds)" if first else None)


FIGURES = (("privacy.png", privacy_figure), ("ledger.png", ledger_figure), ("regret.png", regret_figure))


def write_figures(report: VerifyReport, directory: Path) -> dict[str, Path]:
    """Write every figure that has data into ``directory``; name → path."""
    written: dict[str, Path] = {}
    for name, draw in FIGURES:
        path = directory / name
        if draw(report, path):
            written[name] = path
    for run in report.audits.runs:
        if run.figure is not None and tradeoff_figure(run, directory / run.figure):
            written[run.figure] = directory / run.figure
    return written
