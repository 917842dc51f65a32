"""The audit engine: selection split, evaluation split, bounds and verdict.

Procedure (Jagielski, Ullman & Oprea 2020; Nasr et al. 2021; Clopper & Pearson 1934; Dong, Roth &
Su 2019):

1. *Probe*: two trials per dataset in this process check the mechanism's output shape and finiteness.
2. *Selection split*: ``selection_trials`` per side for every candidate pair. Candidate features are
   learned on one half of it (:mod:`dpverify.audit.distinguishers`; scalars need no learning), and on
   the other half one test is chosen for each bound — the pair, feature, threshold, event and null
   dataset with the best projected bound (:mod:`dpverify.audit.selection`).
3. *Evaluation split*: ``evaluation_trials`` fresh trials per side of the chosen pair, counted against
   the two chosen tests only.
4. *Bounds*: four one-sided Clopper–Pearson bounds (FPR and FNR of each test), each at
   (1 − confidence)/4, so all hold together with probability ≥ confidence (Bonferroni). Nothing about
   the evaluation data influenced which hypotheses are tested, so no further correction is due.
5. *Verdict*: VIOLATION if the Clopper–Pearson ε lower bound exceeds the claimed ε, or — for a Gaussian
   claim only — if the μ lower bound exceeds the claimed μ. Otherwise NO VIOLATION FOUND.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dpverify.audit import bounds, trials
from dpverify.audit import clopper_pearson as cp
from dpverify.audit.distinguishers import learns, propose_features
from dpverify.audit.executors import Executor, ProcessExecutor
from dpverify.audit.progress import ProgressBar
from dpverify.audit.resources import require_mechanism_audit
from dpverify.audit.result import (
    GDP_SCOPE,
    NO_VIOLATION_FOUND,
    NOT_A_CERTIFICATE,
    VIOLATION,
    AuditResult,
    BoundReport,
)
from dpverify.audit.selection import Choice, ThresholdTest, choose
from dpverify.audit.spec import CP_SHARE, GDP_SHARE, AuditSpec, NeighbourPair, normalise_pairs
from dpverify.errors import InvalidParameterError

Mechanism = Callable[[Any, int, np.random.Generator], Any]
#: Trials of each probe call (two, so that a mechanism's handling of the leading dimension is checked).
PROBE_TRIALS = 2
#: A probe trial at least this long (seconds) is work, not call overhead: it gives the executor an estimate of a
#: chunk's time, so that the workers can start on the selection at once.
ESTIMATE_FROM_TRIAL_SECONDS = 1e-3


def _collect(results: list[Any]) -> list[Any]:
    for r in results:
        if isinstance(r, trials.ChunkFailure):
            r.raise_()
    return results


def _probe(mechanism: Mechanism, pairs: tuple[NeighbourPair, ...], seed: int) -> tuple[tuple[int, ...], float]:
    """The shape of one output (the same for every dataset), and the seconds one trial took at the fastest of the
    probe's calls (an estimate for the executor: :class:`~dpverify.audit.executors.ProcessExecutor`)."""
    if not callable(mechanism):
        raise InvalidParameterError(
            "mechanism", "must be callable as mechanism(dataset, n, rng)", type(mechanism).__name__
        )
    shape: tuple[int, ...] | None = None
    fastest = math.inf
    for i, pair in enumerate(pairs):
        for side, dataset in enumerate((pair.first, pair.second)):
            start = time.perf_counter()
            rng = trials.generator(seed, (trials.PROBE, i, side))
            out = trials.check_outputs(mechanism(dataset, PROBE_TRIALS, rng), PROBE_TRIALS, shape)
            fastest = min(fastest, (time.perf_counter() - start) / PROBE_TRIALS)
            shape = out.shape[1:]
    if shape is None:
        raise RuntimeError("the mechanism produced no output to take the shape of")
    return shape, fastest


def _report(
    method: str, choice: Choice, above: tuple[int, int], spec: AuditSpec
) -> BoundReport:
    test: ThresholdTest = choice.test
    m = spec.evaluation_trials
    a = spec.cp_alpha if method == "clopper-pearson" else spec.gdp_alpha
    fp, fn = test.errors(above, m)
    fpr_u, fnr_u = (float(b) for b in np.atleast_1d(cp.upper_bound(np.array([fp, fn]), m, a)))
    if method == "clopper-pearson":
        eps, mu = float(bounds.epsilon_from_rates(fpr_u, fnr_u, spec.delta)), None
    else:
        mu = float(bounds.mu_from_rates(fpr_u, fnr_u))
        eps = bounds.epsilon_of_mu(mu, spec.delta)
    return BoundReport(
        method=method,
        test=test.describe(),
        feature=test.feature.name,
        threshold=test.threshold,
        false_positives=fp,
        false_negatives=fn,
        trials=m,
        fpr_upper=fpr_u,
        fnr_upper=fnr_u,
        alpha_each=a,
        epsilon_lower=eps,
        mu_lower=mu,
    )


