"""Runs on a Dask cluster (a LocalCluster here): bit-identical to serial and local-process runs, from the
library and from ``dpverify run --scheduler``."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import dpverify.cli  # noqa: E402
from dpverify.agents.core import runner  # noqa: E402
from dpverify.audit.executors import DaskExecutor  # noqa: E402

SMALL = {"horizon": 3, "num_actions": 4}


@pytest.fixture(scope="module")
def client():
    # In-process workers (fast to start), reached over tcp like a real cluster (so its address is one the
    # command line accepts).
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp://",
                                       host="127.0.0.1", dashboard_address=":0", silence_logs=40)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _same(a: runner.RunResult, b: runner.RunResult) -> None:
    assert a.regret.tobytes() == b.regret.tobytes()  # bit-identical, not merely close
    assert [s.spawn_key for s in a.seeds] == [s.spawn_key for s in b.seeds]
    assert [s.policy_changes for s in a.seeds] == [s.policy_changes for s in b.seeds]
    assert [s.agent_settings for s in a.seeds] == [s.agent_settings for s in b.seeds]


def test_dask_gives_the_regret_of_a_serial_run_bit_for_bit(client) -> None:
    # (serial against local processes: tests/agents/core/test_runner.py, away from this module's cluster threads)
    spec = runner.RunSpec("dp-lsvi-ucb++", "min2021", 12, num_seeds=4, base_seed=3, workers=2,
                          agent_options={"epsilon": 5.0, "delta": 1e-5}, env_options=SMALL)
    serial = runner.run(runner.RunSpec(**{**spec.__dict__, "workers": 1}))
    on_dask = runner.run(spec, executor=DaskExecutor(client=client))
    _same(serial, on_dask)
    assert (serial.executor, on_dask.executor) == ("serial", "dask")
    assert not np.array_equal(serial.regret[0], serial.regret[1])  # the seeds differ


def test_a_sweep_distributes_configurations_and_seeds(client) -> None:
    specs = [runner.RunSpec("lsvi-ucb", "min2021", 10, num_seeds=3, base_seed=1, env_options=SMALL),
             runner.RunSpec("ucrl-vtr", "zhou2021", 8, num_seeds=2, base_seed=1, env_options={"num_episodes": 50})]
    swept = runner.run_many(specs, executor=DaskExecutor(client=client))
    assert [r.spec for r in swept] == specs
    for spec, result in zip(specs, swept, strict=True):
        _same(runner.run(spec), result)


def test_bad_options_fail_here_before_any_seed_is_sent(client) -> None:
    spec = runner.RunSpec("lsvi-ucb", "min2021", 5, num_seeds=2, agent_options={"beta_multiplier": -1.0},
                          env_options=SMALL)
    with pytest.raises(runner.InvalidParameterError, match="beta_multiplier"):
        runner.run(spec, executor=DaskExecutor(client=client))


def cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = dpverify.cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def test_cli_scheduler_matches_local_run(client, tmp_path) -> None:
    common = ["run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "10", "--seeds", "3",
              "--env-option", "horizon=3", "--env-option", "num_actions=4", "--no-plot", "--json"]
    code, stdout, stderr = cli([*common, "--scheduler", client.scheduler.address, "--out", str(tmp_path / "dask")])
    assert code == 0, stderr
    assert json.loads(stdout)["seeds"] == 3
    code, _, stderr = cli([*common, "--workers", "1", "--out", str(tmp_path / "serial")])
    assert code == 0, stderr
    dask, serial = (json.loads((tmp_path / name / "regret.json").read_text()) for name in ("dask", "serial"))
    assert [s["regret"] for s in dask["seeds"]] == [s["regret"] for s in serial["seeds"]]
    assert (dask["settings"]["executor"], serial["settings"]["executor"]) == ("dask", "serial")
    assert (tmp_path / "dask" / "regret.csv").read_text() == (tmp_path / "serial" / "regret.csv").read_text()


@pytest.mark.parametrize("address", ["tcp://", "localhost:8786", "tcp://host:0"])
def test_cli_bad_scheduler_is_one_line_before_any_work(address, tmp_path) -> None:
    code, _, stderr = cli(["run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "3",
                           "--scheduler", address, "--out", str(tmp_path / "x")])
    assert code == 2
    assert stderr.count("\n") == 1 and "--scheduler must be a scheduler address like tcp://host:8786" in stderr
    assert not (tmp_path / "x").exists()


def test_a_local_run_imports_neither_dask_nor_the_executors(tmp_path) -> None:
    # A parallel run too: the default local pool is the runner's own (dpverify.audit imports scipy).
    code = ("import sys; from dpverify.cli import main\n"
            "main(['run', '--agent', 'lsvi-ucb', '--env', 'min2021', '--episodes', '2', '--seeds', '2', "
            f"'--workers', '2', '--no-plot', '--out', {str(tmp_path)!r}])\n"
            "print(sorted(m for m in ('distributed', 'dask', 'dpverify.audit') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr


def _script(name: str):
    import importlib
    from pathlib import Path

    docs = str(Path(__file__).resolve().parents[3] / "docs")
    if docs not in sys.path:
        sys.path.insert(0, docs)
    return importlib.import_module(name)


def test_the_whole_frontier_from_one_command_is_the_same_on_a_cluster(client, tmp_path) -> None:
    # `all` (import, run, control, noise, report) on a small selection, serially and on the cluster: every
    # cell and every no-data control bit-identical, and each control reproduced its cell.
    frontier = _script("make_frontier")
    argv = ["all", "--K", "4", "--agents", "LSVI-UCB", "Luyo et al.", "--epsilons", "10", "--seeds", "2"]
    written = {}
    try:
        for where, extra in (("local", ["--workers", "1"]), ("dask", ["--scheduler", client.scheduler.address])):
            with contextlib.redirect_stdout(io.StringIO()):
                assert frontier.main(["--out", str(tmp_path / where), *argv, *extra]) == 0
            written[where] = {str(p.relative_to(tmp_path / where)): p for p in (tmp_path / where).rglob("*.json")}
    finally:
        frontier.use_output(frontier.ROOT / "docs" / "results" / "frontier")
    assert sorted(written["dask"]) == sorted(written["local"]) == [
        "frontier.json", "noise.json", "runs/controls/luyo_K4_eps10.json", "runs/lsvi-ucb_K4_epsnone.json",
        "runs/luyo_K4_eps10.json"]
    volatile = {"wall_seconds", "source", "versions", "settings"}
    for name in ("runs/lsvi-ucb_K4_epsnone.json", "runs/luyo_K4_eps10.json"):
        dask, local = (json.loads(written[w][name].read_text()) for w in ("dask", "local"))
        assert dask["settings"]["executor"] == "dask" and local["settings"]["executor"] == "serial"
        assert {k: v for k, v in dask.items() if k not in volatile} == {
            k: v for k, v in local.items() if k not in volatile} | {"seeds": dask["seeds"]}
        assert [{**s, "seconds": 0} for s in dask["seeds"]] == [{**s, "seconds": 0} for s in local["seeds"]]
    dask, local = (json.loads(written[w]["runs/controls/luyo_K4_eps10.json"].read_text()) for w in ("dask", "local"))
    assert dask["final_without_users_per_seed"] == local["final_without_users_per_seed"]
    assert dask["reproduces_documented_run"] and local["reproduces_documented_run"]
    # The pages agree but for their headers' provenance lines (each run records its own machine load) and the
    # tables' wall-clock column.
    def without_timings(where: str) -> list[list[str]]:
        lines = [line for line in (tmp_path / where / "frontier.md").read_text().splitlines()
                 if not line.startswith("- **")]
        rows, wall = [], None
        for line in lines:
            cells = line.split("|")
            if "wall s" in [c.strip() for c in cells]:
                wall = [c.strip() for c in cells].index("wall s")
            elif not line.startswith("|"):
                wall = None
            rows.append([c for i, c in enumerate(cells) if i != wall or not line.startswith("|")])
        return rows

    assert without_timings("dask") == without_timings("local")
    assert (tmp_path / "dask" / "frontier_min2021.png").exists()


def test_results_scripts_refuse_a_bad_scheduler_address() -> None:
    results = _script("make_results")
    with contextlib.redirect_stderr(io.StringIO()) as err, pytest.raises(SystemExit) as stop:
        results.main(["--quick", "--scheduler", "tcp://"])
    assert stop.value.code == 2 and "--scheduler must be a scheduler address like tcp://host:8786" in err.getvalue()
