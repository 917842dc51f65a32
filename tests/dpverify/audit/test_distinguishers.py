"""The learners of dpverify.audit.distinguishers: the logistic fit with fewer rows than coordinates."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.audit.distinguishers import _logistic, _logistic_newton, _logistic_newton_dual


@pytest.mark.parametrize(("n", "p", "shift"), [(20, 60, 0.5), (40, 300, 0.2), (10, 150, 3.0), (30, 31, 0.0)])
def test_the_row_space_newton_fit_is_the_primal_fit(n: int, p: int, shift: float) -> None:
    rng = np.random.default_rng(n + p)
    xs = rng.normal(size=(2 * n, p))
    xs[n:, : p // 10 + 1] += shift           # a separated block (or, with shift 3, separable data)
    xs[:, 1] = 0.0                            # a constant coordinate (standardised to 0)
    y = np.concatenate([np.zeros(n), np.ones(n)])
    primal = _logistic_newton(xs, y, 25)
    dual = _logistic_newton_dual(xs, y, 25)
    assert np.max(np.abs(dual - primal)) <= 1e-9 * max(1.0, float(np.max(np.abs(primal))))


def test_logistic_uses_the_row_space_fit_only_when_rows_are_fewer() -> None:
    rng = np.random.default_rng(1)
    z0, z1 = rng.normal(size=(30, 200)), rng.normal(size=(30, 200)) + 0.3
    w = _logistic(z0, z1)
    assert w.shape == (200,) and np.all(np.isfinite(w)) and float(np.mean(w)) > 0  # points from D to D′
    tall0, tall1 = rng.normal(size=(300, 5)), rng.normal(size=(300, 5)) + 0.3
    assert _logistic(tall0, tall1).shape == (5,)
