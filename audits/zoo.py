"""A zoo of planted privacy bugs, each next to its correct twin.

Every case is a batched mechanism ``(dataset, n, rng) -> outputs``, the neighbouring datasets it is
audited on, and the privacy claim its author would make. The broken mechanisms reproduce bugs seen in
private-learning code (docs/derivations.md); each twin is the same code with the bug fixed, calibrated to
meet its claim exactly or conservatively. The audit engine (:mod:`dpverify.audit`) must flag every
broken mechanism and none of the twins.

Calibration: the Gaussian claims are (ε, δ) = (1, 1e-5) and use the largest μ meeting them by the
exact Gaussian profile (:func:`dpverify.conversions.mu_for_epsilon_delta`; Balle & Wang 2018,
Dong, Roth & Su 2019); the Laplace claim is pure ε = 0.5 (Dwork et al. 2006).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.audit import (
    VIOLATION,
    AuditResult,
    AuditSpec,
    NeighbourPair,
    ReleaseOf,
    run_audit,
    worst_case_pair,
)
from dpverify.audit.executors import Executor, ProcessExecutor
from dpverify.conversions import mu_for_epsilon_delta
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism
from dpverify.neighbouring import Neighbouring

CLAIM_EPSILON = 1.0
CLAIM_DELTA = 1e-5
LAPLACE_EPSILON = 0.5


def calibrated_mu(epsilon: float = CLAIM_EPSILON, delta: float = CLAIM_DELTA) -> float:
    """The largest μ that is (ε, δ)-DP by the exact Gaussian profile."""
    return mu_for_epsilon_delta(epsilon, delta)


# --------------------------------------------------------------------------------------------
# Mechanisms (module-level frozen dataclasses: picklable, so they run on worker processes and Dask)


@dataclass(frozen=True)
class NoisySum:
    """Sum of the users' scalar values plus N(0, σ²); values clipped to [0, clip] when clip is set."""

    sigma: float
    clip: float | None = None

    def __call__(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        values = np.asarray(dataset, dtype=float)
        if self.clip is not None:
            values = np.clip(values, 0.0, self.clip)
        return values.sum() + rng.normal(0.0, self.sigma, size=(n, 1))


@dataclass(frozen=True)
class RunningSums:
    """Two releases of running sums of per-episode values (a, b): a + Z₁ and a + b + Z₂.

    With ``reuse_noise`` the same draw Z₁ = Z₂ is added to both (Sahu 2025, Algorithm 1 line 1 as
    printed): release 2 − release 1 = b exactly. The output is a transcript of shape (n, 2, 1).
    """

    sigma: float
    reuse_noise: bool = False

    def __call__(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        a, b = (float(v) for v in dataset)
        z1 = rng.normal(0.0, self.sigma, size=n)
        z2 = z1 if self.reuse_noise else rng.normal(0.0, self.sigma, size=n)
        return np.stack([a + z1, a + b + z2], axis=1)[:, :, None]


@dataclass(frozen=True)
class GramRelease:
    """The Gram matrix Σ φφᵀ of the users' feature vectors through a GOE mechanism (upper triangle)."""

    mechanism: GOEMechanism

    def __call__(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        phi = np.asarray(dataset, dtype=float)
        return ReleaseOf(self.mechanism)(phi.T @ phi, n, rng)


def min2021_feature(state: int, action: int) -> np.ndarray:
    """φ(s, a) = (u_a, δ(s, a), 1 − δ(s, a)) of the Min et al. 2021 linear MDP (Sahu 2025, Section 4).

    u_a ∈ {−1, +1}⁸ is the binary code of a (bit i ↦ coordinate i) and δ(s, a) = 1{s = 0 and a = 0};
    ‖φ‖₂ = 3 for every (s, a).
    """
    code = np.array([1.0 if (action >> i) & 1 else -1.0 for i in range(8)])
    hit = 1.0 if (state == 0 and action == 0) else 0.0
    return np.concatenate([code, [hit, 1.0 - hit]])


@dataclass(frozen=True)
class FeatureSum:
    """Σ φ(s, a) over the users' (state, action) pairs plus N(0, σ²I₁₀); features divided by ``scale``.

    The noise is calibrated for ‖φ‖ ≤ 1 (replacement sensitivity 2). With scale = 1 the raw features of
    norm 3 go in (the bug); with scale = 3 they are rescaled to norm 1 (the fix named in docs/derivations.md).
    """

    sigma: float
    scale: float = 1.0

    def __call__(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        total = sum((min2021_feature(s, a) for s, a in dataset), np.zeros(10)) / self.scale
        return total + rng.normal(0.0, self.sigma, size=(n, total.size))


@dataclass(frozen=True)
class PartlyNoisyVector:
    """x + N(0, σ²I) on ℝ^dim, except that coordinate ``unnoised`` (if set) gets no noise."""

    sigma: float
    dim: int
    unnoised: int | None = None

    def __call__(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        noise = rng.normal(0.0, self.sigma, size=(n, self.dim))
        if self.unnoised is not None:
            noise[:, self.unnoised] = 0.0
        return np.asarray(dataset, dtype=float) + noise


# --------------------------------------------------------------------------------------------
# Cases


@dataclass(frozen=True)
class ZooCase:
    """One mechanism of the zoo with the claim its author makes and the pairs it is audited on.

    Attributes:
        name: short identifier of the bug (shared by the broken mechanism and its twin).
        description: what the code does wrong (or, for the twin, how it is fixed).
        broken: True for the planted bug, False for the correct twin.
        mechanism: picklable ``(dataset, n, rng) -> outputs``.
        neighbours: candidate neighbouring pairs.
        epsilon, delta: the claim.
        gaussian_claim: whether the claim is that of a Gaussian mechanism.
    """

    name: str
    description: str
    broken: bool
    mechanism: Any
    neighbours: tuple[NeighbourPair, ...]
    epsilon: float = CLAIM_EPSILON
    delta: float = CLAIM_DELTA
    gaussian_claim: bool = True

    @property
    def variant(self) -> str:
        return "broken" if self.broken else "twin"

    def spec(self, trials: int, seed: int, confidence: float) -> AuditSpec:
        return AuditSpec(
            epsilon=self.epsilon,
            delta=self.delta,
            trials=trials,
            confidence=confidence,
            seed=seed,
            gaussian_claim=self.gaussian_claim,
        )


def cases() -> tuple[ZooCase, ...]:
    """Every planted bug followed by its correct twin."""
    mu = calibrated_mu()
    sigma = 1.0 / mu  # sensitivity 1
    out: list[ZooCase] = []

    gauss = GaussianMechanism(1.0, sigma)
    halved = GaussianMechanism(1.0, sigma / 2.0)
    out += [
        ZooCase("std-halved", "noise std is half the calibrated sigma", True, ReleaseOf(halved),
                (worst_case_pair(gauss),)),
        ZooCase("std-halved", "noise std as calibrated", False, ReleaseOf(gauss), (worst_case_pair(gauss),)),
    ]

    values = NeighbourPair((0.3, 1.2, 0.0), (0.3, 1.2, 2.0), "third user's value 0 vs 2")
    out += [
        ZooCase("sensitivity-2", "declared sensitivity 1, values reach 2, no clipping", True, NoisySum(sigma),
                (values,)),
        ZooCase("sensitivity-2", "values clipped to [0, 1] before the sum", False, NoisySum(sigma, clip=1.0),
                (values,)),
    ]

    # Two releases, each of sensitivity 1: composed mu = sqrt(2)/sigma_2, so sigma_2 = sqrt(2)/mu.
    sigma_2 = math.sqrt(2.0) / mu
    episodes = (
        NeighbourPair((0.0, 0.0), (1.0, 0.0), "episode-1 user 0 vs 1"),
        NeighbourPair((0.0, 0.0), (0.0, 1.0), "episode-2 user 0 vs 1"),
    )
    out += [
        ZooCase("noise-reused", "one noise draw added to two running-sum releases", True, RunningSums(sigma_2, True),
                episodes),
        ZooCase("noise-reused", "fresh noise for each release", False, RunningSums(sigma_2, False), episodes),
    ]

    # GOE: mu = Delta_F/(sqrt(2) s). Add/remove Delta_F = 1; replacement Delta_F = sqrt(2).
    dim = 3
    add_remove = GOEMechanism(1.0, 1.0 / (math.sqrt(2.0) * mu), dim, Neighbouring.ADD_REMOVE_ONE)
    replace = GOEMechanism(math.sqrt(2.0), 1.0 / mu, dim, Neighbouring.REPLACE_ONE)
    e = np.eye(dim)
    users = NeighbourPair((e[0], e[2] * 0.5), (e[1], e[2] * 0.5), "user e1 replaced by e2")
    out += [
        ZooCase("goe-relation", "GOE calibrated for add/remove, audited under replacement", True,
                GramRelease(add_remove), (users,)),
        ZooCase("goe-relation", "GOE calibrated for replacement (Delta_F = sqrt 2)", False, GramRelease(replace),
                (users,)),
    ]

    lap_bad = LaplaceMechanism(1.0, LAPLACE_EPSILON)
    lap_good = LaplaceMechanism(1.0, 1.0 / LAPLACE_EPSILON)
    out += [
        ZooCase("laplace-scale", "Laplace scale eps instead of 1/eps (eps = 0.5)", True, ReleaseOf(lap_bad),
                (worst_case_pair(lap_good),), LAPLACE_EPSILON, CLAIM_DELTA, False),
        ZooCase("laplace-scale", "Laplace scale 1/eps", False, ReleaseOf(lap_good),
                (worst_case_pair(lap_good),), LAPLACE_EPSILON, CLAIM_DELTA, False),
    ]

    # Noise for ||phi|| <= 1 under replacement: sensitivity 2.
    sigma_feat = 2.0 / mu
    actions = NeighbourPair(((0, 0), (1, 5)), ((0, 63), (1, 5)), "first user's action 0 vs 63")
    out += [
        ZooCase("feature-norm-3", "features of norm 3 into a sum calibrated for norm <= 1", True,
                FeatureSum(sigma_feat), (actions,)),
        ZooCase("feature-norm-3", "features rescaled to norm 1 (phi/3)", False, FeatureSum(sigma_feat, 3.0),
                (actions,)),
    ]

    dim_v = 5
    vectors = NeighbourPair(np.zeros(dim_v), np.full(dim_v, 1.0 / math.sqrt(dim_v)),
                            "0 vs unit vector along (1,...,1)")
    out += [
        ZooCase("unnoised-coordinate", "coordinate 0 released without noise", True, PartlyNoisyVector(sigma, dim_v, 0),
                (vectors,)),
        ZooCase("unnoised-coordinate", "every coordinate noised", False, PartlyNoisyVector(sigma, dim_v), (vectors,)),
    ]
    return tuple(out)


@dataclass(frozen=True)
class ZooOutcome:
    """A zoo case, its audit result, and whether the verdict is the expected one."""

    case: ZooCase
    result: AuditResult

    @property
    def as_expected(self) -> bool:
        return (self.result.verdict == VIOLATION) == self.case.broken

    def row(self) -> dict[str, Any]:
        r = self.result
        return {
            "bug": self.case.name,
            "variant": self.case.variant,
            "description": self.case.description,
            "claim_epsilon": self.case.epsilon,
            "claim_delta": self.case.delta,
            "gaussian_claim": self.case.gaussian_claim,
            "cp_epsilon_lower": r.clopper_pearson.epsilon_lower,
            "gdp_epsilon_lower": r.gaussian.epsilon_lower,
            "gdp_mu_lower": r.gaussian.mu_lower,
            "ceiling": r.ceiling,
            "verdict": r.verdict,
            "violated_by": list(r.violated_by),
            "expected": VIOLATION if self.case.broken else "NO VIOLATION FOUND",
            "as_expected": self.as_expected,
            "cp_test": r.clopper_pearson.test,
            "pair": r.pair_label,
        }


def run_zoo(
    trials: int = 100_000,
    seed: int = 0,
    confidence: float = 0.95,
    executor: Executor | None = None,
    progress: bool | None = None,
) -> tuple[ZooOutcome, ...]:
    """Audit every case of the zoo (each with its own seed derived from ``seed`` and its index).

    Without an executor, one pool of local processes serves every case and is closed at the end.
    """
    runner = ProcessExecutor() if executor is None else executor
    outcomes = []
    try:
        for i, case in enumerate(cases()):
            spec = case.spec(trials, seed * 1000 + i, confidence)
            outcomes.append(ZooOutcome(case, run_audit(case.mechanism, case.neighbours, spec, runner, progress)))
    finally:
        if executor is None:
            runner.close()
    return tuple(outcomes)
