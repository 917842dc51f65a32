"""The one-run route of an agent audit: Steinke, Nasr & Jagielski (2023), "Privacy auditing with one (1)
training run", Theorem 3 (:mod:`dpverify.audit.one_run`), and for a Gaussian claim also its μ-GDP curve by
the f-DP analysis of Mahloujifar, Melis & Chaudhuri (2025) (:mod:`dpverify.audit.one_run_fdp`).

m canary slots spread over the K users each hold the high canary or (replace-one) the low canary or
(add/remove-one) an empty slot by an independent fair coin; the agent runs once; a score per slot (a
feature of :mod:`dpverify.audit.distinguishers` chosen on an independent pilot run with its own coins, so
the guesses are a function of the audited output alone; ranked by the Mann–Whitney statistic) ranks the
slots; top/bottom guesses with pre-registered sizes (abstaining on the rest) and their count of correct
guesses give the ε lower bound. With ``trials = N`` the N runs are one mechanism of N·m coins (each coin
changes one run's input only).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.agent_audit.canaries import MeasuredPair, worst_case_pairs
from dpverify.agent_audit.notions import audit_notion
from dpverify.agent_audit.routes import AuditRoute, RouteInputs, register_route
from dpverify.agent_audit.runs import AgentSetup, _batched_agent, _is_batched, run_agent_once
from dpverify.agent_audit.spec import AgentAuditResult, AgentAuditSpec, _scope_note
from dpverify.agent_audit.views import observe, observe_batch, output_view
from dpverify.agents.core.batching import BatchRandomness, run_batch
from dpverify.agents.core.tapes import canary_tape, empty_slots, ordinary_tapes, replace, tape_arrays
from dpverify.audit import one_run as steinke
from dpverify.audit.bounds import epsilon_of_mu
from dpverify.audit.distinguishers import LinearFeature, propose_features
from dpverify.audit.one_run_fdp import best_of_rules
from dpverify.audit.resources import require_one_run
from dpverify.audit.result import NO_VIOLATION_FOUND, NOT_A_CERTIFICATE, VIOLATION
from dpverify.conversions import mu_for_epsilon_delta

#: One-run guess rules as fractions of m (k_plus = k_minus = fraction · m), sharing α by Bonferroni.
GUESS_FRACTIONS: tuple[float, ...] = (0.05, 0.2, 0.5)


def canary_slots(episodes: int, m: int) -> np.ndarray:
    """m canary positions (1-based) spread evenly over 1..K."""
    return np.unique(np.round(np.linspace(1, episodes, m)).astype(np.int64))


def _slot_features(spec: AgentAuditSpec, view_rows: np.ndarray) -> np.ndarray:
    """A slot's feature vector: its rows and, for several rows, their consecutive differences."""
    if view_rows.shape[0] >= 2:
        return np.concatenate([(view_rows[1:] - view_rows[:-1]).reshape(-1), view_rows.reshape(-1)])
    return view_rows.reshape(-1)


def slot_canaries(spec: AgentAuditSpec, setup: AgentSetup, mdp: Any) -> tuple[Any, Any, MeasuredPair | None]:
    """(excluded, included) tapes of a canary slot, and the measured pair they come from (worst-case design).

    ``"environment"``: the environment's low and high canaries (add/remove: an empty slot and the high canary).
    ``"worst-case"``: ``mdp`` is the audit environment; every candidate pair at the middle position is measured
    (:func:`~dpverify.agent_audit.canaries.worst_case_pairs`) and the slot holds the two tapes of the pair of
    largest μ — chosen on the measurement's own seeds, so the audit's error control is intact."""
    if spec.canary_design != "worst-case":
        return None if spec.add_remove else canary_tape(mdp, "low"), canary_tape(mdp, "high"), None
    best = worst_case_pairs(dataclasses.replace(spec, positions=("middle",)), setup, mdp)[0]
    return best.first[best.position - 1], best.second[best.position - 1], best


