"""Utility: what the privacy costs in regret, next to the non-private counterpart and a random policy.

Regret is exact per episode (:mod:`dpverify.agents.core.planning`), as in ``dpverify run``, with the runner's
seeding (seed i of every agent sees the same environment randomness). Registered agents run through
:func:`dpverify.agents.core.runner.run` (local worker processes); an agent loaded by import path runs in
this process with the same seeding. The uniformly random policy's regret per episode is exact.

The agent's **no-data control** — the same agent and seeds with every user slot empty — runs next to it,
and the section says whether the agent learned from its users and whether it beat the data-free
known-reward greedy policy (:mod:`dpverify.agents.core.learning`); an agent that refuses an empty slot, or acts
step by step, gets "cannot tell" with the reason.

The registry's bound (:mod:`dpverify.bounds`) is evaluated at the run's (d, H, K, ε, δ) with its hidden
constants taken as 1, split into its privacy term (the terms with ε) and its non-private term; the
bound of the non-private counterpart is shown next to it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np

from dpverify.agents.core import runner
from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.learning import compare_learning, uniform_policy_regret
from dpverify.bounds import evaluate, get
from dpverify.errors import DpverifyError
from dpverify.usercode import UserCodeError
from dpverify.verify.result import NOT_RUN, PASS, BoundValue, Curve, UtilitySection
from dpverify.verify.target import REGISTERED, AgentTarget, build_agent

#: At most this many points of each curve are kept in the report (the plot needs no more).
CURVE_POINTS = 400


def curve(label: str, regret: np.ndarray) -> Curve:
    """Mean ± std of cumulative regret across seeds (rows of ``regret``), at ≤ CURVE_POINTS episodes."""
    cumulative = np.cumsum(np.atleast_2d(regret), axis=1)
    K = cumulative.shape[1]
    index = np.unique(np.linspace(0, K - 1, min(K, CURVE_POINTS)).round().astype(int))
    mean, std = cumulative.mean(axis=0)[index], cumulative.std(axis=0)[index]
    return Curve(label, tuple(int(i) + 1 for i in index), tuple(float(x) for x in mean), tuple(float(x) for x in std))


def random_policy_regret(mdp: Any) -> float:
    """Exact per-episode regret of the policy that picks actions uniformly at random
    (:func:`dpverify.agents.core.learning.uniform_policy_regret`)."""

    return uniform_policy_regret(mdp)


def bound_value(name: str, mdp: Any, episodes: int, epsilon: float, delta: float) -> BoundValue:

    entry = get(name)
    ev = evaluate(entry, d=mdp.dim, H=mdp.horizon, K=episodes, epsilon=epsilon, delta=delta, A=mdp.num_actions)
    return BoundValue(name, f"{entry.notation}({entry.expression})", ev.value, ev.privacy, ev.non_private,
                      {k: float(v) for k, v in ev.values.items()})


def _seeded_regret(make_agent: Callable[[Any, np.random.Generator], Any], make_env: Callable[[], Any],
                   episodes: int, seeds: int, base_seed: int, tick: Callable[[], None],
                   users: bool = True) -> np.ndarray:
    """The runner's seeding, in this process: child i of SeedSequence(base_seed) → (agent, environment);
    ``users=False`` is the no-data control."""

    rows = []
    for child in np.random.SeedSequence(base_seed).spawn(seeds):
        agent_seed, env_seed = child.spawn(2)
        mdp = make_env()
        agent = make_agent(mdp, np.random.default_rng(agent_seed))
        regret, _ = run_episodes(mdp, agent, episodes, np.random.default_rng(env_seed), lambda _k: tick(), users=users)
        rows.append(regret)
    return np.stack(rows)


def utility_section(target: AgentTarget, *, bound_name: str | None, counterpart: str, env: str,
                    env_options: dict[str, Any], agent_options: dict[str, Any], episodes: int, epsilon: float,
                    delta: float, seeds: int, base_seed: int = 0, workers: int = 1,
                    progress_stream: TextIO | None = None) -> UtilitySection:
    """Regret of the agent, its non-private counterpart and the random policy; the registry bound."""

    start = time.perf_counter()
    private_options = {**agent_options, "epsilon": epsilon, "delta": delta}
    try:
        frozen_env = tuple(sorted(env_options.items()))
        counterpart_spec = runner.RunSpec(counterpart, env, episodes, seeds, base_seed, workers,
                                          env_options=frozen_env)
        mdp = runner.build_environment(counterpart_spec)
        if target.source == REGISTERED:
            spec = runner.RunSpec(target.name, env, episodes, seeds, base_seed, workers,
                                  agent_options=tuple(sorted(private_options.items())), env_options=frozen_env)
            agent_regret = runner.run(spec, progress_stream=progress_stream).regret

            def control() -> np.ndarray:
                return runner.run(dataclasses.replace(spec, users=False), progress_stream=progress_stream).regret
        else:
            def seeded(users: bool) -> np.ndarray:
                bar = runner.ProgressBar(seeds * episodes, progress_stream, target.name)
                try:
                    return _seeded_regret(
                        lambda m, rng: build_agent(target, m, episodes, rng, epsilon, delta, agent_options),
                        lambda: runner.build_environment(counterpart_spec), episodes, seeds, base_seed, bar.advance,
                        users=users)
                finally:
                    bar.close()

            agent_regret = seeded(True)

            def control() -> np.ndarray:
                return seeded(False)
        learning, learning_line = _learning(control, agent_regret, mdp)
        counterpart_regret = runner.run(counterpart_spec, progress_stream=progress_stream).regret
    except Exception as exc:  # an agent dpverify did not write may fail in any way: report it, do not crash
        return UtilitySection(NOT_RUN, f"the regret runs failed: {type(exc).__name__}: {' '.join(str(exc).split())}",
                              episodes=episodes, seeds=seeds, seconds=time.perf_counter() - start)
    bound = counterpart_bound = None
    if bound_name is not None:

        bound = bound_value(bound_name, mdp, episodes, epsilon, delta)
        base = get(bound_name).base
        if base is not None:
            counterpart_bound = bound_value(base, mdp, episodes, epsilon, delta)
    return UtilitySection(
        status=PASS,
        episodes=episodes,
        seeds=seeds,
        agent=curve(target.name, agent_regret),
        counterpart_name=counterpart,
        counterpart=curve(counterpart, counterpart_regret),
        random_per_episode=random_policy_regret(mdp),
        bound=bound,
        counterpart_bound=counterpart_bound,
        environment={"env": env, "options": dict(env_options), "horizon": mdp.horizon, "dim": mdp.dim,
                     "num_states": mdp.num_states, "num_actions": mdp.num_actions,
                     "unit": str(getattr(mdp, "unit", "episode"))},
        seconds=time.perf_counter() - start,
        learning=learning,
        learning_line=learning_line,
    )


def _learning(control: Callable[[], np.ndarray], agent_regret: np.ndarray, mdp: Any) -> tuple[dict[str, Any] | None,
                                                                                              str]:
    """The no-data control's comparison (dpverify.agents.core.learning) and its line, or None and why it could not
    run (an agent that refuses an empty slot, a step-level agent)."""

    try:
        comparison = compare_learning(agent_regret, control(), mdp)
    except (UserCodeError, DpverifyError, Exception) as exc:  # the agent's code may refuse an empty slot anyhow
        return None, f"learned from users: cannot tell (the no-data control could not run: {type(exc).__name__}: " \
                     f"{' '.join(str(exc).split())})"
    return comparison.to_dict(), comparison.line()
