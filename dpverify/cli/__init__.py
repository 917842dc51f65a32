"""The ``dpverify`` command line.

One sub-command per module in this package; each module exposes ``add_parser(subparsers)`` that
registers its parser and sets ``handler`` (a function ``args -> int`` returning the exit status).

Errors a user can cause (bad numbers, unknown names, unreadable files) end with exit status 2 and
exactly one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from dpverify.errors import DpverifyError

#: Modules of this package that register a sub-command, in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "dpverify.cli.calibrate_command",
    "dpverify.cli.convert_command",
    "dpverify.cli.account_command",
    "dpverify.cli.run_command",
    "dpverify.cli.bounds_command",
    "dpverify.cli.audit_command",
)

EXIT_USAGE = 2


class UsageError(DpverifyError):
    """Raised by the parser instead of printing usage and exiting."""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are raised, so that ``main`` prints them as one line."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="dpverify",
        description="Privacy accounting, calibration, regret bounds, reference agents and audits "
        "for private reinforcement learning.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    subparsers.required = True
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpverify`` console script; returns the exit status."""
    parser = build_parser()
    args = None
    try:
        args = parser.parse_args(argv)
        return int(args.handler(args))
    except BrokenPipeError:
        # The reader went away (e.g. `dpverify ... | head`): not an error of ours or of the user's.
        sys.stderr.close()
        return 0
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except (DpverifyError, ValueError, OSError) as exc:
        # ValueError covers InvalidParameterError and json.JSONDecodeError; OSError unreadable files.
        message = " ".join(str(exc).split()) or type(exc).__name__
        prog = f"dpverify {args.command}" if getattr(args, "command", None) else "dpverify"
        print(f"{prog}: error: {message}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
