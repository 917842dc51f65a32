"""The ``dpverify`` command line.

Registering a sub-command
-------------------------
:data:`COMMANDS` is the list of sub-commands, in the order ``--help`` lists them. Adding one is one
line, ``Command("name", "dpverify.cli.name_command", "one-line help")``, and a module that exposes
``add_parser(subparsers)``: it registers its parser with ``subparsers.add_parser(name, ...)`` and sets
``handler`` (a function ``args -> int`` returning the exit status) with ``set_defaults``. A nested
target (``dpverify audit agent``) is added inside its parent's module instead.

Modules are imported lazily: ``dpverify --help`` imports none of them, and ``dpverify NAME ...``
imports only NAME's module (the others are registered as placeholders with their help line), so the
start-up of a command costs only what that command uses. A module should likewise import heavy
libraries (scipy, sympy, matplotlib, the agents) inside its handler, not at module level.

Exit statuses and errors
------------------------
0 success; 1 a finding the command reports as such (an audit's violation, an inconsistent bound
under ``--strict``); 2 bad input: exactly one line on stderr naming the option and the rule it broke,
never a traceback — and the same for the user's own code (:mod:`dpverify.usercode`: "the agent X raised
T: m (in method)", a call or a command past its time limit), with the traceback only under ``--debug``;
128 + n on a signal (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP): one line, worker processes stopped, within
:data:`STOP_GRACE_SECONDS` even where the signal's exception is swallowed. A command that runs the user's code
(an agent named by import path) runs it in a work process of its own (:mod:`dpverify.cli._isolate`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from dpverify import _interrupts
from dpverify.errors import DpverifyError, InvalidParameterError, NumericalError


@dataclass(frozen=True)
class Command:
    """A sub-command: its name, the module that registers it, and its one-line help."""

    name: str
    module: str
    help: str


#: The sub-commands, in the order ``--help`` lists them (module docstring: one line adds one).
COMMANDS: list[Command] = [
    Command("calibrate", "dpverify.cli.calibrate_command",
            "noise calibration for a target (epsilon, delta) (default: DP-LSVI-UCB++ at the paper's settings)"),
    Command("convert", "dpverify.cli.convert_command",
            "convert a zCDP (or GDP) budget to (epsilon, delta) by every conversion"),
    Command("account", "dpverify.cli.account_command",
            "account a ledger JSON file: rho naive and per user, epsilon by every conversion"),
    Command("run", "dpverify.cli.run_command", "run a reference RL agent for several seeds and save its exact regret"),
    Command("bounds", "dpverify.cli.bounds_command",
            "published regret bounds: list, show, eval, compare, check, plot"),
    Command("audit", "dpverify.cli.audit_command",
            "empirical privacy audit: epsilon lower bounds from distinguishing tests"),
    Command("verify", "dpverify.cli.verify_command", "check an agent's privacy claim end to end and write a report"),
]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: The signals that stop a command as Ctrl-C does (one line, the workers stopped, exit 128 + n).
STOP_SIGNALS: dict[str, str] = {"SIGINT": "interrupted", "SIGTERM": "terminated", "SIGHUP": "hung up"}


class Stopped(BaseException):
    """A stop signal arrived (module docstring): like KeyboardInterrupt, nothing in between swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

#: Negative numbers in any float syntax ("-1e-5", "-.5", "-inf") are values, never option names.
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)


