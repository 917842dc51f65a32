"""Chunks of trials: the finiteness check agrees with np.isfinite on every kind of array."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.audit.trials import all_finite


@settings(max_examples=150, deadline=None)
@given(
    size=st.integers(0, 300),
    columns=st.sampled_from([1, 3]),
    bad=st.sampled_from([None, np.nan, np.inf, -np.inf, "both-infinities", 1e200]),
    position=st.floats(0.0, 1.0),
    layout=st.sampled_from(["flat", "matrix", "column-view", "transposed", "float32"]),
)
def test_all_finite_agrees_with_isfinite(size, columns, bad, position, layout):
    x = np.random.default_rng(size).normal(size=(size, columns))
    if size and bad is not None:
        i = min(size - 1, int(position * size))
        if bad == "both-infinities":
            x[i, 0], x[(i + 1) % size, -1] = np.inf, -np.inf
        else:
            x[i, 0] = bad  # 1e200 is finite, but its square overflows: the slow path decides
    with np.errstate(over="ignore"):  # 1e200 in float32 is inf: still a fair case
        views = {
            "flat": x.ravel(), "matrix": x, "column-view": x[:, 0], "transposed": x.T,
            "float32": x.astype(np.float32),
        }
        arr = views[layout]
        assert all_finite(arr) == bool(np.all(np.isfinite(arr)))
