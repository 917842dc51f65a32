"""The two-world route of an agent audit: many independent runs on two neighbouring datasets of tapes
through the audit engine (:func:`dpverify.audit.run_audit`: selection/evaluation split, Clopper–Pearson
and μ-GDP bounds under one error budget, Jagielski, Ullman & Oprea 2020; Nasr et al. 2021; Dong, Roth &
Su 2019; any executor).

The pairs (:func:`neighbour_pairs`): one per position (first, middle, last), ordinary tapes (drawn once
from the environment) elsewhere. Replace-one: a canary that always moves to the state of lowest optimal
value versus one that always moves to the state of highest value (the regression targets V(s') go from
one end of their range to the other). Add/remove-one: user j absent (an empty slot: episode j still
happens, no data) versus the high canary at j; shifting later users one episode earlier would instead
reveal, through the episode index, how many users came before, and flag correct agents (e.g. a fixed
batch schedule). An agent whose registry card has a batched twin for its options runs through it (many
trials per vectorised call, empty slots included); every other agent one trial at a time, in chunks of
:data:`TRIALS_PER_CHUNK` that the executor spreads over its workers (seeded by place: the serial results).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.agent_audit.canaries import MeasuredPair, measure_pair, worst_case_pairs
from dpverify.agent_audit.notions import audit_notion
from dpverify.agent_audit.routes import AuditRoute, RouteInputs, register_route
from dpverify.agent_audit.runs import AgentSetup, _batched_agent, _is_batched, run_agent_once
from dpverify.agent_audit.spec import AgentAuditResult, AgentAuditSpec, _scope_note
from dpverify.agent_audit.views import View, observe, observe_batch, output_view
from dpverify.agents.core.batching import BatchRandomness, run_batch
from dpverify.agents.core.tapes import canary_tape, empty_slots, ordinary_tapes, position_index, replace, tape_arrays
from dpverify.audit.engine import run_audit
from dpverify.audit.resources import require_two_world
from dpverify.audit.spec import AuditSpec, NeighbourPair

#: Trials of the batched path per vectorised call (larger batches thrash the cache).
BATCH = 2048
#: Trials per chunk of an agent run one trial at a time: chunks enough for the workers (400 trials per side: 5
#: selection chunks per side of each pair, 20 evaluation chunks per side), each worth shipping, and short enough that
#: the last of a map keeps a CPU busy alone only briefly (at 2 workers, chunks of 16 step-level trials ran an audit in
#: about 5% less time than chunks of 32; 8 and 12 gained nothing more: docs/results/benchmarks.md).
TRIALS_PER_CHUNK = 16
#: Smallest two-world trials per side: the engine needs a selection and an evaluation split.
MIN_TRIALS = 10


@dataclass(frozen=True, eq=False)
class AgentWorld:
    """The audited mechanism of a two-world audit: ``(tapes, n, rng) -> n outputs`` (engine interface).

    Each trial is a fresh agent (fresh randomness) run on the same tapes; its output is the notion's view.
    ``batch_factory`` (optional, picklable) builds a vectorised agent ``(setup, mdp, randomness, record)``
    with the interface of :class:`dpverify.agents.dp_lsvi_ucb_pp.batched.BatchedDpLsviUcbPlusPlus`.
    """

    setup: AgentSetup
    view: View
    batched: bool = False
    batch_factory: Callable[..., Any] | None = None

    def __call__(self, tapes: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        mdp = self.setup.environment()
        if self.batched or self.batch_factory is not None:
            return self._batched(mdp, tapes, n, rng)
        seeds = rng.integers(0, 2**63 - 1, size=n)
        outputs = []
        for i in range(n):
            history, policies = run_agent_once(self.setup, mdp, tapes, np.random.default_rng(int(seeds[i])))
            outputs.append(observe(self.view, history, policies, mdp.num_actions))
        return np.stack(outputs)

    def _batched(self, mdp: Any, tapes: Any, n: int, rng: np.random.Generator) -> np.ndarray:

        initial, table = tape_arrays(tapes)
        empty = empty_slots(tapes)
        build = self.batch_factory or _batched_agent
        outputs = []
        for start in range(0, n, BATCH):
            size = min(BATCH, n - start)
            agent = build(self.setup, mdp, BatchRandomness(rng, size), self.view.episodes)
            keep = self.view.episodes if audit_notion(self.view.notion).reads_policies else ()
            policies = run_batch(agent, initial, table, keep_policies=keep, empty=empty)
            outputs.append(observe_batch(self.view, agent, policies, mdp.num_actions))
        return np.concatenate(outputs)


@dataclass(frozen=True, eq=False)
class PositionedWorlds:
    """Engine mechanism over datasets ``(position index, tapes)``: the world of that position's view."""
    worlds: tuple[AgentWorld, ...]

    def __call__(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        index, tapes = dataset
        return self.worlds[index](tapes, n, rng)


def neighbour_pairs(spec: AgentAuditSpec, mdp: Any) -> list[NeighbourPair]:
    """One pair per position, ordinary tapes elsewhere. Replace-one: (low canary at j, high canary at j).
    Add/remove-one: (user j absent — an empty slot, episode j still happens —, high canary at j)."""

    base = ordinary_tapes(mdp, spec.episodes, spec.data_seed)
    low, high = canary_tape(mdp, "low"), canary_tape(mdp, "high")
    pairs = []
    for p in spec.positions:
        j = position_index(p, spec.episodes)
        if spec.add_remove:
            pairs.append(NeighbourPair(replace(base, j, None), replace(base, j, high),
                                       f"user {j} ({p}): absent (empty slot) vs high canary"))
            continue
        label = f"user {j} ({p}): low vs high canary"
        pairs.append(NeighbourPair(replace(base, j, low), replace(base, j, high), label))
    return pairs


def _measured_pairs(spec: AgentAuditSpec, setup: AgentSetup, mdp: Any) -> list[MeasuredPair]:
    """The candidate pairs, measured, by ``spec.canary_design`` (:mod:`dpverify.agent_audit.canaries`); for the
    worst-case design ``setup`` and ``mdp`` are already the audit environment's (:func:`~dpverify.audit.
    agent_runs.agent_setup`)."""

    if spec.canary_design == "worst-case":
        return worst_case_pairs(spec, setup, mdp)
    return [measure_pair(setup, mdp, pair.first, pair.second, position_index(p, spec.episodes), pair.label,
                         "environment", spec.seed)
            for pair, p in zip(neighbour_pairs(spec, mdp), spec.positions, strict=True)]


def _two_world(spec: AgentAuditSpec, inputs: RouteInputs) -> AgentAuditResult:
    """The two-world audit of ``spec`` (module docstring): the route's ``run``."""
    setup, claim, width, mdp = inputs.setup, inputs.claim, inputs.width, inputs.mdp
    batch_factory = inputs.batch_factory
    measured = _measured_pairs(spec, setup, mdp)
    batched = batch_factory is not None or _is_batched(setup, spec.batched)
    # one mechanism per pair: its view reads the episodes around that pair's position
    mechanisms = [AgentWorld(setup, output_view(spec.notion, pair.position, spec.window, spec.episodes, width),
                             batched, batch_factory) for pair in measured]
    audit_spec = AuditSpec(epsilon=spec.epsilon, delta=spec.delta, trials=spec.trials, confidence=spec.confidence,
                           seed=spec.seed, gaussian_claim=claim.gaussian, max_pairs=max(1, len(measured)),
                           chunk_size=AuditSpec.chunk_size if batched else TRIALS_PER_CHUNK)  # a twin splits its own
    mechanism = PositionedWorlds(tuple(mechanisms))
    labelled = [NeighbourPair((i, p.first), (i, p.second), p.label) for i, p in enumerate(measured)]
    result = run_audit(mechanism, labelled, audit_spec, executor=inputs.executor,
                       progress=inputs.progress)
    # The (ε, δ) lower bound is Clopper–Pearson's alone; the μ-GDP test's μ (and the ε of the Gaussian curve it
    # rules out) is reported beside it, for a Gaussian claim only: a one-bit post-processing of μ = 1 has
    # ε(1e-5) = 0.807 while the μ route reads 4.24 (docs/auditing.md, "Two bounds, two labels").
    gaussian = result.gaussian if claim.gaussian else None
    points = tuple(
        (r.false_positives / r.trials, r.false_negatives / r.trials, r.fpr_upper, r.fnr_upper)
        for r in (result.clopper_pearson, result.gaussian))
    notes = list(result.notes)
    notes.append(_scope_note(spec))
    chosen = measured[result.pair_index]
    ordered = (chosen, *(p for i, p in enumerate(measured) if i != result.pair_index))
    return AgentAuditResult(
        verdict=result.verdict, spec=spec, epsilon_lower_bound=float(result.clopper_pearson.epsilon_lower),
        method="clopper-pearson", claimed_epsilon=spec.epsilon, delta=spec.delta, agent_claim=claim,
        trials=spec.trials, canaries=None, seconds=time.perf_counter() - inputs.start,
        batched=batched, audit=result, one_run=None, points=points, notes=tuple(notes),
        mu_lower_bound=None if gaussian is None or gaussian.mu_lower is None else float(gaussian.mu_lower),
        claimed_mu=None if gaussian is None else result.claimed_mu,
        gdp_epsilon=None if gaussian is None else float(gaussian.epsilon_lower),
        verdict_by=tuple(result.violated_by), measured_pairs=ordered)


register_route(AuditRoute(
    "two-world", "many runs on D and D'", run=_two_world, resources=require_two_world,
    default_trials=10_000, min_trials=MIN_TRIALS,
    min_trials_reason="per side for a two-world audit (a selection and an evaluation split)",
    size_format="window {window}; {trials} trials per side"))
