"""Every measurement lives on a results page with a fixed header, and a script's page is what it renders.

A results page (``docs/results/*.md``) opens with the command that reproduces its figures, the JSON they are
in, the commit and the machine of the run (docs/results_page.py). The pages the ``docs/make_*.py`` and
``docs/measure_*.py`` scripts write are rendered again here from the committed JSON with each script's
``--render-only`` and must come out identical, so a page never drifts from its figures; the header names only
the commits and machines the JSON records.
"""

from __future__ import annotations

import importlib
import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RESULTS = DOCS / "results"
#: script → the page its --render-only writes.
SCRIPTS = {
    "make_results": "paper_experiments.md",
    "make_frontier": "frontier.md",
    "make_kstar": "kstar.md",
    "make_bandits": "bandits.md",
    "make_learning_controls": "learning_controls.md",
    "make_ldp_staged": "ldp_staged.md",
    "make_canary_audits": "canary_audits.md",
    "make_agent_audits": "agent_audits.md",
    "make_third_party_zoo": "third_party_zoo.md",
    "make_whitebox_false_alarms": "whitebox_false_alarms.md",
    "measure_one_run_worst_case": "one_run_worst_case.md",
    "measure_one_run_scores": "one_run_scores.md",
}
FIELDS = ("- **Reproduce:** ", "- **Figures:** ", "- **Commit:** ", "- **Machine:** ")


def _docs_module(name: str) -> Any:
    if str(DOCS) not in sys.path:
        sys.path.insert(0, str(DOCS))
    return importlib.import_module(name)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_render_only_writes_the_committed_page_from_the_committed_json(script: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    module = _docs_module(script)
    page = tmp_path / SCRIPTS[script]
    monkeypatch.setattr(module, "PAGE", page)
    assert module.main(["--render-only"]) in (0, None)
    assert str(page) in capsys.readouterr().out
    committed = (RESULTS / SCRIPTS[script]).read_text(encoding="utf-8")
    assert page.read_text(encoding="utf-8") == committed, (
        f"docs/results/{SCRIPTS[script]} differs from its JSON: run python docs/{script}.py --render-only")


def test_every_results_page_opens_with_the_fixed_header() -> None:
    pages = sorted(RESULTS.glob("*.md"))
    assert {p.name for p in pages} >= set(SCRIPTS.values())
    for page in pages:
        text = page.read_text(encoding="utf-8")
        block = ("\n" + text).split("\n# ", 1)[1].split("\n\n")[1]  # the paragraph after the title
        header = [line for line in block.splitlines() if line.startswith("- **")]
        assert [line[:len(f)] for line, f in zip(header, FIELDS, strict=False)] == list(FIELDS), page.name
        assert all(len(line) > len(f) + 3 for line, f in zip(header, FIELDS, strict=False)), page.name


def test_a_page_names_no_commit_or_machine_its_json_does_not_record(tmp_path: Path) -> None:
    pages = _docs_module("results_page")
    empty = pages.header("t", reproduce="python docs/make_x.py", render="python docs/make_x.py --render-only",
                         figures=[RESULTS / "x.json"], runs=[pages.recorded([{"row": 1}])])
    assert "- **Commit:** not recorded in the JSON above" in empty
    assert "- **Machine:** not recorded in the JSON above" in empty
    assert "`python docs/make_x.py`" in empty and "`docs/results/x.json`" in empty
    old = pages.recorded({"source": {"commit": "3e1b180bda38", "uncommitted_changes": []},
                          "versions": {"python": "3.11.7", "numpy": "2.4.6", "scipy": "1"}})
    assert old == {"commit": "3e1b180", "machine": {"python": "3.11.7", "numpy": "2.4.6"}}
    text = pages.header("t", reproduce="r", render="r --render-only", figures=[], runs=[old, {}])
    assert "- **Commit:** `3e1b180` (1 of 2 records name none)" in text
    assert "- **Machine:** Python 3.11.7, numpy 2.4.6 (cores, CPU model not recorded)" in text


def test_a_run_records_its_command_commit_and_machine() -> None:
    pages = _docs_module("results_page")
    found = pages.provenance(["--seeds", "3"])
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode == 0:
        assert found["commit"].split("+")[0] == head.stdout.strip()
    assert found["command"].startswith("python ") and found["command"].endswith("--seeds 3")
    assert found["machine"]["cores"] >= 1 and found["machine"]["python"] == platform.python_version()
    assert pages.recorded(json.loads(json.dumps({"provenance": found, "rows": []}))) == found
    text = pages.header("t", reproduce="r", render="r2", figures=[], runs=[found])
    assert f"`{found['command']}`" in text and f"{found['machine']['cores']} cores" in text
