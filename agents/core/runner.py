"""The experiment runner behind ``dpverify run``: seeded parallel runs of registered agents, result files.

Agents and environments are named in :mod:`dpverify.agents.registry` (:data:`~dpverify.agents.registry.AGENTS`,
:data:`~dpverify.agents.registry.ENVIRONMENTS`); a :class:`RunSpec` names one of each. An agent may also be
named by its factory's path (``module.path:factory`` or ``file.py:factory``, the third-party protocol of
docs/auditing.md): its code runs through :mod:`dpverify.usercode` (one-line errors, call time limits), and
without a billboard it publishes on its own.

Seeding: one ``numpy.random.SeedSequence(base_seed)`` spawns one child per seed; each child spawns two
generators, the agent's and the environment's. Seed i of two different agents therefore sees the same
environment randomness stream, and every run is reproducible from (base_seed, seed index).

Where seeds run: this process, local worker processes, or a Dask cluster — through the executors of
the audits (:mod:`dpverify.audit.executors`; :func:`run` and :func:`run_many` take one). Seeds belong
to the spec, never to the executor, so the regret arrays are bit-identical whatever executed them.

Per-episode regret is exact (:mod:`dpverify.agents.core.planning`), never from realised rewards. Files written by
:func:`save_results`: ``regret.json`` (settings incl. every multiplier and derived radius, seeds, package
versions, per-seed regrets), ``regret.csv`` (episode × seed) and ``cumulative_regret.png`` (mean
cumulative regret ± one standard deviation across seeds).
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from dpverify import _validate
from dpverify._io import FileSet
from dpverify._pools import abandon, gather, new_pool
from dpverify.errors import InvalidParameterError
from dpverify.jsonable import to_jsonable
from dpverify.usercode import is_factory_path

from .. import registry
from ..registry import AGENTS, ENVIRONMENTS
from .base import Agent, run_episodes

# ---- specs and results --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSpec:
    """What to run: agent and environment names with their options, K, the number of seeds.

    Attributes:
        agent: a registered agent, or a factory path (``module.path:factory``, ``file.py:factory``).
        env: a registered environment.
        num_episodes: K.
        num_seeds: independent runs (seed indices 0..num_seeds−1).
        base_seed: entropy of the root ``SeedSequence``.
        workers: local worker processes (1 = run in this process).
        agent_options, env_options: keyword options of the factories (e.g. ``beta_multiplier``).
        users: False runs the no-data control: the same agent and seeds, every user slot empty
            (:mod:`dpverify.agents.core.learning`).
    """

    agent: str
    env: str
    num_episodes: int
    num_seeds: int = 10
    base_seed: int = 0
    workers: int = 1
    # Given as a mapping or as (name, value) pairs; stored as sorted pairs (``__post_init__``).
    agent_options: tuple[tuple[str, Any], ...] | Mapping[str, Any] = ()
    env_options: tuple[tuple[str, Any], ...] | Mapping[str, Any] = ()
    users: bool = True

    def __post_init__(self) -> None:
        if not is_factory_path(self.agent):
            _validate.one_of("agent", self.agent, tuple(sorted(AGENTS)))
        _validate.one_of("env", self.env, tuple(sorted(ENVIRONMENTS)))
        _validate.integer("num_episodes", self.num_episodes, minimum=1)
        _validate.integer("num_seeds", self.num_seeds, minimum=1)
        _validate.integer("base_seed", self.base_seed, minimum=0)
        _validate.integer("workers", self.workers, minimum=1)
        if not isinstance(self.users, bool):
            raise InvalidParameterError("users", "must be True or False", self.users)
        object.__setattr__(self, "agent_options", _validate.options("agent_options", self.agent_options))
        object.__setattr__(self, "env_options", _validate.options("env_options", self.env_options))


@dataclass(frozen=True, eq=False)
class SeedResult:
    """One seed's run: exact per-episode regret, number of policy changes, wall time, agent settings."""

    seed_index: int
    spawn_key: tuple[int, ...]
    regret: np.ndarray
    policy_changes: int
    seconds: float
    agent_settings: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class RunResult:
    """All seeds of one :class:`RunSpec`, with the environment's description."""

    spec: RunSpec
    seeds: tuple[SeedResult, ...]
    environment: dict[str, Any]
    #: What ran the seeds: "serial" (this process), "processes" (local pool), "dask" (a cluster).
    executor: str = "serial"

    @property
    def regret(self) -> np.ndarray:
        """Per-episode regret, shape (num_seeds, K)."""
        return np.stack([s.regret for s in self.seeds])

    def cumulative_regret(self) -> np.ndarray:
        return np.cumsum(self.regret, axis=1)


