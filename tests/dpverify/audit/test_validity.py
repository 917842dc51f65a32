"""The bounds are valid: over repeated audits of correct mechanisms they exceed the truth no more
often than their error level allows (fixed seeds; margin: the 0.999 binomial quantile).

Randomized response gives the Clopper–Pearson test teeth: its tight event has probability ~1/4, so the
*point estimate* of ε exceeds the true ε in about half the audits, and any missing correction (a
threshold picked on the evaluation data, a two-sided level, no Bonferroni) would show up here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from dpverify.audit import VIOLATION, AuditSpec, ReleaseOf, SerialExecutor, run_audit, worst_case_pair
from dpverify.conversions import mu_for_epsilon_delta
from dpverify.mechanisms import GaussianMechanism

AUDITS = 200
SERIAL = SerialExecutor()


@dataclass(frozen=True)
class RandomizedResponse:
    """Reports the true bit with probability e^ε/(1 + e^ε): exactly ε-DP (Warner 1965)."""

    epsilon: float

    def __call__(self, bit, n, rng):
        keep = rng.random(n) < math.exp(self.epsilon) / (1.0 + math.exp(self.epsilon))
        return np.where(keep, bit, 1 - bit).astype(float)


def allowed(rate: float) -> int:
    return int(stats.binom.ppf(0.999, AUDITS, rate))


def test_clopper_pearson_bound_exceeds_true_epsilon_no_more_than_nominal():
    eps = 1.0
    exceed = alarms = naive_exceed = 0
    for seed in range(AUDITS):
        spec = AuditSpec(epsilon=eps, delta=0.0, trials=1500, seed=seed)
        r = run_audit(RandomizedResponse(eps), (0, 1), spec, executor=SERIAL)
        cp = r.clopper_pearson
        exceed += cp.epsilon_lower > eps
        alarms += r.verdict == VIOLATION
        tpr = 1 - cp.false_negatives / cp.trials
        fpr = max(cp.false_positives, 1) / cp.trials
        naive_exceed += math.log(tpr / fpr) > eps
    # Each bound fails with probability <= cp_alpha; the CP bound needs one of two to fail.
    assert exceed <= allowed(2 * spec.cp_alpha)
    assert alarms <= allowed(1 - spec.confidence)
    assert naive_exceed >= AUDITS // 4  # the test has teeth: plug-in estimates overshoot often


def test_gdp_bound_exceeds_true_mu_no_more_than_nominal():
    mu = mu_for_epsilon_delta(1.0, 1e-5)
    mech = GaussianMechanism(1.0, 1.0 / mu)
    exceed = alarms = 0
    for seed in range(AUDITS):
        spec = AuditSpec(epsilon=1.0, delta=1e-5, trials=3000, seed=10_000 + seed, gaussian_claim=True)
        r = run_audit(ReleaseOf(mech), worst_case_pair(mech), spec, executor=SERIAL)
        exceed += r.gaussian.mu_lower > mu * (1 + 1e-12)
        alarms += r.verdict == VIOLATION
    assert exceed <= allowed(2 * spec.gdp_alpha)
    assert alarms <= allowed(1 - spec.confidence)
