"""One-line audit assertions for tests: a mechanism passes its audit, or a known-broken one is refuted.

Both assertions run :func:`dpverify.audit.run_audit` (the audit of docs/auditing.md: a selection split
chooses the distinguishing tests, a fresh evaluation split bounds ε from below with Clopper–Pearson
intervals and, for a Gaussian claim, bounds μ of μ-GDP; Jagielski, Ullman & Oprea 2020; Dong, Roth &
Su 2019). They add defaults for a test suite:

- ``trials = 200_000`` per side, run in the calling process (:class:`~dpverify.audit.SerialExecutor`,
  so the mechanism need not be picklable): a few hundredths of a second for a vectorised scalar
  mechanism and about a second for a vector or matrix of a few dimensions;
- ``confidence = 0.99``: a correct mechanism fails :func:`assert_audit_passes` with probability at
  most 1% over seeds (every bound of the audit holds together with probability ≥ 0.99);
- ``seed = 0``: the result is a deterministic function of the seed, so a test never flickers. Pass
  the ``dp_rng`` fixture (or any ``numpy.random.Generator``) to derive the seed from it.

An audit can refute a privacy claim, never certify one: :func:`assert_audit_passes` means only that
these tests at this many trials found no violation. :func:`assert_audit_refutes` is the negative
control that shows a test suite has power: a deliberately broken variant must be caught.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpverify.audit import (
    VIOLATION,
    AuditResult,
    AuditSpec,
    ReleaseOf,
    SerialExecutor,
    claimed_epsilon,
    run_audit,
    worst_case_pair,
)
from dpverify.audit.executors import Executor
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism

__all__ = ["DEFAULT_CONFIDENCE", "DEFAULT_TRIALS", "assert_audit_passes", "assert_audit_refutes", "audit_for_test"]

#: Trials per side of an audit assertion.
DEFAULT_TRIALS = 200_000
#: Confidence of an audit assertion: its false-alarm probability on a correct mechanism is ≤ 1 − this.
DEFAULT_CONFIDENCE = 0.99

_OWN = (GaussianMechanism, GOEMechanism, LaplaceMechanism)


def _seed_of(seed: int | np.random.Generator) -> int:
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidParameterError("seed", "must be an integer >= 0 or a numpy.random.Generator", seed)
    return int(seed)


def audit_for_test(
    mechanism: Any,
    neighbours: Any = None,
    epsilon: float | None = None,
    delta: float = 1e-5,
    *,
    trials: int = DEFAULT_TRIALS,
    gaussian_claim: bool | None = None,
    seed: int | np.random.Generator = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    executor: Executor | None = None,
) -> AuditResult:
    """The audit behind both assertions (arguments as in :func:`assert_audit_passes`)."""
    if isinstance(mechanism, _OWN):
        if neighbours is None:
            neighbours = worst_case_pair(mechanism)
        if epsilon is None:
            epsilon = claimed_epsilon(mechanism, delta)
        if gaussian_claim is None:
            gaussian_claim = mechanism.is_gaussian
        mechanism = ReleaseOf(mechanism)
    else:
        if not callable(mechanism):
            raise InvalidParameterError(
                "mechanism", "must be a dpverify mechanism or a callable mechanism(dataset, n, rng)",
                type(mechanism).__name__,
            )
        if neighbours is None:
            raise InvalidParameterError("neighbours", "must be given for a mechanism that is not a dpverify one", None)
        if epsilon is None:
            raise InvalidParameterError("epsilon", "must be given for a mechanism that is not a dpverify one", None)
    spec = AuditSpec(
        epsilon=epsilon,
        delta=delta,
        trials=trials,
        confidence=confidence,
        seed=_seed_of(seed),
        gaussian_claim=bool(gaussian_claim),
    )
    return run_audit(mechanism, neighbours, spec, executor=executor or SerialExecutor(), progress=False)


def assert_audit_passes(
    mechanism: Any,
    neighbours: Any = None,
    epsilon: float | None = None,
    delta: float = 1e-5,
    *,
    trials: int = DEFAULT_TRIALS,
    gaussian_claim: bool | None = None,
    seed: int | np.random.Generator = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    executor: Executor | None = None,
) -> AuditResult:
    """Audit ``mechanism`` against (ε, δ); raise AssertionError with the audit summary on a VIOLATION.

    Args:
        mechanism: a batched callable ``mechanism(dataset, n, rng)`` returning ``n`` independent
            releases (leading dimension n) with all randomness from ``rng`` (docs/auditing.md), or a
            dpverify ``GaussianMechanism``/``GOEMechanism``/``LaplaceMechanism``.
        neighbours: a pair ``(D, D')``, a :class:`~dpverify.audit.NeighbourPair`, or a list of candidate
            pairs. Default for a dpverify mechanism: its worst-case pair (0 and the sensitivity).
        epsilon, delta: the claim. Default ε for a dpverify mechanism: its own accounting at δ.
        trials: per side. gaussian_claim: the claim is that of a Gaussian mechanism (μ-GDP with the μ
            exactly meeting (ε, δ)), which lets the much more powerful μ-GDP test decide; default True
            for dpverify's Gaussian and GOE mechanisms, False otherwise.
        seed: an integer, or a Generator (e.g. the ``dp_rng`` fixture) to draw one from.
        confidence: all bounds hold together with this probability; 1 − confidence bounds the
            false-alarm rate. executor: where trials run (default: this process).

    Returns the :class:`~dpverify.audit.AuditResult` (e.g. to assert on its bounds).
    """
    result = audit_for_test(
        mechanism, neighbours, epsilon, delta, trials=trials, gaussian_claim=gaussian_claim, seed=seed,
        confidence=confidence, executor=executor,
    )
    if result.verdict == VIOLATION:
        raise AssertionError(
            f"the audit refutes the claim (ε, δ) = ({result.claimed_epsilon:g}, {result.delta:g}):\n{result.summary()}"
        )
    return result


def assert_audit_refutes(
    mechanism: Any,
    neighbours: Any = None,
    epsilon: float | None = None,
    delta: float = 1e-5,
    *,
    trials: int = DEFAULT_TRIALS,
    gaussian_claim: bool | None = None,
    seed: int | np.random.Generator = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    executor: Executor | None = None,
) -> AuditResult:
    """The negative control: the audit must find a VIOLATION of (ε, δ) (arguments as in
    :func:`assert_audit_passes`); raise AssertionError with the audit summary when it does not."""
    result = audit_for_test(
        mechanism, neighbours, epsilon, delta, trials=trials, gaussian_claim=gaussian_claim, seed=seed,
        confidence=confidence, executor=executor,
    )
    if result.verdict != VIOLATION:
        raise AssertionError(
            f"the audit did not refute the claim (ε, δ) = ({result.claimed_epsilon:g}, {result.delta:g}) at "
            f"{result.trials} trials per side: the test has no power against this variant (more trials, a "
            f"worse neighbouring pair, or gaussian_claim=True for a Gaussian mechanism may help):\n{result.summary()}"
        )
    return result