def _one_run_features(spec: AgentAuditSpec, setup: AgentSetup, mdp: Any, width: int, slots: np.ndarray,
                      inclusion: np.ndarray, rng: np.random.Generator,
                      batch_factory: Callable[..., Any] | None, canaries: tuple[Any, Any]) -> np.ndarray:
    """Run the agent once with the canaries the coins select (``canaries`` = (excluded, included) tapes; None is
    an empty slot); one feature row per slot."""
    tapes: tuple[Any, ...] = ordinary_tapes(mdp, spec.episodes, spec.data_seed)
    low, high = canaries
    for slot, included in zip(slots, inclusion, strict=True):
        tapes = replace(tapes, int(slot), high if included else low)
    views = [output_view(spec.notion, int(j), spec.window, spec.episodes, width) for j in slots]
    if batch_factory is not None or _is_batched(setup, spec.batched):
        episodes = sorted({e for v in views for e in v.episodes})
        agent = (batch_factory or _batched_agent)(setup, mdp, BatchRandomness(rng, 1), episodes)
        initial, table = tape_arrays(tapes)
        keep = episodes if audit_notion(spec.notion).reads_policies else ()
        policies = run_batch(agent, initial, table, keep_policies=keep, empty=empty_slots(tapes))
        by_episode: dict[int, list[Any]] = {}  # each of the m views reads a few episodes: read the run once
        for release in agent.releases:
            by_episode.setdefault(release[1], []).append(release)
        rows = [observe_batch(v, agent, policies, mdp.num_actions,
                              [r for e in dict.fromkeys(v.episodes) for r in by_episode.get(e, ())])[0] for v in views]
    else:
        history, plist = run_agent_once(setup, mdp, tapes, rng)
        rows = [observe(v, history, plist, mdp.num_actions) for v in views]
    return np.stack([_slot_features(spec, r) for r in rows])


def _auc(scores: np.ndarray, inclusion: np.ndarray) -> float:
    """P[score(included) > score(excluded)] (+ half the ties): the rank statistic of Mann & Whitney."""
    order = np.sort(scores)
    # 0-based average ranks (ties share their mean rank)
    lo = np.searchsorted(order, scores, side="left")
    hi = np.searchsorted(order, scores, side="right")
    ranks = (lo + hi - 1) / 2.0
    n1, n0 = int(inclusion.sum()), int((~inclusion).sum())
    if n1 == 0 or n0 == 0:
        return 0.5
    return float((ranks[inclusion].sum() - n1 * (n1 - 1) / 2.0) / (n1 * n0))


@dataclass(frozen=True, eq=False)
class SlotScorer:
    """The score of a canary slot: a feature learned on the pilot run (engine learners), signed so that
    higher means "included" on the pilot."""

    feature: Any
    sign: float

    def __call__(self, features: np.ndarray) -> np.ndarray:
        return self.sign * np.asarray(self.feature.scores(features), dtype=float)


def learn_scorer(pilot: np.ndarray, inclusion: np.ndarray) -> SlotScorer:
    """Candidate features of :func:`dpverify.audit.distinguishers.propose_features` fitted on the pilot's
    excluded vs included slots; the one whose pilot rank statistic is furthest from 1/2 wins."""
    if inclusion.all() or not inclusion.any():
        return SlotScorer(LinearFeature("slot coordinate 0", "release", np.eye(pilot.shape[1])[0]), 1.0)
    best: tuple[float, Any, float] | None = None
    for feature in propose_features(pilot[~inclusion], pilot[inclusion]):
        scores = np.asarray(feature.scores(pilot), dtype=float)
        if not np.all(np.isfinite(scores)):
            continue
        auc = _auc(scores, inclusion)
        if best is None or abs(auc - 0.5) > best[0]:
            best = (abs(auc - 0.5), feature, 1.0 if auc >= 0.5 else -1.0)
    if best is None:
        return SlotScorer(LinearFeature("slot coordinate 0", "release", np.eye(pilot.shape[1])[0]), 1.0)
    return SlotScorer(best[1], best[2])


