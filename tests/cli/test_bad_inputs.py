"""The bad-input catalogue: one case or more of every class of bad input, each judged by one contract.

Every command line exits 0, 1 or 2; at 2 it prints exactly one line on stderr naming the option, variable,
file or agent at fault (and what it got); it prints no traceback; it answers within its limit; it leaves no
process behind (the cases run as the console script in a session of their own, checked after it ends); and
it corrects nothing silently (each case names the words it must say: the refusal, the failed check, the
note). Every library call refuses bad input with an :class:`~dpverify.errors.InvalidParameterError` naming
its parameter — never a raw ``TypeError``, ``AttributeError`` or ``OverflowError``, never hours of work.

The classes:

* ``contained`` — the user's code ends or outlives its process: ``os._exit``, a crash, SIGKILL to itself, a
  thread or process left running, a stop signal while one runs;
* ``size`` — sizes refused before any allocation or fork: calibrate's horizon, worker counts, trials,
  dimensions, episodes, ledgers;
* ``environment`` — DPVERIFY_* variables validated like options;
* ``silent`` — input accepted as something else: releases recorded past K, a Gaussian claim for Laplace
  releases, an empty ``--sensitivity``;
* ``message`` — errors that named the wrong thing or nothing: ledgers nested or with huge numbers, a bare
  ``:factory``, a non-private agent, an environment shown by its audit substitute, a scheduler answering in
  another protocol;
* ``library`` — the library's entry points with wrong types and sizes, and ``os._exit`` under a library
  caller (the session survives).

The quick cases run in this process (``dpverify.cli.main``, as tests/cli/test_fuzz.py does); the cases that
run the user's code, or need a real process (signals, what is left behind), run the console script and are
marked slow.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _misbehaving import EXPECTED, write_agent, write_spinning_loop
from test_fuzz import invoke

from dpverify.errors import DpverifyError, InvalidParameterError


@dataclass(frozen=True)
class Case:
    """One bad input: ``argv`` (``{agent}``: a misbehaving agent's path, ``{tmp}``: a fresh directory, ``{file}``:
    a file of :data:`FILES`), the environment it runs in, the exit status and words it must give."""

    cls: str
    name: str
    argv: tuple[str, ...]
    status: int = 2
    says: str = ""
    env: tuple[tuple[str, str], ...] = ()
    agent: str | None = None
    limit: float = 60.0
    term_after: float | None = None  # send the command ``stop`` after this many seconds
    stop: str = "SIGTERM"


VERIFY = ("verify", "--env", "min2021", "--epsilon", "1", "--delta", "1e-5", "--episodes", "4", "--workers", "1")
RUN = ("run", "--env", "min2021", "--episodes", "3", "--seeds", "1", "--workers", "1", "--no-plot", "--out", "{tmp}",
       "--force")
AUDIT_AGENT = ("audit", "agent", "--env", "min2021", "--episodes", "4", "--notion", "billboard", "--epsilon", "1",
               "--trials", "20", "--workers", "1", "--whitebox", "no")
SMALL_LINEAR = ("--env-option", "dim=3", "--env-option", "horizon=2", "--env-option", "num_actions=2",
                "--env-option", "num_states=3")


def _agent_case(cls: str, command: tuple[str, ...], fault: str, status: int = 2, extra: tuple[str, ...] = (),
                **kwargs: Any) -> Case:
    says = EXPECTED[fault.partition(":")[0]]
    return Case(cls, f"{command[0]} {fault}", (*command, "--agent", "{agent}", *extra), status, says, agent=fault,
                **kwargs)


#: The cases that run the user's code or need a real process: the console script, slow.
PROCESS_CASES: tuple[Case, ...] = (
    _agent_case("contained", VERIFY, "osexit:import"),
    _agent_case("contained", VERIFY, "osexit:factory"),
    _agent_case("contained", VERIFY, "osexit:begin_episode"),
    _agent_case("contained", RUN, "osexit:end_episode"),
    _agent_case("contained", AUDIT_AGENT, "osexit:begin_episode"),
    _agent_case("contained", VERIFY, "thread:factory"),
    _agent_case("contained", RUN, "thread:begin_episode"),
    _agent_case("contained", VERIFY, "threadexit:factory"),
    _agent_case("contained", VERIFY, "kill:begin_episode"),
    _agent_case("contained", RUN, "stray:import", status=0),
    _agent_case("contained", VERIFY, "interrupt:begin_episode"),
    _agent_case("contained", RUN, "interrupt:factory"),
    _agent_case("contained", VERIFY, "unraisable:end_episode", status=0),
    _agent_case("contained", VERIFY, "closeout:factory"),
    Case("contained", "run child:import", (*RUN, "--agent", "{agent}"), 0, "regret", agent="child:import"),
    Case("contained", "verify stray:import, SIGTERM", (*VERIFY, "--agent", "{agent}", "--episodes", "5000"), 143,
         "terminated", agent="stray:import", term_after=4.0),  # (K = 5000: still running when it comes)
    Case("contained", "run stray:import, SIGINT (Ctrl-C)", (*RUN, "--agent", "{agent}", "--episodes", "1e6"), 130,
         "interrupted", agent="stray:import", term_after=4.0, stop="SIGINT"),
    Case("contained", "verify sleep:begin_episode, the default call limit", (*VERIFY, "--agent", "{agent}"), 2,
         "did not return from begin_episode within 60 s", agent="sleep:begin_episode", limit=100.0),
    Case("contained", "verify sleep:factory, DPVERIFY_CALL_TIMEOUT=2", (*VERIFY, "--agent", "{agent}"), 2,
         "did not return from its factory within 2 s", env=(("DPVERIFY_CALL_TIMEOUT", "2"),), agent="sleep:factory"),
    Case("contained", "verify a closed loop that spins, DPVERIFY_CALL_TIMEOUT=2", (*VERIFY, "--agent", "{loop}"), 2,
         "did not return from act within 2 s", env=(("DPVERIFY_CALL_TIMEOUT", "2"),)),
    _agent_case("silent", VERIFY, "beyond:releases", status=1),
    _agent_case("silent", VERIFY, "laplace:releases", extra=("--gaussian-claim", "yes")),
    Case("silent", "audit agent laplace:releases --gaussian-claim yes",
         (*AUDIT_AGENT, "--agent", "{agent}", "--gaussian-claim", "yes"), 2,
         "--gaussian-claim must be no for an agent whose ledger records laplace releases", agent="laplace:releases"),
    Case("environment", "verify a factory path, DPVERIFY_CALL_TIMEOUT=abc", (*VERIFY, "--agent", "{agent}"), 2,
         "DPVERIFY_CALL_TIMEOUT must be a number of seconds > 0 and finite (got 'abc')",
         env=(("DPVERIFY_CALL_TIMEOUT", "abc"),), agent="none"),
    Case("environment", "console: calibrate, DPVERIFY_MEMORY_LIMIT=lots", ("calibrate",), 2,
         "DPVERIFY_MEMORY_LIMIT must be a number > 0 and finite", env=(("DPVERIFY_MEMORY_LIMIT", "lots"),)),
    Case("size", "console: calibrate --horizon 1e6 --episodes 1e6 --dim 1e3",
         ("calibrate", "--horizon", "1e6", "--episodes", "1e6", "--dim", "1e3"), 2, "--horizon is too large"),
    Case("size", "console: run --env-option dim=1e6", ("run", "--agent", "lsvi-ucb", "--env", "random-linear",
                                                        "--env-option", "dim=1e6", "--episodes", "3", "--out", "{tmp}"),
         2, "--env-option is too large: the planning arrays"),
    Case("size", "console: verify --workers 1e6",
         ("verify", "--agent", "dp-lsvi-ucb++", "--env", "min2021", "--epsilon", "1", "--delta", "1e-5", "--workers",
          "1e6"), 2, "--workers is too large"),
)

_ENV_RULE = "DPVERIFY_CALL_TIMEOUT must be a number of seconds > 0 and finite"
_REGISTERED = ("verify", "--agent", "dp-lsvi-ucb++", "--env", "min2021", "--epsilon", "1", "--delta", "1e-5")

#: The quick cases: in this process, in the default run.
QUICK_CASES: tuple[Case, ...] = (
    Case("size", "calibrate --horizon 1e6 --episodes 1e6 --dim 1e3",
         ("calibrate", "--horizon", "1e6", "--episodes", "1e6", "--dim", "1e3"), 2, "--horizon is too large"),
    Case("size", "calibrate staged --horizon 1e6",
         ("calibrate", "--horizon", "1e6", "--episodes", "1e6", "--dim", "1e3", "--sensitivity", "staged"), 2,
         "--horizon is too large"),
    Case("size", "calibrate ldp-ucrl-vtr staged --horizon 1e9",
         ("calibrate", "--schedule", "ldp-ucrl-vtr", "--horizon", "1e9", "--sensitivity", "staged"), 2,
         "--horizon is too large"),
    Case("size", "calibrate --horizon 1e17", ("calibrate", "--horizon", "1e17"), 2, "--horizon must be <= 2^53"),
    Case("size", "run --workers 1e6", ("run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "3",
                                       "--workers", "1e6", "--out", "{tmp}"), 2, "--workers is too large"),
    Case("size", "audit mechanism --workers 1e6", ("audit", "mechanism", "gaussian", "--sigma", "1", "--workers",
                                                   "1e6"), 2, "--workers is too large"),
    Case("size", "verify --workers 1e6", (*_REGISTERED, "--workers", "1e6"), 2, "--workers is too large"),
    Case("size", "audit agent --workers 1e6", ("audit", "agent", "--agent", "dp-lsvi-ucb++", "--env", "min2021",
                                               "--episodes", "4", "--notion", "billboard", "--epsilon", "1",
                                               "--workers", "1e6"), 2, "--workers is too large"),
    Case("size", "audit mechanism --trials 1e13", ("audit", "mechanism", "gaussian", "--sigma", "1", "--trials",
                                                   "1e13"), 2, "--trials is too large"),
    Case("size", "audit mechanism --dim 1e12", ("audit", "mechanism", "gaussian", "--sigma", "1", "--dim", "1e12",
                                                "--trials", "1000"), 2, "--dim is too large"),
    Case("size", "verify --episodes 1e13", (*_REGISTERED, "--episodes", "1e13"), 2, "--episodes is too large"),
    Case("size", "audit agent --env-option num_states=1e9",
         ("audit", "agent", "--agent", "dp-lsvi-ucb++", "--env", "random-linear", "--env-option", "num_states=1e9",
          "--episodes", "4", "--notion", "billboard", "--epsilon", "1"), 2, "--env-option num_states is too large"),
    Case("size", "run --env-option horizon=1e9", ("run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "3",
                                                  "--env-option", "horizon=1e9", "--out", "{tmp}"), 2,
         "--env-option horizon is too large"),
    Case("size", "verify ldp-ucrl-vtr --env zhou2021 --env-option horizon=1e6",
         ("verify", "--agent", "ldp-ucrl-vtr", "--env", "zhou2021", "--env-option", "horizon=1e6", "--epsilon", "1",
          "--delta", "1e-5"), 2, "--env-option horizon is too large"),
    Case("size", "account a ledger of 1000 blocks, DPVERIFY_WORK_LIMIT=1e6", ("account", "{file:blocks}"), 2,
         "ledger is too large: reading and accounting 1000 blocks", env=(("DPVERIFY_WORK_LIMIT", "1e6"),)),
    *(Case("environment", f"verify a registered agent, DPVERIFY_CALL_TIMEOUT={value}", _REGISTERED, 2,
           f"{_ENV_RULE} (got {value!r})", env=(("DPVERIFY_CALL_TIMEOUT", value),))
      for value in ("abc", "0", "-5", "nan", "")),
    Case("environment", "calibrate, DPVERIFY_WORK_LIMIT=lots", ("calibrate",), 2,
         "DPVERIFY_WORK_LIMIT must be a number > 0 and finite", env=(("DPVERIFY_WORK_LIMIT", "lots"),)),
    Case("environment", "convert, DPVERIFY_WORK_LIMIT=-1", ("convert", "--rho", "0.5"), 2,
         "DPVERIFY_WORK_LIMIT must be a number > 0 and finite", env=(("DPVERIFY_WORK_LIMIT", "-1"),)),
    Case("silent", "calibrate --sensitivity ''", ("calibrate", "--sensitivity", ""), 2,
         "--sensitivity must be one of paper, derived, staged (got '')"),
    Case("silent", "calibrate ldp-ucrl-vtr --sensitivity ''", ("calibrate", "--schedule", "ldp-ucrl-vtr",
                                                                "--sensitivity", ""), 2,
         "--sensitivity must be one of standard, staged (got '')"),
    Case("message", "account: arrays nested 100000 deep", ("account", "{file:nested}"), 2,
         "must not nest arrays or objects that deep"),
    Case("message", "account: objects nested 50000 deep", ("account", "{file:nested_objects}"), 2,
         "must not nest arrays or objects that deep"),
    Case("message", "account: an episode of 400 digits", ("account", "{file:huge_episode}"), 2,
         "episodes[1] must be <= 2^53"),
    Case("message", "account: a number of 5000 digits", ("account", "{file:huge_digits}"), 2,
         "must hold numbers of at most a few hundred digits"),
    Case("message", "verify --agent :make_agent", (*VERIFY, "--agent", ":make_agent"), 2,
         "--agent must name a module and a factory around the colon"),
    Case("message", "verify --agent x.py:", (*VERIFY, "--agent", "x.py:"), 2,
         "--agent must name a module and a factory around the colon"),
    Case("message", "verify --agent lsvi-ucb (non-private)", (*VERIFY, "--agent", "lsvi-ucb"), 2,
         "--agent must be a private agent"),
    Case("message", "audit agent --agent lsvi-ucb (non-private)", (*AUDIT_AGENT, "--agent", "lsvi-ucb"), 2,
         "--agent must be a private agent or module.path:factory (lsvi-ucb is non-private"),
    Case("message", "audit agent dp-lsvi-ucb++ --env zhou2021 --canary-design worst-case",
         ("audit", "agent", "--agent", "dp-lsvi-ucb++", "--env", "zhou2021", "--episodes", "4", "--notion",
          "billboard", "--epsilon", "1", "--canary-design", "worst-case"), 2,
         "--env must be a linear MDP for agent dp-lsvi-ucb++ (got 'zhou2021')"),
    Case("message", "audit agent ldp-ucrl-vtr --env min2021 --canary-design worst-case",
         ("audit", "agent", "--agent", "ldp-ucrl-vtr", "--env", "min2021", "--episodes", "4", "--notion", "ldp",
          "--epsilon", "1", "--canary-design", "worst-case"), 2,
         "--env must be a linear mixture MDP for agent ldp-ucrl-vtr (got 'min2021')"),
    Case("message", "audit mechanism --scheduler answering in another protocol",
         ("audit", "mechanism", "gaussian", "--sigma", "1", "--trials", "200", "--scheduler", "{scheduler}"), 2,
         "--scheduler did not answer as a Dask scheduler"),
)


# ---- the inputs the cases read -------------------------------------------------------------------------------


def _ledger() -> dict[str, Any]:
    from dpverify.ledger import PrivacyLedger
    from dpverify.mechanisms import GaussianMechanism

    ledger = PrivacyLedger()
    ledger.record_block("s", (1, 5), (1, 2), GaussianMechanism(1.0, 3.0, 2), "prefix")
    return ledger.to_dict()


def _files(directory: Path) -> dict[str, Path]:
    """The ledger files of the ``account`` cases."""
    texts = {"nested": "[" * 100_000 + "]" * 100_000, "nested_objects": '{"a":' * 50_000 + "1" + "}" * 50_000}
    huge = _ledger()
    huge["blocks"][0]["episodes"] = [1, 10**400]
    texts["huge_episode"] = json.dumps(huge)
    texts["huge_digits"] = json.dumps(_ledger()).replace('"sigma": 3.0', '"sigma": 3' + "0" * 5000)
    many = _ledger()
    many["blocks"] = many["blocks"] * 1000
    texts["blocks"] = json.dumps(many)
    paths = {}
    for name, text in texts.items():
        paths[name] = directory / f"{name}.json"
        paths[name].write_text(text, encoding="utf-8")
    return paths


@pytest.fixture
def garbage_scheduler() -> Iterator[str]:
    """The address of :func:`garbage_service`."""
    with garbage_service() as address:
        yield address


@contextlib.contextmanager
def garbage_service() -> Iterator[str]:
    """A local service that accepts a connection and answers with bytes of another protocol."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.2)
    stop = threading.Event()

    def answer() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            with connection:
                connection.sendall(b"HTTP/1.1 400 Bad Request\r\n" + b"\xff" * 4096)
                time.sleep(0.5)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(timeout=2)
    server.close()


