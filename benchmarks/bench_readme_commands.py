"""Wall time of every command the README shows, run as a newcomer would (a fresh process each).

Run:  python benchmarks/bench_readme_commands.py [--only verify,audit-agent]
Prints one line per command: its wall seconds and exit status; asserts nothing about time. The README
states these figures next to each command ("run times on 2 cores"); rerun this after a change that could
move them. The installs (``pip install ...``) and the test suite are not timed here.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS: dict[str, list[str]] = {
    "verify": ["verify", "--agent", "dp-lsvi-ucb++", "--env", "min2021", "--epsilon", "1", "--delta", "1e-5",
               "--out", "{tmp}/verify-report"],
    "calibrate": ["calibrate"],
    "convert": ["convert", "--rho", "0.5", "--delta", "1e-5"],
    "account": ["account", "{tmp}/ledger.json"],
    "bounds": ["bounds", "list"],
    "run": ["run", "--agent", "lsvi-ucb", "--env", "min2021", "--episodes", "1000", "--seeds", "10", "--out",
            "{tmp}/run"],
    "audit-mechanism": ["audit", "mechanism", "gaussian", "--sigma", "3.73", "--epsilon", "1", "--delta", "1e-5",
                        "--trials", "1e6"],
    "audit-agent": ["audit", "agent", "--agent", "dp-lsvi-ucb++", "--env", "min2021", "--env-option", "horizon=2",
                    "--episodes", "8", "--notion", "billboard", "--epsilon", "1", "--delta", "1e-5",
                    "--trials", "2000"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default=None, help="comma-separated names of the commands to time")
    args = parser.parse_args()
    names = list(COMMANDS) if args.only is None else args.only.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        # the account example's ledger, written by the calibrate command the README names
        subprocess.run([sys.executable, "-m", "dpverify", "calibrate", "--write-ledger", f"{tmp}/ledger.json"],
                       check=True, capture_output=True)
        for name in names:
            argv = [part.format(tmp=tmp) for part in COMMANDS[name]]
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "dpverify", *argv], capture_output=True, text=True,
                                  env={**os.environ, "MPLBACKEND": "Agg"}, cwd=Path(tmp))
            seconds = time.perf_counter() - start
            print(f"{name:16s} {seconds:8.1f} s  exit {done.returncode}  dpverify {' '.join(COMMANDS[name])}")


if __name__ == "__main__":
    main()
