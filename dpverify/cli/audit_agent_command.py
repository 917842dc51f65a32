"""``dpverify audit agent`` and ``dpverify audit agent-zoo``: privacy audits of whole agents.

    dpverify audit agent --agent dp-lsvi-ucb++ --env min2021 --env-option horizon=2 --episodes 16 \\
        --notion billboard --route two-world --epsilon 1 --delta 1e-5 --trials 1e4 [--json] [--out DIR]
    dpverify audit agent --agent my_package.my_module:make_agent ...      (a third-party agent)
    dpverify audit agent-zoo [--scale 1] [--json]

``--agent`` is a registered agent name or ``module.path:factory`` (the current directory is importable,
as with ``python -m``) or ``path/to/file.py:factory``. Before the audit, the white-box release checks
(:mod:`dpverify.whitebox`) run on the agent at the audit's K and environment (``--whitebox no`` skips them).
Exit status: 0 when no violation is found and every white-box check passed (which certifies nothing), 1 on
VIOLATION or a failed white-box check (``agent-zoo``: when a verdict differs from the expected one), 2 on
bad input or when a white-box check could not run (one line on stderr). The library behind it is
:mod:`dpverify.agent_audit`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dpverify.cli._args import add_time_limits, count, number
from dpverify.cli._output import format_table, print_json
from dpverify.errors import InvalidParameterError

EXIT_NO_VIOLATION = 0
EXIT_VIOLATION = 1
EXIT_NOT_RUN = 2
#: K of the white-box checks' neighbour search (at most the audit's K).
WHITEBOX_SEARCH_EPISODES = 24


#: The registered audit notions (:data:`dpverify.agent_audit.notions.NOTIONS`), listed without importing the
#: library so that ``--help`` stays fast (a test keeps the two equal).
NOTION_CHOICES: tuple[str, ...] = ("billboard", "jdp", "ldp")
#: The registered audit routes (:data:`dpverify.agent_audit.routes.ROUTES`), the first the default,
#: listed without importing the library for the same reason; the help below states each route's
#: description and default ``--trials``, and a test keeps the choices and the help equal to the
#: registry. The handler reads the default trials from the registry.
ROUTE_CHOICES: tuple[str, ...] = ("two-world", "one-run")

def add_parsers(targets: argparse._SubParsersAction) -> None:
    """Add ``agent`` and ``agent-zoo`` to the ``dpverify audit`` sub-commands."""
    agent = targets.add_parser(
        "agent", help="audit a whole agent's privacy claim (billboard DP, JDP or LDP)",
        description="Audit an agent end to end on user response tapes. Exit 0: no violation found (not a "
        "certificate); 1: violation; 2: bad input.")
    agent.add_argument("--agent", required=True, help="registered agent name, module.path:factory or file.py:factory")
    agent.add_argument("--env", required=True, help="registered environment name")
    agent.add_argument("--episodes", type=count, required=True, help="K, the number of users")
    agent.add_argument("--notion", required=True, choices=NOTION_CHOICES, help="what the auditor sees")
    agent.add_argument("--route", default=ROUTE_CHOICES[0], choices=ROUTE_CHOICES,
                       help="two-world (many runs on D and D') or one-run (canaries, Steinke et al. 2023)")
    agent.add_argument("--epsilon", type=number, required=True, help="claimed epsilon")
    agent.add_argument("--delta", type=number, default=1e-5, help="claimed delta (default 1e-5)")
    agent.add_argument("--trials", type=count, default=None,
                       help="two-world: trials per side (default 1e4); one-run: number of runs (default 1)")
    agent.add_argument("--canaries", type=count, default=None, help="one-run: canary slots per run (default K/2)")
    agent.add_argument("--position", action="append", default=None, metavar="first|middle|last|J",
                       help="two-world: replaced position, repeatable (default first, middle and last)")
    agent.add_argument("--window", type=count, default=1, help="episodes after the replaced user read (default 1)")
    agent.add_argument("--canary-design", choices=("environment", "worst-case"), default="environment",
                       help="the environment's own canaries, or the audit linear (mixture) MDP of "
                            "its dimensions with measured canary pairs: the two of largest mu (two-world), "
                            "the one of largest mu in every slot (one-run) (default environment)")
    agent.add_argument("--env-option", action="append", default=[], metavar="NAME=VALUE", help="environment option")
    agent.add_argument("--agent-option", action="append", default=[], metavar="NAME=VALUE", help="agent option")
    agent.add_argument("--gaussian-claim", choices=("yes", "no"), default=None,
                       help="treat the claim as mu-GDP (default: yes for dpverify's agents, no otherwise)")
    agent.add_argument("--confidence", type=number, default=0.95, help="confidence of all bounds (default 0.95)")
    agent.add_argument("--seed", type=count, default=0, help="audit seed (default 0)")
    agent.add_argument("--data-seed", type=count, default=0, help="seed of the ordinary users' tapes (default 0)")
    agent.add_argument("--scheduler", default=None, help="run two-world trials on a Dask cluster (tcp://host:port)")
    agent.add_argument("--workers", type=count, default=None, help="local worker processes (default all cores)")
    add_time_limits(agent, 6 * 3600.0, "the audit")
    agent.add_argument("--whitebox", choices=("yes", "no"), default="yes",
                       help="run the white-box release checks first (default yes)")
    agent.add_argument("--json", action="store_true", help="print JSON")
    agent.add_argument("--out", default=None, metavar="DIR", help="write result.json and tradeoff.png to DIR")
    agent.set_defaults(handler=run_agent)

    zoo = targets.add_parser("agent-zoo", help="audit every planted agent bug and its correct twin")
    zoo.add_argument("--third-party", action="store_true",
                     help="the third-party zoo instead (file-path agents with real implementers' bugs), checked by "
                          "the white-box release checks at a small size")
    zoo.add_argument("--only", action="append", default=None, metavar="CASE", help="run only these cases (repeatable)")
    zoo.add_argument("--scale", type=number, default=1.0, help="multiply the zoo's trials (default 1)")
    zoo.add_argument("--seed", type=count, default=0, help="audit seed (default 0)")
    zoo.add_argument("--json", action="store_true", help="print JSON")
    zoo.set_defaults(handler=run_agent_zoo)


def _options(flag: str, items: list[str]) -> tuple[tuple[str, Any], ...]:
    from dpverify.cli.run_command import parse_options

    return tuple(sorted(parse_options(flag, items).items()))


def _positions(items: list[str] | None) -> tuple[Any, ...]:
    if not items:
        return ("first", "middle", "last")
    out: list[Any] = []
    for item in items:
        out.append(int(item) if item.isdigit() else item)
    return tuple(out)


def spec_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~dpverify.agent_audit.AgentAuditSpec` the options describe (validated)."""
    from dpverify.agent_audit import AgentAuditSpec, audit_route

    route = audit_route(args.route, "--route")
    trials = args.trials if args.trials is not None else route.default_trials
    gaussian = None if args.gaussian_claim is None else args.gaussian_claim == "yes"
    return AgentAuditSpec(
        agent=args.agent, env=args.env, episodes=args.episodes, notion=args.notion, epsilon=args.epsilon,
        delta=args.delta, route=args.route, trials=trials, canaries=args.canaries, confidence=args.confidence,
        seed=args.seed, data_seed=args.data_seed, positions=_positions(args.position), window=args.window,
        env_options=_options("--env-option", args.env_option),
        agent_options=_options("--agent-option", args.agent_option), gaussian_claim=gaussian,
        canary_design=args.canary_design)