def _argv(case: Case, tmp_path: Path, scheduler: str = "") -> list[str]:
    files = _files(tmp_path) if any("{file:" in word for word in case.argv) else {}
    agent = write_agent(tmp_path, case.agent) if case.agent else ""
    loop = write_spinning_loop(tmp_path) if "{loop}" in case.argv else ""
    words = []
    for word in case.argv:
        match = re.fullmatch(r"\{file:(\w+)\}", word)
        words.append(str(files[match.group(1)]) if match else
                     word.replace("{agent}", agent).replace("{loop}", loop).replace("{tmp}", str(tmp_path / "out"))
                     .replace("{scheduler}", scheduler))
    return words


# ---- the contract --------------------------------------------------------------------------------------------

#: What a one-line error names: an option, a variable, a file argument or the user's agent.
_NAMES = re.compile(r"--[a-z]|DPVERIFY_[A-Z_]+|LEDGER|the agent ")


def breaches(case: Case, code: int | None, stdout: str, stderr: str, seconds: float, left: int = 0) -> list[str]:
    """Every way an outcome breaks the contract (module docstring)."""
    found = []
    if code is None:
        found.append(f"no answer within {case.limit:g} s")
    elif code != case.status:
        found.append(f"exit status {code}, expected {case.status}")
    if "Traceback (most recent call last)" in stdout + stderr:
        found.append("traceback")
    if code == 2:
        lines = stderr.strip("\n").splitlines()
        if len(lines) != 1:
            found.append(f"{len(lines)} lines on stderr")
        elif not _NAMES.search(lines[0]):
            found.append("the error names no option, variable, file or agent")
    if case.says and case.says not in stdout + stderr:
        found.append(f"does not say {case.says!r}")
    if seconds > case.limit:
        found.append(f"took {seconds:.0f} s, beyond its {case.limit:g} s")
    if left:
        found.append(f"{left} process(es) left behind")
    return found


