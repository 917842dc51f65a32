"""Audit the mechanisms of :mod:`dpverify.mechanisms` directly, at their worst-case neighbours.

:class:`ReleaseOf` turns a mechanism into an audited callable ``(value, n, rng) -> n releases``: the
"dataset" is the exact statistic, and a neighbouring pair is two statistic values whose distance equals
the declared sensitivity (the worst case the mechanism's accounting assumes). Releases are returned
through the mechanism's :meth:`~dpverify.mechanisms.NoiseMechanism.audit_view`, a deterministic
post-processing that loses nothing (for GOE, the upper-triangular entries of the symmetric matrix), so
any test on them is a test on the release. Everything here reads the mechanism's registered hooks, so
any registered mechanism can be audited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.audit.engine import run_audit
from dpverify.audit.executors import Executor
from dpverify.audit.resources import require_mechanism_audit
from dpverify.audit.result import AuditResult
from dpverify.audit.spec import AuditSpec, NeighbourPair
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import Mechanism, NoiseMechanism


@dataclass(frozen=True)
class ReleaseOf:
    """The batched release of a dpverify mechanism (fresh noise for each of the n trials)."""

    mechanism: Mechanism

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, NoiseMechanism):
            raise InvalidParameterError(
                "mechanism", "must be a registered dpverify mechanism", type(self.mechanism).__name__
            )

    def __call__(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return self.mechanism.audit_view(self.mechanism.release(dataset, rng, n))


def worst_case_pair(mechanism: Mechanism) -> NeighbourPair:
    """Zero and a statistic at exactly the declared sensitivity (ℓ2, ℓ1 or Frobenius) from it."""
    first, second, label = mechanism.worst_case_inputs()
    return NeighbourPair(first, second, label)


def claimed_epsilon(mechanism: Mechanism, delta: float) -> float:
    """The ε the mechanism's own accounting claims at δ (exact for Gaussian/GOE, pure ε for Laplace)."""
    return mechanism.claimed_epsilon(delta)


def audit_mechanism(
    mechanism: Mechanism,
    epsilon: float | None = None,
    delta: float = 1e-5,
    trials: int = 100_000,
    confidence: float = 0.95,
    seed: int = 0,
    executor: Executor | None = None,
    progress: bool | None = None,
) -> AuditResult:
    """Audit a dpverify mechanism at its worst-case neighbours against (ε, δ) (default: its own claim)."""
    if not isinstance(mechanism, NoiseMechanism):
        raise InvalidParameterError("mechanism", "must be a dpverify mechanism (e.g. GaussianMechanism; run_audit "
                                    "audits any callable)", type(mechanism).__name__)
    require_mechanism_audit(_validate.integer("trials", trials, minimum=2), int(np.prod(mechanism.output_shape,
                            dtype=float)), getattr(executor, "workers", 1), dim=mechanism.dim)
    eps = claimed_epsilon(mechanism, delta) if epsilon is None else epsilon
    spec = AuditSpec(
        epsilon=eps,
        delta=delta,
        trials=trials,
        confidence=confidence,
        seed=seed,
        gaussian_claim=mechanism.is_gaussian,
    )
    return run_audit(ReleaseOf(mechanism), worst_case_pair(mechanism), spec, executor=executor, progress=progress)
