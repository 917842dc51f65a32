"""``dpverify run`` — run a reference agent on an environment for several seeds and save exact regret.

Example::

    dpverify run --agent lsvi-ucb --env min2021 --episodes 1000 --seeds 10 --out results/lsvi

writes ``regret.json`` (full settings incl. every confidence-radius multiplier, seeds, package versions,
per-seed exact per-episode regret), ``regret.csv`` and ``cumulative_regret.png`` into ``--out``.
Agent and environment options are passed as ``--agent-option NAME=VALUE`` / ``--env-option NAME=VALUE``
(VALUE parsed as JSON when possible: ``beta_multiplier=0.02``, ``horizon=5``, ``switching=false``).

The ``agents`` package is imported inside the handler only (dpverify never imports agents at module
level, CONTRIBUTING.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from dpverify.errors import InvalidParameterError


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run a reference RL agent for several seeds and save its exact regret",
        description="Run an agent on an environment for several seeds (in parallel local processes) and "
        "save the exact per-episode regret (JSON, CSV) and a plot of mean cumulative regret +- 1 std.",
    )
    parser.add_argument("--agent", required=True, help="registered agent name, e.g. lsvi-ucb, lsvi-ucb++, ucrl-vtr")
    parser.add_argument("--env", required=True, help="registered environment, e.g. min2021, zhou2021")
    parser.add_argument("--episodes", type=int, required=True, help="number of episodes K per seed")
    parser.add_argument("--seeds", type=int, default=10, help="number of independent seeds (default 10)")
    parser.add_argument("--base-seed", type=int, default=0, help="entropy of the root SeedSequence (default 0)")
    parser.add_argument("--workers", type=int, default=None,
                        help="local worker processes (default: min(seeds, CPU count))")
    parser.add_argument("--out", required=True, help="output directory (created if missing)")
    parser.add_argument("--agent-option", action="append", default=[], metavar="NAME=VALUE",
                        help="agent option, repeatable (e.g. beta_multiplier=0.02)")
    parser.add_argument("--env-option", action="append", default=[], metavar="NAME=VALUE",
                        help="environment option, repeatable (e.g. horizon=5)")
    parser.add_argument("--json", action="store_true", help="print a machine-readable summary")
    parser.set_defaults(handler=handle)


def parse_options(flag: str, items: list[str]) -> dict[str, Any]:
    """``["a=1", "b=x"]`` → ``{"a": 1, "b": "x"}``; values parsed as JSON when they are valid JSON."""
    options: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise InvalidParameterError(flag, "must have the form NAME=VALUE", item)
        try:
            value: Any = json.loads(text)
        except json.JSONDecodeError:
            value = text
        options[name.strip().replace("-", "_")] = value
    return options


def handle(args: argparse.Namespace) -> int:
    import os

    from dpverify.agents import runner  # lazy: dpverify does not import agents at module level
    from dpverify.agents.registry import AGENTS, ENVIRONMENTS
    from dpverify.cli._output import format_table, print_json

    if args.agent not in AGENTS:
        raise InvalidParameterError("--agent", f"must be one of {', '.join(sorted(AGENTS))}", args.agent)
    if args.env not in ENVIRONMENTS:
        raise InvalidParameterError("--env", f"must be one of {', '.join(sorted(ENVIRONMENTS))}", args.env)
    if args.episodes < 1:
        raise InvalidParameterError("--episodes", "must be an integer >= 1", args.episodes)
    if args.seeds < 1:
        raise InvalidParameterError("--seeds", "must be an integer >= 1", args.seeds)
    if args.base_seed < 0:
        raise InvalidParameterError("--base-seed", "must be an integer >= 0", args.base_seed)
    workers = args.workers if args.workers is not None else min(args.seeds, os.cpu_count() or 1)
    if workers < 1:
        raise InvalidParameterError("--workers", "must be an integer >= 1", workers)
    spec = runner.RunSpec(
        agent=args.agent,
        env=args.env,
        num_episodes=args.episodes,
        num_seeds=args.seeds,
        base_seed=args.base_seed,
        workers=workers,
        agent_options=parse_options("--agent-option", args.agent_option),
        env_options=parse_options("--env-option", args.env_option),
    )
    result = runner.run(spec, progress_stream=sys.stderr)
    paths = runner.save_results(result, args.out)
    payload = runner.result_payload(result)
    summary = {
        "agent": spec.agent,
        "env": spec.env,
        "episodes": spec.num_episodes,
        "seeds": spec.num_seeds,
        "final_cumulative_regret_mean": payload["summary"]["final_cumulative_regret_mean"],
        "final_cumulative_regret_std": payload["summary"]["final_cumulative_regret_std"],
        "files": {kind: str(path) for kind, path in paths.items()},
    }
    if args.json:
        print_json(summary)
    else:
        print(format_table(
            ["agent", "env", "episodes", "seeds", "cumulative regret (mean)", "std"],
            [[spec.agent, spec.env, spec.num_episodes, spec.num_seeds,
              summary["final_cumulative_regret_mean"], summary["final_cumulative_regret_std"]]],
        ))
        for kind, path in paths.items():
            print(f"{kind}: {path}")
    return 0
