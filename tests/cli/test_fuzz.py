"""A fuzzer for the whole command line: random argument vectors for every sub-command.

Argument vectors are drawn from a grammar of valid values (small sizes, so that a valid command finishes
in well under a second) mixed with invalid or extreme ones (NaN, ±inf, huge, tiny, negative, wrong
types, missing files, bad paths). For every vector the command must

- exit with status 0, 1 or 2, raising nothing (no traceback);
- on exit 2, print exactly one line on stderr, naming an option or argument of the command;
- finish within :data:`TIME_LIMIT` seconds, inside a memory allowance (the process's address space
  is capped at its current size + :data:`MEMORY_ALLOWANCE` while the command runs, with dpverify's
  own limit set below it, so a command that allocates without estimating first fails here instead of
  swapping the machine).

Commands run in this process (``dpverify.cli.main``) for speed; a few subprocess cases check the
console script itself. ``HYPOTHESIS_PROFILE=ci`` (the default) runs a small derandomized sample per
sub-command; ``HYPOTHESIS_PROFILE=dev`` or ``stress`` run the profile's full number of examples.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpverify.cli import main
from dpverify.usercode import time_limit

TIME_LIMIT = 30  # seconds per command (valid commands in the grammar take well under one)
MEMORY_ALLOWANCE = 3 << 30  # bytes of address space a command may add
#: dpverify's own memory limit during the fuzz, well inside the allowance: a command must refuse by its
#: estimate (one line naming the option) before the allowance turns an allocation into a MemoryError.
FUZZ_MEMORY_LIMIT = "1G"

_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
EXAMPLES = min(settings().max_examples, 15) if _PROFILE == "ci" else settings().max_examples
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ---- the grammar ---------------------------------------------------------------------------------

#: Values that are bad or extreme for (nearly) any numeric option.
WILD_NUMBERS = ("nan", "NaN", "inf", "-inf", "1e308", "-1e308", "1e400", "1e-300", "1e-320", "0", "-0",
                "-1", "-1e-5", "abc", "", "0x10", "2.5", "1e12", "1e20", "1,5", "1e3")
#: Sizes a user might type; all but the small ones must be refused quickly (or computed quickly).
WILD_SIZES = ("1e7", "1e8", "1e9", "1e12", "1e20", "3000", "-3", "0", "1", "1.5", "nan", "x")


@dataclass
class Files:
    """Paths the grammar refers to, made fresh for each example."""

    root: Path

    def __post_init__(self) -> None:
        from dpverify.ledger import PrivacyLedger
        from dpverify.mechanisms import GaussianMechanism

        ledger = PrivacyLedger()
        ledger.record_block("s", (1, 5), (1, 2), GaussianMechanism(1.0, 3.0, 2), "prefix")
        data = ledger.to_dict()
        self.ledger = self._write("ledger.json", json.dumps(data))
        extra = json.loads(json.dumps(data))
        extra["blocks"][0]["note"] = "unknown field"
        self.ledger_unknown = self._write("unknown.json", json.dumps(extra))
        huge = json.loads(json.dumps(data))
        huge["blocks"][0]["episodes"] = [1, 10**12]
        self.ledger_huge = self._write("huge.json", json.dumps(huge))
        nan = json.loads(json.dumps(data))
        nan["blocks"][0]["mechanism"]["sigma"] = "nan"
        self.ledger_nan = self._write("nan.json", json.dumps(nan))
        empty = json.loads(json.dumps(data))
        empty["blocks"] = []
        self.ledger_empty = self._write("empty.json", json.dumps(empty))
        self.not_json = self._write("notjson.json", "{not json")
        self.binary = self.root / "binary.json"
        self.binary.write_bytes(b"\xff\xfe\x00")
        self.a_file = self._write("file.txt", "x")
        self.missing = self.root / "missing" / "x.json"

    def _write(self, name: str, text: str) -> Path:
        path = self.root / name
        path.write_text(text, encoding="utf-8")
        return path

    def out_dirs(self) -> list[str]:
        """--out values: fresh, existing with results, an existing file, under a file, unwritable."""
        used = self.root / "used"
        used.mkdir(exist_ok=True)
        (used / "regret.json").write_text("{}")
        return [str(self.root / "out"), str(self.root / "deeper" / "out"), str(used), str(self.a_file),
                str(self.a_file / "sub"), "/proc/dpverify-fuzz-out", ""]

    def ledger_paths(self) -> list[str]:
        return [str(p) for p in (self.ledger, self.ledger_unknown, self.ledger_huge, self.ledger_nan,
                                 self.ledger_empty, self.not_json, self.binary, self.missing, self.root)] + [""]

    def plot_paths(self) -> list[str]:
        return [str(self.root / "fig.png"), str(self.root / "fig"), str(self.root / "fig.xyz"),
                str(self.a_file / "fig.png"), str(self.root), "/proc/dpverify-fuzz.png"]


def _value(good: tuple[str, ...] | list[str], wild: tuple[str, ...] = WILD_NUMBERS) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(list(good)), st.sampled_from(list(wild)))


def _options(draw: st.DrawFn, spec: dict[str, st.SearchStrategy[str] | None],
             required: tuple[str, ...] = ()) -> list[str]:
    """Each option absent or present once (flags when the strategy is None), in a random order: the
    ``required`` ones in 7 vectors of 8, the others in 1 of 3 (so that one bad value is seldom masked by
    another)."""
    names = draw(st.permutations(sorted(spec)))
    argv: list[str] = []
    for name in names:
        if not (draw(st.integers(0, 7)) if name in required else draw(st.integers(0, 2)) == 0):
            continue
        strategy = spec[name]
        if strategy is None:
            argv.append(name)
        else:
            value = draw(strategy)
            # "--x=value" keeps argparse from reading a value such as "-1" as an option.
            argv.extend([name, value] if draw(st.booleans()) else [f"{name}={value}"])
    return argv


def calibrate_argv(draw: st.DrawFn, files: Files) -> list[str]:
    return ["calibrate"] + _options(draw, {
        "--epsilon": _value(("0.5", "1", "3")),
        "--delta": _value(("1e-5", "1e-3")),
        "--horizon": _value(("2", "5", "20"), WILD_SIZES + WILD_NUMBERS),
        "--episodes": _value(("5", "100", "1e3"), WILD_SIZES),
        "--dim": _value(("2", "10"), WILD_SIZES),
        "--schedule": st.sampled_from(["dp-lsvi-ucb++", "ldp-ucrl-vtr", "bogus", ""]),
        "--sensitivity": st.sampled_from(["paper", "derived", "staged", "standard", "bogus"]),
        "--conversion": st.sampled_from(["exact", "cks", "bun-steinke", "bogus"]),
        "--accounting": st.sampled_from(["per-user", "naive", "bogus"]),
        "--relation": st.sampled_from(["replace-one", "add-remove-one", "bogus"]),
        "--write-ledger": st.sampled_from([str(files.root / "w.json"), str(files.missing), str(files.root),
                                           str(files.a_file / "x.json")]),
        "--json": None,
    })


def convert_argv(draw: st.DrawFn, files: Files) -> list[str]:
    return ["convert"] + _options(draw, {
        "--rho": _value(("0", "0.5", "1e-4", "1e-320", "1e308")),
        "--mu": _value(("0", "1", "1e-300", "1e200")),
        "--delta": _value(("1e-5", "1e-3", "0.5")),
        "--json": None,
    })


def account_argv(draw: st.DrawFn, files: Files) -> list[str]:
    return ["account", draw(st.sampled_from(files.ledger_paths()))] + _options(draw, {
        "--delta": _value(("1e-5", "1e-3")),
        "--accounting": st.sampled_from(["per-user", "naive", "bogus"]),
        "--json": None,
    })


def run_argv(draw: st.DrawFn, files: Files) -> list[str]:
    argv = ["run"] + _options(draw, {
        "--agent": st.sampled_from(["lsvi-ucb", "dp-lsvi-ucb++", "ngo", "ucrl-vtr", "bogus"]),
        "--env": st.sampled_from(["min2021", "zhou2021", "random-linear", "bogus"]),
        "--episodes": _value(("2", "3", "1e1"), WILD_SIZES),
        "--seeds": _value(("1", "2"), WILD_SIZES),
        "--base-seed": _value(("0", "7", "1e3"), WILD_SIZES),
        "--workers": st.sampled_from(["1", "0", "-1", "x", "1.5"]),
        "--out": st.sampled_from(files.out_dirs()),
        "--json": None,
    }, required=("--agent", "--env", "--episodes", "--out"))
    for flag, values in (("--agent-option", ["epsilon=1", "delta=1e-5", "beta_multiplier=0.02", "epsilon=nan",
                                             "epsilon=1e308", "epsilon=-1", "bogus=1", "noequals", "=1"]),
                         ("--env-option", ["horizon=3", "horizon=1e9", "horizon=-1", "horizon=x", "bogus=1",
                                           "noequals"])):
        for value in draw(st.lists(st.sampled_from(values), max_size=2)):
            argv.append(f"{flag}={value}")
    return argv


_BOUNDS = ["dp-lsvi-ucb++/theorem-3.2", "ngo-2022/linear-mdp", "luyo-2021/linear-mdp", "ldp-ucrl-vtr/upper",
           "garcelon-2020/upper", "bogus/name", ""]


def _bound_variables(draw: st.DrawFn, skip: tuple[str, ...] = ()) -> list[str]:
    spec: dict[str, st.SearchStrategy[str] | None] = {
        "--d": _value(("10", "5")), "--H": _value(("20", "5")), "--K": _value(("1e5", "1000")),
        "--T": _value(("2e6",)), "--epsilon": _value(("1", "0.1")), "--delta": _value(("1e-5",)),
        "--S": _value(("10",)), "--A": _value(("4",)),
    }
    return _options(draw, {k: v for k, v in spec.items() if k.lstrip("-") not in skip})


def bounds_argv(draw: st.DrawFn, files: Files) -> list[str]:
    action = draw(st.sampled_from(["list", "show", "eval", "compare", "plot", "check", "bogus"]))
    argv = ["bounds", action]
    if action == "list":
        argv += _options(draw, {"--setting": st.sampled_from(["linear MDP", "tabular", "bogus"]),
                                "--privacy": st.sampled_from(["JDP", "LDP", "none", "bogus"]),
                                "--kind": st.sampled_from(["upper", "lower", "bogus"]), "--json": None})
    elif action == "show":
        argv += [draw(st.sampled_from(_BOUNDS))] + _options(draw, {"--json": None})
    elif action == "eval":
        argv += [draw(st.sampled_from(_BOUNDS))] + _bound_variables(draw) + _options(draw, {"--json": None})
    elif action == "compare":
        argv += [draw(st.sampled_from(_BOUNDS)), draw(st.sampled_from(_BOUNDS))] + _bound_variables(draw)
        argv += _options(draw, {"--over": st.sampled_from(["K", "epsilon", "d", "bogus"]), "--region": None,
                                "--json": None})
        if draw(st.booleans()):
            argv += ["--search", draw(_value(("10", "1e3"))), draw(_value(("1e6", "1e8")))]
    elif action == "plot":
        argv += draw(st.lists(st.sampled_from(_BOUNDS), min_size=1, max_size=2))
        argv += _bound_variables(draw, skip=("K", "T")) + _options(draw, {
            "--out": st.sampled_from(files.plot_paths()),
            "--k-min": _value(("1e2", "10")), "--k-max": _value(("1e6", "1e8")),
        })
    elif action == "check":
        argv += _options(draw, {"--strict": None, "--json": None})
    return argv


def _audit_common() -> dict[str, st.SearchStrategy[str] | None]:
    return {
        "--trials": _value(("200", "1e3"), WILD_SIZES),
        "--confidence": _value(("0.95", "0.5")),
        "--seed": _value(("0", "3"), WILD_SIZES),
        "--scheduler": st.sampled_from(["tcp://", "", "bogus", "tcp://:x"]),
        "--workers": st.sampled_from(["1", "0", "-2", "x"]),
        "--json": None,
    }


def audit_argv(draw: st.DrawFn, files: Files) -> list[str]:
    target = draw(st.sampled_from(["gaussian", "laplace", "goe", "zoo", "bogus"]))
    if target == "zoo":
        return ["audit", "zoo"] + _options(draw, {**_audit_common(), "--trials": _value(("300",), WILD_SIZES)})
    first = {"gaussian": "--sigma", "laplace": "--scale", "goe": "--entry-std", "bogus": "--sigma"}[target]
    second = {"gaussian": "--sensitivity", "laplace": "--sensitivity", "goe": "--frobenius-sensitivity",
              "bogus": "--sensitivity"}[target]
    argv = ["audit", "mechanism", target]
    if draw(st.integers(0, 4)):
        argv += [f"{first}={draw(_value(('2', '5', '0.5')))}"]
    return argv + _options(draw, {
        second: _value(("1", "2")),
        "--dim": _value(("1", "2", "3"), WILD_SIZES),
        "--epsilon": _value(("1", "0.5")),
        "--delta": _value(("1e-5", "0")),
        **_audit_common(),
    })


# ---- running one command and judging it ----------------------------------------------------------


class CommandTimeout(BaseException):
    """Raised in the command by SIGALRM when it exceeds TIME_LIMIT (BaseException: nothing catches it)."""


@dataclass
class Outcome:
    argv: list[str]
    code: int | None
    stdout: str
    stderr: str
    exception: BaseException | None
    seconds: float


@contextlib.contextmanager
def _memory_allowance() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    size = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                size = int(line.split()[1]) * 1024
    limit = size + MEMORY_ALLOWANCE
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def invoke(argv: list[str], time_limit_seconds: float = TIME_LIMIT) -> Outcome:
    """Run ``dpverify argv`` in this process with captured output, a time limit and a memory allowance."""
    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    exception: BaseException | None = None
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            warnings.simplefilter("always")
            warnings.showwarning = lambda m, c, f, n, file=None, line=None: err.write(  # type: ignore[assignment]
                warnings.formatwarning(m, c, f, n, line))
            with _memory_allowance(), _environment(DPVERIFY_MEMORY_LIMIT=FUZZ_MEMORY_LIMIT), \
                    time_limit(time_limit_seconds, CommandTimeout):  # nests with the command's own limits
                code = main(argv)
    except SystemExit as exc:  # argparse's --help / --version
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except BaseException as exc:  # anything escaping main is a finding
        exception = exc
    return Outcome(argv, code, out.getvalue(), err.getvalue(), exception, time.perf_counter() - start)


#: Names a one-line error may use for the thing that was wrong (options appear as "--name").
_POSITIONAL_NAMES = ("LEDGER", "ledger", "name", "bound", "COMMAND", "TARGET", "KIND", "ACTION", "argument",
                     "required", "unrecognized arguments", "invalid choice", "expected", "not allowed with",
                     # the user's agent (tests/cli/test_agent_faults.py): it, or its output, by name
                     "the agent ", "the factory ", "policy", "privacy_notion", "claimed_guarantee()")


def problems(outcome: Outcome) -> list[str]:
    """Every way ``outcome`` breaks the contract, as short signatures (empty when it keeps it)."""
    found = []
    if isinstance(outcome.exception, CommandTimeout):
        found.append(f"no answer within the time limit ({outcome.seconds:.0f} s)")
    elif outcome.exception is not None:
        first = str(outcome.exception).splitlines()[0] if str(outcome.exception) else ""
        found.append(f"raised {type(outcome.exception).__name__}: {first[:80]}")
    else:
        if outcome.code not in (0, 1, 2):
            found.append(f"exit status {outcome.code}")
        if "Traceback (most recent call last)" in outcome.stderr + outcome.stdout:
            found.append("traceback in output")
        if outcome.code == 2:
            lines = outcome.stderr.strip("\n").splitlines()
            if len(lines) != 1:
                found.append(f"{len(lines)} lines on stderr at exit 2")
            elif "ran out of memory" in lines[0]:
                found.append("allocation not estimated before it was made")
            elif not (re.search(r"--[a-z]", lines[0]) or any(n in lines[0] for n in _POSITIONAL_NAMES)):
                found.append("error names no option")
    return found


def signature(outcome: Outcome, problem: str) -> str:
    """A failure class: the sub-command path and the problem with numbers and paths blanked."""
    depth = {"bounds": 2, "audit": 3}.get(outcome.argv[0] if outcome.argv else "", 1)
    path = " ".join(outcome.argv[:depth])
    text = re.sub(r"(/[^\s'\"]+)+", "PATH", problem)
    text = re.sub(r"-?\d+(\.\d+)?(e[+-]?\d+)?", "N", text)
    return f"{path}: {text}"


def check(argv: list[str]) -> None:
    outcome = invoke(argv)
    found = problems(outcome)
    assert not found, (f"dpverify {' '.join(argv)!r}: {found}; stderr: {outcome.stderr[-2000:]!r}",
                       outcome.exception)


@contextlib.contextmanager
def fresh_files() -> Iterator[Files]:
    root = Path(tempfile.mkdtemp(prefix="dpverify-fuzz-"))
    try:
        yield Files(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


GRAMMARS = {
    "calibrate": calibrate_argv,
    "convert": convert_argv,
    "account": account_argv,
    "run": run_argv,
    "bounds": bounds_argv,
    "audit": audit_argv,
}


@pytest.mark.parametrize("command", sorted(GRAMMARS))
@FUZZ
@given(data=st.data())
def test_fuzz_command(command: str, data: st.DataObject) -> None:
    with fresh_files() as files:
        argv = data.draw(st.composite(lambda draw: GRAMMARS[command](draw, files))(), label="argv")
        check(argv)


# ---- the console script itself ------------------------------------------------------------------

def _script(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dpverify", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "MPLBACKEND": "Agg"})


@pytest.mark.parametrize("argv", [
    ["--version"],
    ["convert", "--rho", "1e-320"],
    ["calibrate", "--epsilon", "1e308"],
    ["calibrate", "--delta", "-1e-5"],
    ["audit", "mechanism", "gaussian", "--sigma", "1", "--dim", "1e7", "--trials", "1000"],
])
def test_console_script_contract(argv: list[str]) -> None:
    done = _script(*argv)
    assert done.returncode in (0, 1, 2), done.stderr
    assert "Traceback" not in done.stderr
    if done.returncode == 2:
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    else:
        assert done.stdout.strip()
