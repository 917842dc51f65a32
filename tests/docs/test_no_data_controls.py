"""Every documented learning statement carries its no-data control.

A private run in the frontier (docs/results/frontier/runs) or in results.json must have a control record (the
same agent, seeds and options with every user slot empty, docs/no_data_controls.py) whose rerun with users
reproduced the documented run; every table of docs/results.md and of the results pages (docs/results/*.md) that
prints a private agent's regret must have a no-data-control column filled in for that row.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FRONTIER = DOCS / "results" / "frontier"
PRIVATE_AGENTS = ("DP-LSVI-UCB++", "Luyo et al.", "Ngo et al.", "LDP-UCRL-VTR")
EMPTY_CELLS = {"", "–", "-", "no control on disk"}


def _docs_module(name: str) -> Any:
    if str(DOCS) not in sys.path:
        sys.path.insert(0, str(DOCS))
    spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def markdown_tables(text: str) -> list[list[list[str]]]:
    """The pipe tables of a markdown text: each a list of rows (the header first), separator lines dropped."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def rows_without_control(text: str) -> list[str]:
    """Rows of tables that print a private agent's regret with no no-data control beside it."""
    missing: list[str] = []
    for table in markdown_tables(text):
        header, rows = table[0], table[1:]
        if not any("regret" in h.lower() for h in header):
            continue
        private = [row for row in rows if any(name in " ".join(row) for name in PRIVATE_AGENTS)]
        columns = [i for i, h in enumerate(header) if "control" in h.lower()]
        for row in private:
            if not columns or all(i >= len(row) or row[i] in EMPTY_CELLS for i in columns):
                missing.append(" | ".join(row))
    return missing


def test_the_table_checker_flags_a_private_row_without_control_and_clears_one_with_it() -> None:
    without = "| agent | ε | final regret |\n|---|---|---|\n| Luyo et al. | 10 | 36474 |\n"
    with_control = ("| agent | ε | final regret | no-data control |\n|---|---|---|---|\n"
                    "| Luyo et al. | 10 | 36474 | 35783 |\n| LSVI-UCB | – | 1559 | – |\n")
    unfilled = with_control.replace("35783", "no control on disk")
    assert rows_without_control(without) == ["Luyo et al. | 10 | 36474"]
    assert rows_without_control(with_control) == []
    assert rows_without_control(unfilled) == ["Luyo et al. | 10 | 36474 | no control on disk"]


def test_every_regret_table_of_the_results_page_carries_the_no_data_control() -> None:
    text = (DOCS / "results.md").read_text(encoding="utf-8")
    assert rows_without_control(text) == []


@pytest.mark.parametrize("page", sorted((DOCS / "results").glob("*.md")), ids=lambda p: p.name)
def test_the_results_pages_carry_a_control_for_every_private_row(page: Path) -> None:
    assert rows_without_control(page.read_text(encoding="utf-8")) == []


def _check_record(record: dict[str, Any], documented: dict[str, Any], options: dict[str, Any]) -> None:
    """``record`` is the control of ``documented``, run with ``options``; its rerun with users reproduced it."""
    assert record["K"] == documented["K"] and record["agent"] == documented["agent"]
    assert record["num_seeds"] == len(documented["seeds"])
    assert record["agent_options"] == options
    assert record["env_options"] == documented["env_options"]
    assert record["reproduces_documented_run"] is True
    comparison = record["comparison"]
    assert len(comparison["control_last_per_episode"]) == record["num_seeds"]
    assert np.allclose(record["final_with_users_per_seed"], documented["final_cumulative_regret"]["per_seed"])


def test_every_private_frontier_cell_has_its_control_on_disk() -> None:
    cells = {p.name: json.loads(p.read_text()) for p in sorted((FRONTIER / "runs").glob("*.json"))}
    private = {name: cell for name, cell in cells.items() if cell.get("epsilon") is not None}
    assert len(private) >= 50
    frontier = _docs_module("make_frontier")
    for name, cell in private.items():
        path = FRONTIER / "runs" / "controls" / name
        assert path.exists(), f"{name}: no no-data control"
        # the options make_frontier.py runs the cell with (an imported cell may spell out a default besides)
        _check_record(json.loads(path.read_text()), cell, frontier.cell_options(cell["label"], cell["epsilon"]))


def test_every_private_run_of_results_json_has_its_control() -> None:
    document = json.loads((DOCS / "results" / "results.json").read_text())
    controls = json.loads((DOCS / "results" / "results_controls.json").read_text())["controls"]
    private = [r for r in document["runs"] if "epsilon" in r["agent_options"]]
    assert len(private) >= 17
    for run in private:
        assert run["label"] in controls, f"{run['label']}: no no-data control"
        _check_record(controls[run["label"]], run, run["agent_options"])


def test_a_control_record_pairs_the_run_with_its_data_free_twin() -> None:
    from dpverify.agents.core.runner import RunSpec, run

    controls = _docs_module("no_data_controls")
    spec = RunSpec("dp-lsvi-ucb++", "min2021", 30, num_seeds=2, base_seed=7,
                   agent_options={"epsilon": 1e12, "delta": 1e-5, "aggregation": "tree"},
                   env_options={"horizon": 5, "num_actions": 4})
    documented = run(spec).cumulative_regret()[:, -1].tolist()
    record = controls.control_record(spec, documented)
    assert record["reproduces_documented_run"] is True
    assert controls.same_run(json.loads(json.dumps(record)), spec)
    assert not controls.same_run(record, RunSpec("dp-lsvi-ucb++", "min2021", 31, num_seeds=2, base_seed=7,
                                                 agent_options=dict(spec.agent_options),
                                                 env_options=dict(spec.env_options)))
    control = run(RunSpec(**{**spec.__dict__, "users": False})).cumulative_regret()[:, -1]
    assert record["final_without_users_per_seed"] == control.tolist()
    assert controls.control_record(spec, [d + 1.0 for d in documented])["reproduces_documented_run"] is False
    with pytest.raises(ValueError, match="with its users"):
        controls.control_record(RunSpec(**{**spec.__dict__, "users": False}))
