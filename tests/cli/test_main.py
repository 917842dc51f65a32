"""The calibrate, convert and account commands: output, JSON, and one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dpverify.cli import main


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_calibrate_default_table(capsys):
    code, out, err = run(["calibrate"], capsys)
    assert code == 0 and err == ""
    assert "FALLS SHORT" in out and "paper/derived" in out
    for family in ("w_hat", "w_check", "w_bar", "gram"):
        assert family in out


def test_calibrate_json_round_trip_through_account(tmp_path, capsys):
    ledger_path = tmp_path / "ledger.json"
    code, out, _ = run(["calibrate", "--epsilon", "0.5", "--episodes", "200", "--json", "--write-ledger",
                        str(ledger_path)], capsys)
    assert code == 0
    payload = json.loads(out)
    exact = payload["by_conversion"]["exact"]
    assert exact["accounted_epsilon"] <= 0.5
    assert payload["paper_printed_noise"]["falls_short"] is True
    code, out, _ = run(["account", str(ledger_path), "--json"], capsys)
    assert code == 0
    acc = json.loads(out)
    assert acc["epsilon"]["exact"] <= 0.5 and acc["epsilon"]["exact"] >= 0.5 * (1 - 1e-9)
    assert acc["n_releases"] == 4 * 20 * 200


def test_calibrate_ldp_schedule(capsys):
    code, out, _ = run(["calibrate", "--schedule", "ldp-ucrl-vtr", "--horizon", "6", "--dim", "5", "--json"], capsys)
    assert code == 0
    payload = json.loads(out)
    assert payload["by_conversion"]["exact"]["releases_counted"] == 12
    assert set(payload["by_sensitivity_model"]) == {"standard", "staged"}
    staged = payload["by_sensitivity_model"]["staged"]
    assert staged["releases_counted"] == 10  # stage H sends nothing
    assert [(s["family"], s["stages"]) for s in staged["statistics"]][:2] == [
        ("gram", [1, 1]), ("target", [1, 1])]
    code, out, _ = run(["calibrate", "--schedule", "ldp-ucrl-vtr", "--horizon", "6", "--dim", "5",
                        "--sensitivity", "staged"], capsys)
    assert code == 0 and "Sensitivity model staged" in out
    assert "target@5" in out and "gram@6" not in out


def test_convert(capsys):
    code, out, _ = run(["convert", "--rho", "0.5", "--delta", "1e-5", "--json"], capsys)
    assert code == 0
    eps = json.loads(out)["epsilon"]
    assert eps["exact"] < eps["cks"] < eps["bun-steinke"]
    code, out, _ = run(["convert", "--mu", "1"], capsys)
    assert code == 0 and "exact" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["calibrate", "--epsilon", "0"], "--epsilon must be > 0"),
        (["calibrate", "--epsilon", "-1"], "--epsilon must be > 0"),
        (["calibrate", "--delta", "1"], "--delta must be in the open interval (0, 1)"),
        (["calibrate", "--delta", "nan"], "--delta must be a finite number"),
        (["calibrate", "--epsilon", "inf"], "--epsilon must be a finite number"),
        (["calibrate", "--horizon", "2.5"], "--horizon must be an integer"),
        (["calibrate", "--horizon", "0"], "--horizon must be an integer >= 1"),
        (["calibrate", "--schedule", "ucb"], "--schedule must be one of"),
        (["calibrate", "--schedule", "ldp-ucrl-vtr", "--sensitivity", "paper"],
         "--sensitivity must be one of standard, staged"),
        (["calibrate", "--schedule", "ldp-ucrl-vtr", "--sensitivity", "staged", "--horizon", "1"],
         "--horizon must be >= 2 under the staged"),
        (["calibrate", "--relation", "swap"], "--relation must be one of"),
        (["convert", "--rho", "-1"], "--rho must be >= 0"),
        (["convert"], "required"),
        (["account", "/no/such/ledger.json"], "LEDGER must be a readable file"),
        (["nonsense"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, needle, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2
    assert needle in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_invalid_ledger_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "dpverify.ledger", "schema_version": 1, "relation": "replace-one", "blocks": [{}]}')
    code, _, err = run(["account", str(bad)], capsys)
    assert code == 2 and "block is missing fields" in err and err.count("\n") == 1


def test_a_ledger_that_is_not_a_regular_file_is_refused_before_it_is_opened(tmp_path, capsys):
    import os

    fifo = tmp_path / "ledger.fifo"
    os.mkfifo(fifo)  # opening it to read would block until a writer comes: it must never be opened
    code, _, err = run(["account", str(fifo)], capsys)
    assert code == 2 and "LEDGER must be a regular file, not a FIFO" in err and err.count("\n") == 1
    code, _, err = run(["account", str(tmp_path)], capsys)
    assert code == 2 and "LEDGER must be a regular file, not a directory" in err
    binary = tmp_path / "ledger.bin"
    binary.write_bytes(b"\xff\xfe\x00")
    code, _, err = run(["account", str(binary)], capsys)
    assert code == 2 and "LEDGER must be a UTF-8 text file" in err


def test_console_script_subprocess():
    """The installed entry point (python -m) exits 2 with one stderr line, no traceback."""
    proc = subprocess.run([sys.executable, "-m", "dpverify.cli", "calibrate", "--delta", "2"], capture_output=True,
                          text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr


def _mixed_ledger_file(tmp_path):
    from dpverify.ledger import PrivacyLedger
    from dpverify.mechanisms import GaussianMechanism, LaplaceMechanism, RandomizedResponse

    ledger = PrivacyLedger()
    ledger.record_block("count", (1, 256), (1, 2), LaplaceMechanism(1.0, 40.0), "tree")
    ledger.record_block("sum", (1, 256), (1, 1), GaussianMechanism(1.0, 30.0, 2), "prefix")
    ledger.record_block("report", (1, 256), (1, 1), RandomizedResponse(1, 0.5, 1, 3), "current")
    path = tmp_path / "mixed.json"
    path.write_text(ledger.to_json())
    return path


def test_account_a_mixed_ledger_by_every_route(tmp_path, capsys):
    path = _mixed_ledger_file(tmp_path)
    code, out, _ = run(["account", str(path)], capsys)
    assert code == 0
    assert "does not apply: needs every release to be Gaussian" in out and "(route pld" in out
    code, out, _ = run(["account", str(path), "--json"], capsys)
    payload = json.loads(out)
    routes = {r["route"]: r for r in payload["routes"]}
    assert payload["tightest"]["route"] == "pld" and routes["exact"]["epsilon"] is None
    assert "exact" not in payload["epsilon"] and payload["epsilon"]["cks"] > payload["tightest"]["epsilon"]


@pytest.mark.parametrize("claim, status, code", [
    ("epsilon=3,delta=1e-5", "holds", 0),
    ("epsilon=0.5,delta=1e-5", "refuted", 1),
    ("epsilon=1", "refuted", 1),  # a Gaussian release: no finite pure ε
    ("mu=2", "holds", 0),
    ("rho=0.001", "refuted", 1),
])
def test_account_checks_a_claim_in_its_own_measure(tmp_path, capsys, claim, status, code):
    path = _mixed_ledger_file(tmp_path)
    got, out, _ = run(["account", str(path), "--claim", claim, "--json"], capsys)
    assert got == code and json.loads(out)["claim"]["status"] == status


def test_account_claim_errors_and_undecided_exit_3(tmp_path, capsys):
    from dpverify.ledger import PrivacyLedger
    from dpverify.mechanisms import LaplaceMechanism

    path = _mixed_ledger_file(tmp_path)
    code, _, err = run(["account", str(path), "--claim", "eps=1"], capsys)
    assert code == 2 and "error: --claim must be epsilon=E[,delta=D], rho=R or mu=M (got 'eps=1')" in err
    ledger = PrivacyLedger()  # a Toeplitz-weighted Laplace ledger has no μ-GDP route
    ledger.record_block("blt", (1, 30), (1, 1), LaplaceMechanism(1.0, 30.0), "toeplitz:0.5/0.5")
    path.write_text(ledger.to_json())
    code, out, _ = run(["account", str(path), "--claim", "mu=1"], capsys)
    assert code == 3 and "cannot compare" in out


def test_audit_a_randomized_response(capsys):
    code, out, _ = run(["audit", "mechanism", "randomized-response", "--local-epsilon", "1", "--categories", "3",
                        "--trials", "4000", "--workers", "1", "--json"], capsys)
    assert code == 0
    payload = json.loads(out)
    assert payload["mechanism"]["categories"] == 3 and payload["result"]["verdict"] == "NO VIOLATION FOUND"


def test_calibrate_a_laplace_schedule_by_its_own_route_and_refuse_exact_in_one_line(capsys):
    """dp-ucb's releases are Laplace: without --conversion it is calibrated for pure ε (b = 10 at K = 1000); the
    exact conversion, for Gaussian releases only, is a one-line error naming the routes that apply."""
    code, out, err = run(["calibrate", "--schedule", "dp-ucb", "--json"], capsys)
    payload = json.loads(out)
    assert code == 0 and err == "" and payload["settings"]["conversion"] == "pure"
    assert payload["by_conversion"]["pure"]["statistics"][0]["noise_std"] == pytest.approx(10.0)
    code, out, err = run(["calibrate", "--schedule", "dp-ucb", "--conversion", "exact"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--conversion must be one of bun-steinke, cks, pure for schedule dp-ucb" in err
