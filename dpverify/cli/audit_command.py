"""``dpverify audit``: empirical privacy audits of a mechanism, or of the planted-bug zoo.

    dpverify audit mechanism gaussian --sigma 3.73 --sensitivity 1 --epsilon 1 --delta 1e-5 --trials 1e6
    dpverify audit mechanism laplace --scale 2 --sensitivity 1 --epsilon 0.5
    dpverify audit mechanism goe --entry-std 2.64 --frobenius-sensitivity 1 --dim 3
    dpverify audit mechanism randomized-response --local-epsilon 1 --categories 4
    dpverify audit zoo --trials 1e5 --json

Exit status: 0 when no violation is found (which certifies nothing), 1 when a violation is found (for
``zoo``: when any verdict differs from the expected one), 2 on bad input. ``audits`` is imported
lazily inside the handler, as dpverify never imports it at module level.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields

from dpverify.cli._args import count, count_at_least, number
from dpverify.cli._checks import check_scheduler
from dpverify.cli._output import format_table, print_json
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import MECHANISMS, Mechanism

EXIT_NO_VIOLATION = 0
EXIT_VIOLATION = 1
#: Largest noise scale or sensitivity an audit accepts: samples are noise scale × a draw of up to ~40
#: (far tails over 10¹² trials), which must stay below the largest float.
_MAX_SCALE = 1e300
#: The largest output of a zoo mechanism (a 3×3 GOE matrix, a 5-vector), for the size check.
_ZOO_NUMBERS_PER_TRIAL = 9


def _common(p: argparse.ArgumentParser, default_trials: int) -> None:
    p.add_argument("--trials", type=count_at_least(2), default=default_trials,
                   help=f"trials per side, selection + evaluation (default {default_trials:g})")
    p.add_argument("--confidence", type=number, default=0.95, help="confidence of all bounds together (default 0.95)")
    p.add_argument("--seed", type=count_at_least(0), default=0,
                   help="audit seed (default 0); the result depends only on it")
    p.add_argument("--scheduler", default=None, help="run trials on a Dask cluster at this address (tcp://host:port)")
    p.add_argument("--workers", type=count_at_least(1), default=None,
                   help="local worker processes (default: all cores; 1 = serial)")
    p.add_argument("--json", action="store_true", help="print JSON")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from dpverify.cli import OneLineParser

    audit = subparsers.add_parser(
        "audit",
        help="empirical privacy audit: epsilon lower bounds from distinguishing tests",
        description="Audit a mechanism (or the planted-bug zoo) with Clopper-Pearson and mu-GDP lower bounds. "
        "Exit 0: no violation found (not a certificate); 1: violation; 2: bad input.",
    )
    targets = audit.add_subparsers(dest="target", metavar="TARGET", parser_class=OneLineParser)
    targets.required = True

    mech = targets.add_parser("mechanism", help="audit one of dpverify's mechanisms at its worst-case neighbours")
    kinds = mech.add_subparsers(dest="kind", metavar="KIND", parser_class=OneLineParser)
    kinds.required = True
    for kind, cls in MECHANISMS.items():  # every registered mechanism, options named after its fields
        k = kinds.add_parser(kind, help=f"audit the {kind} mechanism")
        k.add_argument(_option(cls.noise_field), type=number, required=True, help=cls.noise_help)
        k.add_argument(_option(cls.sensitivity_field), type=number, default=1.0,
                       help=f"{cls.sensitivity_norm} sensitivity (default 1)")
        k.add_argument("--dim", type=count, default=cls.default_dim, help="dimension (matrix side for goe)")
        for name, text in cls.extra_fields:
            k.add_argument(_option(name), type=count, default=_default(cls, name), help=text)
        k.add_argument("--epsilon", type=number, default=None, help="claimed epsilon (default: the mechanism's own)")
        k.add_argument("--delta", type=number, default=1e-5, help="claimed delta (default 1e-5)")
        _common(k, 100_000)
        k.set_defaults(handler=_run_mechanism)

    zoo = targets.add_parser("zoo", help="audit every planted bug and its correct twin")
    _common(zoo, 100_000)
    zoo.set_defaults(handler=run_zoo)

    from dpverify.cli.audit_agent_command import add_parsers as add_agent_parsers

    add_agent_parsers(targets)  # audit agent, audit agent-zoo


def _option(field: str) -> str:
    return "--" + field.replace("_", "-")


def _default(cls: type, name: str) -> object:
    return next(f.default for f in fields(cls) if f.name == name)


def _mechanism(args: argparse.Namespace) -> Mechanism:
    cls = MECHANISMS[args.kind]
    extra = {name: getattr(args, name) for name, _ in cls.extra_fields}
    return cls.build(getattr(args, cls.sensitivity_field), getattr(args, cls.noise_field), args.dim, **extra)


def _checked(args: argparse.Namespace, numbers_per_trial: int, dim: int | None = None) -> None:
    """Every check that needs no work, before any process is forked or connection made."""
    from dpverify.audit.resources import require_mechanism_audit
    from dpverify.limits import require_workers

    check_scheduler("--scheduler", args.scheduler)
    workers = _default_workers() if args.workers is None else args.workers
    require_workers("--workers", workers)
    require_mechanism_audit(args.trials, numbers_per_trial, workers, dim=dim)


def _default_workers() -> int:
    import os

    return os.cpu_count() or 1


def _run_mechanism(args: argparse.Namespace) -> int:
    from dpverify.audit.adapters import audit_mechanism
    from dpverify.audit.executors import make_executor

    if args.dim < 1:
        raise InvalidParameterError("--dim", "must be an integer >= 1", args.dim)
    _checked(args, args.dim * args.dim if args.kind == "goe" else args.dim, args.dim)
    cls = MECHANISMS[args.kind]
    for field in (cls.noise_field, cls.sensitivity_field):
        if abs(getattr(args, field)) > _MAX_SCALE:
            raise InvalidParameterError(_option(field), f"must be <= {_MAX_SCALE:g} (the audit's samples overflow "
                                        "to infinity above)", getattr(args, field))
    noise, sensitivity = getattr(args, cls.noise_field), getattr(args, cls.sensitivity_field)
    if noise > 0 and abs(sensitivity) / noise > _MAX_SCALE:
        raise InvalidParameterError(
            _option(cls.noise_field), f"is too small for {_option(cls.sensitivity_field)} {sensitivity:g} "
            "(their ratio, the mechanism's privacy parameter, overflows)", noise)
    mechanism = _mechanism(args)
    with make_executor(args.scheduler, args.workers) as executor:
        try:
            result = audit_mechanism(
                mechanism,
                epsilon=args.epsilon,
                delta=args.delta,
                trials=args.trials,
                confidence=args.confidence,
                seed=args.seed,
                executor=executor,
            )
        except InvalidParameterError as exc:
            if args.epsilon is None and exc.parameter == "epsilon":
                noise = MECHANISMS[args.kind].noise_field
                raise InvalidParameterError(
                    _option(noise), "gives the mechanism no finite epsilon of its own at this delta; "
                    "state the claim to audit with --epsilon", getattr(args, noise)) from None
            raise
    if args.json:
        print_json({"mechanism": mechanism.to_dict(), "result": result.to_dict()})
    else:
        print(f"mechanism: {mechanism.to_dict()}")
        print(result.summary())
    return EXIT_VIOLATION if result.violated_by else EXIT_NO_VIOLATION


def run_zoo(args: argparse.Namespace) -> int:
    from dpverify.audit.executors import make_executor
    from dpverify.audits.zoo import run_zoo as audit_zoo

    _checked(args, _ZOO_NUMBERS_PER_TRIAL)
    with make_executor(args.scheduler, args.workers) as executor:
        outcomes = audit_zoo(trials=args.trials, seed=args.seed, confidence=args.confidence, executor=executor)
    rows = [o.row() for o in outcomes]
    all_ok = all(o.as_expected for o in outcomes)
    if args.json:
        print_json({"trials": args.trials, "confidence": args.confidence, "seed": args.seed,
                    "all_as_expected": all_ok, "cases": rows})
    else:
        headers = ("bug", "variant", "claim eps", "CP eps_lb", "GDP eps_lb", "ceiling", "verdict", "expected?")
        table = [
            (r["bug"], r["variant"], r["claim_epsilon"], r["cp_epsilon_lower"],
             r["gdp_epsilon_lower"] if r["gaussian_claim"] else "n/a",
             r["ceiling"], r["verdict"], "yes" if r["as_expected"] else "NO")
            for r in rows
        ]
        print(f"planted-bug zoo: {args.trials} trials per side, confidence {args.confidence:g}, seed {args.seed}")
        print(format_table(headers, table))
        print("GDP eps_lb decides only Gaussian claims (all but laplace-scale). "
              "NO VIOLATION FOUND is not a certificate of privacy.")
        if not all_ok:
            print("some verdicts differ from the expected ones", file=sys.stderr)
    return EXIT_NO_VIOLATION if all_ok else EXIT_VIOLATION