def run_audit(
    mechanism: Mechanism,
    neighbours: Any,
    spec: AuditSpec,
    executor: Executor | None = None,
    progress: bool | None = None,
) -> AuditResult:
    """Audit ``mechanism`` on neighbouring datasets against the claim in ``spec``.

    Args:
        mechanism: picklable callable ``mechanism(dataset, n, rng)`` returning n outputs (leading
            dimension n) drawn with the numpy Generator ``rng``.
        neighbours: a :class:`NeighbourPair`, a 2-tuple (D, D′), or an iterable of candidate pairs.
        spec: the claim, confidence, trial budget and seed.
        executor: where chunks run; by default local worker processes (closed afterwards).
        progress: draw a progress bar (default: only when stderr is a terminal).

    Returns:
        A frozen :class:`AuditResult`; identical for every executor given the same spec.
    """
    if not isinstance(spec, AuditSpec):
        raise InvalidParameterError("spec", "must be an AuditSpec", type(spec).__name__)
    pairs = normalise_pairs(neighbours, spec.max_pairs)
    shape, seconds_per_trial = _probe(mechanism, pairs, spec.seed)
    require_mechanism_audit(spec.trials, int(np.prod(shape, dtype=float)), getattr(executor, "workers", 1),
                            len(pairs))  # before any chunk is listed or drawn
    sel_sizes = trials.chunk_sizes(spec.selection_trials, spec.chunk_size)
    eval_sizes = trials.chunk_sizes(spec.evaluation_trials, spec.chunk_size)
    bar = ProgressBar(len(pairs) * 2 * len(sel_sizes) + 2 * len(eval_sizes), enabled=progress)
    owned = executor is None
    runner: Executor = ProcessExecutor() if executor is None else executor
    try:
        index, cp_choice, gdp_choice = _select(mechanism, pairs, shape, spec, sel_sizes, runner, bar,
                                               seconds_per_trial)
        above = _evaluate(mechanism, pairs[index], index, shape, spec, eval_sizes, (cp_choice, gdp_choice), runner, bar)
    finally:
        bar.close()
        if owned:
            runner.close()
    cp_report = _report("clopper-pearson", cp_choice, above[0], spec)
    gdp_report = _report("gaussian-dp", gdp_choice, above[1], spec)
    return _result(spec, pairs, index, cp_report, gdp_report)


def _choose(pair: tuple[np.ndarray, np.ndarray, int, AuditSpec]) -> tuple[Choice, Choice]:
    """One pair's (Clopper–Pearson, μ-GDP) tests from its selection outputs (x0, x1, half, spec): features learned
    on the first ``half`` outputs of each side (all of them without learning), thresholds chosen on the rest."""
    x0, x1, half, spec = pair
    features = propose_features(x0[:half], x1[:half]) if half else propose_features(x0, x1)
    return choose(features, x0[half:], x1[half:], spec.evaluation_trials, spec.cp_alpha, spec.gdp_alpha, spec.delta,
                  consume=True)  # (x0, x1 are this pair's own concatenations, not used after the choice)


def _select(
    mechanism: Mechanism,
    pairs: tuple[NeighbourPair, ...],
    shape: tuple[int, ...],
    spec: AuditSpec,
    sizes: list[int],
    runner: Executor,
    bar: ProgressBar,
    seconds_per_trial: float,
) -> tuple[int, Choice, Choice]:
    """Selection split: the pair and the two tests with the best projected bounds."""
    chunks = [
        trials.Chunk(mechanism, dataset, size, spec.seed, (trials.SELECTION, i, side, c), shape)
        for i, pair in enumerate(pairs)
        for side, dataset in enumerate((pair.first, pair.second))
        for c, size in enumerate(sizes)
    ]
    # an estimate only where a trial is work (a vectorised mechanism's probe call is mostly fixed overhead)
    each = seconds_per_trial * float(np.mean(sizes)) if seconds_per_trial >= ESTIMATE_FROM_TRIAL_SECONDS else None
    outputs = _collect(runner.map(trials.run_chunk, chunks, bar.advance, seconds_each=each))
    per_side = len(sizes)
    n_sel = spec.selection_trials
    # Learned features: fit on one half of the selection split, choose thresholds on the other.
    half = n_sel // 2 if learns(shape) and n_sel >= 4 else 0
    jobs = []
    for base in range(0, len(outputs), 2 * per_side):
        jobs.append((np.concatenate(outputs[base : base + per_side]),
                     np.concatenate(outputs[base + per_side : base + 2 * per_side]), half, spec))
        outputs[base : base + 2 * per_side] = [None] * (2 * per_side)  # this pair's chunks: freed now
    # each pair's choice on the executor (the workers would idle meanwhile); one pair's here
    choices = runner.map(_choose, jobs) if len(jobs) > 1 else [_choose(jobs[0])]
    best: tuple[float, int, Choice, Choice] | None = None
    for i, (cp_choice, gdp_choice) in enumerate(choices):
        score = cp_choice.projected
        if spec.gaussian_claim and len(pairs) > 1:  # the score only ranks pairs
            score = max(score, bounds.epsilon_of_mu(gdp_choice.projected, spec.delta))
        if best is None or score > best[0]:
            best = (score, i, cp_choice, gdp_choice)
    if best is None:
        raise RuntimeError("no candidate event to select from")
    return best[1], best[2], best[3]


