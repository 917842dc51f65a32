"""The canaries of a two-world agent audit, and how much of the assumed sensitivity they realise.

An audit can only see the change a canary pair causes. Each pair is therefore *measured* before the audit
runs, by the white-box sensitivity replay (:mod:`dpverify.whitebox.sensitivity_replay`): one run of the agent
on the first dataset with seeded coins and noise, and a replay of its transcript on the second with the same
seeds, give each release's change ‖Δ_r‖ against its recorded sensitivity Δ_r. Two figures come out:

* the **realised fraction** of each statistic family, max_r ‖Δ_r‖/Δ_r: how much of the sensitivity the
  calibration assumes this pair reaches (a bug that multiplies a family's true sensitivity by more than
  1/fraction is within the audit's reach);
* the **pair's μ**, √Σ_r (‖Δ_r‖/σ_r)² over the user's Gaussian releases (σ_r as recorded): the μ of the
  best test on the whole transcript if the noise is as recorded — what the audit could see at
  most — and each family's share of it (the same sum over that family's releases).

Two designs (``AgentAuditSpec.canary_design``):

* ``"environment"`` — today's pairs in the named environment (:func:`dpverify.agent_audit.two_world.
  neighbour_pairs`): the environment's own low/high-value canaries, measured;
* ``"worst-case"`` — the claim holds in every environment of the agent's class, so the audit runs in the
  audit environment of the environment's kind and dimensions
  (:func:`dpverify.whitebox.neighbours.audit_environment`): for a linear MDP the audit linear MDP
  (:func:`~dpverify.whitebox.neighbours.audit_linear_mdp`: features of full norm at nearly opposite
  angles, targets at both ends of [0, H]), for a linear mixture MDP the audit linear mixture MDP
  (:func:`dpverify.whitebox.mixture_neighbours.audit_mixture_mdp`: value features of full norm at
  chosen angles, values at their caps), each with its path canaries
  (:func:`~dpverify.whitebox.neighbours.audit_tapes`, which fix the states — hence the features — whatever
  the agent plays). Every candidate pair (:func:`~dpverify.whitebox.neighbours.candidate_pairs`) at every
  tested position is measured and the :data:`WORST_CASE_PAIRS` of largest μ go to the engine, which chooses
  among them on its selection split.

The measurement runs use seeds of their own (``spec.seed`` spawned apart from the audit's), so choosing pairs
by them leaves the audit's error control intact. The measurement reads the agent's records (its recorded σ
and sensitivities) only to *choose* the canaries; the verdict comes from the black-box test alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.agent_audit.runs import AgentSetup
from dpverify.agent_audit.spec import AgentAuditSpec
from dpverify.agents.core.tapes import ordinary_tapes, position_index, replace
from dpverify.agents.registry import agent_factory
from dpverify.whitebox.neighbours import audit_tapes, candidate_pairs
from dpverify.whitebox.runs import CouldNotRun, Subject, run_agent
from dpverify.whitebox.sensitivity_replay import compare_replay

#: Pairs of the worst-case design handed to the engine (the largest μ first).
WORST_CASE_PAIRS = 2
#: Key of the measurement runs' seeds under ``spec.seed`` (apart from the audit engine's streams).
_MEASUREMENT_KEY = 0xCA7A


@dataclass(frozen=True)
class FamilyFraction:
    """The largest realised fraction of one family's recorded sensitivity seen for a pair."""
    family: str
    realised: float
    recorded: float

    @property
    def fraction(self) -> float:
        return self.realised / self.recorded if self.recorded > 0 else math.inf


