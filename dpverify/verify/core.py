"""``verify``: one call that checks an agent's privacy claim end to end.

It composes what dpverify already has — the agent's own ledger and claim, the private-agent contract
check of :mod:`dpverify.testing`, the agent audits of :mod:`dpverify.audit`, the runner and the regret
bounds — into one :class:`~dpverify.verify.result.VerifyReport` with a verdict (see
:func:`dpverify.verify.result.decide`). Nothing here re-implements a check.

:func:`~dpverify.verify.target.prepare` validates the input, builds the environment once (for the claim's K
episodes) and the agent of the claim's run, and records all of it in one
:class:`~dpverify.verify.target.VerifyRun` that every section reads. Order of work: the white-box release
checks (the agent's releases against its own records, from its behaviour: :mod:`dpverify.whitebox`) first;
then one run of K episodes in this process gives the ledger (claim and accounting); then the contract
checks, the audits, and the regret runs. On a terminal each part prints one progress line on
``progress_stream`` (and the long parts their own progress bars); elsewhere it stays silent.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, TextIO

import numpy as np

from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.runner import package_versions
from dpverify.audit.executors import make_executor
from dpverify.checks import NOT_RUN
from dpverify.errors import DpverifyError
from dpverify.verify.audits import audit_section
from dpverify.verify.budget import Budget
from dpverify.verify.claim import claim_section
from dpverify.verify.later import Later, in_background
from dpverify.verify.result import ClaimSection, VerifyReport, decide
from dpverify.verify.structure import structure_section
from dpverify.verify.target import DEFAULT_EPISODES, VerifyRun, claim_seeds, prepare
from dpverify.verify.utility import utility_section
from dpverify.verify.whitebox import whitebox_section


class Stages:
    """One line per part of the verification on a terminal ("[2/4] contract checks ... 3.1 s"); parts may overlap
    (:mod:`dpverify.verify.later`)."""

    def __init__(self, total: int, stream: TextIO | None) -> None:
        self.total = total
        self.stream = stream
        self.enabled = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self.timings: dict[str, float] = {}
        self._started: dict[str, tuple[int, float]] = {}
        self._label = ""

    def begin(self, label: str) -> str:
        self._started[label] = (len(self._started) + 1, time.perf_counter())
        self._label = label
        self._write(label, "...")
        return label

    def end(self, outcome: str = "", label: str | None = None, seconds: float | None = None) -> None:
        """The part ``label`` (default: the last begun) ended ``seconds`` after it began (default: now)."""
        label = self._label if label is None else label
        if seconds is None:
            seconds = time.perf_counter() - self._started[label][1]
        self.timings[label] = seconds
        self._write(label, f": {outcome} ({seconds:.1f} s)")

    def _write(self, label: str, text: str) -> None:
        if self.enabled and self.stream is not None:
            self.stream.write(f"[{self._started[label][0]}/{self.total}] {label}{' ' if text == '...' else ''}"
                              f"{text}\n")
            self.stream.flush()


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
    plan, stages = run.budget, Stages(5, progress_stream)
    # every item to the workers: the first item of a map run here would leave them idle meanwhile
    with make_executor(run.scheduler, run.workers, adaptive=False) as executor:
        try:
            background = in_background(run, executor)
            whitebox_label = stages.begin(f"white-box release checks (K = {min(run.episodes, plan.whitebox_episodes)})")
            later_whitebox = Later(background, whitebox_section, run, executor)

            stages.begin(f"claim & accounting: one run of {run.episodes} episodes")
            claim, seed_zero = _run_and_account(instance, run)
            stages.end(claim.status)

            utility_label = stages.begin(f"utility: {plan.utility_seeds} seeds of {run.target.name} and "
                                         f"{run.counterpart}")
            later_utility = Later(background, utility_section, run, executor, seed_zero)

            stages.begin(f"contract checks ({min(plan.contract_episodes, run.episodes)} episodes)")
            structure = structure_section(run)
            stages.end(structure.status)

            stages.begin(f"empirical audits ({run.notion})")
            audits = audit_section(run, executor, background)
            stages.end(audits.status)

            whitebox, utility = later_whitebox.result(), later_utility.result()
        except BaseException:  # a section's error or an interruption: stop the workers now
            getattr(executor, "abandon", lambda: None)()
            raise
    stages.end(whitebox.status, whitebox_label, later_whitebox.seconds)
    stages.end(utility.status, utility_label, later_utility.seconds)
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
