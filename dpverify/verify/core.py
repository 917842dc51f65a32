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
from dpverify.verify.result import ClaimSection, VerifyReport, decide
from dpverify.verify.structure import structure_section
from dpverify.verify.target import DEFAULT_EPISODES, VerifyRun, claim_seeds, prepare
from dpverify.verify.utility import utility_section
from dpverify.verify.whitebox import whitebox_section


class Stages:
    """One line per part of the verification on a terminal ("[2/4] contract checks ... 3.1 s")."""

    def __init__(self, total: int, stream: TextIO | None) -> None:
        self.total = total
        self.stream = stream
        self.enabled = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self.index = 0
        self.timings: dict[str, float] = {}
        self._label = ""
        self._start = 0.0

    def begin(self, label: str) -> None:
        self.index += 1
        self._label = label
        self._start = time.perf_counter()
        if self.enabled and self.stream is not None:
            self.stream.write(f"[{self.index}/{self.total}] {label} ...\n")
            self.stream.flush()

    def end(self, outcome: str = "") -> None:
        seconds = time.perf_counter() - self._start
        self.timings[self._label] = seconds
        if self.enabled and self.stream is not None:
            self.stream.write(f"[{self.index}/{self.total}] {self._label}: {outcome} ({seconds:.1f} s)\n")
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
        workers: local worker processes (default: the CPU count, at most 2 for the regret runs).
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
    with make_executor(run.scheduler, run.workers) as executor:
        stages.begin(f"white-box release checks (K = {min(run.episodes, plan.whitebox_episodes)})")
        whitebox = whitebox_section(run, executor)
        stages.end(whitebox.status)

        stages.begin(f"claim & accounting: one run of {run.episodes} episodes")
        claim = _run_and_account(instance, run)
        stages.end(claim.status)

        stages.begin(f"contract checks ({min(plan.contract_episodes, run.episodes)} episodes)")
        structure = structure_section(run)
        stages.end(structure.status)

        stages.begin(f"empirical audits ({run.notion})")
        audits = audit_section(run, executor)
        stages.end(audits.status)

    stages.begin(f"utility: {plan.utility_seeds} seeds of {run.target.name} and {run.counterpart}")
    utility = utility_section(run)
    stages.end(utility.status)
    return VerifyReport(run.settings, decide(whitebox, claim, structure, audits), whitebox, claim, structure, audits,
                        utility, timings=dict(stages.timings), versions=package_versions())


def _run_and_account(agent: Any, run: VerifyRun) -> ClaimSection:
    """Run every episode the agent was built for, then read its ledger and claim."""
    try:
        run_episodes(run.mdp, agent, run.episodes, np.random.default_rng(claim_seeds(run.seed)[1]))
    except DpverifyError:
        raise
    except Exception as exc:  # an agent dpverify did not write may fail in any way: report, do not crash
        return ClaimSection(NOT_RUN, f"the agent raised {type(exc).__name__} during the run: {exc}",
                            notion=run.notion, requested_epsilon=run.epsilon, requested_delta=run.delta)
    return claim_section(agent, run)
