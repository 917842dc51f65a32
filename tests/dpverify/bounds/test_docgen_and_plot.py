"""docs/bounds.md is generated from the registry (and cannot drift); plots are written and validated."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpverify.bounds.plot import plot_bounds
from dpverify.bounds.registry import REGISTRY
from dpverify.cli import bounds_docgen as docgen
from dpverify.errors import InvalidParameterError


def test_docs_page_equals_the_generated_text() -> None:
    path = docgen.DOC_PATH
    assert path.exists(), "run: python -m dpverify.cli.bounds_docgen --write"
    assert path.read_text(encoding="utf-8") == docgen.generate(), (
        "docs/bounds.md is out of date: run python -m dpverify.cli.bounds_docgen --write"
    )


def test_generated_page_lists_every_entry_and_finding() -> None:
    text = docgen.generate()
    for name in REGISTRY:
        assert f"`{name}`" in text
    assert "## Consistency findings" in text and "**inconsistent**" in text and "<!-- examples: checked -->" in text


def test_docgen_write_and_check(tmp_path: Path, capsys) -> None:
    page = tmp_path / "bounds.md"
    assert docgen.main(["--check", "--path", str(page)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert docgen.main(["--write", "--path", str(page)]) == 0
    assert docgen.main(["--check", "--path", str(page)]) == 0


def test_plot_bounds(tmp_path: Path) -> None:
    out = plot_bounds(["luyo-2021/linear-mdp", "garcelon-2020/upper", "he-zhou-2026/general-fa"], tmp_path / "f.png",
                      values={"d": 10, "H": 20, "epsilon": 0.5, "S": 5, "A": 3}, k_range=(1e2, 1e5), points=20)
    assert Path(out).stat().st_size > 1000


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"names": []}, "names must list at least one bound"),
        ({"k_range": (10, 1)}, "k_range must be"),
        ({"points": 1}, "points must be an integer >= 2"),
        ({"values": {"d": 10}}, "H is required"),
    ],
)
def test_plot_rejects_bad_arguments(tmp_path: Path, kwargs: dict, match: str) -> None:
    args = {"names": ["lsvi-ucb/sahu-2025"], "values": {"d": 10, "H": 20}} | kwargs
    with pytest.raises(InvalidParameterError, match=match):
        plot_bounds(args.pop("names"), tmp_path / "f.png", **args)