@dataclass(frozen=True, eq=False)
class MeasuredPair:
    """One canary pair at one position, with what its measurement found.

    ``first`` and ``second`` are the two datasets (K tapes each; None = an empty slot); ``mu`` is the pair's μ
    along the measured transcript (None when the replay could not run: ``note`` says why)."""

    label: str
    environment: str
    position: int
    first: tuple[Any, ...]
    second: tuple[Any, ...]
    fractions: tuple[FamilyFraction, ...]
    mu: float | None
    note: str = ""
    #: Each family's part of the pair's μ, √Σ_r (‖Δ_r‖/σ_r)² over that family's releases.
    family_mu: tuple[tuple[str, float], ...] = ()

    def describe(self) -> str:
        if self.mu is None:
            return f"{self.label} ({self.environment}): not measured — {self.note}"
        parts = ", ".join(f"{f.family} {f.fraction:.3f}" for f in self.fractions) or "no release changed"
        return f"{self.label} ({self.environment}): realised fraction {parts}; pair mu {self.mu:.4f}"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "environment": self.environment, "position": self.position, "mu": self.mu,
                "note": self.note, "fractions": {f.family: f.fraction for f in self.fractions},
                "family_mu": dict(self.family_mu)}


def _subject(setup: AgentSetup, mdp: Any) -> Any:

    options = dict(setup.agent_options)
    return Subject(agent_factory(setup.agent), mdp, setup.episodes, options,
                   options.get("relation", "replace-one"), setup.agent)


def measure_pair(setup: AgentSetup, mdp: Any, first: Sequence[Any], second: Sequence[Any], position: int,
                 label: str, environment: str, seed: int) -> MeasuredPair:
    """Run the agent on ``first`` and replay its transcript on ``second`` (same coins, same noise seed);
    the per-family realised fractions and the pair's μ (module docstring)."""

    subject = _subject(setup, mdp)
    coins, noise = np.random.SeedSequence([seed, _MEASUREMENT_KEY, position]).spawn(2)
    try:
        recorded = run_agent(subject, list(first), coins=coins, noise=noise)
        replay = run_agent(subject, list(second), coins=coins, noise=noise, recorded=recorded)
    except CouldNotRun as exc:
        return MeasuredPair(label, environment, position, tuple(first), tuple(second), (), None, str(exc))
    summary = compare_replay(recorded.releases, replay.releases, user=position, environment=environment,
                             canaries=label, episodes=setup.episodes).summary()
    fractions = tuple(FamilyFraction(f.family, f.realised, f.recorded) for f in summary.best)
    mu = math.sqrt(sum(summary.mu2_by_family.values()))
    family_mu = tuple((family, math.sqrt(mu2)) for family, mu2 in summary.mu2_by_family.items())
    return MeasuredPair(label, environment, position, tuple(first), tuple(second), fractions, mu,
                        family_mu=family_mu)


def worst_case_pairs(spec: AgentAuditSpec, setup: AgentSetup, mdp: Any) -> list[MeasuredPair]:
    """Every candidate pair of the audit environment at every tested position, measured; the
    :data:`WORST_CASE_PAIRS` of largest μ (unmeasurable pairs last)."""
    return measured_candidates(spec, setup, mdp)[:WORST_CASE_PAIRS]


def family_reach(pairs: Sequence[MeasuredPair]) -> dict[str, float]:
    """Per statistic family, the largest realised fraction of its recorded sensitivity that any of ``pairs``
    reaches (a family may be realised best by a pair other than the one of largest μ)."""
    reach: dict[str, float] = {}
    for pair in pairs:
        for f in pair.fractions:
            reach[f.family] = max(reach.get(f.family, 0.0), f.fraction)
    return reach


def measured_candidates(spec: AgentAuditSpec, setup: AgentSetup, mdp: Any) -> list[MeasuredPair]:
    """Every candidate pair of the audit environment at every tested position, measured, the largest μ first
    (unmeasurable pairs last)."""

    tapes = audit_tapes(mdp)
    relation = dict(setup.agent_options).get("relation", "replace-one")
    base = ordinary_tapes(mdp, spec.episodes, spec.data_seed)
    measured = []
    for p in spec.positions:
        j = position_index(p, spec.episodes)
        for pair in candidate_pairs(list(tapes), relation, audit=True):
            first = replace(base, j, None if pair.base is None else tapes[pair.base])
            second = replace(base, j, None if pair.replacement is None else tapes[pair.replacement])
            measured.append(measure_pair(setup, mdp, first, second, j, f"user {j} ({p}): {pair.label}",
                                         "audit environment", spec.seed))
    measured.sort(key=lambda m: -1.0 if m.mu is None else m.mu, reverse=True)
    return measured
