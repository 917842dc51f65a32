"""Tree-aggregated DP-LSVI-UCB++ (dpverify.agents.dp_lsvi_ucb_pp.tree, aggregation="tree"): sensitivities,
accounting = claim, fresh noise per tree node, the planner reads only published nodes, billboard structure,
the private-agent contract, learning."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.agents.core.base import rollout, run_episodes
from dpverify.agents.core.billboard import ReplayBillboard
from dpverify.agents.core.runner import RunSpec, run
from dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp import DpLsviUcbPlusPlusConfig
from dpverify.agents.dp_lsvi_ucb_pp.tree import (
    CounterStatistics,
    dp_lsvi_ucbpp_tree_schedule,
    max_prefix_nodes,
    tree_noise_stds,
)
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.registry import AGENTS
from dpverify.calibration import calibrate
from dpverify.errors import InvalidParameterError
from dpverify.testing import CONTRACT_PROPERTIES, assert_private_agent

from .runs import altered, assert_accounts_to_the_claim, assert_learns, env_rng, feed, record_run
from .runs import make_agent as make_dp_lsvi_ucbpp

make_agent = functools.partial(make_dp_lsvi_ucbpp, aggregation="tree")


def lowbit_level(k: int) -> int:
    return (k & -k).bit_length() - 1


# ---- schedule and sensitivities ------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "relation", "gram", "vector"), [
    ("derived", "replace-one", math.sqrt(2) / 16, 2 / 16),
    ("derived", "add-remove-one", 1 / 16, 1 / 16),
    ("paper", "replace-one", math.sqrt(2), 2.0),
])
def test_schedule_families_and_sensitivities(model: str, relation: str, gram: float, vector: float) -> None:
    schedule = dp_lsvi_ucbpp_tree_schedule(4, 10, 3, 2, model, relation)
    specs = {s.family: s for s in schedule.statistics}
    assert set(specs) == {"gram", "next_state"}
    assert specs["gram"].kind == "symmetric-matrix" and specs["gram"].dim == 3
    assert specs["next_state"].kind == "vector" and specs["next_state"].dim == 3 * 2
    assert specs["gram"].sensitivity == pytest.approx(gram)
    assert specs["next_state"].sensitivity == pytest.approx(vector)
    assert {s.users.kind for s in schedule.statistics} == {"tree"}


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["derived", "paper"]))
def test_one_users_term_moves_a_node_by_at_most_the_sensitivity(seed: int, model: str) -> None:
    """Replace one user's term of a node (any features with ‖φ‖ ≤ 1, next states, weights ≤ W): the node moves
    by at most the scheduled sensitivity in Frobenius norm (worst case: orthogonal unit features, W)."""
    H, d, S = 4, 3, 5
    rng = np.random.default_rng(seed)
    W = 1.0 if model == "paper" else 1.0 / H**2
    spec = {s.family: s for s in dp_lsvi_ucbpp_tree_schedule(H, 8, d, S, model).statistics}
    terms = []
    for _ in range(2):
        phi = rng.normal(size=d)
        phi *= rng.uniform(0.0, 1.0) ** 0.1 / np.linalg.norm(phi)
        w = W * rng.uniform(0.5, 1.0)
        e = np.zeros(S)
        e[rng.integers(S)] = 1.0
        terms.append((w * np.outer(phi, phi), w * np.outer(phi, e)))
    assert np.linalg.norm(terms[0][0] - terms[1][0]) <= spec["gram"].sensitivity * (1 + 1e-12)
    assert np.linalg.norm(terms[0][1] - terms[1][1]) <= spec["next_state"].sensitivity * (1 + 1e-12)


def test_max_prefix_nodes_is_the_largest_popcount() -> None:
    for episodes in range(1, 600):
        expected = max(1, max(bin(n).count("1") for n in range(episodes)))
        assert max_prefix_nodes(episodes) == expected
    assert max_prefix_nodes(3000) == 11 and max_prefix_nodes(10_000) == 13


# ---- accounting ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["derived", "paper"])
@pytest.mark.parametrize("conversion", ["exact", "bun-steinke"])
def test_ledger_accounts_to_the_claim_with_2hk_tree_nodes(model: str, conversion: str) -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 25
    agent = make_agent(mdp, episodes, 0, epsilon=1.0, delta=1e-5, sensitivity_model=model, conversion=conversion)
    run_episodes(mdp, agent, episodes, env_rng(0))
    schedule = dp_lsvi_ucbpp_tree_schedule(mdp.horizon, episodes, mdp.dim, mdp.num_states, model)
    assert_accounts_to_the_claim(agent, schedule, ("gram", "next_state"), conversion, 1.0, 1e-5)  # 2HK nodes


def test_each_user_is_read_by_one_node_per_level_at_most() -> None:
    """The worst user (user 1) lies in ⌊log₂K⌋ + 1 nodes per stage and family; the calibration divides ρ
    by 2H(⌊log₂K⌋ + 1), against 4H(K − 1) for the fresh variant."""
    H, episodes = 3, 25
    schedule = dp_lsvi_ucbpp_tree_schedule(H, episodes, 2, 2)
    worst, total = schedule.release_counts()
    assert worst == 2 * H * episodes.bit_length() and total == 2 * H * episodes
    cal = calibrate(schedule, 1.0, 1e-5)
    assert cal.releases_counted == 2 * H * 5
    # User u's count at one (stage, family) = number of levels l whose dyadic block containing u is released.
    for u in range(1, episodes + 1):
        nodes = [k for k in range(1, episodes + 1) if k - (k & -k) < u <= k]
        assert len(nodes) <= episodes.bit_length()
        assert len({lowbit_level(k) for k in nodes}) == len(nodes)  # one per level


# ---- releases: fresh noise per node, the planner reads only published nodes ------------------------------


def test_fresh_noise_at_every_node_with_the_calibrated_scale() -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 40
    agent = make_agent(mdp, episodes, 1, keep_history=True, keep_noise=True, epsilon=1.0)
    run_episodes(mdp, agent, episodes, env_rng(1))
    history = agent.billboard.history()
    assert len(history) == 2 * 3 * episodes
    assert {r.users for r in history} == {"tree"}
    draws = [r.noise for r in history]
    assert all(n is not None and np.all(np.isfinite(n)) for n in draws)
    fingerprints = {tuple(np.round(np.abs(n).ravel()[:3], 12)) for n in draws}
    assert len(fingerprints) == len(draws)
    # The noise has the calibrated scale (not smaller): 1080 GOE off-diagonal entries (std s) and 4800
    # Gaussian coordinates (std σ); the sample std is within 10% (≈ 4 and 7 standard errors).
    s = agent.calibration.mechanism("gram").noise_scale
    sigma = agent.calibration.mechanism("next_state").noise_scale
    upper = np.triu_indices(mdp.dim, 1)
    off_diagonal = np.concatenate([r.noise[upper] for r in history if r.family == "gram"])
    vector = np.concatenate([r.noise.ravel() for r in history if r.family == "next_state"])
    assert off_diagonal.std() == pytest.approx(s, rel=0.1)
    assert vector.std() == pytest.approx(sigma, rel=0.1)


def test_prefix_read_at_episode_k_is_the_sum_of_published_nodes_of_k_minus_1() -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 23
    agent = make_agent(mdp, episodes, 3, keep_history=True)
    rng = env_rng(3)
    stats = agent.statistics
    assert isinstance(stats, CounterStatistics)
    for k in range(1, episodes + 1):
        trajectory = rollout(mdp, agent.begin_episode(), rng)
        published = {(r.family, r.episode, r.stage): r.value for r in agent.billboard.history()}
        nodes, n = [], k - 1  # the binary decomposition of k − 1: right ends k − 1, then minus its lowbit, ...
        while n > 0:
            nodes.append(n)
            n -= n & -n
        for h in range(mdp.horizon):
            gram = sum((published[("gram", e, h + 1)] for e in nodes), np.zeros((mdp.dim, mdp.dim)))
            assert np.allclose(stats.gram_tree.prefix[h], gram, rtol=0, atol=1e-12)
            m = sum((published[("next_state", e, h + 1)] for e in nodes), np.zeros(mdp.dim * mdp.num_states))
            v = np.arange(mdp.num_states, dtype=float)
            assert np.allclose(stats.release_sums(h, v, v)[0], m.reshape(mdp.dim, mdp.num_states) @ v, atol=1e-12)
        agent.end_episode(trajectory)


def test_oversized_weights_are_refused() -> None:
    # (that the statistics offer no raw read is tests/agents/dp_lsvi_ucb_pp/test_dp_lsvi_ucb_pp.py's)
    mdp = min2021_mdp(horizon=3, num_actions=4)
    agent = make_agent(mdp, 5, 0)
    trajectory = rollout(mdp, agent.begin_episode(), np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="weights"):
        agent.statistics.add_user(trajectory.states, trajectory.actions, np.full(3, 1.0))  # > 1/H²


def test_billboard_structure_other_users_data_reaches_policies_only_through_the_billboard() -> None:
    mdp = min2021_mdp(horizon=4, num_actions=5)
    episodes, changed_user = 40, 3
    original = make_agent(mdp, episodes, 2, keep_history=True)
    trajectories, policies = record_run(original, mdp, episodes, env_rng(2))
    modified = list(trajectories)
    modified[changed_user - 1] = altered(trajectories[changed_user - 1], mdp)

    replay = make_agent(mdp, episodes, 2, billboard=ReplayBillboard(original.billboard.history(), "replace-one"))
    for k in range(episodes):
        assert np.array_equal(replay.begin_episode(), policies[k]), f"episode {k + 1}"
        replay.end_episode(modified[k])
    assert replay.ledger == original.ledger

    # Control: a live billboard with the same noise does publish different nodes once user 3 is in them.
    live = make_agent(mdp, episodes, 2, keep_history=True)
    feed(live, modified)
    pairs = list(zip(original.billboard.history(), live.billboard.history(), strict=True))
    assert all(np.array_equal(a.value, b.value) for a, b in pairs if a.episode < changed_user)
    assert any(not np.allclose(a.value, b.value) for a, b in pairs if a.episode >= changed_user)


def test_meets_the_private_agent_contract() -> None:
    result = assert_private_agent(AGENTS["dp-lsvi-ucb++"].factory, min2021_mdp(horizon=4, num_actions=5),
                                  num_episodes=20, options={"epsilon": 1.0, "aggregation": "tree"},
                                  name="dp-lsvi-ucb++ tree")
    assert [p.name for p in result.properties] == list(CONTRACT_PROPERTIES)
    assert result.notion == "jdp"


# ---- learning, settings, registration --------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(2))
def test_learns_on_small_min2021_at_generous_epsilon(seed: int) -> None:
    mdp = min2021_mdp(horizon=5, num_actions=10)
    episodes = 300
    assert_learns(mdp, lambda: make_agent(mdp, episodes, seed, epsilon=100.0), episodes, seed)


def test_constants_are_evaluated_for_the_prefix_noise() -> None:
    mdp = min2021_mdp(horizon=3, num_actions=4)
    episodes = 50
    agent = make_agent(mdp, episodes, 0, epsilon=5.0)
    s_prefix, sigma_prefix = tree_noise_stds(agent.calibration, 3, mdp.num_states, episodes)
    c = max_prefix_nodes(episodes)
    assert s_prefix == pytest.approx(agent.calibration.mechanism("gram").noise_scale * math.sqrt(c))
    assert sigma_prefix == pytest.approx(agent.calibration.mechanism("next_state").noise_scale * math.sqrt(c)
                                         * 3 * math.sqrt(mdp.num_states))
    assert agent.noise_values["rho_lambda"] == pytest.approx(3 * episodes / s_prefix**2)
    assert agent.noise_values["rho_L"] == pytest.approx(8 * 3**3 * episodes / sigma_prefix**2)
    assert agent.shift == pytest.approx(2 * agent.noise_values["lambda_tilde"])


def test_runner_option_and_invalid_aggregation() -> None:
    result = run(RunSpec("dp-lsvi-ucb++", "min2021", 6, num_seeds=1,
                         agent_options={"epsilon": 2.0, "aggregation": "tree"},
                         env_options={"horizon": 3, "num_actions": 4}))
    settings = result.seeds[0].agent_settings
    assert settings["aggregation"] == "tree"
    assert set(settings["noise_std"]) == {"gram", "next_state"}
    assert settings["accounted_epsilon"] <= 2.0
    with pytest.raises(InvalidParameterError, match="aggregation"):
        DpLsviUcbPlusPlusConfig(10, epsilon=1.0, aggregation="dyadic")
    assert DpLsviUcbPlusPlusConfig(10, epsilon=1.0).aggregation == "fresh"
