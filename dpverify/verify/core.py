"""``verify``: one call that checks an agent's privacy claim end to end.

It composes what dpverify already has — the agent's own ledger and claim, the private-agent contract
check of :mod:`dpverify.testing`, the agent audits of :mod:`dpverify.audit`, the runner and the regret
bounds — into one :class:`~dpverify.verify.result.VerifyReport` with a verdict (see
:func:`dpverify.verify.result.decide`). Nothing here re-implements a check.

:func:`~dpverify.verify.target.prepare` validates the input, builds the environment once and the agent of the
claim's run, and records it all in one :class:`~dpverify.verify.target.VerifyRun` that every section reads.
Each thing is done once, and every item of the sections' work goes to the workers; a registered agent's
white-box checks and regret runs, which only wait on them, wait in threads while this process runs the claim
(whose run is the utility's seed 0 too), the contract and the audits (dpverify's own code needs none of the
time limits that guard the user's, which hold in the main thread only). Results do not depend on where anything
ran. On a terminal each part prints a line on ``progress_stream`` as it begins and as it ends (and the long
parts their own progress bars); elsewhere it stays silent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TextIO

import numpy as np

from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.runner import package_versions
from dpverify.audit.executors import ProcessExecutor, SerialExecutor, make_executor
from dpverify.checks import NOT_RUN
from dpverify.errors import DpverifyError
from dpverify.verify.audits import audit_section
from dpverify.verify.budget import Budget
from dpverify.verify.claim import claim_section
from dpverify.verify.result import ClaimSection, VerifyReport, decide
from dpverify.verify.structure import structure_section
from dpverify.verify.target import DEFAULT_EPISODES, REGISTERED, VerifyRun, claim_seeds, prepare
from dpverify.verify.utility import utility_section
from dpverify.verify.whitebox import whitebox_section


class Stages:
    """One line per part of the verification on a terminal ("[2/5] claim & accounting ... 3.1 s"); ``timings``
    holds each part's seconds, in the order of ``labels`` (parts may overlap)."""

    def __init__(self, labels: Sequence[str], stream: TextIO | None) -> None:
        self.labels = tuple(labels)
        self.stream = stream
        self.enabled = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self.timings: dict[str, float] = dict.fromkeys(self.labels, 0.0)

    def run(self, index: int, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` as part ``index``; its outcome's ``status`` (a tuple's first item's) ends its line."""
        start, label = time.perf_counter(), f"[{index + 1}/{len(self.labels)}] {self.labels[index]}"
        self._write(f"{label} ...")
        result = fn(*args)
        self.timings[self.labels[index]] = seconds = time.perf_counter() - start
        outcome = result[0] if isinstance(result, tuple) else result
        self._write(f"{label}: {getattr(outcome, 'status', '')} ({seconds:.1f} s)")
        return result

    def _write(self, line: str) -> None:
        if self.enabled and self.stream is not None:
            self.stream.write(line + "\n")
            self.stream.flush()


def _now(fn: Callable[..., Any], *args: Any) -> Future[Any]:
    """``fn(*args)`` run now, as a finished future."""
    future: Future[Any] = Future()
    future.set_result(fn(*args))
    return future


def verify(
    agent: str,
    env: str,
    epsilon: float,
    delta: float,
    episodes: int = DEFAULT_EPISODES,
    budget: str | Budget = "quick",
    *,
    agent_options: Mapping[str, Any] | None = None,
    env_options: Mapping[str, Any] | None = None,
    seed: int = 0,
    workers: int | None = None,
    scheduler: str | None = None,
    gaussian_claim: bool | None = None,
    progress_stream: TextIO | None = None,
) -> VerifyReport:
    """Check ``agent``'s (ε, δ) claim on ``env`` over K = ``episodes`` episodes (module docstring).

    Args:
        agent: a registered agent name or ``module.path:factory``.
        env: a registered environment name.
        epsilon, delta: the claim to verify; passed to the factory as the options ``epsilon``, ``delta``.
        episodes: K, the number of episodes the claim covers.
        budget: "quick", "standard", "thorough" or a :class:`~dpverify.verify.budget.Budget`.
        agent_options, env_options: further factory options.
        seed: base seed of the runs (the audits use the budget's seed).
        workers: local worker processes (default: the CPU count, at most 2).
        scheduler: a Dask scheduler address for the audit trials.
        gaussian_claim: whether the claim is μ-GDP (every release a Gaussian mechanism), so that the audits also
            test the μ-GDP curve; None: as the agent says (dpverify's Gaussian agents do, other agents do not).
        progress_stream: where progress lines go (drawn only when it is a terminal).

    Bad input raises :class:`~dpverify.errors.InvalidParameterError`; a check that cannot run is
    reported as such in its section and makes the verdict INCONCLUSIVE.
    """
    run, instance = prepare(agent, env, epsilon, delta, episodes, budget, agent_options=agent_options,
                            env_options=env_options, seed=seed, workers=workers, scheduler=scheduler,
                            gaussian_claim=gaussian_claim, progress_stream=progress_stream)
    plan = run.budget
    stages = Stages((f"white-box release checks (K = {min(run.episodes, plan.whitebox_episodes)})",
                     f"claim & accounting: one run of {run.episodes} episodes",
                     f"contract checks ({min(plan.contract_episodes, run.episodes)} episodes)",
                     f"empirical audits ({run.notion})",
                     f"utility: {plan.utility_seeds} seeds of {run.target.name} and {run.counterpart}"),
                    progress_stream)
    with make_executor(run.scheduler, run.workers, adaptive=False) as executor, ThreadPoolExecutor(2) as threads:
        background = run.target.source == REGISTERED and not isinstance(executor, SerialExecutor)
        if background:  # the workers are forked first: a fork beside a running thread can leave a lock held
            executor.map(int, [0])
        submit = threads.submit if background else _now
        try:
            later_whitebox = submit(stages.run, 0, whitebox_section, run, executor)
            claim, seed_zero = stages.run(1, _run_and_account, instance, run)
            later_utility = submit(stages.run, 4, utility_section, run, executor, seed_zero)
            structure = stages.run(2, structure_section, run)
            audits = stages.run(3, audit_section, run, executor)
            whitebox, utility = later_whitebox.result(), later_utility.result()
        except BaseException:  # stop the workers now (the threads waiting on them end with them)
            if isinstance(executor, ProcessExecutor):
                executor.abandon()
            raise
    return VerifyReport(run.settings, decide(whitebox, claim, structure, audits), whitebox, claim, structure, audits,
                        utility, timings=dict(stages.timings), versions=package_versions())


def _run_and_account(agent: Any, run: VerifyRun) -> tuple[ClaimSection, np.ndarray | None]:
    """Run every episode the agent was built for, then read its ledger and claim; the run's regret when it is
    the utility's seed 0 (:func:`~dpverify.verify.target.claim_seeds`): when the agent did not draw from its
    billboard's noise generator, the one input of the two runs that differs."""
    _, env_seed, noise_seed = claim_seeds(run.seed)
    try:
        regret, _ = run_episodes(run.mdp, agent, run.episodes, np.random.default_rng(env_seed))
    except DpverifyError:
        raise
    except Exception as exc:  # an agent dpverify did not write may fail in any way: report, do not crash
        return ClaimSection(NOT_RUN, f"the agent raised {type(exc).__name__} during the run: {exc}",
                            notion=run.notion, requested_epsilon=run.epsilon, requested_delta=run.delta), None
    noise = getattr(getattr(agent, "billboard", None), "noise_rng", None)
    untouched = (isinstance(noise, np.random.Generator)
                 and getattr(noise.bit_generator.seed_seq, "n_children_spawned", None) == 0
                 and noise.bit_generator.state == np.random.default_rng(noise_seed).bit_generator.state)
    return claim_section(agent, run), regret if untouched else None
