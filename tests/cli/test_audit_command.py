"""``dpverify audit``: output, exit codes (0 nothing found, 1 violation, 2 bad input)."""

from __future__ import annotations

import json

import pytest

from dpverify.cli import main

GAUSS = ["audit", "mechanism", "gaussian", "--sigma", "3.73", "--sensitivity", "1", "--epsilon", "1", "--delta", "1e-5"]


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_gaussian_no_violation_text(capsys):
    code, out, err = run(capsys, GAUSS + ["--trials", "5000", "--workers", "1"])
    assert code == 0 and err == ""
    assert "verdict: NO VIOLATION FOUND" in out and "never certify" in out and "ceiling" in out


def test_gaussian_violation_json(capsys):
    argv = ["audit", "mechanism", "gaussian", "--sigma", "1.5", "--epsilon", "1", "--trials", "2e4", "--workers", "1",
            "--json"]
    code, out, _ = run(capsys, argv)
    data = json.loads(out)
    assert code == 1
    assert data["result"]["verdict"] == "VIOLATION" and data["mechanism"]["sigma"] == 1.5


def test_laplace_and_goe(capsys):
    code, out, _ = run(capsys, ["audit", "mechanism", "laplace", "--scale", "2", "--epsilon", "0.5", "--trials", "4000",
                                "--workers", "1", "--json"])
    assert code == 0 and json.loads(out)["result"]["gaussian_claim"] is False
    code, out, _ = run(capsys, ["audit", "mechanism", "goe", "--entry-std", "2.64", "--dim", "2", "--trials", "4000",
                                "--workers", "1"])
    assert code == 0 and "Gaussian-DP" in out


def test_results_do_not_depend_on_workers(capsys):
    _, serial, _ = run(capsys, GAUSS + ["--trials", "3000", "--workers", "1", "--json"])
    _, procs, _ = run(capsys, GAUSS + ["--trials", "3000", "--workers", "2", "--json"])
    assert json.loads(serial) == json.loads(procs)


@pytest.mark.parametrize(
    "extra",
    [
        ["--trials", "0"],
        ["--trials", "1"],
        ["--trials", "2.5"],
        ["--confidence", "0"],
        ["--confidence", "1.5"],
        ["--delta", "1"],
        ["--epsilon", "-1"],
        ["--scheduler", "nonsense"],
        ["--workers", "0"],
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, extra):
    code, out, err = run(capsys, GAUSS + extra)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("dpverify audit")


@pytest.mark.parametrize(
    "argv",
    [
        ["audit"],
        ["audit", "mechanism", "poisson", "--sigma", "1"],
        ["audit", "mechanism", "gaussian"],
        ["audit", "mechanism", "gaussian", "--sigma", "-1"],
        ["audit", "mechanism", "laplace", "--scale", "nan"],
        ["audit", "zoo", "--trials", "-5"],
    ],
)
def test_usage_errors_exit_2(capsys, argv):
    code, out, err = run(capsys, argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_zoo_table_and_json(capsys):
    code, out, _ = run(capsys, ["audit", "zoo", "--trials", "3e4", "--workers", "1"])
    assert code == 0
    assert out.count("VIOLATION") >= 7 and "noise-reused" in out
    assert "NO" not in out.split("expected?")[1].replace("NO VIOLATION", "")
    code, out, _ = run(capsys, ["audit", "zoo", "--trials", "3e4", "--workers", "2", "--json"])
    data = json.loads(out)
    assert code == 0 and data["all_as_expected"] is True and len(data["cases"]) == 14
