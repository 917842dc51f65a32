"""The experiment runner (dpverify.agents.core.runner) and the ``dpverify run`` sub-command, end to end."""

from __future__ import annotations

import contextlib
import csv
import io
import json

import numpy as np
import pytest

import dpverify.cli
from dpverify.agents import registry
from dpverify.agents.core import runner
from dpverify.agents.nonprivate.lsvi_ucb import LsviUcb
from dpverify.errors import InvalidParameterError


def cli(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    # Only our sub-command: other engineers' command modules may not exist yet in this tree.
    monkeypatch.setattr(dpverify.cli, "COMMAND_MODULES", ("dpverify.cli.run_command",), raising=False)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = dpverify.cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def test_cli_end_to_end_writes_files(tmp_path, monkeypatch) -> None:
    out_dir = tmp_path / "run"
    code, stdout, stderr = cli(["run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "15", "--seeds", "3",
                                "--workers", "2", "--out", str(out_dir), "--env-option", "horizon=4",
                                "--env-option", "num_actions=5", "--agent-option", "beta_multiplier=0.02",
                                "--json"], monkeypatch)
    assert code == 0, stderr
    assert stderr == ""  # no progress bar when stderr is not a terminal
    summary = json.loads(stdout)
    assert summary["seeds"] == 3 and summary["episodes"] == 15
    payload = json.loads((out_dir / "regret.json").read_text())
    settings = payload["settings"]
    assert settings["agent_settings"]["beta_multiplier"] == 0.02
    assert settings["agent_settings"]["beta"] > 0
    assert settings["environment"]["horizon"] == 4 and settings["environment"]["feature_norm_bound"] == 1.0
    assert {"numpy", "python", "dpverify"} <= set(settings["versions"])
    assert [s["seed_index"] for s in payload["seeds"]] == [0, 1, 2]
    assert all(len(s["regret"]) == 15 for s in payload["seeds"])
    with (out_dir / "regret.csv").open() as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["episode", "seed_0", "seed_1", "seed_2"] and len(rows) == 16
    assert float(rows[1][1]) == payload["seeds"][0]["regret"][0]
    assert (out_dir / "cumulative_regret.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--agent", "nope", "--env", "min2021"], "--agent must be one of"),
        (["--agent", "lsvi-ucb", "--env", "nope"], "--env must be one of"),
        (["--agent", "ucrl-vtr", "--env", "min2021"], "linear mixture MDP"),
        (["--agent", "lsvi-ucb", "--env", "zhou2021"], "must be a linear MDP"),
        (["--agent", "lsvi-ucb", "--env", "min2021", "--agent-option", "foo=1"], "--agent-option is not accepted"),
        (["--agent", "lsvi-ucb", "--env", "min2021", "--agent-option", "beta_multiplier=-1"],
         "beta_multiplier must be >= 0"),
        (["--agent", "lsvi-ucb", "--env", "min2021", "--env-option", "horizon=0"], "horizon must be"),
        (["--agent", "lsvi-ucb", "--env", "min2021", "--env-option", "horizon"], "NAME=VALUE"),
        (["--agent", "lsvi-ucb", "--env", "min2021", "--seeds", "0"], "--seeds must be"),
        (["--agent", "lsvi-ucb", "--env", "min2021", "--workers", "0"], "--workers must be"),
    ],
)
def test_cli_errors_are_one_line_exit_2(extra, words, tmp_path, monkeypatch) -> None:
    code, stdout, stderr = cli(["run", "--episodes", "3", "--out", str(tmp_path / "x"), *extra], monkeypatch)
    assert code == 2
    assert stderr.count("\n") == 1 and words in stderr, stderr
    assert not (tmp_path / "x" / "regret.json").exists()


def test_cli_episodes_must_be_positive(tmp_path, monkeypatch) -> None:
    code, _, stderr = cli(["run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "0", "--out",
                           str(tmp_path)], monkeypatch)
    assert code == 2 and "--episodes" in stderr and stderr.count("\n") == 1


def test_parallel_equals_serial_and_seeds_are_reproducible() -> None:
    base = dict(agent="ucrl-vtr", env="zhou2021", num_episodes=12, num_seeds=3, base_seed=5,
                env_options={"num_episodes": 100})
    serial = runner.run(runner.RunSpec(**base, workers=1))
    parallel = runner.run(runner.RunSpec(**base, workers=2))
    np.testing.assert_array_equal(serial.regret, parallel.regret)
    assert not np.array_equal(serial.regret[0], serial.regret[1])  # seeds differ
    other = runner.run(runner.RunSpec(**{**base, "base_seed": 6}, workers=1))
    assert not np.array_equal(serial.regret, other.regret)