def build_environment(spec: RunSpec) -> Any:
    """The spec's environment (:func:`dpverify.agents.registry.build_environment`)."""
    return registry.build_environment(spec.env, spec.num_episodes, spec.env_options)


def build_agent(spec: RunSpec, mdp: Any, rng: np.random.Generator) -> Agent:
    """The spec's agent on ``mdp`` (:func:`dpverify.agents.registry.build_agent`)."""
    return registry.build_agent(spec.agent, mdp, spec.num_episodes, rng, spec.agent_options)


def describe_environment(mdp: Any, spec: RunSpec) -> dict[str, Any]:
    return {
        "env": spec.env,
        "name": mdp.name,
        "options": dict(spec.env_options),
        "horizon": mdp.horizon,
        "num_states": mdp.num_states,
        "num_actions": mdp.num_actions,
        "dim": mdp.dim,
        "feature_norm_bound": mdp.feature_norm_bound,
        "unit": str(getattr(mdp, "unit", "episode")),  # a bandit's K users are rounds
    }


def run_seed(spec: RunSpec, seed_index: int, progress: Callable[[int], None] | None = None) -> SeedResult:
    """Run seed ``seed_index`` of ``spec`` (module level: used by worker processes)."""
    child = np.random.SeedSequence(spec.base_seed).spawn(spec.num_seeds)[seed_index]
    agent_seed, env_seed = child.spawn(2)
    mdp = build_environment(spec)
    agent = build_agent(spec, mdp, np.random.default_rng(agent_seed))
    start = time.perf_counter()
    regret, changed = run_episodes(mdp, agent, spec.num_episodes, np.random.default_rng(env_seed), progress,
                                   users=spec.users)
    seconds = time.perf_counter() - start
    return SeedResult(seed_index, tuple(int(k) for k in child.spawn_key), regret, int(changed.sum()), seconds,
                      _settings(agent))


def _settings(agent: Any) -> dict[str, Any]:
    """The agent's ``settings()`` (a third-party agent need not have them; they must be a JSON-able mapping)."""
    settings = getattr(agent, "settings", None)
    if settings is None:
        return {"agent": str(getattr(agent, "name", type(agent).__name__))}
    value = settings()
    if not isinstance(value, Mapping):
        raise InvalidParameterError("settings()", "must return a mapping of setting names to values",
                                    type(value).__name__)
    return dict(value)


def _run_seed_in_worker(spec: RunSpec, seed_index: int) -> SeedResult | tuple[str, str, str]:
    """:func:`run_seed` for a worker process: an ``InvalidParameterError`` (whose constructor takes three
    arguments, so it does not survive pickling) comes back as (parameter, rule, repr(value))."""
    try:
        return run_seed(spec, seed_index)
    except InvalidParameterError as exc:
        return (exc.parameter, exc.rule, repr(exc.value))


class ProgressBar:
    """A one-line text progress bar on a terminal; silent when ``stream`` is not a TTY."""

    def __init__(self, total: int, stream: TextIO | None = None, label: str = "") -> None:
        self.total = max(int(total), 1)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.label = label
        self.done = 0
        self._last_draw = 0.0
        self._start = time.perf_counter()

    def advance(self, amount: int = 1) -> None:
        self.done = min(self.done + amount, self.total)
        now = time.perf_counter()
        if self.enabled and (now - self._last_draw > 0.1 or self.done == self.total):
            self._last_draw = now
            width = 30
            filled = int(width * self.done / self.total)
            elapsed = now - self._start
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                              f"{self.done}/{self.total} episodes {elapsed:.1f}s")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def _run_task(task: tuple[RunSpec, int]) -> SeedResult | tuple[str, str, str]:
    """One (spec, seed index) of a sweep, for an executor's ``map`` (module level, so it pickles)."""
    return _run_seed_in_worker(*task)


class _LocalPool:
    """The default pool of a parallel run: what ``ProcessExecutor(workers, adaptive=False)`` of
    :mod:`dpverify.audit.executors` does (same ``map``/``close``/``name``), without importing
    ``dpverify.audit``, whose package imports scipy (0.3–0.9 s: a run's fixed cost would double).
    Not adaptive: a seed is long, and the adaptive executor would run the first one here first."""

    name = "processes"

    def __init__(self, workers: int) -> None:
        self._pool = new_pool(workers)

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], on_done: Callable[[], None] | None = None
            ) -> list[Any]:
        futures = [self._pool.submit(fn, item) for item in items]
        try:
            return gather(self._pool, futures, on_done)  # the first failure stops the others
        except BaseException:
            abandon(self._pool)
            raise

    def close(self) -> None:
        self._pool.shutdown()


