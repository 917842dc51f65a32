"""``dpverify verify`` — check an agent's privacy claim end to end and write a report.

    dpverify verify --agent dp-lsvi-ucb++ --env min2021 --epsilon 1 --delta 1e-5 --episodes 1000 --out report/
    dpverify verify --agent mypackage.agents:make_agent --env min2021 --epsilon 1 --delta 1e-5 --json

Runs the claim & accounting, the private-agent contract checks, the agent audits for the agent's notion
and the regret comparison (:mod:`dpverify.verify`), prints the verdict first and writes report.html
(self-contained), report.md, report.json and the figures into ``--out``.

Exit status: 0 CLAIM CONSISTENT (not a certificate), 1 CLAIM REFUTED, 2 INCONCLUSIVE or bad input (one
line on stderr). The agents are imported inside the handler only.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dpverify.cli._args import add_time_limits, count, number


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="check an agent's privacy claim end to end (ledger, contract, audits, regret) and write a report",
        description="Verify an agent's (epsilon, delta) claim: its ledger after a run, the private-agent contract "
        "checks, the empirical audits of its notion, and its regret against the non-private counterpart. "
        "Exit 0: CLAIM CONSISTENT (not a certificate); 1: CLAIM REFUTED; 2: INCONCLUSIVE or bad input.",
    )
    parser.add_argument("--agent", required=True,
                        help="registered agent name (e.g. dp-lsvi-ucb++), module.path:factory or file.py:factory")
    parser.add_argument("--env", required=True, help="registered environment, e.g. min2021, zhou2021")
    parser.add_argument("--epsilon", type=number, required=True, help="claimed epsilon")
    parser.add_argument("--delta", type=number, required=True, help="claimed delta")
    parser.add_argument("--episodes", type=count, default=1000,
                        help="number of episodes K the claim covers (default 1000)")
    parser.add_argument("--budget", default="quick", choices=("quick", "standard", "thorough"),
                        help="trial counts and seeds: quick (CI, about a minute), standard (about ten minutes), "
                        "thorough (a cluster)")
    parser.add_argument("--out", default=None, help="write report.html, report.md, report.json and figures here "
                        "(created if missing; must not already hold a report unless --force)")
    parser.add_argument("--force", action="store_true", help="replace a report already in --out")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--seed", type=count, default=0, help="base seed of the runs (default 0)")
    parser.add_argument("--workers", type=count, default=None, help="local worker processes (default: 2 or fewer)")
    parser.add_argument("--scheduler", default=None, help="run audit trials on a Dask cluster at this address")
    parser.add_argument("--gaussian-claim", choices=("yes", "no"), default=None,
                        help="the claim is mu-GDP (every release a Gaussian mechanism): the audits test the mu-GDP "
                             "curve too (default: yes for dpverify's agents, no otherwise)")
    parser.add_argument("--agent-option", action="append", default=[], metavar="NAME=VALUE",
                        help="agent option, repeatable (VALUE parsed as JSON when possible)")
    parser.add_argument("--env-option", action="append", default=[], metavar="NAME=VALUE",
                        help="environment option, repeatable")
    add_time_limits(parser, None, "the verification")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    import contextlib
    import os

    # one BLAS thread per process (set before numpy loads BLAS; the worker processes inherit it): the workers are
    # the parallelism, and more BLAS threads would spin on small matrices on the cores they need
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")

    from dpverify._io import check_output_dir, output_lock
    from dpverify.verify.report import FILES

    held = contextlib.ExitStack()
    before: list[str] = []
    if args.out is not None:  # checked before any work, so a long verification never ends in a refusal
        out = check_output_dir("--out", args.out, FILES, force=args.force)
        held.enter_context(output_lock("--out", out))
        before = [p.name for p in out.iterdir() if p.name in FILES or p.suffix == ".png"]
    with held:
        return _verify_and_write(args, before)


def _verify_and_write(args: argparse.Namespace, before: list[str]) -> int:
    from dpverify._io import remove_stale
    from dpverify.cli._output import print_json
    from dpverify.cli.run_command import parse_options
    from dpverify.usercode import TimeLimitExceeded, time_limit
    from dpverify.verify import INCONCLUSIVE, verify
    from dpverify.verify.budget import budget_by_name
    from dpverify.verify.report import to_text, write_report

    # --timeout given: the command line enforces it; otherwise the budget's limit, which a correct agent at
    # that budget never reaches
    limit = budget_by_name(args.budget).timeout if args.timeout is None else None
    with time_limit(limit, lambda: TimeLimitExceeded(float(limit or 0.0), "--timeout (the budget's)",
                                                      "dpverify verify")):
        report = verify(
            args.agent, args.env, args.epsilon, args.delta, args.episodes, args.budget,
            agent_options=parse_options("--agent-option", args.agent_option),
            env_options=parse_options("--env-option", args.env_option),
            seed=args.seed, workers=args.workers, scheduler=args.scheduler,
            gaussian_claim=None if args.gaussian_claim is None else args.gaussian_claim == "yes",
            progress_stream=sys.stderr,
        )
    paths = write_report(report, args.out) if args.out else {}
    if args.out:  # --force: a previous report's figures that this one did not write go too
        remove_stale(args.out, before, [p.name for p in paths.values()])
    if args.json:
        payload = report.to_dict()
        payload["files"] = {name: str(path) for name, path in paths.items()}
        print_json(payload)
    else:
        print(to_text(report), end="")
        if paths:
            print(f"report: {paths['report.html']} (also report.md, report.json and {len(paths) - 3} figures)")
    if report.verdict.verdict == INCONCLUSIVE:
        print(f"dpverify verify: INCONCLUSIVE: {report.verdict.reasons[0]}", file=sys.stderr)
    return report.verdict.exit_status
