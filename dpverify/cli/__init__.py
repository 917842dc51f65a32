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
never a traceback; 130 interrupted (Ctrl-C): one line ``interrupted``, worker processes stopped.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

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


def _on_interrupt(signum: int, frame: object) -> None:
    _stop_workers()
    raise KeyboardInterrupt


_FORK_HOOK_INSTALLED = False


def _workers_ignore_interrupts() -> None:
    """Forked workers ignore Ctrl-C (the parent stops them), so they print no tracebacks of their own."""
    global _FORK_HOOK_INSTALLED
    if not _FORK_HOOK_INSTALLED and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        _FORK_HOOK_INSTALLED = True


def _prog(args: argparse.Namespace | None) -> str:
    command = getattr(args, "command", None)
    return f"dpverify {command}" if command else "dpverify"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpverify`` console script; returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    args = None
    previous: Any = None
    parser: argparse.ArgumentParser | None = None
    try:
        try:
            previous = signal.signal(signal.SIGINT, _on_interrupt)
        except ValueError:  # not the main thread: leave Ctrl-C alone
            previous = None
        _workers_ignore_interrupts()
        parser = build_parser(words)
        args = parser.parse_args(words)
        return int(args.handler(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (e.g. `dpverify ... | head`): not an error of ours or of the user's.
        sys.stderr.close()
        return 0
    except UsageError as exc:
        print(_one_line(str(exc)), file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        prog = _prog(args)
        print(f"{prog}: error: ran out of memory (a size option is too large for this machine)", file=sys.stderr)
        return EXIT_USAGE
    except NumericalError as exc:
        prog = _prog(args)
        print(f"{prog}: error: no trustworthy number for these inputs ({_one_line(str(exc))})", file=sys.stderr)
        return EXIT_USAGE
    except (DpverifyError, ValueError, OSError) as exc:
        # ValueError covers InvalidParameterError and json.JSONDecodeError; OSError unreadable files.
        if isinstance(exc, InvalidParameterError) and parser is not None:
            exc = _in_option_names(exc, parser)
        message = _one_line(str(exc)) or type(exc).__name__
        prog = _prog(args)
        print(f"{prog}: error: {message}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