def run_many(
    specs: Sequence[RunSpec],
    executor: Any = None,
    progress_stream: TextIO | None = None,
    mdps: Sequence[Any] | None = None,
    first: int = 0,
) -> list[RunResult]:
    """Run every seed of every spec of a sweep through one executor; one :class:`RunResult` per spec.

    ``executor``: any executor of :mod:`dpverify.audit.executors` (``SerialExecutor``,
    ``ProcessExecutor``, ``DaskExecutor``, or ``make_executor(scheduler=...)``), used and left open (the
    caller owns it). ``None``: this process when every spec has ``workers == 1`` (or one seed), else a
    pool of ``max(spec.workers)`` local processes (:class:`_LocalPool`), closed at the end. The (spec,
    seed index) pairs of all specs go to the executor as one ``map``, so a cluster works on configurations
    and seeds at once.
    Seeds belong to the specs (``SeedSequence(base_seed)``, module docstring), never to the executor:
    the results are identical whatever executed them. ``mdps``: the specs' environments when the caller
    has built them; ``first``: the first seed index run (the caller has made the earlier ones). Bad settings
    fail early, in this process: a run that is not in this process builds one agent per spec here before any
    seed is sent away.
    """
    specs = list(specs)
    environments = list(mdps) if mdps is not None else [build_environment(spec) for spec in specs]
    if len(environments) != len(specs):
        raise InvalidParameterError("mdps", "must give one environment per spec", len(environments))
    tasks = [(spec, index) for spec in specs for index in range(first, spec.num_seeds)]
    here = executor is None and all(spec.workers == 1 or spec.num_seeds == 1 for spec in specs)
    serial = here or getattr(executor, "name", None) == "serial"
    if not serial:
        for spec, mdp in zip(specs, environments, strict=True):
            build_agent(spec, mdp, np.random.default_rng(0))
    label = f"{specs[0].agent} on {specs[0].env}" if len(specs) == 1 else f"{len(specs)} runs"
    bar = ProgressBar(sum((spec.num_seeds - first) * spec.num_episodes for spec in specs), progress_stream, label)
    outcomes: list[SeedResult | tuple[str, str, str]] = []
    owned = None
    try:
        if serial:
            # Per-episode progress: the seeds run in this process (a SerialExecutor runs them in order too).
            def one(task: tuple[RunSpec, int]) -> SeedResult:
                return run_seed(task[0], task[1], lambda _k: bar.advance())

            outcomes = list(executor.map(one, tasks) if executor is not None else [one(task) for task in tasks])
        else:
            if executor is None:
                owned = executor = _LocalPool(min(max(spec.workers for spec in specs), len(tasks)))
            # on_done is called once per finished task, in any order: each advances the bar by one task's
            # episodes (exact when the specs share K; the total is exact in any case).
            steps = iter([spec.num_episodes for spec, _ in tasks])
            outcomes = executor.map(_run_task, tasks, lambda: bar.advance(next(steps, 0)))
    finally:
        if owned is not None:
            owned.close()
        bar.close()
    for outcome in outcomes:
        if isinstance(outcome, tuple):  # an InvalidParameterError raised in a worker
            raise InvalidParameterError(*outcome)
    name = "serial" if here else str(getattr(owned if owned is not None else executor, "name", "custom"))
    results: list[RunResult] = []
    start = 0
    for spec, mdp in zip(specs, environments, strict=True):
        seeds = tuple(sorted((o for o in outcomes[start:start + spec.num_seeds - first] if isinstance(o, SeedResult)),
                             key=lambda r: r.seed_index))
        start += spec.num_seeds - first
        results.append(RunResult(spec, seeds, describe_environment(mdp, spec), executor=name))
    return results


def run(spec: RunSpec, progress_stream: TextIO | None = None, mdp: Any = None, executor: Any = None,
        first: int = 0) -> RunResult:
    """Run every seed of ``spec`` (from ``first`` on): in this process, in ``spec.workers`` local processes when
    > 1, or on ``executor`` (e.g. a Dask cluster's, :mod:`dpverify.audit.executors`) when given — with identical
    results. :func:`run_many` with one spec (its docstring says what runs where).

    ``mdp``: the environment of ``spec`` when the caller has already built it (it is built here
    otherwise). Bad settings fail early, in this process: a serial run builds seed 0's agent first
    thing; any other run builds one agent here before starting the workers.
    """
    return run_many([spec], executor, progress_stream, None if mdp is None else [mdp], first)[0]


