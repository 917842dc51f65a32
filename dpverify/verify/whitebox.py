"""White-box release checks: the first section of ``dpverify verify`` (:mod:`dpverify.whitebox`).

The agent is rerun with users and seeds the verification chooses, and its releases are checked against
its own records from its behaviour: a replay reproduces it bit for bit, the noise is distributed as the
recorded mechanisms say, only releases recorded as reading a user change when that user changes, and by
no more than their recorded sensitivity, and every published value has the structure its mechanism
promises. ``verify`` runs :func:`dpverify.whitebox.check_releases` as it is, at the claim's K (capped by
the budget) with the budget's neighbour search, and reports each check; it re-implements none of them.

An agent that cannot be run this way (it raises, ignores the billboard it is given, or does not follow
the seeds) leaves checks "not run": the verdict is then INCONCLUSIVE, never CONSISTENT.
"""

from __future__ import annotations

import math
import time

from dpverify.audit.executors import Executor
from dpverify.checks import NOT_RUN
from dpverify.verify.result import NoiseFigure, SensitivityFigure, WhiteBoxSection, WitnessFigure
from dpverify.verify.target import VerifyRun
from dpverify.whitebox import Subject, WhiteBoxPlan, check_releases

SOURCE = "dpverify.whitebox.check_releases"


def whitebox_section(run: VerifyRun, executor: Executor | None = None) -> WhiteBoxSection:
    """Run the white-box checks of the run's agent on its environment (module docstring)."""
    start = time.perf_counter()
    budget, claim = run.budget, run.claim
    K = min(run.episodes, budget.whitebox_episodes)
    plan = WhiteBoxPlan(K, search_episodes=min(K, budget.whitebox_search_episodes), seed=budget.audit_seed,
                        claim_epsilon=claim.epsilon, delta=claim.delta, conversion=claim.conversion,
                        accounting=claim.accounting)
    subject = Subject(run.target.factory, run.mdp, K, run.options, run.relation, run.target.name)
    result = check_releases(subject, plan, executor=executor)
    noise = () if result.noise is None else tuple(
        NoiseFigure(f.family, f.mechanism, f.status, f.values, f.scale_ratio, f.scale_upper, f.detail)
        for f in result.noise.families)
    sensitivity = tuple(SensitivityFigure(f.family, f.norm, f.recorded, f.realised, f.ratio, f.pair)
                        for f in result.sensitivity)
    witnesses = tuple(WitnessFigure(w.environment, w.episodes, w.position, w.canaries, w.changed_releases, w.mu,
                                    w.epsilon_lower, w.noise_verified) for w in result.witnesses
                      if math.isfinite(w.epsilon_lower))
    notes = list(result.notes)
    if K < run.episodes:
        notes.insert(0, f"the {budget.name} budget runs the white-box checks at K = {K} of the claim's "
                        f"{run.episodes} episodes (the agent built for K episodes; the standard and thorough budgets "
                        "go further)")
    reason = next((c.reason for c in result.checks if c.status == NOT_RUN), "") if result.status == NOT_RUN else ""
    return WhiteBoxSection(result.status, reason, SOURCE, result.checks, noise, sensitivity, witnesses, tuple(notes),
                           K, plan.search_episodes, time.perf_counter() - start)