def _evaluate(
    mechanism: Mechanism,
    pair: NeighbourPair,
    index: int,
    shape: tuple[int, ...],
    spec: AuditSpec,
    sizes: list[int],
    choices: tuple[Choice, Choice],
    runner: Executor,
    bar: ProgressBar,
) -> tuple[tuple[int, int], tuple[int, int]]:
    """Evaluation split: for each chosen test, how many scores exceed its threshold on D and on D′."""
    tests = tuple((c.test.feature, (c.test.threshold,)) for c in choices)
    chunks = [
        trials.Chunk(mechanism, dataset, size, spec.seed, (trials.EVALUATION, index, side, c), shape, tests)
        for side, dataset in enumerate((pair.first, pair.second))
        for c, size in enumerate(sizes)
    ]
    counts = _collect(runner.map(trials.run_chunk, chunks, bar.advance))
    per_side = len(sizes)
    on_d = np.sum(counts[:per_side], axis=0)
    on_d_prime = np.sum(counts[per_side:], axis=0)
    return (int(on_d[0]), int(on_d_prime[0])), (int(on_d[1]), int(on_d_prime[1]))


@functools.lru_cache(maxsize=256)
def _claimed_mu_of(epsilon: float, delta: float, gaussian_claim: bool) -> float | None:
    """AuditSpec.claimed_mu (a root-finding of the exact Gaussian profile), computed once per claim."""
    return AuditSpec(epsilon, delta, gaussian_claim=gaussian_claim).claimed_mu


def _result(
    spec: AuditSpec, pairs: tuple[NeighbourPair, ...], index: int, cp_report: BoundReport, gdp_report: BoundReport
) -> AuditResult:
    claimed_mu = _claimed_mu_of(spec.epsilon, spec.delta, spec.gaussian_claim)
    violated: list[str] = []
    if cp_report.epsilon_lower > spec.epsilon:
        violated.append("clopper-pearson")
    if claimed_mu is not None and gdp_report.mu_lower is not None and gdp_report.mu_lower > claimed_mu:
        violated.append("gaussian-dp")
    ceiling = bounds.ceiling(spec.evaluation_trials, spec.cp_alpha, spec.delta)
    notes = [NOT_A_CERTIFICATE, GDP_SCOPE]
    if not spec.gaussian_claim:
        notes.append("The claim is not declared Gaussian, so only the Clopper-Pearson bound decides the verdict.")
    if ceiling <= spec.epsilon:
        notes.append(
            f"With {spec.evaluation_trials} evaluation trials per side no threshold test can certify epsilon above "
            f"{ceiling:.3f} <= the claimed {spec.epsilon:g}: the Clopper-Pearson test could not have refuted "
            "this claim."
        )
    correction = (
        f"weighted Bonferroni over the 4 one-sided Clopper-Pearson bounds computed on the evaluation split: "
        f"FPR and FNR of the Clopper-Pearson test at {CP_SHARE:g} x (1 - {spec.confidence:g}) = "
        f"{spec.cp_alpha:.4g} each, "
        f"FPR and FNR of the mu-GDP test at {GDP_SHARE:g} x (1 - {spec.confidence:g}) = {spec.gdp_alpha:.4g} each; "
        f"the pair ({len(pairs)} candidate(s)), features, thresholds, "
        f"events and directions were all chosen on a separate selection split of {spec.selection_trials} trials "
        "per side and pair, so only these two pre-chosen tests are evaluated."
    )
    return AuditResult(
        verdict=VIOLATION if violated else NO_VIOLATION_FOUND,
        violated_by=tuple(violated),
        claimed_epsilon=spec.epsilon,
        delta=spec.delta,
        gaussian_claim=spec.gaussian_claim,
        claimed_mu=claimed_mu,
        confidence=spec.confidence,
        trials=spec.trials,
        selection_trials=spec.selection_trials,
        evaluation_trials=spec.evaluation_trials,
        pairs=len(pairs),
        pair_index=index,
        pair_label=pairs[index].label,
        clopper_pearson=cp_report,
        gaussian=gdp_report,
        ceiling=ceiling,
        correction=correction,
        seed=spec.seed,
        notes=tuple(notes),
    )
