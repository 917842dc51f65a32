"""Interruption, output directories, one-line errors in the user's language, calibrate's named results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpverify.cli import COMMANDS, build_parser, main


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _children(pid: int) -> set[int]:
    """Every descendant process of ``pid`` (workers may be grandchildren, e.g. under a fork server)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    for child in list(found):
        found |= _children(child)
    return found


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far (0 once it has gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


@pytest.mark.slow
@pytest.mark.parametrize("argv, has_workers", [
    (["audit", "zoo", "--trials", "1e7", "--workers", "2"], False),  # interrupted wherever it is
    (["run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "100000", "--seeds", "2", "--workers", "2",
      "--no-plot", "--out", "{tmp}"], True),
])
def test_ctrl_c_prints_one_line_exits_130_and_leaves_no_workers(argv, has_workers, tmp_path):
    argv = [a.replace("{tmp}", str(tmp_path / "out")) for a in argv]
    proc = subprocess.Popen([sys.executable, "-m", "dpverify", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env={**os.environ, "MPLBACKEND": "Agg"})
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(workers) < 2:  # wait until the workers are running
        # without workers: interrupt once the command is computing (its imports take ~0.3 s of CPU), or
        # after 5 s of wall time on a machine too loaded to get there
        if not has_workers and (_cpu_seconds(proc.pid) >= 1.0 or time.monotonic() > deadline - 55):
            break
        workers |= _children(proc.pid)
        time.sleep(0.1)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "interrupted"
    time.sleep(0.5)
    assert bool(workers) or not has_workers
    assert not [w for w in workers if _alive(w)]


def test_version_and_module_entry_point():
    done = subprocess.run([sys.executable, "-m", "dpverify", "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("dpverify ")


def test_help_imports_no_command_module():
    code = ("import sys; from dpverify.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.endswith('_command') or m in ('scipy', 'sympy', 'matplotlib')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_dp_accounting_stays_off_the_start_up_path():
    """dp-accounting (a runtime dependency of the PLD route) loads only when a mixed ledger is accounted."""
    code = ("import sys; from dpverify.cli import main\n"
            "for argv in (['--help'], ['calibrate', '--episodes', '100']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('dp_accounting')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_every_registered_command_loads():
    names = {c.name for c in COMMANDS}
    parser = build_parser()  # every module imported
    choices = next(a for a in parser._actions if a.dest == "command").choices
    assert names == set(choices)


def test_negative_numbers_reach_the_range_check(capsys):
    code, _, err = run(["convert", "--rho", "1", "--delta", "-1e-5"], capsys)
    assert code == 2 and "--delta must be in the open interval (0, 1)" in err


@pytest.mark.parametrize("command", [
    ["calibrate", "--episodes", "1e3", "--json"],
    ["audit", "mechanism", "gaussian", "--sigma", "3", "--trials", "2e3", "--workers", "1", "--json"],
])
def test_integers_in_float_syntax_everywhere(command, capsys):
    code, _, _ = run(command, capsys)
    assert code in (0, 1)


@pytest.mark.parametrize("trials", ["0", "1"])
def test_trials_minimum_is_the_same_everywhere(trials, capsys):
    for argv in (["audit", "zoo"], ["audit", "mechanism", "gaussian", "--sigma", "1"]):
        code, _, err = run([*argv, "--trials", trials], capsys)
        assert code == 2 and "--trials must be an integer >= 2" in err


@pytest.mark.parametrize("argv, needle", [
    (["calibrate", "--epsilon", "1e308"], "--epsilon must be in [1e-06, 1e+06]"),
    (["calibrate", "--epsilon", "1e-300"], "--epsilon must be in [1e-06, 1e+06]"),
    (["calibrate", "--horizon", "1e300"], "--horizon must be an integer of at most"),
    (["calibrate", "--episodes", "1e17"], "--episodes must be <= 2^53"),
    (["audit", "mechanism", "gaussian", "--sigma", "1", "--dim", "1e7", "--trials", "1000"], "--trials is too large"),
    (["audit", "mechanism", "goe", "--entry-std", "1", "--dim", "3000"], "is too large"),
    (["audit", "mechanism", "gaussian", "--sigma", "1", "--scheduler", "tcp://"],
     "--scheduler must be a scheduler address"),
    (["audit", "mechanism", "gaussian", "--sigma", "1e-300"], "--sigma gives the mechanism no finite epsilon"),
    (["audit", "mechanism", "gaussian", "--sigma", "1e308", "--workers", "1"], "--sigma must be <= 1e+300"),
    (["audit", "mechanism", "goe", "--entry-std", "1", "--frobenius-sensitivity", "-2"],
     "--frobenius-sensitivity must be > 0"),
    (["audit", "zoo", "--confidence", "0"], "--confidence must be in the open interval"),
    (["run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "1e8", "--out", "{tmp}"],
     "--episodes is too large"),
    (["run", "--agent", "dp-lsvi-ucb++", "--env", "min2021", "--episodes", "2", "--out", "{tmp}"],
     "--agent-option epsilon is required by dp-lsvi-ucb++"),
    (["run", "--agent", "dp-lsvi-ucb++", "--env", "min2021", "--episodes", "2", "--out", "{tmp}",
      "--agent-option", "epsilon=-1"], "--agent-option epsilon must be > 0"),
    (["bounds", "compare", "ngo-2022/linear-mdp", "ngo-2022/linear-mdp"], "B must be a different bound from A"),
    (["bounds", "plot", "ngo-2022/linear-mdp", "--out", "{tmp}/f.xyz"], "--out must end in one of"),
])
def test_errors_name_the_option_in_one_line(argv, needle, capsys, tmp_path):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert needle in err, err


def test_convert_computes_extreme_but_legal_values(capsys):
    code, out, err = run(["convert", "--rho", "1e-320", "--json"], capsys)
    assert code == 0 and err == ""
    assert all(0 <= e <= 1e-100 for e in json.loads(out)["epsilon"].values())
    code, out, err = run(["convert", "--rho", "1e308", "--json"], capsys)
    assert code == 0 and json.loads(out)["epsilon"]["exact"] == "inf"


def test_run_out_is_checked_first_written_atomically_and_needs_force(tmp_path, capsys):
    out = tmp_path / "results"
    argv = ["run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "3", "--seeds", "1", "--out", str(out)]
    code, stdout, _ = run(argv, capsys)
    assert code == 0 and "png:" in stdout
    assert sorted(p.name for p in out.iterdir()) == ["cumulative_regret.png", "regret.csv", "regret.json"]
    before = (out / "regret.json").read_text()
    code, _, err = run([*argv, "--episodes", "4"], capsys)
    assert code == 2 and "--force" in err and (out / "regret.json").read_text() == before
    code, _, _ = run([*argv, "--episodes", "4", "--force", "--no-plot"], capsys)
    assert code == 0 and (out / "regret.json").read_text() != before
    bad = tmp_path / "file"
    bad.write_text("x")
    code, _, err = run([*argv[:-1], str(bad / "sub")], capsys)
    assert code == 2 and "--out must be a directory that can be created" in err


def test_bounds_plot_prints_the_path_it_wrote(tmp_path, capsys):
    code, out, _ = run(["bounds", "plot", "ngo-2022/linear-mdp", "--d", "10", "--H", "20", "--epsilon", "1",
                        "--delta", "1e-5", "--out", str(tmp_path / "fig")], capsys)
    assert code == 0
    written = Path(out.strip().removeprefix("wrote "))
    assert written == (tmp_path / "fig.png").resolve() and written.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png"]


def test_force_removes_the_figure_a_new_run_does_not_write(tmp_path, capsys):
    out = tmp_path / "results"
    argv = ["run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "3", "--seeds", "1", "--out", str(out)]
    assert run(argv, capsys)[0] == 0 and (out / "cumulative_regret.png").is_file()
    code, _, _ = run([*argv, "--force", "--no-plot"], capsys)
    assert code == 0 and sorted(p.name for p in out.iterdir()) == ["regret.csv", "regret.json"]


@pytest.mark.parametrize("argv, path", [
    (["calibrate", "--epsilon", "0.5", "--episodes", "20", "--write-ledger", "{path}"], "ledger.json"),
    (["bounds", "plot", "ngo-2022/linear-mdp", "--d", "10", "--H", "20", "--epsilon", "1", "--delta", "1e-5",
      "--out", "{path}"], "fig.png"),
])
def test_single_file_outputs_follow_the_force_rule(argv, path, tmp_path, capsys):
    target = tmp_path / path
    argv = [a.replace("{path}", str(target)) for a in argv]
    assert run(argv, capsys)[0] == 0
    before = target.read_bytes()
    code, _, err = run(argv, capsys)
    assert code == 2 and "already exists; pass --force to replace it" in err and len(err.strip().splitlines()) == 1
    assert target.read_bytes() == before
    assert run([*argv, "--force"], capsys)[0] == 0


def test_a_directory_being_written_is_refused_in_one_line(tmp_path, capsys):
    from dpverify._io import output_lock

    out = tmp_path / "results"
    out.mkdir()
    with output_lock("--out", out):
        code, _, err = run(["run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "3", "--seeds", "1",
                            "--out", str(out)], capsys)
    assert code == 2 and "--out is being written by another dpverify command" in err
    assert list(out.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("signame, status, word", [("SIGTERM", 143, "terminated"), ("SIGHUP", 129, "hung up")])
def test_sigterm_and_sighup_stop_the_command_and_its_workers(signame, status, word, tmp_path):
    out = tmp_path / "out"
    argv = ["run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "100000", "--seeds", "2", "--workers",
            "2", "--no-plot", "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "dpverify", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env={**os.environ, "MPLBACKEND": "Agg"})
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(workers) < 2:
        workers |= _children(proc.pid)
        time.sleep(0.1)
    time.sleep(0.5)
    os.kill(proc.pid, getattr(signal, signame))  # to the command only, as a service manager or ssh does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == word
    time.sleep(0.5)
    assert workers and not any(_alive(pid) for pid in workers)
    assert not out.exists() or list(out.iterdir()) == []  # no partial output


def test_account_rejects_unknown_fields_and_warns_on_untouched_ledgers(tmp_path, capsys):
    from dpverify.ledger import PrivacyLedger
    from dpverify.mechanisms import GaussianMechanism

    ledger = PrivacyLedger()
    ledger.record_block("s", (1, 1), (1, 2), GaussianMechanism(1.0, 3.0, 1), "prefix")
    data = ledger.to_dict()
    path = tmp_path / "l.json"
    path.write_text(json.dumps(data))
    code, _, err = run(["account", str(path)], capsys)
    assert code == 0 and "warning: no release of this ledger touches any user" in err
    data["blocks"][0]["sigma"] = 3.0
    path.write_text(json.dumps(data))
    code, _, err = run(["account", str(path)], capsys)
    assert code == 2 and "'sigma' is not a ledger field" in err


def test_calibrate_states_each_printed_noise_claim_under_its_model_and_conversion(capsys):
    code, out, _ = run(["calibrate"], capsys)
    assert code == 0
    assert "by the paper's own route (its sensitivities + Bun-Steinke): FALLS SHORT" in out
    for model in ("paper", "derived"):
        for conversion in ("bun-steinke", "cks", "exact"):
            assert any(line.split()[:2] == [model, conversion] for line in out.splitlines())
    assert "reuses it in every release" in out and "not at 0 from below" in out


def test_a_pure_epsilon_audit_says_the_gdp_line_does_not_apply(capsys):
    code, out, _ = run(["audit", "mechanism", "laplace", "--scale", "1", "--trials", "2000", "--workers", "1"], capsys)
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("mu-GDP"))
    assert "does not apply" in line and "epsilon inf" not in line
