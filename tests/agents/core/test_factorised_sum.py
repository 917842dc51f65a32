"""The factorisation mechanism with a square-root BLT factor (dpverify.agents.core.factorised_sum) and DP-LSVI-UCB++ on
it (aggregation="factorised"): the factor against the exact square root, the decoder's prefix noise by recursion
vs matrix algebra vs simulation, unbiased prefixes, the ledger's weighted per-user ρ against brute force,
accounting = claim, the white-box checks (a release of the raw prefix under the factor's label is caught, the
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
from dpverify.agents.core.factorised_sum import (
    FactorisedSum,
    max_prefix_noise_factor,
    prefix_noise_factors,
    square_root_blt,
    square_root_coefficients,
)
from dpverify.agents.dp_lsvi_ucb_pp.tree import dp_lsvi_ucbpp_tree_schedule, max_prefix_nodes, tree_noise_stds
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.registry import AGENTS
from dpverify.calibration import calibrate
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger, ToeplitzFactor, user_pattern
from dpverify.mechanisms import GaussianMechanism
from dpverify.testing import CONTRACT_PROPERTIES, assert_private_agent
from dpverify.whitebox import Subject, WhiteBoxPlan, check_releases

make_agent = functools.partial(make_dp_lsvi_ucbpp, aggregation="factorised")
factors = st.builds(lambda t, w: ToeplitzFactor(tuple(t), tuple(w[:len(t)]) + (0.5,) * (len(t) - len(w))),
                    st.lists(st.floats(0.0, 2.0), min_size=1, max_size=4),
                    st.lists(st.floats(0.0, 0.99), min_size=1, max_size=4))


def toeplitz(factor: ToeplitzFactor, n: int) -> np.ndarray:
    c = factor.coefficients(n)
    return np.array([[c[k - u] if k >= u else 0.0 for u in range(n)] for k in range(n)])


def test_the_square_root_coefficients_square_to_the_prefix_sum_matrix() -> None:
    c = square_root_coefficients(30)
    C = np.array([[c[k - u] if k >= u else 0.0 for u in range(30)] for k in range(30)])
    assert np.allclose(C @ C, np.tril(np.ones((30, 30))), atol=1e-12)


@pytest.mark.parametrize("K", [10, 1000, 100_000])
def test_the_blt_factor_is_close_to_the_square_root_and_as_good(K: int) -> None:
    factor = square_root_blt(K)
    exact = square_root_coefficients(K)
    assert np.max(np.abs(factor.coefficients(K) / exact - 1.0)) < 0.25
    sensitivity2 = float((factor.coefficients(K) ** 2).sum())
    product = sensitivity2 * max_prefix_noise_factor(factor, K)
    assert product <= 1.05 * float((exact**2).sum()) ** 2  # within 5% of the exact square root's error
    assert product < 0.25 * K.bit_length() * max_prefix_nodes(K) or K < 100  # far below the binary tree's


@settings(max_examples=25, deadline=None)
@given(factors, st.integers(1, 25))
def test_prefix_noise_by_recursion_equals_the_rows_of_a_c_inverse(factor: ToeplitzFactor, K: int) -> None:
    """Two routes to the decoder's noise: the impulse-response recursion and ‖row k of A C⁻¹‖² by matrix algebra."""
    B = np.tril(np.ones((K, K))) @ np.linalg.inv(toeplitz(factor, K))
    rows = np.concatenate(([0.0], (B**2).sum(axis=1)[:-1]))  # index n: the prefix over users 1..n
    assert np.allclose(prefix_noise_factors(factor, K), rows, rtol=1e-9, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(factors, st.integers(1, 30), st.integers(1, 30), st.integers(0, 29))
def test_weighted_counts_match_brute_force(factor: ToeplitzFactor, first: int, extra: int, shift: int) -> None:
    last = first + extra
    u = np.arange(1, last + 1, dtype=np.int64)
    c = factor.coefficients(last + 1)
    expected = np.array([sum(c[k - v] ** 2 for k in range(max(first, v), last + 1)) for v in u])
    got = factor.counts_at(first, last, u)
    assert np.all(got >= expected) and np.allclose(got, expected, rtol=1e-12)  # never below, never far
    assert np.array_equal(factor.weights_at(np.arange(1, last + 1), 1 + shift % last)[:shift % last], np.zeros(
        shift % last))


def test_patterns_round_trip_through_their_names_and_refuse_bad_factors() -> None:
    factor = square_root_blt(1000)
    assert user_pattern(factor.kind) == factor
    ledger = PrivacyLedger()
    ledger.record_block("x", (1, 50), (1, 2), GaussianMechanism(1.0, 1.0, 3), factor)
    assert PrivacyLedger.from_json(ledger.to_json()) == ledger
    for thetas, omegas in (((-0.1,), (0.5,)), ((0.1,), (1.0,)), ((0.1, 0.2), (0.5,)), ((float("nan"),), (0.5,))):
        with pytest.raises(InvalidParameterError):
            ToeplitzFactor(thetas, omegas)
    with pytest.raises(InvalidParameterError, match="toeplitz"):
        user_pattern("toeplitz:0.1/x")


def _sum(K: int, seed: int, sigma: float = 1.0, shape: tuple[int, ...] = (3,)) -> tuple[FactorisedSum, Billboard]:
    board = Billboard(keep_history=True, keep_noise=True)
    mechanism = GaussianMechanism(1.0, sigma, int(np.prod(shape)))
    return FactorisedSum(board, "x", mechanism, square_root_blt(K), 2, shape, K, np.random.default_rng(seed)), board


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_prefix_is_the_exact_sum_plus_noise_that_does_not_depend_on_the_data(K: int, seed: int) -> None:
    data = np.random.default_rng(seed).normal(size=(K, 2, 3))
    with_data, board = _sum(K, seed)
    without, _ = _sum(K, seed)
    for k in range(K):
        with_data.add(data[k])
        without.add(None)
        assert np.allclose(with_data.prefix - without.prefix, data[:k + 1].sum(axis=0), atol=1e-8)
    # Each release is row k of C·x plus its noise: C applied to the data, recovered from the two runs.
    C = toeplitz(with_data.factor, K)
    raw = {r.episode: r.value - r.noise for r in board.history() if r.stage == 1}
    assert np.allclose(np.array([raw[k + 1] for k in range(K)]), C @ data[:, 0], atol=1e-9)


def test_simulated_prefix_noise_matches_the_recursion() -> None:
    """4000 coordinates per episode: the sample variance of the decoded prefix noise is within 10% of σ²·Σ b_j²."""
    K, sigma = 30, 1.3
    counter, _ = _sum(K, 5, sigma, (2000,))
    expected = prefix_noise_factors(counter.factor, K + 1)
    for k in range(1, K + 1):
        counter.add(None)
        assert counter.prefix.var() == pytest.approx(sigma**2 * expected[k], rel=0.1)


# ---- DP-LSVI-UCB++ on the factorisation --------------------------------------------------------------------


def test_schedule_counts_the_worst_user_s_weighted_releases() -> None:
    H, K = 3, 25
    schedule = dp_lsvi_ucbpp_tree_schedule(H, K, 2, 2, counter="factorised")
    factor = square_root_blt(K)
    assert {s.users for s in schedule.statistics} == {factor}
    worst, total = schedule.release_counts()
    exact = 2 * H * float((factor.coefficients(K) ** 2).sum())
    assert exact <= worst <= exact * (1 + 1e-12) and total == 2 * H * K
    cal = calibrate(schedule, 1.0, 1e-5)
    assert cal.releases_counted == worst and cal.accounted_epsilon <= 1.0


@pytest.mark.parametrize("conversion", ["exact", "bun-steinke"])
def test_ledger_accounts_to_the_claim(conversion: str) -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 25
    agent = make_agent(mdp, episodes, 0, epsilon=1.0, delta=1e-5, conversion=conversion)
    run_episodes(mdp, agent, episodes, env_rng(0))
    schedule = dp_lsvi_ucbpp_tree_schedule(mdp.horizon, episodes, mdp.dim, mdp.num_states, counter="factorised")
    assert_accounts_to_the_claim(agent, schedule, ("gram", "next_state"), conversion, 1.0, 1e-5)


def test_the_planner_reads_less_noise_than_on_either_tree() -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 200
    stds = {agg: make_dp_lsvi_ucbpp(mdp, episodes, 0, epsilon=5.0, aggregation=agg).noise_values["lambda_tilde"]
            for agg in ("tree", "honaker", "factorised")}
    assert stds["factorised"] < stds["honaker"] < stds["tree"]
    agent = make_agent(mdp, episodes, 0, epsilon=5.0)
    s, _ = tree_noise_stds(agent.calibration, 3, mdp.num_states, episodes, "factorised")
    c = max_prefix_noise_factor(square_root_blt(episodes), episodes)
    assert s == pytest.approx(agent.calibration.mechanism("gram").noise_scale * math.sqrt(c))


def test_meets_the_private_agent_contract() -> None:
    result = assert_private_agent(AGENTS["dp-lsvi-ucb++"].factory, min2021_mdp(horizon=4, num_actions=5),
                                  num_episodes=20, options={"epsilon": 1.0, "aggregation": "factorised"},
                                  name="dp-lsvi-ucb++ factorised")
    assert [p.name for p in result.properties] == list(CONTRACT_PROPERTIES)


WHITEBOX_MDP = min2021_mdp(horizon=2, num_actions=3)


def unfactorised(mdp, num_episodes, rng, /, *, billboard=None, **options):
    """DP-LSVI-UCB++ whose Gram counter releases the raw running sum (C = A, every weight 1) while the ledger still
    records the square-root factor's weights c_(k−u) < 1: user u is charged far less than its data move."""
    agent = AGENTS["dp-lsvi-ucb++"].factory(mdp, num_episodes, rng, billboard=billboard, **options)
    counter = agent.statistics.gram_tree
    counter._thetas = np.ones_like(counter._thetas) / len(counter.factor.thetas)
    counter._omegas = np.ones_like(counter._omegas)
    return agent


def test_the_white_box_checks_pass_the_agent_and_catch_releases_heavier_than_their_weights() -> None:
    plan = WhiteBoxPlan(8, search_episodes=6, claim_epsilon=1.0)
    options = {"epsilon": 1.0, "aggregation": "factorised"}
    correct = check_releases(Subject(AGENTS["dp-lsvi-ucb++"].factory, WHITEBOX_MDP, 8, options, name="factorised"),
                             plan)
    assert correct.status == "pass", correct.summary()
    assert {f.family for f in correct.sensitivity} == {"gram", "next_state"}
    assert all(f.ratio <= 1.0 + 1e-9 for f in correct.sensitivity)
    bug = check_releases(Subject(unfactorised, WHITEBOX_MDP, 8, options, name="unfactorised"), plan)
    assert bug.status == "fail", bug.summary()
    assert "sensitivity within the record" in [c.name for c in bug.checks if c.status == "fail"], bug.summary()