@pytest.mark.parametrize("case", QUICK_CASES, ids=lambda c: f"{c.cls}: {c.name}")
def test_quick_case(case: Case, tmp_path: Path, garbage_scheduler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in case.env:
        monkeypatch.setenv(name, value)
    outcome = invoke(_argv(case, tmp_path, garbage_scheduler), case.limit)
    assert outcome.exception is None, outcome.exception
    found = breaches(case, outcome.code, outcome.stdout, outcome.stderr, outcome.seconds)
    assert not found, (found, outcome.stderr[-1500:])


def _session_processes(session: int) -> list[int]:
    """The live processes of a session (zombies, already dead, excluded)."""
    listing = subprocess.run(["ps", "-eo", "sid=,pid=,stat="], capture_output=True, text=True).stdout
    return [int(pid) for sid, pid, stat in (line.split()[:3] for line in listing.splitlines() if line.strip())
            if int(sid) == session and not stat.startswith("Z")]


def run_console(case: Case, argv: list[str]) -> tuple[int | None, str, str, float, int]:
    """``python -m dpverify argv`` in a session of its own: (status or None, stdout, stderr, seconds, processes
    of the session still alive after it ended — killed then)."""
    env = {**os.environ, **dict(case.env), "MPLBACKEND": "Agg"}
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "dpverify", *argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    code: int | None = None
    try:
        if case.term_after is not None:
            try:
                process.wait(case.term_after)
            except subprocess.TimeoutExpired:
                process.send_signal(getattr(signal, case.stop))
        stdout, stderr = process.communicate(timeout=case.limit)
        code = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    seconds = time.perf_counter() - start
    time.sleep(0.2)  # a process the command killed is gone by now
    left = _session_processes(process.pid)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return code, stdout, stderr, seconds, len(left)


@pytest.mark.slow
@pytest.mark.parametrize("case", PROCESS_CASES, ids=lambda c: f"{c.cls}: {c.name}")
def test_process_case(case: Case, tmp_path: Path) -> None:
    code, stdout, stderr, seconds, left = run_console(case, _argv(case, tmp_path))
    found = breaches(case, code, stdout, stderr, seconds, left)
    assert not found, (found, stderr[-1500:], stdout[-800:])


# ---- the library -----------------------------------------------------------------------------------------------


def _library_cases() -> dict[str, tuple[Callable[[], Any], str]]:
    """name → (the call, the parameter its error must name)."""
    import numpy as np

    import dpverify as d
    from dpverify.agent_audit import AgentAuditSpec
    from dpverify.agents.envs.random_mdps import random_linear_mdp
    from dpverify.audit import ReleaseOf, worst_case_pair
    from dpverify.audit.executors import ProcessExecutor
    from dpverify.ledger import PrivacyLedger
    from dpverify.testing.audits import assert_audit_passes
    from dpverify.verify import verify

    gaussian = d.GaussianMechanism(1.0, 3.0, 2)
    schedule = d.dp_lsvi_ucbpp_schedule(2, 5, 2)
    return {
        "calibrate(schedule='x')": (lambda: d.calibrate("x", 1.0, 1e-5), "schedule"),  # type: ignore[arg-type]
        "vector_sum_sensitivity(1.5)": (lambda: d.vector_sum_sensitivity(1.5, "replace-one"), "bound"),  # type: ignore[arg-type]
        "gram_sum_sensitivity(None)": (lambda: d.gram_sum_sensitivity(None, "replace-one"), "bound"),  # type: ignore[arg-type]
        "audit_mechanism('x')": (lambda: d.audit_mechanism("x"), "mechanism"),  # type: ignore[arg-type]
        "PrivacyLedger.from_json(None)": (lambda: PrivacyLedger.from_json(None), "ledger"),  # type: ignore[arg-type]
        "DPGuarantee('x', ...)": (lambda: d.DPGuarantee("x", 1e-5, "exact", 0.1), "epsilon"),  # type: ignore[arg-type]
        "record_block(users=[])": (lambda: PrivacyLedger().record_block("s", (1, 2), (1, 1), gaussian, []), "users"),  # type: ignore[arg-type]
        "StatisticSpec(users={})": (lambda: d.StatisticSpec("f", "x", "vector", 2, 1.0, {}), "users"),  # type: ignore[arg-type]
        "calibrate(schedule of many statistics), DPVERIFY_WORK_LIMIT=1e5": (
            lambda: d.calibrate(schedule, 1.0, 1e-5), "schedule"),
        "audit_mechanism(trials=1e13)": (lambda: d.audit_mechanism(gaussian, trials=10**13), "trials"),
        "audit_mechanism(trials=1e300)": (lambda: d.audit_mechanism(gaussian, trials=1e300), "trials"),  # type: ignore[arg-type]
        "run_audit(trials=1e13)": (lambda: d.run_audit(ReleaseOf(gaussian), worst_case_pair(gaussian),
                                                       d.AuditSpec(1.0, 1e-5, trials=10**13)), "trials"),
        "assert_audit_passes(laplace, gaussian_claim=True)": (
            lambda: assert_audit_passes(d.LaplaceMechanism(1.0, 1.0), gaussian_claim=True), "gaussian_claim"),
        "dp_lsvi_ucbpp_schedule(staged, H = 1e6)": (lambda: d.dp_lsvi_ucbpp_schedule(10**6, 10, 2, "staged"),
                                                    "horizon"),
        "dp_lsvi_ucbpp_schedule(feature_norm=1e300)": (
            lambda: d.dp_lsvi_ucbpp_schedule(2, 5, 2, feature_norm=1e300), "bound"),
        "ldp_ucrl_vtr_schedule(horizon=1e300)": (lambda: d.ldp_ucrl_vtr_schedule(1e300, 5, 2), "horizon"),  # type: ignore[arg-type]
        "check_printed_calibration(episodes=1e300)": (
            lambda: d.check_printed_calibration(2, 1e300, 2, 1.0, 1e-5), "episodes"),  # type: ignore[arg-type]
        "ProcessExecutor(1e6).map": (lambda: ProcessExecutor(10**6).map(abs, [1, 2], adaptive=False), "workers"),
        "verify(workers=1e6)": (lambda: verify("dp-lsvi-ucb++", "min2021", 1.0, 1e-5, 4, workers=10**6),
                                "--workers"),
        "audit_agent(AgentAuditSpec(lsvi-ucb))": (
            lambda: AgentAuditSpec("lsvi-ucb", "min2021", 4, "billboard", 1.0), "agent"),
        "random_linear_mdp(num_states=1e9)": (
            lambda: random_linear_mdp(np.random.default_rng(0), num_states=10**9), "num_states"),
    }


#: The names of :func:`_library_cases` (listed here so that collecting the tests imports nothing).
LIBRARY_CASES = (
    "calibrate(schedule='x')", "vector_sum_sensitivity(1.5)", "gram_sum_sensitivity(None)", "audit_mechanism('x')",
    "PrivacyLedger.from_json(None)", "DPGuarantee('x', ...)", "record_block(users=[])", "StatisticSpec(users={})",
    "calibrate(schedule of many statistics), DPVERIFY_WORK_LIMIT=1e5", "audit_mechanism(trials=1e13)",
    "audit_mechanism(trials=1e300)", "run_audit(trials=1e13)", "assert_audit_passes(laplace, gaussian_claim=True)",
    "dp_lsvi_ucbpp_schedule(staged, H = 1e6)", "dp_lsvi_ucbpp_schedule(feature_norm=1e300)",
    "ldp_ucrl_vtr_schedule(horizon=1e300)", "check_printed_calibration(episodes=1e300)", "ProcessExecutor(1e6).map",
    "verify(workers=1e6)", "audit_agent(AgentAuditSpec(lsvi-ucb))", "random_linear_mdp(num_states=1e9)",
)


@pytest.mark.parametrize("name", LIBRARY_CASES)
def test_library_case(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if "DPVERIFY_WORK_LIMIT=1e5" in name:
        monkeypatch.setenv("DPVERIFY_WORK_LIMIT", "1e5")
    call, parameter = _library_cases()[name]
    start = time.perf_counter()
    with pytest.raises(InvalidParameterError) as caught:
        call()
    assert caught.value.parameter == parameter, str(caught.value)
    assert time.perf_counter() - start < 30  # refused before any work (a bound for a loaded machine, not a speed)


@pytest.mark.slow
def test_os_exit_in_an_agent_does_not_end_a_library_caller(tmp_path: Path) -> None:
    from dpverify.usercode import UserCodeError
    from dpverify.verify import verify

    agent = write_agent(tmp_path, "osexit:begin_episode")
    with pytest.raises(UserCodeError, match=r"raised SystemExit: os\._exit\(7\) \(in begin_episode"):
        verify(agent, "min2021", 1.0, 1e-5, 4, workers=1)
    assert os._exit.__module__ == "posix"  # the real one again once the call is over


def test_the_catalogue_covers_every_class() -> None:
    classes = {case.cls for case in QUICK_CASES + PROCESS_CASES} | {"library"}
    assert classes == {"contained", "size", "environment", "silent", "message", "library"}
    assert set(LIBRARY_CASES) == set(_library_cases())
    assert all(isinstance(case.status, int) for case in QUICK_CASES + PROCESS_CASES)
    assert DpverifyError  # the library's refusals are its own errors (InvalidParameterError is one)


@pytest.mark.slow
def test_a_stop_signal_whose_exception_is_swallowed_still_ends_the_command() -> None:
    code = ("import os, signal, time\n"
            "import dpverify.cli as cli\n"
            "cli.STOP_GRACE_SECONDS = 1.0\n"
            "cli._install_stop_handlers()\n"
            "sent = False\n"
            "while True:\n"
            "    try:\n"
            "        if not sent:\n"
            "            sent = True\n"
            "            os.kill(os.getpid(), signal.SIGTERM)\n"
            "        time.sleep(0.1)\n"
            "    except BaseException:  # code that swallows everything, as an at-fork hook does\n"
            "        pass\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.returncode == 143 and done.stderr.strip() == "terminated", done.stderr