def _executor(args: argparse.Namespace) -> Any:
    from dpverify.audit.executors import make_executor
    from dpverify.cli._checks import check_scheduler
    from dpverify.limits import require_workers

    check_scheduler("--scheduler", args.scheduler)
    if args.workers is not None:
        require_workers("--workers", args.workers)
    return make_executor(args.scheduler, args.workers)


def whitebox_of(spec: Any, executor: Any) -> Any:
    """The white-box release checks of the audited agent, at the audit's K and environment."""
    from dpverify.agents.registry import agent_factory, build_environment
    from dpverify.audit.resources import WHITEBOX_RUNS_AT_K, require_episodes
    from dpverify.whitebox import Subject, WhiteBoxPlan, check_releases

    options = dict(spec.agent_options)
    options.setdefault("epsilon", spec.epsilon)
    options.setdefault("delta", spec.delta)
    mdp = build_environment(spec.env, spec.episodes, spec.env_options, parameter="--env")
    require_episodes("--episodes", spec.episodes, mdp, spec.episodes, WHITEBOX_RUNS_AT_K, "the white-box checks")
    subject = Subject(agent_factory(spec.agent), mdp, spec.episodes, options,
                      str(options.get("relation", "replace-one")), spec.agent)
    plan = WhiteBoxPlan(spec.episodes, search_episodes=min(spec.episodes, WHITEBOX_SEARCH_EPISODES), seed=spec.seed,
                        claim_epsilon=spec.epsilon, delta=spec.delta)
    return check_releases(subject, plan, executor=executor)