def _one_run(spec: AgentAuditSpec, inputs: RouteInputs) -> AgentAuditResult:
    """The one-run audit of ``spec`` (module docstring): the route's ``run``."""
    setup, claim, width, mdp = inputs.setup, inputs.claim, inputs.width, inputs.mdp
    batch_factory = inputs.batch_factory
    slots = canary_slots(spec.episodes, spec.canary_count)
    low, high, measured = slot_canaries(spec, setup, mdp)
    m = len(slots)
    root = np.random.SeedSequence(spec.seed)
    pilot_seq, audit_seq = root.spawn(2)
    pilot_coin, pilot_run = (np.random.default_rng(s) for s in pilot_seq.spawn(2))
    pilot_inclusion = steinke.draw_inclusion(m, pilot_coin)
    pilot = _one_run_features(spec, setup, mdp, width, slots, pilot_inclusion, pilot_run, batch_factory, (low, high))
    scorer = learn_scorer(pilot, pilot_inclusion)
    runs = spec.trials
    total = m * runs

    def experiment(inclusion: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        scores = []
        for r, g in enumerate(rng.spawn(runs)):
            feats = _one_run_features(spec, setup, mdp, width, slots, inclusion[r * m:(r + 1) * m], g, batch_factory,
                                      (low, high))
            scores.append(scorer(feats))
        return np.nan_to_num(np.concatenate(scores), posinf=1e300, neginf=-1e300)

    rules = [(max(1, int(f * total)), max(1, int(f * total))) for f in GUESS_FRACTIONS]
    rules = [(min(kp, total // 2), min(km, total - min(kp, total // 2))) for kp, km in rules]
    counts = steinke.one_run_counts(experiment, total, np.random.default_rng(audit_seq), guesses=rules)
    # A Gaussian claim is also tested against its μ-GDP curve (Mahloujifar et al. 2025); the two analyses of
    # the same counts then share the error budget, half each.
    alpha = 1.0 - spec.confidence
    share = 0.5 if claim.gaussian else 1.0
    result = steinke.best_rule(counts, total, delta=spec.delta, confidence=1.0 - share * alpha)
    fdp = None
    claimed_mu = None
    if claim.gaussian:
        claimed_mu = mu_for_epsilon_delta(spec.epsilon, spec.delta)
        fdp = best_of_rules(counts, total, delta=spec.delta, confidence=1.0 - share * alpha, claimed_mu=claimed_mu)
    eps = float(result.epsilon_lower_bound)
    verdict_by = [result.method] if result.refutes(spec.epsilon) else []
    if fdp is not None and claimed_mu is not None and fdp.refutes_mu(claimed_mu):
        verdict_by.append(fdp.method)
    verdict = VIOLATION if verdict_by else NO_VIOLATION_FOUND
    wrong = 1.0 - result.v / result.r if result.r else 1.0
    notes = [NOT_A_CERTIFICATE,
             f"One-run bound (Steinke, Nasr & Jagielski 2023, Theorem 3) over {runs} run(s) of {m} canary slots; "
             f"guess rules {rules} share alpha by Bonferroni; the slot score ({scorer.feature.name}) was learned on an "
             "independent pilot run.", _scope_note(spec)]
    if fdp is not None:
        notes.append(f"The Gaussian claim's mu-GDP curve (mu = {claimed_mu:.4g}) was tested on the same counts by the "
                     "f-DP analysis of Mahloujifar, Melis & Chaudhuri (2025); each analysis at half the error budget.")
    return AgentAuditResult(
        verdict=verdict, spec=spec, epsilon_lower_bound=eps, method=result.method, claimed_epsilon=spec.epsilon,
        delta=spec.delta, agent_claim=claim, trials=runs, canaries=m,
        seconds=time.perf_counter() - inputs.start,
        batched=batch_factory is not None or _is_batched(setup, spec.batched), audit=None, one_run=result,
        points=((wrong, wrong, wrong, wrong),), notes=tuple(notes),
        mu_lower_bound=None if fdp is None else fdp.mu_lower_bound, claimed_mu=claimed_mu,
        gdp_epsilon=None if fdp is None else epsilon_of_mu(fdp.mu_lower_bound, spec.delta),
        verdict_by=tuple(verdict_by), one_run_fdp=fdp, measured_pairs=() if measured is None else (measured,))


register_route(AuditRoute(
    "one-run", "canaries, Steinke et al. 2023", run=_one_run, resources=require_one_run,
    default_trials=1, min_trials=1, size_format="{trials} run(s) × {canaries} canaries",
    canary_slots=True))
