"""Exact planning (dpverify.agents.core.planning) against brute force and Monte-Carlo rollouts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.agents.core.base import rollout
from dpverify.agents.core.planning import (
    DeterministicPolicyEvaluator,
    maximizing_actions,
    optimal_values,
    policy_value,
    policy_values,
    regret,
    sample_greedy_actions,
    uniform_greedy_policy,
)
from dpverify.agents.envs.linear_mdp import FiniteMDP
from dpverify.agents.envs.random_mdps import random_linear_mdp
from dpverify.errors import InvalidParameterError


def random_tabular(rng: np.random.Generator, s: int, a: int, h: int, ties: bool) -> FiniteMDP:
    transitions = rng.dirichlet(np.full(s, 0.5), size=(h, s, a))
    rewards = rng.random((h, s, a))
    if ties:  # duplicate action 0 into action 1 so that ties occur
        transitions[:, :, 1] = transitions[:, :, 0]
        rewards[:, :, 1] = rewards[:, :, 0]
    return FiniteMDP(transitions, rewards, rng.dirichlet(np.ones(s)))


def all_deterministic_policies(h: int, s: int, a: int):
    for choice in itertools.product(range(a), repeat=h * s):
        yield np.array(choice, dtype=np.int64).reshape(h, s)


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(2, 2, 3), (3, 2, 2), (2, 3, 2), (1, 3, 3)]),
       ties=st.booleans())
def test_optimal_value_equals_brute_force(seed: int, shape: tuple[int, int, int], ties: bool) -> None:
    s, a, h = shape
    mdp = random_tabular(np.random.default_rng(seed), s, a, h, ties)
    solution = optimal_values(mdp)
    values = [policy_value(mdp, p) for p in all_deterministic_policies(h, s, a)]
    assert solution.value == pytest.approx(max(values), abs=1e-12)
    # every policy that picks optimal actions everywhere is optimal, and only those reach V* everywhere
    for policy in all_deterministic_policies(h, s, a):
        picks_optimal = all(solution.optimal_actions[t, x, policy[t, x]] for t in range(h) for x in range(s))
        v = policy_values(mdp, policy)
        if picks_optimal:
            np.testing.assert_allclose(v, solution.values, atol=1e-12)
        else:
            assert np.any(v[:h] < solution.values[:h] - 1e-12)
    assert regret(mdp, solution.policy(), solution) == pytest.approx(0.0, abs=1e-12)


def test_ties_keep_full_set() -> None:
    mdp = random_tabular(np.random.default_rng(0), 2, 3, 2, ties=True)
    solution = optimal_values(mdp)
    for t in range(2):
        for x in range(2):
            if solution.optimal_actions[t, x, 0]:
                assert solution.optimal_actions[t, x, 1]


def test_stochastic_policy_value_is_the_mixture() -> None:
    mdp = random_tabular(np.random.default_rng(1), 3, 2, 3, ties=False)
    # a policy mixing two deterministic policies at one (stage, state) only, with weight 0.3
    p0 = np.zeros((3, 3), dtype=np.int64)
    p1 = p0.copy()
    p1[0] = 1  # differs only at stage 0, which mixes linearly
    mixed = np.eye(2)[p0] * 0.7 + np.eye(2)[p1] * 0.3
    assert policy_value(mdp, mixed) == pytest.approx(0.7 * policy_value(mdp, p0) + 0.3 * policy_value(mdp, p1))


def test_policy_value_against_monte_carlo() -> None:
    mdp = random_linear_mdp(np.random.default_rng(2), num_states=4, num_actions=3, dim=3, horizon=5, concentration=1.0)
    rng = np.random.default_rng(7)
    policy = rng.integers(0, 3, size=(5, 4))
    n = 20_000
    returns = np.array([rollout(mdp, policy, rng).rewards.sum() for _ in range(n)])
    # returns lie in [0, 5]: std error <= 2.5/sqrt(n) ~ 0.018; tolerance 5 standard errors of the sample
    tolerance = 5 * returns.std(ddof=1) / np.sqrt(n)
    assert abs(returns.mean() - policy_value(mdp, policy)) < tolerance


def test_deterministic_evaluator_matches_policy_value() -> None:
    mdp = random_linear_mdp(np.random.default_rng(3), num_states=3, num_actions=4, dim=2, horizon=4)
    evaluator = DeterministicPolicyEvaluator(mdp)
    rng = np.random.default_rng(0)
    for _ in range(20):
        policy = rng.integers(0, 4, size=(4, 3))
        assert evaluator.value(policy) == pytest.approx(policy_value(mdp, policy), abs=1e-12)
        assert evaluator.regret(policy) == pytest.approx(regret(mdp, policy), abs=1e-12)
        assert evaluator.regret(policy) >= -1e-12


def test_sample_greedy_actions_is_uniform_over_ties() -> None:
    q = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
    rng = np.random.default_rng(0)
    draws = sample_greedy_actions(np.broadcast_to(q, (30_000, 5)).copy(), rng)
    counts = np.bincount(draws, minlength=5)
    assert counts[0] == counts[3] == 0
    # each tied action has probability 1/3: binomial std ~ 82, margin 5 std
    assert np.all(np.abs(counts[[1, 2, 4]] - 10_000) < 410)
    np.testing.assert_allclose(uniform_greedy_policy(q), [0, 1 / 3, 1 / 3, 0, 1 / 3])
    assert maximizing_actions(np.array([1.0, 1.0 + 1e-12, 0.5])).tolist() == [True, True, False]


def test_policy_shape_errors() -> None:
    mdp = random_tabular(np.random.default_rng(4), 2, 2, 2, ties=False)
    with pytest.raises(InvalidParameterError, match="policy must have shape"):
        policy_value(mdp, np.zeros((3, 2), dtype=np.int64))
    with pytest.raises(InvalidParameterError, match="actions must lie"):
        policy_value(mdp, np.full((2, 2), 5))
    with pytest.raises(InvalidParameterError, match="sum to 1"):
        policy_value(mdp, np.full((2, 2, 2), 0.7))
