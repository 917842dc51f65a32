"""Random valid linear and linear mixture MDPs (property test)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dpverify.agents.envs.random_mdps import random_linear_mdp, random_linear_mixture_mdp

sizes = st.tuples(st.integers(1, 5), st.integers(1, 4), st.integers(1, 5), st.integers(1, 4))


@given(sizes=sizes, seed=st.integers(0, 2**32 - 1), concentration=st.sampled_from([0.1, 0.5, 1.0]))
def test_random_instances_are_valid(sizes: tuple[int, int, int, int], seed: int, concentration: float) -> None:
    s, a, d, h = sizes
    rng = np.random.default_rng(seed)
    linear = random_linear_mdp(rng, s, a, d, h, concentration, stage_independent_features=bool(seed % 2))
    assert linear.transitions.shape == (h, s, a, s)
    assert np.linalg.norm(linear.features, axis=-1).max() <= 1 + 1e-12
    np.testing.assert_allclose(linear.transitions, np.einsum("hsad,hdt->hsat", linear.features, linear.mu))
    mixture = random_linear_mixture_mdp(rng, s, a, d, h, concentration)
    assert mixture.transitions.shape == (h, s, a, s)
    assert mixture.feature_norm_bound <= 1 + 1e-12
