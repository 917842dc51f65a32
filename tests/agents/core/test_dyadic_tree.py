"""The full dyadic tree with Honaker's estimator (dpverify.agents.core.dyadic_tree) and DP-LSVI-UCB++ on it
(aggregation="honaker"): variance by closed form vs least squares vs simulation, unbiased prefixes, the ledger
(one node per level per user), accounting = claim, the white-box checks (a mislabelled level is caught, the
correct agent passes), the private-agent contract."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from dp_lsvi_ucb_pp.runs import assert_accounts_to_the_claim, env_rng
from dp_lsvi_ucb_pp.runs import make_agent as make_dp_lsvi_ucbpp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.core.dyadic_tree import (
    DyadicTreeSum,
    honaker_variance_ratios,
    level_family,
    max_prefix_variance_factor,
    prefix_variance_factors,
)
from dpverify.agents.dp_lsvi_ucb_pp.tree import dp_lsvi_ucbpp_tree_schedule, max_prefix_nodes, tree_noise_stds
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.registry import AGENTS
from dpverify.calibration import calibrate
from dpverify.errors import InvalidParameterError
from dpverify.ledger import DyadicNode
from dpverify.mechanisms import GaussianMechanism
from dpverify.testing import CONTRACT_PROPERTIES, assert_private_agent
from dpverify.whitebox import Subject, WhiteBoxPlan, check_releases

make_agent = functools.partial(make_dp_lsvi_ucbpp, aggregation="honaker")


def released_nodes(k: int, K: int) -> list[tuple[int, int]]:
    """(first user, last user) of every node of the full dyadic tree released by episode k."""
    return [(j * (1 << level) + 1, (j + 1) << level) for level in range(K.bit_length())
            for j in range(k >> level)]


def least_squares_prefix_variance(k: int, K: int) -> float:
    """Var of the best linear unbiased estimate of x_1 + … + x_k from every node released by episode k (unit
    noise per node), by generalised least squares on the design matrix: aᵀ(XᵀX)⁻¹a with a = 1."""
    nodes = released_nodes(k, K)
    design = np.zeros((len(nodes), k))
    for row, (first, last) in enumerate(nodes):
        design[row, first - 1:last] = 1.0
    ones = np.ones(k)
    return float(ones @ np.linalg.solve(design.T @ design, ones))


def test_the_variance_ratios_solve_the_inverse_variance_recursion() -> None:
    ratios = honaker_variance_ratios(20)
    assert ratios[0] == 1.0
    for level in range(1, 20):
        assert ratios[level] == pytest.approx(1.0 / (1.0 + 1.0 / (2.0 * ratios[level - 1])), rel=1e-14)
    assert np.all(np.diff(ratios) < 0) and ratios[-1] > 0.5


@pytest.mark.parametrize("K", [1, 2, 5, 8, 13, 16, 31])
def test_the_prefix_variance_is_the_least_squares_optimum(K: int) -> None:
    """Two routes: the closed form Σ_(bits of k) r_l and generalised least squares on every released node."""
    factors = prefix_variance_factors(K + 1)  # index k: the prefix over users 1..k
    for k in range(1, K + 1):
        assert factors[k] == pytest.approx(least_squares_prefix_variance(k, K), rel=1e-10)
        assert factors[k] <= bin(k).count("1")  # never worse than the binary mechanism's popcount(k)


def test_the_worst_prefix_variance_is_about_half_the_binary_mechanism_s() -> None:
    assert max_prefix_variance_factor(1) == 1.0
    for K in (3000, 10_000, 100_000):
        ratio = max_prefix_variance_factor(K) / max_prefix_nodes(K)
        assert 0.5 < ratio < 0.62


def _tree(K: int, seed: int, sigma: float = 1.0, shape: tuple[int, ...] = (3,)) -> tuple[DyadicTreeSum, Billboard]:
    board = Billboard(keep_history=True)
    mechanisms = [GaussianMechanism(1.0, sigma, int(np.prod(shape)))] * K.bit_length()
    return DyadicTreeSum(board, "x", mechanisms, 2, shape, K, np.random.default_rng(seed)), board


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_prefix_is_the_exact_sum_plus_noise_that_does_not_depend_on_the_data(K: int, seed: int) -> None:
    data = np.random.default_rng(seed).normal(size=(K, 2, 3))
    with_data, _ = _tree(K, seed)
    without, _ = _tree(K, seed)
    for k in range(K):
        with_data.add(data[k])
        without.add(None)
        assert np.allclose(with_data.prefix - without.prefix, data[:k + 1].sum(axis=0), atol=1e-9)


def test_simulated_prefix_variance_matches_the_closed_form() -> None:
    """4000 coordinates per episode (2 stages × 2000-vector): the sample variance of the prefix noise is within
    10% of σ²·Σ r_l at every k (≈ 3.2 standard errors of a variance from 4000 Gaussian draws)."""
    K, sigma = 24, 1.7
    tree, _ = _tree(K, 11, sigma, (2000,))
    factors = prefix_variance_factors(K + 1)
    for k in range(1, K + 1):
        tree.add(None)
        assert tree.prefix.var() == pytest.approx(sigma**2 * factors[k], rel=0.1)


def test_every_node_is_published_once_complete_and_each_user_is_read_once_per_level() -> None:
    K = 13
    tree, board = _tree(K, 0)
    for _ in range(K):
        tree.add(np.ones((2, 3)))
    history = board.history()
    got = sorted({(r.family, r.episode, r.users) for r in history})
    expected = sorted((level_family("x", level), k, f"dyadic-{level}") for level in range(K.bit_length())
                      for k in range(1 << level, K + 1, 1 << level))
    assert got == expected
    per_user = board.ledger.per_user_rho()
    levels_holding = [sum((((u - 1) >> lv) + 1) << lv <= K for lv in range(K.bit_length())) for u in range(1, K + 1)]
    one_release = GaussianMechanism(1.0, 1.0, 3).rho * 2  # two stages
    assert np.allclose(per_user, np.array(levels_holding) * one_release, rtol=1e-12)
    with pytest.raises(InvalidParameterError, match="episodes"):
        tree.add(None)
    with pytest.raises(InvalidParameterError, match="one mechanism per level"):
        DyadicTreeSum(board, "y", [GaussianMechanism(1.0, 1.0, 3)], 2, (3,), K, np.random.default_rng(0))


# ---- DP-LSVI-UCB++ on the dyadic tree -------------------------------------------------------------------


def test_schedule_has_one_family_per_level_and_the_binary_tree_s_per_user_count() -> None:
    H, K = 3, 25
    schedule = dp_lsvi_ucbpp_tree_schedule(H, K, 2, 2, counter="dyadic")
    assert [s.family for s in schedule.statistics] == (
        [f"gram_l{lv}" for lv in range(5)] + [f"next_state_l{lv}" for lv in range(5)])
    assert {s.users for s in schedule.statistics} == {DyadicNode(lv) for lv in range(5)}
    worst, total = schedule.release_counts()
    binary_worst, binary_total = dp_lsvi_ucbpp_tree_schedule(H, K, 2, 2).release_counts()
    assert worst == binary_worst == 2 * H * K.bit_length()
    assert total == 2 * H * sum(K >> lv for lv in range(5)) > binary_total
    cal = calibrate(schedule, 1.0, 1e-5)
    assert cal.rho0 == pytest.approx(calibrate(dp_lsvi_ucbpp_tree_schedule(H, K, 2, 2), 1.0, 1e-5).rho0, rel=1e-9)
    with pytest.raises(InvalidParameterError, match="counter"):
        dp_lsvi_ucbpp_tree_schedule(H, K, 2, 2, counter="ternary")


@pytest.mark.parametrize("conversion", ["exact", "bun-steinke"])
def test_ledger_accounts_to_the_claim(conversion: str) -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 25
    agent = make_agent(mdp, episodes, 0, epsilon=1.0, delta=1e-5, conversion=conversion)
    run_episodes(mdp, agent, episodes, env_rng(0))
    schedule = dp_lsvi_ucbpp_tree_schedule(mdp.horizon, episodes, mdp.dim, mdp.num_states, counter="dyadic")
    assert_accounts_to_the_claim(agent, schedule, tuple(s.family for s in schedule.statistics), conversion, 1.0,
                                 1e-5)


def test_the_planner_s_noise_constants_use_honaker_s_variance() -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 50
    honaker, binary = make_agent(mdp, episodes, 0, epsilon=5.0), make_dp_lsvi_ucbpp(mdp, episodes, 0, epsilon=5.0,
                                                                                      aggregation="tree")
    s, sigma = tree_noise_stds(honaker.calibration, 3, mdp.num_states, episodes, "dyadic")
    c = max_prefix_variance_factor(episodes)
    assert s == pytest.approx(honaker.calibration.mechanism("gram_l0").noise_scale * math.sqrt(c))
    assert sigma == pytest.approx(honaker.calibration.mechanism("next_state_l0").noise_scale * math.sqrt(c)
                                  * 3 * math.sqrt(mdp.num_states))
    assert honaker.shift < binary.shift  # less noise read, a smaller shift
    assert honaker.noise_values["lambda_tilde"] / binary.noise_values["lambda_tilde"] == pytest.approx(
        math.sqrt(c / max_prefix_nodes(episodes)), rel=0.05)


def test_meets_the_private_agent_contract() -> None:
    result = assert_private_agent(AGENTS["dp-lsvi-ucb++"].factory, min2021_mdp(horizon=4, num_actions=5),
                                  num_episodes=20, options={"epsilon": 1.0, "aggregation": "honaker"},
                                  name="dp-lsvi-ucb++ honaker")
    assert [p.name for p in result.properties] == list(CONTRACT_PROPERTIES)


WHITEBOX_MDP = min2021_mdp(horizon=2, num_actions=3)


def mislabelled_honaker(mdp, num_episodes, rng, /, *, billboard=None, **options):
    """Honaker's DP-LSVI-UCB++ whose Gram tree records every level as a leaf ("dyadic-0": reads user k only) —
    the per-user ledger then charges user u for one Gram node instead of one per level."""
    agent = AGENTS["dp-lsvi-ucb++"].factory(mdp, num_episodes, rng, billboard=billboard, **options)
    tree = agent.statistics.gram_tree
    tree.patterns = (DyadicNode(0),) * tree.levels
    return agent


def test_the_white_box_checks_pass_the_agent_and_catch_a_mislabelled_level() -> None:
    plan = WhiteBoxPlan(8, search_episodes=6, claim_epsilon=1.0)
    options = {"epsilon": 1.0, "aggregation": "honaker"}
    correct = check_releases(Subject(AGENTS["dp-lsvi-ucb++"].factory, WHITEBOX_MDP, 8, options, name="honaker"), plan)
    assert correct.status == "pass", correct.summary()
    assert {f.family for f in correct.sensitivity} >= {"gram_l0", "gram_l1", "gram_l2", "next_state_l0"}
    assert all(f.ratio <= 1.0 + 1e-9 for f in correct.sensitivity)
    bug = check_releases(Subject(mislabelled_honaker, WHITEBOX_MDP, 8, options, name="mislabelled"), plan)
    failed = [c.name for c in bug.checks if c.status == "fail"]
    assert bug.status == "fail" and failed == ["release pattern as recorded"], bug.summary()
