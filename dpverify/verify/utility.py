"""Utility: what the privacy costs in regret, next to the non-private counterpart and a random policy.

Regret is exact per episode (:mod:`dpverify.agents.core.planning`), as in ``dpverify run``, with the runner's
seeding (seed i of every agent sees the same environment randomness). Registered agents run through
:func:`dpverify.agents.core.runner.run` on the verification's executor; an agent loaded by import path runs
in this process with the same seeding. The agent's seed 0 is the claim's run when that run is it
(:func:`dpverify.verify.core.verify` says when), so it is not made twice. The uniformly random policy's
regret per episode is exact.

The agent's **no-data control** — the same agent and seeds with every user slot empty — runs next to it,
and the section says whether the agent learned from its users and whether it beat the data-free
known-reward greedy policy (:mod:`dpverify.agents.core.learning`). An agent that acts step by step (a closed loop
among them) cannot be told an empty slot: its control is fed data-free users (:mod:`dpverify.agents.core.no_data`).
An agent whose control fails gets "cannot tell" with the reason.

The registry's bound (:mod:`dpverify.bounds`) is evaluated at the run's (d, H, K, ε, δ) with its hidden
constants taken as 1, split into its privacy term (the terms with ε) and its non-private term; the
bound of the non-private counterpart is shown next to it.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dpverify.agents.core import runner
from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.learning import compare_learning, uniform_policy_regret
from dpverify.audit.executors import Executor
from dpverify.bounds import evaluate, get
from dpverify.checks import NOT_RUN, PASS
from dpverify.errors import DpverifyError
from dpverify.usercode import UserCodeError
from dpverify.verify.result import BoundValue, Curve, UtilitySection
from dpverify.verify.target import MDP, REGISTERED, VerifyRun, build_agent

#: At most this many points of each curve are kept in the report (the plot needs no more).
CURVE_POINTS = 400


def curve(label: str, regret: np.ndarray) -> Curve:
    """Mean ± std of cumulative regret across seeds (rows of ``regret``), at ≤ CURVE_POINTS episodes."""
    cumulative = np.cumsum(np.atleast_2d(regret), axis=1)
    K = cumulative.shape[1]
    index = np.unique(np.linspace(0, K - 1, min(K, CURVE_POINTS)).round().astype(int))
    mean, std = cumulative.mean(axis=0)[index], cumulative.std(axis=0)[index]
    return Curve(label, tuple(int(i) + 1 for i in index), tuple(float(x) for x in mean), tuple(float(x) for x in std))


def _bound_value(name: str, mdp: MDP, episodes: int, epsilon: float,
                 delta: float) -> BoundValue:
    entry = get(name)
    ev = evaluate(entry, d=mdp.dim, H=mdp.horizon, K=episodes, epsilon=epsilon, delta=delta, A=mdp.num_actions)
    return BoundValue(name, f"{entry.notation}({entry.expression})", ev.value, ev.privacy, ev.non_private,
                      {k: float(v) for k, v in ev.values.items()})


def _seeded_regret(run: VerifyRun, users: bool, first: list[np.ndarray]) -> np.ndarray:
    """The runner's seeding, in this process, for an agent loaded by import path: child i of SeedSequence(seed)
    → (agent, environment randomness) after the rows ``first`` has; ``users=False`` is the no-data control."""
    seeds, episodes = run.budget.utility_seeds, run.episodes
    bar = runner.ProgressBar((seeds - len(first)) * episodes, run.progress_stream, run.target.name)
    rows = list(first)
    try:
        for child in np.random.SeedSequence(run.seed).spawn(seeds)[len(first):]:
            agent_seed, env_seed = child.spawn(2)
            agent = build_agent(run.target, run.mdp, episodes, np.random.default_rng(agent_seed), run.epsilon,
                                run.delta, run.agent_options)
            regret, _ = run_episodes(run.mdp, agent, episodes, np.random.default_rng(env_seed),
                                     lambda _k: bar.advance(), users=users)
            rows.append(regret)
    finally:
        bar.close()
    return np.stack(rows)


def _regret(run: VerifyRun, executor: Executor | None, agent: str, users: bool = True,
            options: dict[str, Any] | None = None, first: tuple[np.ndarray, ...] = ()) -> np.ndarray:
    """Regret per seed and episode of a registered agent, by the runner on ``executor`` (drawing no progress bar:
    it may run beside the audits'), after the rows ``first`` has."""
    spec = runner.RunSpec(agent, run.env, run.episodes, run.budget.utility_seeds, run.seed, run.workers,
                          agent_options=tuple(sorted((options or {}).items())),
                          env_options=tuple(sorted(run.env_options.items())), users=users)
    seeds = runner.run(spec, io.StringIO(), run.mdp, executor, len(first)).seeds
    return np.stack([*first, *(s.regret for s in seeds)])


def utility_section(run: VerifyRun, executor: Executor | None = None,
                    seed_zero: np.ndarray | None = None) -> UtilitySection:
    """Regret of the agent (``seed_zero``: its seed 0's, when made), its non-private counterpart and the random
    policy; the registry bound."""
    start = time.perf_counter()
    mdp, episodes, seeds = run.mdp, run.episodes, run.budget.utility_seeds
    try:
        if run.target.source == REGISTERED:
            def regret(users: bool, first: list[np.ndarray]) -> np.ndarray:
                return _regret(run, executor, run.target.name, users, run.options, tuple(first))
        else:
            def regret(users: bool, first: list[np.ndarray]) -> np.ndarray:
                return _seeded_regret(run, users, first)
        agent_regret = regret(True, [] if seed_zero is None else [seed_zero])
        learning, learning_line = _learning(lambda: regret(False, []), agent_regret, mdp)
        counterpart_regret = _regret(run, executor, run.counterpart)
    except Exception as exc:  # an agent dpverify did not write may fail in any way: report it, do not crash
        return UtilitySection(NOT_RUN, f"the regret runs failed: {type(exc).__name__}: {' '.join(str(exc).split())}",
                              episodes=episodes, seeds=seeds, seconds=time.perf_counter() - start)
    bound = counterpart_bound = None
    if run.bound is not None:
        bound = _bound_value(run.bound, mdp, episodes, run.epsilon, run.delta)
        base = get(run.bound).base
        if base is not None:
            counterpart_bound = _bound_value(base, mdp, episodes, run.epsilon, run.delta)
    return UtilitySection(
        status=PASS,
        episodes=episodes,
        seeds=seeds,
        agent=curve(run.target.name, agent_regret),
        counterpart_name=run.counterpart,
        counterpart=curve(run.counterpart, counterpart_regret),
        random_per_episode=uniform_policy_regret(mdp),
        bound=bound,
        counterpart_bound=counterpart_bound,
        environment={"env": run.env, "options": dict(run.env_options), "horizon": mdp.horizon, "dim": mdp.dim,
                     "num_states": mdp.num_states, "num_actions": mdp.num_actions,
                     "unit": str(getattr(mdp, "unit", "episode"))},
        seconds=time.perf_counter() - start,
        learning=learning,
        learning_line=learning_line,
    )


def _learning(control: Callable[[], np.ndarray], agent_regret: np.ndarray,
              mdp: MDP) -> tuple[dict[str, Any] | None, str]:
    """The no-data control's comparison (dpverify.agents.core.learning) and its line, or None and why it could not
    run (an agent that refuses an empty slot)."""

    try:
        comparison = compare_learning(agent_regret, control(), mdp)
    except (UserCodeError, DpverifyError, Exception) as exc:  # the agent's code may refuse an empty slot anyhow
        return None, f"learned from users: cannot tell (the no-data control could not run: {type(exc).__name__}: " \
                     f"{' '.join(str(exc).split())})"
    return comparison.to_dict(), comparison.line()
