"""Rank-one updates (dpverify.agents.core.linalg) against direct inversion."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dpverify.agents.core.linalg import downdate_weighted_norms, sherman_morrison, weighted_norms_squared


def spd(rng: np.random.Generator, h: int, d: int) -> np.ndarray:
    m = rng.normal(size=(h, d, d))
    return np.einsum("hij,hkj->hik", m, m) + 0.5 * np.eye(d)


@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 6), h=st.integers(1, 4),
       weight=st.floats(0.0, 10.0))
def test_sherman_morrison_and_logdet_match_direct(seed: int, d: int, h: int, weight: float) -> None:
    rng = np.random.default_rng(seed)
    a = spd(rng, h, d)
    x = rng.normal(size=(h, d))
    inverse = np.linalg.inv(a)
    updated, ratio = sherman_morrison(inverse, x, np.full(h, weight))
    direct = a + weight * x[:, :, None] * x[:, None, :]
    np.testing.assert_allclose(updated, np.linalg.inv(direct), rtol=1e-8, atol=1e-10)
    expected = np.linalg.slogdet(direct)[1] - np.linalg.slogdet(a)[1]
    np.testing.assert_allclose(np.log(ratio), expected, rtol=1e-8, atol=1e-10)


@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 5), n=st.integers(1, 7), weight=st.floats(0.0, 5.0))
def test_downdate_weighted_norms_match_direct(seed: int, d: int, n: int, weight: float) -> None:
    rng = np.random.default_rng(seed)
    h = 2
    a = spd(rng, h, d)
    features = rng.normal(size=(h, n, d))
    x = rng.normal(size=(h, d))
    inverse = np.linalg.inv(a)
    before = weighted_norms_squared(features, inverse)
    after = downdate_weighted_norms(before, features, inverse, x, np.full(h, weight))
    direct = np.linalg.inv(a + weight * x[:, :, None] * x[:, None, :])
    np.testing.assert_allclose(after, weighted_norms_squared(features, direct), rtol=1e-7, atol=1e-9)
