"""The planted-bug zoo as a regression suite: every bug flagged, no twin flagged (moderate size).

At 3×10⁴ trials per side the weakest bug (GOE calibrated for add/remove, audited under replacement:
μ is only √2 too large) is caught in 40 of 40 seeds checked at 2×10⁴; the audit's default size is 10⁵.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.audit import VIOLATION, SerialExecutor, run_audit
from dpverify.audits.zoo import FeatureSum, RunningSums, ZooOutcome, cases, min2021_feature, run_zoo

CASES = cases()
TRIALS = 30_000


def test_every_bug_has_a_twin():
    names = [c.name for c in CASES]
    assert len(CASES) == 14
    for name in set(names):
        variants = sorted(c.broken for c in CASES if c.name == name)
        assert variants == [False, True]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c.name}-{c.variant}" for c in CASES])
def test_zoo_verdicts(index):
    case = CASES[index]
    result = run_audit(case.mechanism, case.neighbours, case.spec(TRIALS, 100 + index, 0.95), executor=SerialExecutor())
    outcome = ZooOutcome(case, result)
    assert outcome.as_expected, outcome.row()
    if case.broken:
        assert result.verdict == VIOLATION
    else:
        assert result.clopper_pearson.epsilon_lower <= case.epsilon


def test_run_zoo_rows():
    outcomes = run_zoo(trials=3000, seed=1, executor=SerialExecutor())
    row = outcomes[0].row()
    assert len(outcomes) == 14
    assert {"bug", "variant", "cp_epsilon_lower", "gdp_epsilon_lower", "ceiling", "verdict"} <= set(row)


def test_feature_norms_and_reused_noise_are_what_the_bugs_say():
    norms = {round(float(np.linalg.norm(min2021_feature(s, a))), 12) for s in (0, 1) for a in range(100)}
    assert norms == {3.0}
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(0)))
    out = RunningSums(2.0, reuse_noise=True)((0.0, 1.0), 5, rng)
    assert out.shape == (5, 2, 1) and np.allclose(out[:, 1] - out[:, 0], 1.0)
    fixed = FeatureSum(1.0, 3.0)(((0, 0),), 1000, rng).mean(axis=0)
    assert np.allclose(fixed, min2021_feature(0, 0) / 3.0, atol=0.15)
