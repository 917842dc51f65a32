"""``dpverify audit agent`` and ``dpverify audit agent-zoo``: exit codes, one-line errors, outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpverify.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "visit_count_agent.py"
SMALL = ["--env", "random-linear", "--env-option", "dim=3", "--env-option", "horizon=2", "--env-option",
         "num_actions=2", "--env-option", "num_states=3", "--episodes", "3"]


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["audit", "agent", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("argv", "needle"), [
    (["--agent", "ldp-ucrl-vtr", "--env", "random-mixture", "--episodes", "3", "--notion", "billboard",
      "--epsilon", "1"], "--notion"),
    (["--agent", "dp-lsvi-ucb++", *SMALL, "--notion", "billboard", "--epsilon", "1", "--agent-option", "epsilon=2"],
     "claim the agent makes"),
    (["--agent", "dp-lsvi-ucb++", *SMALL, "--notion", "billboard", "--epsilon", "1", "--trials", "4"], "--trials"),
    (["--agent", "no_such_module.agents:make", *SMALL, "--notion", "jdp", "--epsilon", "1"], "does not import"),
    (["--agent", "dp-lsvi-ucb++", *SMALL, "--notion", "billboard", "--epsilon", "-1"], "--epsilon"),
    (["--agent", "dp-lsvi-ucb++", *SMALL, "--notion", "sideways", "--epsilon", "1"], "--notion"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        raise SystemExit(main(["audit", "agent", *argv]))
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err


def test_audit_json_and_out_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "audit"
    code, out, _ = _run(["--agent", "dp-lsvi-ucb++", *SMALL, "--notion", "billboard", "--epsilon", "1",
                         "--trials", "300", "--position", "first", "--window", "3", "--workers", "1", "--json",
                         "--out", str(out_dir)], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["verdict"] == "NO VIOLATION FOUND" and data["route"] == "two-world" and data["batched"]
    saved = json.loads((out_dir / "result.json").read_text())
    assert saved["verdict"] == data["verdict"]
    assert (out_dir / "tradeoff.png").stat().st_size > 1000


@pytest.mark.slow
def test_third_party_bug_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["--agent", f"{EXAMPLE}:make_agent", "--env", "min2021", "--env-option", "horizon=2",
                         "--env-option", "num_actions=2", "--episodes", "10", "--notion", "billboard",
                         "--epsilon", "1", "--trials", "2000", "--position", "first", "--window", "9",
                         "--gaussian-claim", "yes", "--workers", "1", "--seed", "1"], capsys)
    assert code == 1 and "verdict: VIOLATION" in out


def test_one_run_route(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["--agent", "dp-lsvi-ucb++", "--env", "random-linear", "--env-option", "dim=3",
                         "--env-option", "horizon=2", "--episodes", "60", "--notion", "billboard", "--route",
                         "one-run", "--canaries", "30", "--epsilon", "1"], capsys)
    assert code == 0 and "canaries per run: 30" in out and "Steinke" in out


def test_agent_zoo_table_and_exit(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import dpverify.audits.agent_zoo as zoo

    quick = tuple(c for c in zoo.cases(0.2) if c.name.startswith("noise-reused") and c.spec.route == "two-world")
    monkeypatch.setattr(zoo, "cases", lambda scale=1.0: quick)
    assert main(["audit", "agent-zoo"]) == 0
    out = capsys.readouterr().out
    assert "noise-reused" in out and "all verdicts as expected" in out
    assert main(["audit", "agent-zoo", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["all_as_expected"] is True
    wrong = tuple(zoo.AgentZooCase(c.name, c.bug, c.description, c.spec, "NO VIOLATION FOUND", c.variant)
                  for c in quick)
    monkeypatch.setattr(zoo, "cases", lambda scale=1.0: wrong)
    assert main(["audit", "agent-zoo"]) == 1


def test_the_third_party_zoo_from_the_command_line(capsys) -> None:
    assert main(["audit", "agent-zoo", "--third-party", "--only", "half-noise", "--only", "self-noised-lsvi",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["all_as_expected"] and [c["case"] for c in data["cases"]] == ["self-noised-lsvi", "half-noise"]
    assert main(["audit", "agent-zoo", "--third-party", "--only", "nonesuch"]) == 2
