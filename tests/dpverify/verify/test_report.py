"""The report files: verdict first, self-contained HTML, Markdown, JSON and figures."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from verify_fixtures import report

from dpverify.agent_audit.plot import claimed_curve
from dpverify.verify.document import render_html, render_markdown
from dpverify.verify.report import FILES, describe, fmt, headline, to_text, write_report
from dpverify.verify.result import CONSISTENT, INCONCLUSIVE, REFUTED, VerifyReport


def to_markdown(report: VerifyReport) -> str:
    return render_markdown(describe(report), {})


def to_html(report: VerifyReport, figures: dict[str, Path]) -> str:
    return render_html(describe(report), figures)


@pytest.mark.parametrize("kind, verdict", [("consistent", CONSISTENT), ("refuted", REFUTED),
                                           ("inconclusive", INCONCLUSIVE)])
def test_every_form_puts_the_verdict_first(kind: str, verdict: str, tmp_path: Path) -> None:
    r = report(kind)
    assert r.verdict.verdict == verdict
    assert to_text(r).splitlines()[0] == headline(r) and headline(r).startswith(verdict)
    assert to_markdown(r).splitlines()[0] == f"# {verdict}"
    page = to_html(r, {})
    assert page.index(f"<h1>{verdict}</h1>") < page.index("<h2>Evidence</h2>") < page.index("Claim &amp; accounting")
    assert ("not a certificate" in page) == (verdict == CONSISTENT)


def test_write_report_files_and_self_contained_html(tmp_path: Path) -> None:
    paths = write_report(report("refuted"), tmp_path / "out")
    for name in FILES + ("privacy.png", "ledger.png", "regret.png", "audit_billboard_two-world.png"):
        assert paths[name].is_file() and paths[name].stat().st_size > 0, name
    for name, path in paths.items():
        if name.endswith(".png"):
            assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = paths["report.html"].read_text(encoding="utf-8")
    # self-contained: every image inline, no link, script or URL that would need a network or another file
    images = re.findall(r'<img[^>]*src="([^"]+)"', page)
    assert len(images) == 4 and all(src.startswith("data:image/png;base64,") for src in images)
    assert not re.search(r"https?://|<link|<script|src=\"(?!data:)", page)
    assert json.loads(paths["report.json"].read_text())["verdict"]["verdict"] == REFUTED
    markdown = paths["report.md"].read_text(encoding="utf-8")
    assert "](privacy.png)" in markdown and "| billboard | two-world |" in markdown
    # every image says what it shows, with its numbers, not its file name
    alts = re.findall(r'<img alt="([^"]*)"', page)
    assert len(alts) == 4 and not any(a.endswith(".png") for a in alts)
    assert any("claimed ε = 1" in a and "ledger" in a for a in alts)
    assert "![privacy.png]" not in markdown and "![Bar chart of ε" in markdown


def test_the_evidence_axis_is_cut_where_a_huge_or_infinite_value_would_squeeze_the_claim() -> None:
    from dpverify.verify.figures import AXIS_CLAIM_MULTIPLE, evidence_axis

    right, clipped = evidence_axis([1.0, 0.4, 2.5], 1.0)
    assert not clipped and right == pytest.approx(2.5 * 1.6)
    for huge in (3.5e22, math.inf):
        right, clipped = evidence_axis([1.0, 4.38, huge, 0.0], 1.0)
        assert clipped and right == pytest.approx(4.38 * 1.6)  # the refuting audit and the claim stay readable
        assert right <= AXIS_CLAIM_MULTIPLE * 1.6


def test_a_report_with_an_infinite_ledger_draws_its_figures(tmp_path: Path) -> None:
    import dataclasses

    r = report("refuted")
    huge = dataclasses.replace(r.claim, ledger_epsilon={**r.claim.ledger_epsilon, "exact": 3.5e22, "cks": math.inf})
    paths = write_report(dataclasses.replace(r, claim=huge), tmp_path / "out")
    assert paths["privacy.png"].stat().st_size > 0
    assert "infinite" in paths["report.html"].read_text(encoding="utf-8")


def test_html_escapes_what_it_shows() -> None:
    r = report()
    hostile = type(r.settings)(**{**r.settings.__dict__, "agent": "<script>alert(1)</script>"})
    page = to_html(type(r)(**{**r.__dict__, "settings": hostile}), {})
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_numbers_are_formatted_for_reading() -> None:
    assert fmt(math.inf) == "∞" and fmt(None) == "—" and fmt(math.nan) == "—"
    assert fmt(12143.2) == "12,143" and fmt(0.0359257) == "0.03593" and fmt(3.8e9) == "3.8e+09"


def test_claimed_tradeoff_curves() -> None:
    # Gaussian claim: G_mu(0) = 1, G_mu(1) = 0; (eps, delta) claim: the two supporting lines.
    assert claimed_curve([0.0], 1.0, 1e-5, 0.5)[0] == pytest.approx(1.0)
    assert claimed_curve([1.0], 1.0, 1e-5, 0.5)[0] == pytest.approx(0.0)
    fpr = 0.1
    expected = max(0.0, 1 - 1e-5 - math.e * fpr, math.exp(-1.0) * (1 - 1e-5 - fpr))
    assert claimed_curve([fpr], 1.0, 1e-5, None)[0] == pytest.approx(expected)


def test_a_check_that_does_not_apply_is_shown_as_such_in_every_form() -> None:
    import dataclasses

    from dpverify.checks import NOT_APPLICABLE, CheckResult
    from dpverify.verify.result import decide

    r = report()
    na = CheckResult("refuses oversized features", NOT_APPLICABLE, "the agent's config declares no feature_norm_bound")
    structure = dataclasses.replace(r.structure, checks=(*r.structure.checks, na))
    r = dataclasses.replace(r, structure=structure, verdict=decide(r.whitebox, r.claim, structure, r.audits))
    assert r.verdict.verdict == CONSISTENT
    text = to_text(r)
    assert "[not applicable] refuses oversized features: the agent's config" in text
    assert "2 of 3 contract checks passed; not applicable: refuses oversized features" in text
    assert "  - contract: refuses oversized features not applicable" in text
    assert "| refuses oversized features | not applicable |" in to_markdown(r)
    page = to_html(r, {})
    assert '<span class="badge not-applicable">not applicable</span>' in page and ".badge.not-applicable" in page
    checks = json.loads(json.dumps(r.to_dict()))["structure"]["checks"]
    assert checks[-1]["status"] == NOT_APPLICABLE


def test_the_white_box_section_comes_first_in_every_form() -> None:
    r = report()
    text = to_text(r)
    assert text.index("White-box release checks [pass]") < text.index("Claim & accounting [pass]")
    assert "witnessed ε 0.43" in text and "gram    Frobenius" in text
    markdown = to_markdown(r)
    assert markdown.index("## White-box release checks") < markdown.index("## Claim & accounting")
    assert "| witnessed pairs within the claim | pass |" in markdown
    page = to_html(r, {})
    assert page.index("<h2>White-box release checks</h2>") < page.index("<h2>Claim &amp; accounting</h2>")
    assert "Realised fraction of each family" in page
    data = r.to_dict()
    assert data["schema_version"] == 3 and data["whitebox"]["checks"][0]["name"] == "reproducible from the seeds"
    assert data["whitebox"]["checks"][0] == {"name": "reproducible from the seeds", "status": "pass",
                                             "reason": "seen", "evidence": {}, "claim": None}
    assert data["whitebox"]["sensitivity"][0]["ratio"] == 0.943


def test_a_long_agent_path_wraps_in_the_page_and_is_shortened_in_legends() -> None:
    from dpverify.verify.document import _CSS
    from dpverify.verify.figures import LEGEND_LABEL, short_label

    path = "/home/someone/" + "a_very_long_directory_name/" * 12 + "agent_module.py:make_agent"
    label = short_label(path)
    assert len(label) == LEGEND_LABEL and label.startswith("/home/some") and label.endswith("py:make_agent")
    assert short_label("dp-lsvi-ucb++") == "dp-lsvi-ucb++"
    css = re.sub(r"\s+", "", _CSS)
    assert "main{" in css and "overflow-wrap:anywhere" in css.split("main{")[1].split("}")[0]  # banner, lines
    assert "min-width:0" in css.split(".card{")[1].split("}")[0]  # a grid item shrinks to its column
    assert ".card.title>span:first-child{min-width:0;}" in css  # a flex item too
    r = report()
    long = type(r.settings)(**{**r.settings.__dict__, "agent": path})
    page = to_html(type(r)(**{**r.__dict__, "settings": long}), {})
    assert path in page  # shown whole, wrapped by the page, not cut


def test_a_value_label_never_crosses_the_claim_line() -> None:
    from dpverify.verify.figures import LABEL_WIDTH, label_position

    assert label_position(0.965, 1.0, 2.1) == pytest.approx(1.0 + 0.021)  # moved past the line
    assert label_position(0.2, 1.0, 2.1) == pytest.approx(0.2 + 0.021)  # far from it: next to its bar
    assert label_position(1.3, 1.0, 2.1) == pytest.approx(1.3 + 0.021)  # beyond it already
    for value in (0.5, 0.9, 0.95, 0.99, 1.0):
        at = label_position(value, 1.0, 2.0)
        assert not at < 1.0 < at + 2.0 * LABEL_WIDTH
