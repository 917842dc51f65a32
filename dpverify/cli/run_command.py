"""``dpverify run`` — run an agent on an environment for several seeds and save exact regret.

Example::

    dpverify run --agent lsvi-ucb --env min2021 --episodes 1000 --seeds 10 --out results/lsvi

writes ``regret.json`` (full settings incl. every confidence-radius multiplier, seeds, package versions,
per-seed exact per-episode regret), ``regret.csv`` and ``cumulative_regret.png`` (unless ``--no-plot``)
into ``--out``. ``--out`` is checked before the run starts: it must be a writable directory (created if
missing) that does not already hold these files, unless ``--force`` is given to replace them. The files
are written all-or-nothing (temporary files renamed into place), so an interrupted or failing save
leaves the previous results intact.
``--scheduler tcp://host:port`` runs the seeds on a Dask cluster (the audits' executor) instead of local
processes, with identical results (the seeds belong to the run, not to where it ran).
``--agent`` is a registered agent or a third-party factory (``module.path:factory``, ``file.py:factory``,
docs/auditing.md), whose code runs under ``--call-timeout`` per call (and ``--timeout`` for the whole run
when given), a failure in it said in one line (exit 2).
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

from dpverify.cli._args import add_time_limits, count_at_least
from dpverify.errors import InvalidParameterError

#: The files a run writes into --out (the last one with the no-data control only).
_RESULT_FILES = ("regret.json", "regret.csv", "cumulative_regret.png", "no_data_control.json")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run a reference RL agent for several seeds and save its exact regret",
        description="Run an agent on an environment for several seeds (in parallel local processes) and "
        "save the exact per-episode regret (JSON, CSV) and a plot of mean cumulative regret +- 1 std.",
    )
    parser.add_argument("--agent", required=True,
                        help="registered agent name (e.g. lsvi-ucb, lsvi-ucb++, ucrl-vtr), module.path:factory or "
                             "file.py:factory")
    parser.add_argument("--env", required=True, help="registered environment, e.g. min2021, zhou2021")
    parser.add_argument("--episodes", type=count_at_least(1), required=True, help="number of episodes K per seed")
    parser.add_argument("--seeds", type=count_at_least(1), default=10, help="number of independent seeds (default 10)")
    parser.add_argument("--base-seed", type=count_at_least(0), default=0,
                        help="entropy of the root SeedSequence (default 0)")
    parser.add_argument("--workers", type=count_at_least(1), default=None,
                        help="local worker processes (default: min(seeds, CPU count))")
    parser.add_argument("--scheduler", default=None,
                        help="run the seeds on a Dask cluster at this address (tcp://host:port) instead of --workers")
    parser.add_argument("--out", required=True,
                        help="output directory (created if missing; must not already hold results unless --force)")
    parser.add_argument("--force", action="store_true", help="replace results already in --out")
    parser.add_argument("--no-plot", action="store_true", help="write regret.json and regret.csv only (no PNG)")
    parser.add_argument("--agent-option", action="append", default=[], metavar="NAME=VALUE",
                        help="agent option, repeatable (e.g. beta_multiplier=0.02)")
    parser.add_argument("--env-option", action="append", default=[], metavar="NAME=VALUE",
                        help="environment option, repeatable (e.g. horizon=5)")
    parser.add_argument("--no-data-control", choices=("auto", "yes", "no"), default="auto",
                        help="also run the same agent and seeds with no user data (every user slot empty) and say "
                             "whether the agent learned from its users (default auto: yes for the registered "
                             "private agents)")
    parser.add_argument("--json", action="store_true", help="print a machine-readable summary")
    add_time_limits(parser, None, "the run", unset="default: no limit on the whole run")
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


def _check_run_size(spec: Any, mdp: Any) -> None:
    """Refuse a run whose data or work cannot fit (an estimate from K, H, S·A and d; dpverify.limits)."""
    from dpverify.limits import require_memory, require_work

    features = getattr(mdp, "features", None)
    shape: tuple[int, ...] = tuple(getattr(features, "shape", ()))
    d = int(shape[-1]) if len(shape) >= 1 else 1
    state_actions = int(shape[-3] * shape[-2]) if len(shape) >= 3 else 1
    horizon = int(getattr(mdp, "horizon", 1) or 1)
    k = spec.num_episodes
    parallel = min(spec.workers, spec.num_seeds)
    # Per agent: the data of every visited (k, h) and the per-stage planning arrays; the environment is to blame
    # when its planning arrays (or one episode's updates) alone do not fit, K otherwise.
    sizes = f"H = {horizon}, d = {d}, {state_actions} state-actions"
    planning = 8.0 * (horizon * state_actions * (d + 2) + horizon * d * d)
    option, value = (("--env-option", ", ".join(f"{k}={v}" for k, v in spec.env_options)) if spec.env_options
                     else ("--env", spec.env))
    require_memory(option, value, planning * parallel, f"the planning arrays of {parallel} agent(s) at {sizes}")
    require_work(option, value, float(spec.num_seeds) * horizon * d * d, f"one episode of {spec.num_seeds} seed(s) at "
                 f"{sizes}")
    per_agent = 8.0 * k * (horizon + 4) + planning
    require_memory("--episodes", k, per_agent * parallel, f"{parallel} parallel run(s) of K = {k} episodes at {sizes}")
    # The irreducible part of every agent's episode: a d×d update per stage.
    require_work("--episodes", k, float(spec.num_seeds) * k * horizon * d * d,
                 f"{spec.num_seeds} seed(s) of K = {k} episodes at H = {horizon}, d = {d}")


def _build_environment(runner: Any, spec: Any) -> Any:
    """Build the environment once, with the environment options named in any error it raises."""
    try:
        return runner.build_environment(spec)
    except MemoryError:
        raise InvalidParameterError("--env-option", "describes an environment too large for this machine's memory",
                                    ", ".join(f"{k}={v}" for k, v in spec.env_options)) from None
    except InvalidParameterError as exc:
        if exc.parameter.startswith("-"):
            raise
        raise InvalidParameterError(f"--env-option {exc.parameter}", exc.rule, exc.value) from None


def _run(runner: Any, spec: Any, mdp: Any, scheduler: str | None) -> Any:
    """The run, on a Dask cluster when ``--scheduler`` names one (dask is imported only then)."""
    if scheduler is None:
        return runner.run(spec, progress_stream=sys.stderr, mdp=mdp)
    from dpverify.audit.executors import make_executor

    with make_executor(scheduler=scheduler) as executor:
        return runner.run(spec, progress_stream=sys.stderr, mdp=mdp, executor=executor)


def handle(args: argparse.Namespace) -> int:
    import os

    from dpverify._io import check_output_dir, output_lock
    from dpverify.agents.core import runner  # lazy: dpverify does not import agents at module level
    from dpverify.agents.registry import AGENTS, ENVIRONMENTS
    from dpverify.cli._checks import check_scheduler
    from dpverify.limits import require_workers
    from dpverify.usercode import guarded_factory, is_factory_path

    if is_factory_path(args.agent):
        guarded_factory(args.agent)  # a path that does not import is refused before anything starts
    elif args.agent not in AGENTS:
        raise InvalidParameterError("--agent", f"must be one of {', '.join(sorted(AGENTS))} or module.path:factory",
                                    args.agent)
    if args.env not in ENVIRONMENTS:
        raise InvalidParameterError("--env", f"must be one of {', '.join(sorted(ENVIRONMENTS))}", args.env)
    workers = args.workers if args.workers is not None else min(args.seeds, os.cpu_count() or 1)
    require_workers("--workers", workers)
    check_scheduler("--scheduler", args.scheduler)
    files = _RESULT_FILES[:2] if args.no_plot else _RESULT_FILES[:3]
    out = check_output_dir("--out", args.out, files, force=args.force)
    with output_lock("--out", out):
        before = [name for name in _RESULT_FILES if (out / name).exists()]
        return _run_and_save(args, runner, out, workers, before)


def _run_and_save(args: argparse.Namespace, runner: Any, out: Any, workers: int, before: list[str]) -> int:
    from dpverify._io import remove_stale
    from dpverify.cli._output import format_table, print_json

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
    mdp = _build_environment(runner, spec)
    _check_run_size(spec, mdp)
    try:
        result = _run(runner, spec, mdp, args.scheduler)
    except InvalidParameterError as exc:
        # An agent's or environment's own parameter: say which option carried it.
        for flag, options in (("--agent-option", spec.agent_options), ("--env-option", spec.env_options)):
            if exc.parameter in dict(options):
                raise InvalidParameterError(f"{flag} {exc.parameter}", exc.rule, exc.value) from None
        raise
    learning = _no_data_control(args, runner, spec, mdp, result)
    paths = runner.save_results(result, out, plot=not args.no_plot)
    if learning is not None:
        from dpverify._io import atomic_write_text

        comparison, control = learning
        document = {"comparison": comparison.to_dict(), "control": runner.result_payload(control)}
        paths["no_data_control"] = out / "no_data_control.json"
        atomic_write_text(paths["no_data_control"], json.dumps(document, indent=1) + "\n")
    remove_stale(out, before, [p.name for p in paths.values()])  # --force --no-plot: the old figure goes too
    payload = runner.result_payload(result)
    summary = {
        "agent": spec.agent,
        "env": spec.env,
        "episodes": spec.num_episodes,
        "seeds": spec.num_seeds,
        "final_cumulative_regret_mean": payload["summary"]["final_cumulative_regret_mean"],
        "final_cumulative_regret_std": payload["summary"]["final_cumulative_regret_std"],
        "learning": None if learning is None else learning[0].to_dict(),
        "files": {kind: str(path) for kind, path in paths.items()},
    }
    if args.json:
        print_json(summary)
    else:
        unit = str(getattr(mdp, "unit", "episode"))  # a bandit's K users are rounds
        print(format_table(
            ["agent", "env", f"{unit}s", "seeds", "cumulative regret (mean)", "std"],
            [[spec.agent, spec.env, spec.num_episodes, spec.num_seeds,
              summary["final_cumulative_regret_mean"], summary["final_cumulative_regret_std"]]],
        ))
        for kind, path in paths.items():
            print(f"{kind}: {path}")
        if learning is not None:
            print(learning[0].line())
    return 0


def _no_data_control(args: argparse.Namespace, runner: Any, spec: Any, mdp: Any, result: Any) -> Any:
    """(the comparison, the control's run) when ``--no-data-control`` asks for it (auto: the registered
    private agents), else None; the control runs the same seeds on the same executor."""
    import dataclasses

    from dpverify.agents.core.learning import compare_learning
    from dpverify.agents.registry import AGENTS

    wanted = args.no_data_control
    if wanted == "no" or (wanted == "auto" and not (spec.agent in AGENTS and AGENTS[spec.agent].private)):
        return None
    control = _run(runner, dataclasses.replace(spec, users=False), mdp, args.scheduler)
    return compare_learning(result.regret, control.regret, mdp), control
