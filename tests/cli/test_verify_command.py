"""``dpverify verify``: verdict first, exit status by verdict, files, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpverify.cli import main
from dpverify.verify import budget as budgets
from dpverify.verify.budget import Budget

TINY = Budget("quick", utility_seeds=1, two_world_trials=40, batched_trials=40, two_world_episodes=4,
              one_run_canaries=4, one_run_runs=1, contract_episodes=5, one_run_audits="first")
BASE = ["verify", "--agent", "ngo", "--env", "min2021", "--epsilon", "1", "--delta", "1e-5", "--episodes", "6",
        "--workers", "1"]


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick budget shrunk, and no audit applicable (the audits have their own tests): INCONCLUSIVE."""
    monkeypatch.setitem(budgets.BUDGETS, "quick", TINY)
    monkeypatch.setattr("dpverify.verify.audits.notions_for", lambda notion: ())


@pytest.mark.parametrize("argv, needle", [
    (["--agent", "no-such-agent"], "--agent must be one of"),
    (["--epsilon", "-1"], "--epsilon must be > 0"),
    (["--delta", "2"], "--delta"),
    (["--budget", "enormous"], "invalid choice"),
    (["--episodes", "2.5"], "--episodes"),
    (["--agent", "no.such.module:factory"], "--agent factory path does not import"),
    (["--env", "min2021-raw"], "feature_norm_bound"),
    (["--agent-option", "epsilon=3"], "--agent-option must not set epsilon"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(BASE + argv)
    err = capsys.readouterr().err
    assert code == 2 and needle in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.slow
def test_text_json_and_files(fast: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "report"
    assert main(BASE + ["--out", str(out_dir)]) == 2  # INCONCLUSIVE: no audit ran
    text = capsys.readouterr().out
    assert text.startswith("INCONCLUSIVE — ngo on min2021")
    assert f"report: {out_dir / 'report.html'}" in text
    for name in ("report.html", "report.md", "report.json", "privacy.png", "ledger.png", "regret.png"):
        assert (out_dir / name).is_file()
    assert main(BASE + ["--out", str(out_dir)]) == 2  # refused before any work: the report is there
    assert "already holds results" in capsys.readouterr().err
    assert main(BASE + ["--out", str(out_dir), "--force"]) == 2
    capsys.readouterr()
    assert main(BASE + ["--json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"]["verdict"] == "INCONCLUSIVE" and data["verdict"]["exit_status"] == 2
    assert data["structure"]["status"] == "pass" and data["files"] == {}