def test_every_executor_gives_bit_identical_regret() -> None:
    from dpverify.audit.executors import ProcessExecutor, SerialExecutor

    spec = runner.RunSpec("dp-lsvi-ucb++", "min2021", 12, num_seeds=4, base_seed=3, workers=2,
                          agent_options={"epsilon": 5.0, "delta": 1e-5}, env_options={"horizon": 3, "num_actions": 4})
    serial = runner.run(runner.RunSpec(**{**spec.__dict__, "workers": 1}))
    default = runner.run(spec)  # workers = 2: the audits' process executor, owned by the run
    with ProcessExecutor(2, adaptive=False) as pool:
        pooled = runner.run(spec, executor=pool)
    explicit = runner.run(spec, executor=SerialExecutor())
    for other in (default, pooled, explicit):
        assert other.regret.tobytes() == serial.regret.tobytes()
        assert [s.spawn_key for s in other.seeds] == [s.spawn_key for s in serial.seeds]
        assert [s.agent_settings for s in other.seeds] == [s.agent_settings for s in serial.seeds]
    assert [r.executor for r in (serial, default, pooled, explicit)] == ["serial", "processes", "processes", "serial"]
    assert runner.result_payload(default)["settings"]["executor"] == "processes"


def test_a_sweep_is_the_runs_of_its_specs() -> None:
    specs = [runner.RunSpec("lsvi-ucb", "min2021", 6, num_seeds=2, base_seed=1, workers=2,
                            env_options={"horizon": 3, "num_actions": 4}),
             runner.RunSpec("ucrl-vtr", "zhou2021", 5, num_seeds=3, base_seed=2, env_options={"num_episodes": 50})]
    swept = runner.run_many(specs)  # one pool for all five (spec, seed) pairs
    for spec, result in zip(specs, swept, strict=True):
        assert result.spec == spec and result.executor == "processes"
        assert result.regret.tobytes() == runner.run(spec).regret.tobytes()


def test_registry_is_extensible() -> None:
    def make_fixed(mdp, num_episodes, rng, **options):
        return LsviUcb.from_options(mdp, num_episodes, rng, beta_multiplier=0.0, **options)

    registry.register_agent("test-greedy", make_fixed, "linear", "LSVI-UCB without bonus (test)")
    try:
        with pytest.raises(InvalidParameterError, match="already registered"):
            registry.register_agent("test-greedy", make_fixed, "linear", "again")
        result = runner.run(runner.RunSpec("test-greedy", "random-linear", 5, num_seeds=1,
                                           env_options={"seed": 3, "horizon": 2}))
        assert result.seeds[0].agent_settings["beta"] == 0.0
    finally:
        del registry.AGENTS["test-greedy"]
    with pytest.raises(InvalidParameterError, match="env_kind"):
        registry.register_agent("bad", make_fixed, "tabular", "")


def test_progress_bar_only_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet, loud = io.StringIO(), Terminal()
    for stream in (quiet, loud):
        bar = runner.ProgressBar(10, stream, "x")
        bar.advance(10)
        bar.close()
    assert quiet.getvalue() == ""
    assert "10/10 episodes" in loud.getvalue()


def test_run_spec_validation() -> None:
    with pytest.raises(InvalidParameterError, match="num_episodes"):
        runner.RunSpec("lsvi-ucb", "min2021", 0)
    with pytest.raises(InvalidParameterError, match="agent must be one of"):
        runner.RunSpec("x", "min2021", 3)


def test_worker_errors_survive_the_process_boundary() -> None:
    def failing_factory(mdp, num_episodes, rng, /, **options):
        raise InvalidParameterError("beta", "must be small", 3)

    outcome = None
    registry.register_agent("test-failing", failing_factory, "linear", "fails in workers (test)")
    try:
        spec = runner.RunSpec("test-failing", "min2021", 3, num_seeds=2, workers=2,
                              env_options={"horizon": 2, "num_actions": 3})
        outcome = runner._run_seed_in_worker(spec, 0)
    finally:
        del registry.AGENTS["test-failing"]
    assert outcome == ("beta", "must be small", "3")