# ---- files ------------------------------------------------------------------------------------------


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for package in ("dpverify", "numpy", "scipy", "matplotlib"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def result_payload(result: RunResult) -> dict[str, Any]:
    """The JSON document written to ``regret.json``."""
    spec = result.spec
    cumulative = result.cumulative_regret()[:, -1]
    return to_jsonable({
        "settings": {
            "agent": spec.agent,
            "env": spec.env,
            "num_episodes": spec.num_episodes,
            "num_seeds": spec.num_seeds,
            "base_seed": spec.base_seed,
            "seeding": "numpy.random.SeedSequence(base_seed).spawn(num_seeds)[i].spawn(2) -> (agent, environment)",
            "workers": spec.workers,
            "executor": result.executor,
            "users": "every episode's user" if spec.users else "none: the no-data control (end_episode(None))",
            "agent_options": dict(spec.agent_options),
            "agent_settings": result.seeds[0].agent_settings,
            "environment": result.environment,
            "regret": ("exact: initial_distribution @ (V*_0 - V^{pi_k}_0) by backward induction"
                       if result.environment.get("unit", "episode") == "episode" else
                       "exact: the mean reward of the best arm minus that of the arm pulled, in expectation over "
                       "the round's context (a round is an episode of horizon 1: dpverify.agents.envs.bandit)"),
            "versions": package_versions(),
        },
        "summary": {
            "final_cumulative_regret_mean": float(np.mean(cumulative)),
            "final_cumulative_regret_std": float(np.std(cumulative)),
        },
        "seeds": [
            {
                "seed_index": s.seed_index,
                "spawn_key": list(s.spawn_key),
                "seconds": s.seconds,
                "policy_changes": s.policy_changes,
                "final_cumulative_regret": float(np.sum(s.regret)),
                "agent_settings": s.agent_settings,
                "regret": s.regret.tolist(),
            }
            for s in result.seeds
        ],
    })


def save_results(result: RunResult, out_dir: str | os.PathLike[str], plot: bool = True) -> dict[str, Path]:
    """Write regret.json, regret.csv and (with ``plot``) cumulative_regret.png into ``out_dir``.

    The directory is created if needed. The files are written all-or-nothing (each to a temporary
    file, renamed into place once all are written: :class:`dpverify._io.FileSet`), so a failure or an
    interruption leaves the previous files of ``out_dir`` as they were. Existing files are replaced:
    refusing to overwrite is the caller's decision (``dpverify run`` checks ``--out`` before running).
    """
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    regret = result.regret
    table = io.StringIO(newline="")
    writer = csv.writer(table)
    writer.writerow([str(result.environment.get("unit", "episode"))] + [f"seed_{s.seed_index}" for s in result.seeds])
    for k in range(regret.shape[1]):
        writer.writerow([k + 1] + [repr(float(x)) for x in regret[:, k]])
    paths: dict[str, Path] = {}
    with FileSet(directory) as files:
        paths["json"] = files.write_text("regret.json", json.dumps(result_payload(result), indent=1) + "\n")
        paths["csv"] = files.write_text("regret.csv", table.getvalue())
        if plot:
            paths["png"] = files.write_with("cumulative_regret.png", lambda p: plot_cumulative_regret(result, p))
    return paths


def plot_cumulative_regret(result: RunResult, path: Path) -> None:
    """Mean cumulative regret ± one standard deviation across seeds (matplotlib, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cumulative = result.cumulative_regret()
    mean, std = cumulative.mean(axis=0), cumulative.std(axis=0)
    episodes = np.arange(1, cumulative.shape[1] + 1)
    figure, axes = plt.subplots(figsize=(6.4, 4.0))
    axes.plot(episodes, mean, label=f"{result.spec.agent} (mean of {cumulative.shape[0]} seeds)")
    axes.fill_between(episodes, mean - std, mean + std, alpha=0.25, label="± 1 std")
    if result.environment.get("unit", "episode") == "round":
        axes.set_xlabel("round t")
        axes.set_ylabel(r"cumulative regret $\sum_t (\max_a m(c_t, a) - m(c_t, a_t))$")
    else:
        axes.set_xlabel("episode k")
        axes.set_ylabel(r"cumulative regret $\sum_k (V^*_1 - V^{\pi_k}_1)(s_1)$")
    axes.set_title(f"{result.spec.agent} on {result.spec.env}")
    axes.legend(loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