class UsageError(DpverifyError):
    """Raised by the parser instead of printing usage and exiting."""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are raised (so ``main`` prints them as one line) and which reads
    negative numbers such as ``--delta -1e-5`` as values (then rejected by the option's own rule)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        # "argument --x/--y: must be ..." → "--x must be ...": the same shape as every other error.
        match = re.match(r"^argument ([^:\s]+): (.*)$", message, re.DOTALL)
        if match:
            name, rule = match.group(1).split("/")[0], match.group(2)
            message = f"{name} {rule}" if rule.startswith("must") else f"{name}: {rule}"
        raise UsageError(f"{self.prog}: error: {message}")


def _version() -> str:
    # From the installed metadata, as dpverify.__version__ does (read here directly so that the
    # console script does not depend on how the package was imported).
    from importlib import metadata

    try:
        return metadata.version("dpverify")
    except metadata.PackageNotFoundError:  # pragma: no cover - a source tree without install
        return "0+unknown"


def _requested(argv: Sequence[str]) -> str | None:
    """The sub-command named on the command line (the first word that is not an option), if any."""
    for word in argv:
        if not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv``, only the sub-command it names is imported (``None``: all of them)."""
    parser = OneLineParser(
        prog="dpverify",
        description="Privacy accounting, calibration, regret bounds, reference agents and audits "
        "for private reinforcement learning.",
    )
    parser.add_argument("--version", action="version", version=f"dpverify {_version()}")
    parser.add_argument("--debug", action="store_true",
                        help="print the traceback of a failure of your own code (an agent) before its one line")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    subparsers.required = True
    wanted = _requested(argv) if argv is not None else None
    for command in COMMANDS:
        if argv is None or command.name == wanted:
            importlib.import_module(command.module).add_parser(subparsers)
        else:
            subparsers.add_parser(command.name, help=command.help, add_help=False)
    return parser


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _option_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Library parameter name → the command-line spelling, over every loaded (sub)parser:
    ``epsilon`` → ``--epsilon``, ``entry_std`` → ``--entry-std``, a positional ``ledger`` → ``LEDGER``."""
    names: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names.update(_option_names(sub))
        elif action.option_strings:
            longest = max(action.option_strings, key=len)
            names.setdefault(action.dest, longest)
            names.setdefault(longest.lstrip("-").replace("-", "_"), longest)
        elif action.dest != argparse.SUPPRESS:
            names.setdefault(action.dest, action.metavar if isinstance(action.metavar, str) else action.dest.upper())
    return names


def _in_option_names(exc: InvalidParameterError, parser: argparse.ArgumentParser) -> InvalidParameterError:
    """The error with a library parameter name (``epsilon``) replaced by its option (``--epsilon``)."""
    spelled = _option_names(parser).get(exc.parameter)
    if spelled is None or exc.parameter.startswith("-"):
        return exc
    return InvalidParameterError(spelled, exc.rule, exc.value)


def _stop_workers() -> None:
    """Terminate the worker processes this process started (pools, in-process executors)."""
    import multiprocessing

    for child in multiprocessing.active_children():
        child.terminate()
    for child in multiprocessing.active_children():
        child.join(timeout=2)


#: Seconds a stop signal's exception has to end the command; past them (it was swallowed: raised inside code
#: that ignores exceptions, such as an at-fork hook of the logging module) a timer ends it.
STOP_GRACE_SECONDS = 10.0
_stop_timer: list[threading.Timer] = []


def _end_after_grace(signum: int) -> None:
    def end() -> None:
        _stop_workers()
        name = signal.Signals(signum).name
        print(STOP_SIGNALS.get(name, name), file=sys.stderr, flush=True)
        os._exit(128 + signum)

    if not _stop_timer:
        _stop_timer.append(threading.Timer(STOP_GRACE_SECONDS, end))
        _stop_timer[0].daemon = True
        _stop_timer[0].start()


def _on_interrupt(signum: int, frame: object) -> None:
    _interrupts.signalled = True  # the KeyboardInterrupt below is the user's Ctrl-C, not the agent's raise
    _stop_workers()
    _end_after_grace(signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Stopped(signum)


def _install_stop_handlers() -> dict[int, Any]:
    """Every stop signal handled as Ctrl-C (the previous handlers returned; none outside the main thread)."""
    previous: dict[int, Any] = {}
    for name in STOP_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        try:
            previous[signum] = signal.signal(signum, _on_interrupt)
        except ValueError:  # not the main thread: leave the signals alone
            return previous
    _interrupts.tracked, _interrupts.signalled = signal.SIGINT in previous, False
    return previous


_FORK_HOOK_INSTALLED = False


def _in_forked_worker() -> None:
    """A forked worker ignores Ctrl-C and hang-ups and dies on SIGTERM (the parent stops it): it prints no
    traceback of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _workers_ignore_interrupts() -> None:
    """Forked workers leave the stop signals to the parent (:func:`_in_forked_worker`)."""
    global _FORK_HOOK_INSTALLED
    if not _FORK_HOOK_INSTALLED and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_in_forked_worker)
        _FORK_HOOK_INSTALLED = True


def _prog(args: argparse.Namespace | None) -> str:
    command = getattr(args, "command", None)
    return f"dpverify {command}" if command else "dpverify"


def _run_limited(args: argparse.Namespace) -> int:
    """The handler under the command's ``--timeout`` and with its ``--call-timeout`` (for every process it
    starts: the environment is inherited), where the command has them."""
    from dpverify.usercode import TimeLimitExceeded, time_limit

    call_limit = getattr(args, "call_timeout", None)
    saved = os.environ.get("DPVERIFY_CALL_TIMEOUT")
    if call_limit is not None:
        os.environ["DPVERIFY_CALL_TIMEOUT"] = repr(float(call_limit))
    limit = getattr(args, "timeout", None)
    try:
        with time_limit(limit, lambda: TimeLimitExceeded(float(limit or 0.0), "--timeout", _prog(args))):
            return int(args.handler(args))
    finally:
        if call_limit is not None:
            if saved is None:
                os.environ.pop("DPVERIFY_CALL_TIMEOUT", None)
            else:
                os.environ["DPVERIFY_CALL_TIMEOUT"] = saved


def _user_fault(prog: str, exc: BaseException, debug: bool) -> int:
    """The user's code failed or ran past a limit (:mod:`dpverify.usercode`): one line, the workers stopped."""
    _stop_workers()
    if debug:
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    print(f"{prog}: error: {_one_line(str(exc))}", file=sys.stderr)
    return EXIT_USAGE


@dataclass
class _Command:
    """What one invocation has parsed so far (its errors name the sub-command and its options)."""

    debug: bool
    parser: argparse.ArgumentParser | None = None
    args: argparse.Namespace | None = None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpverify`` console script; returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    command = _Command("--debug" in words)
    words = [w for w in words if w != "--debug"]
    previous: dict[int, Any] = {}
    try:
        previous = _install_stop_handlers()
        _workers_ignore_interrupts()
        return _answer(lambda: _parse_and_run(words, command), command)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _interrupts.tracked = False
        while _stop_timer:  # the command ended by itself: no timer may end its caller later
            _stop_timer.pop().cancel()


def _parse_and_run(words: list[str], command: _Command) -> int:
    """Parse, check the environment, and run the handler — in a work process when it runs the user's code
    (:mod:`dpverify.cli._isolate`), which then reports its own errors."""
    from dpverify.limits import check_environment
    from dpverify.usercode import is_factory_path

    command.parser = build_parser(words)
    args = command.args = command.parser.parse_args(words)
    check_environment()
    agent = getattr(args, "agent", None)
    if not isinstance(agent, str) or not is_factory_path(agent):
        return _run_limited(args)
    from dpverify.cli._isolate import run_isolated

    return run_isolated(lambda: _answer(lambda: _run_limited(args), command), agent, getattr(args, "timeout", None))


def _answer(run: Callable[[], int], command: _Command) -> int:
    """``run()``'s exit status, or its failure said in one line with the status it calls for (module docstring)."""
    from dpverify.usercode import LimitExceeded, UserCodeError

    try:
        return run()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Stopped as stop:
        name = signal.Signals(stop.signum).name
        print(STOP_SIGNALS.get(name, name), file=sys.stderr)
        return 128 + stop.signum
    except (UserCodeError, LimitExceeded) as exc:
        return _user_fault(_prog(command.args), exc, command.debug)
    except BrokenPipeError:
        # The reader went away (e.g. `dpverify ... | head`): not an error of ours or of the user's.
        sys.stderr.close()
        return 0
    except UsageError as exc:
        print(_one_line(str(exc)), file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print(f"{_prog(command.args)}: error: ran out of memory: {_sizes_given(command.args)} too large for "
              "this machine (set DPVERIFY_MEMORY_LIMIT below its memory to be refused before any work)",
              file=sys.stderr)
        return EXIT_USAGE
    except NumericalError as exc:
        prog = _prog(command.args)
        print(f"{prog}: error: no trustworthy number for these inputs ({_one_line(str(exc))})", file=sys.stderr)
        return EXIT_USAGE
    except (DpverifyError, ValueError, OSError) as exc:
        # ValueError covers InvalidParameterError and json.JSONDecodeError; OSError unreadable files.
        if isinstance(exc, InvalidParameterError) and command.parser is not None:
            exc = _in_option_names(exc, command.parser)
        message = _one_line(str(exc)) or type(exc).__name__
        closed = [name for name in ("stdout", "stderr") if getattr(sys, name).closed]
        agent = getattr(command.args, "agent", None)
        if closed and agent:  # only the user's code closes our streams
            message = (f"the agent {agent}'s code closed sys.{closed[0]}, so the command could not write its "
                       f"answer ({message})")
        stream = sys.stderr if not sys.stderr.closed else sys.__stderr__
        print(f"{_prog(command.args)}: error: {message}", file=stream)
        return EXIT_USAGE


#: The options whose values decide how much memory a command needs, named when it runs out.
SIZE_OPTIONS = ("trials", "dim", "episodes", "horizon", "seeds", "workers", "canaries", "window", "num_states",
                "num_actions")


def _sizes_given(args: argparse.Namespace | None) -> str:
    """"the sizes given (--trials 1000000, --dim 3) are" for the memory error's line."""
    given = [(name, getattr(args, name)) for name in SIZE_OPTIONS if getattr(args, name, None) is not None]
    if not given:
        return "the inputs are"
    return "the sizes given (" + ", ".join(f"--{n.replace('_', '-')} {v}" for n, v in given) + ") are"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
