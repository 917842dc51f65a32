"""The statistics of the learning comparison: Holm over a K* grid and the exact paired sign-flip test."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpverify.agents.core.learning import (
    LEVEL,
    compare_learning,
    exact_sign_flip_p_value,
    holm_adjusted,
    holm_first_step,
    paired_p_value,
)
from dpverify.agents.envs import min2021_mdp
from dpverify.errors import InvalidParameterError


def test_holm_against_a_hand_computed_example():
    # sorted 0.005, 0.01, 0.03, 0.04 with m = 4: 4·0.005 = 0.02, 3·0.01 = 0.03, 2·0.03 = 0.06, max(0.06, 1·0.04)
    assert holm_adjusted([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # a search that stopped at its second step of a four-step grid: the steps not run count as p = 1
    assert holm_adjusted([0.9, 0.0396], family_size=4) == pytest.approx([1.0, 0.1584])
    assert holm_first_step([0.9, 0.0396], 4) is None
    assert holm_first_step([0.9, 0.0035], 4) == 1  # 4 · 0.0035 = 0.014 < 0.05
    assert holm_adjusted([None, 0.2], 3) == [None, pytest.approx(0.6)]


def test_holm_refuses_bad_input():
    with pytest.raises(InvalidParameterError, match="family_size"):
        holm_adjusted([0.1, 0.2, 0.3], family_size=2)
    with pytest.raises(InvalidParameterError, match="p_values"):
        holm_adjusted([1.5])


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_exact_sign_flip_matches_scipy_permutation_test(n):
    rng = np.random.default_rng(n)
    for shift in (0.0, 0.7, -0.4):
        agent, control = rng.normal(size=n), rng.normal(size=n) + shift
        ours = exact_sign_flip_p_value(agent, control)
        theirs = stats.permutation_test((agent, control), lambda x, y, axis: np.mean(x - y, axis=axis),
                                        permutation_type="samples", alternative="less", n_resamples=np.inf,
                                        vectorized=True).pvalue
        assert ours == pytest.approx(theirs, abs=1e-12)


@pytest.mark.parametrize("n", [3, 5, 7])
def test_exact_sign_flip_on_signed_ranks_is_the_exact_wilcoxon_test(n):
    rng = np.random.default_rng(10 + n)
    differences = rng.normal(size=n) - 0.3
    signed_ranks = np.sign(differences) * stats.rankdata(np.abs(differences))
    wilcoxon = stats.wilcoxon(differences, alternative="less", method="exact").pvalue
    assert exact_sign_flip_p_value(signed_ranks, np.zeros(n)) == pytest.approx(wilcoxon, abs=1e-12)


def test_exact_sign_flip_edges():
    assert exact_sign_flip_p_value([1.0], [2.0]) is None
    assert exact_sign_flip_p_value(np.zeros(5), np.ones(5)) == pytest.approx(1 / 32)  # the floor 2⁻ⁿ
    assert exact_sign_flip_p_value(np.ones(4), np.ones(4)) == 1.0  # no difference is never a gain
    with pytest.raises(InvalidParameterError, match="finite"):
        exact_sign_flip_p_value([np.nan, 1.0], [0.0, 0.0])


def test_compare_learning_reports_the_exact_p_value():
    rng = np.random.default_rng(0)
    agent = rng.random((5, 50))
    result = compare_learning(agent, agent + 0.1 + 0.01 * rng.random((5, 50)), min2021_mdp(horizon=3, num_actions=4))
    assert result.exact_p_value == pytest.approx(1 / 32) and result.to_dict()["exact_p_value"] == result.exact_p_value
    assert "exact sign-flip p = 0.031" in result.line()


p_values = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(p_values, st.integers(0, 4))
def test_corrected_decision_is_never_yes_where_the_uncorrected_one_is_no(ps, untested):
    adjusted = holm_adjusted(ps, len(ps) + untested)
    for p, q in zip(ps, adjusted, strict=True):
        assert q >= p
        assert not (q < LEVEL and p >= LEVEL)
    first = holm_first_step(ps, len(ps) + untested)
    uncorrected = next((i for i, p in enumerate(ps) if p < LEVEL), None)
    assert first is None or (uncorrected is not None and first >= uncorrected)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(-5, 5)), min_size=2, max_size=8))
def test_exact_p_value_is_a_probability_on_the_two_to_the_n_lattice(pairs):
    agent, control = np.array(pairs).T
    p = exact_sign_flip_p_value(agent, control)
    n = len(pairs)
    assert 2.0**-n <= p <= 1.0 and float(p * 2**n).is_integer()
    assert paired_p_value(agent, control) is not None