def run_agent(args: argparse.Namespace) -> int:
    from dpverify.agent_audit import audit_agent

    spec = spec_from_args(args)
    if args.out is not None:
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            raise InvalidParameterError("--out", "must be a directory (or a path to create)", args.out)
    executor = _executor(args)
    try:
        whitebox = whitebox_of(spec, executor) if args.whitebox == "yes" else None
        result = audit_agent(spec, executor=executor)
    finally:
        executor.close()
    if args.out is not None:
        from dpverify.agent_audit.plot import write_outputs

        write_outputs(result, Path(args.out))
    if args.json:
        print_json({**result.to_dict(), "whitebox": None if whitebox is None else whitebox.to_dict()})
    else:
        print(result.summary())
        if whitebox is not None:
            print(whitebox.summary())
    if result.verdict == "VIOLATION" or (whitebox is not None and whitebox.refutations):
        return EXIT_VIOLATION
    if whitebox is not None and (whitebox.not_run or whitebox.undecided):
        print(f"dpverify: white-box checks could not run: {(whitebox.not_run or whitebox.undecided)[0].reason}",
              file=sys.stderr)
        return EXIT_NOT_RUN
    return EXIT_NO_VIOLATION


def run_third_party_zoo(args: argparse.Namespace) -> int:
    from dpverify.audits.third_party_zoo import case, whitebox_outcomes

    only = None if args.only is None else [case(name).name for name in args.only]
    outcomes = whitebox_outcomes(seed=args.seed, only=only)
    rows = [o.row() for o in outcomes]
    all_ok = all(o.as_expected for o in outcomes)
    if args.json:
        print_json({"seed": args.seed, "all_as_expected": all_ok, "cases": rows})
    else:
        headers = ("case", "kind", "verdict", "expected?", "white-box checks failed / not run", "seconds")
        table = [(r["case"], r["kind"], r["verdict"], "yes" if r["as_expected"] else "NO",
                  ", ".join(r["white-box failed"] or r["white-box not run"]) or "-", f"{r['seconds']:.1f}")
                 for r in rows]
        print(format_table(headers, table))
        print("all verdicts as expected" if all_ok else "SOME VERDICTS DIFFER FROM THE EXPECTED ONES")
    return EXIT_NO_VIOLATION if all_ok else EXIT_VIOLATION


def run_agent_zoo(args: argparse.Namespace) -> int:
    from dpverify.audits.agent_zoo import run_agent_zoo as zoo

    if args.third_party:
        return run_third_party_zoo(args)
    if not args.scale > 0:
        raise InvalidParameterError("--scale", "must be > 0", args.scale)
    outcomes = zoo(scale=args.scale, seed=args.seed, only=None if args.only is None else tuple(args.only))
    rows = [o.row() for o in outcomes]
    all_ok = all(o.as_expected for o in outcomes)
    if args.json:
        print_json({"scale": args.scale, "seed": args.seed, "all_as_expected": all_ok, "cases": rows})
    else:
        headers = ("case", "kind", "route", "verdict", "expected?", "eps_lb", "trials", "seconds")
        table = [(r["case"], r["kind"], r["route"], r["verdict"], "yes" if r["as_expected"] else "NO",
                  f"{r['epsilon_lower_bound']:.3f}", r["trials"] if r["canaries"] is None
                  else f"{r['trials']} run, m={r['canaries']}", f"{r['seconds']:.1f}") for r in rows]
        print(format_table(headers, table))
        print("all verdicts as expected" if all_ok else "SOME VERDICTS DIFFER FROM THE EXPECTED ONES", file=sys.stdout)
    return EXIT_NO_VIOLATION if all_ok else EXIT_VIOLATION
