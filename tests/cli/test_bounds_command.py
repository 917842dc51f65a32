"""``dpverify bounds``: exit codes, one-line errors, JSON output — run in-process through main()."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpverify.bounds.registry import REGISTRY
from dpverify.cli import main

DP = ["--d", "10", "--H", "20", "--epsilon", "1", "--delta", "1e-5"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["bounds", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list(capsys) -> None:
    code, out, err = run(capsys, "list")
    assert code == 0 and err == ""
    for name in REGISTRY:
        assert name in out


def test_list_json_and_filters(capsys) -> None:
    code, out, _ = run(capsys, "list", "--privacy", "LDP", "--json")
    assert code == 0
    rows = json.loads(out)
    assert {r["name"] for r in rows} == {n for n, e in REGISTRY.items() if e.privacy == "LDP"}
    assert all(r["privacy"] == "LDP" for r in rows)


def test_show_text_and_json(capsys) -> None:
    code, out, _ = run(capsys, "show", "dp-lsvi-ucb++/theorem-3.2")
    assert code == 0
    assert "Theorem 3.2" in out and "line 259" in out and "H^{9/2}" in out
    code, out, _ = run(capsys, "show", "dp-lsvi-ucb++/conclusion", "--json")
    data = json.loads(out)
    assert data["rates_in_K"] == {"d": "15/8", "H": "19/8", "K": "3/4", "epsilon": "-1"}
    assert data["source"]["lines"] == [279]


def test_eval_ngo_2022_at_d10_h20_k1e5(capsys) -> None:
    code, out, _ = run(
        capsys, "eval", "ngo-2022/linear-mdp", "--d", "10", "--H", "20", "--K", "1e5", "--epsilon", "1", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["non_private_term"] == 4e6
    assert data["value"] == pytest.approx(4e6 + 20**3 * 10**1.25 * 1e5**0.5, rel=1e-14)


def test_eval_text(capsys) -> None:
    code, out, _ = run(
        capsys, "eval", "ldp-ucrl-vtr/upper", "--d", "5", "--H", "6", "--T", "6e4", "--eps", "1", "--delta", "1e-3"
    )
    assert code == 0 and "privacy term" in out and "T=60000" in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["eval", "no/such-bound", "--d", "1"], "name must be a registered bound"),
        (
            ["eval", "ngo-2022/linear-mdp", "--d", "10", "--H", "20", "--K", "1e5", "--epsilon", "0"],
            "epsilon must be > 0",
        ),
        (["eval", "ngo-2022/linear-mdp", "--d", "10", "--H", "20", "--K", "1e5"], "epsilon is required"),
        (["eval", "ngo-2022/linear-mdp", "--d", "ten"], "must be a number"),
        (
            [
                "eval",
                "ldp-ucrl-vtr/upper",
                "--d",
                "5",
                "--H",
                "6",
                "--K",
                "10",
                "--T",
                "61",
                "--epsilon",
                "1",
                "--delta",
                "0.1",
            ],
            "T must equal K*H",
        ),
        (["show", "nope"], "name must be a registered bound"),
        (["compare", "ngo-2022/linear-mdp", "nope"], "name must be a registered bound"),
        (["compare", "ngo-2022/linear-mdp", "luyo-2021/linear-mdp", "--over", "T"], "over must be one of"),
        (
            ["compare", "ngo-2022/linear-mdp", "luyo-2021/linear-mdp", "--over", "epsilon", "--region"],
            "--region needs --over K",
        ),
        (["list", "--setting", "moon"], "setting must be one of"),
        (["plot", "ngo-2022/linear-mdp", "--out", "x.png"], "is required by bound ngo-2022/linear-mdp"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_errors_exit_2_with_one_line(capsys, tmp_path, monkeypatch, argv, fragment) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and fragment.lower() in err.lower()  # the option may be named in upper case (NAME)


def test_compare_text_and_json(capsys) -> None:
    code, out, _ = run(capsys, "compare", "dp-lsvi-ucb++/conclusion", "dp-lsvi-ucb++/theorem-3.2", *DP)
    assert code == 0 and "crossover K = 2.95241e+12 (symbolic" in out
    code, out, _ = run(
        capsys, "compare", "dp-lsvi-ucb++/conclusion", "dp-lsvi-ucb++/theorem-3.2", *DP, "--json", "--region"
    )
    data = json.loads(out)
    assert data["crossovers"][0]["value"] == pytest.approx(2.952405e12, rel=1e-6)
    assert data["crossovers"][0]["residual"] < 1e-9
    assert data["lower_beyond_last_crossover"] == "dp-lsvi-ucb++/theorem-3.2"
    assert "summary" in data["region"]


def test_compare_without_numbers_gives_the_closed_form(capsys) -> None:
    code, out, _ = run(capsys, "compare", "luyo-2021/linear-mdp", "dp-lsvi-ucb++/theorem-3.2")
    assert code == 0 and "closed form" in out and "give --d, --H, --epsilon, --delta" in out


def test_compare_over_epsilon(capsys) -> None:
    code, out, _ = run(
        capsys,
        "compare",
        "ldp-ucrl-vtr/upper",
        "ldp-ucrl-vtr/lower-linear-mixture",
        "--over",
        "epsilon",
        "--d",
        "10",
        "--H",
        "20",
        "--K",
        "1e5",
        "--delta",
        "1e-5",
    )
    assert code == 0 and "crossover ε = 7.36794e-07 (numeric" in out


@pytest.mark.slow
def test_check_reports_the_papers_inconsistency(capsys) -> None:
    code, out, _ = run(capsys, "check")
    assert code == 0
    assert "[inconsistent] statements: dp-lsvi-ucb++/theorem-3.2 and dp-lsvi-ucb++/conclusion disagree" in out
    assert "[ok] statements: lsvi-ucb/sahu-2025 and lsvi-ucb/liao-2021 are identical under T = KH." in out
    assert "[flagged] upper vs lower: upper bound ldp-ucrl-vtr/upper" in out
    code, out, _ = run(capsys, "check", "--json")
    data = json.loads(out)
    assert data["problems"] == sum(f["status"] in ("inconsistent", "flagged") for f in data["findings"])
    assert run(capsys, "check", "--strict")[0] == 1


def test_plot_writes_a_png(capsys, tmp_path: Path) -> None:
    out_file = tmp_path / "fig.png"
    code, out, err = run(
        capsys,
        "plot",
        "ngo-2022/linear-mdp",
        "dp-lsvi-ucb++/theorem-3.2",
        "ldp-ucrl-vtr/lower-linear-mixture",
        *DP,
        "--out",
        str(out_file),
        "--k-min",
        "10",
        "--k-max",
        "1e6",
    )
    assert code == 0 and err == "" and str(out_file) in out
    assert out_file.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
