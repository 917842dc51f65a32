"""Identical seeds give identical outputs: every agent's deployed policies pinned at small K.

Each case runs an agent for K = 40 episodes from fixed seeds and compares a digest of the 40 deployed
(H, S) policies, the exact cumulative regret and (for private agents) the ledger with values recorded
from a reference run. Refactors and speed-ups of the agents must leave all of them unchanged.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from dpverify.agents.core.base import rollout
from dpverify.agents.core.planning import DeterministicPolicyEvaluator
from dpverify.agents.core.runner import RunSpec, build_agent, build_environment

EPISODES = 40
LINEAR = {"horizon": 5, "num_actions": 8}
MIXTURE = {"horizon": 4, "dim": 3}

# (agent, env, agent options, env options, policy digest, cumulative regret, ledger releases)
CASES = [
    ("lsvi-ucb", "min2021", {}, LINEAR, "da7b3da8424e03d8", 6.86, None),
    ("lsvi-ucb++", "min2021", {}, LINEAR, "aca82dcb6e7c39e2", 6.86, None),
    ("ucrl-vtr", "zhou2021", {}, MIXTURE, "8561c6d2b89a5a79", 3.854031016244318, None),
    ("dp-lsvi-ucb++", "min2021", {"epsilon": 5.0}, LINEAR, "ad4dbd1d242f1780", 71.05, 4 * 5 * 40),
    ("luyo", "min2021", {"epsilon": 5.0, "batch_length": 3}, LINEAR, "f42142b3f5161654", 69.58, 3 * 5 * 40),
    ("ngo", "min2021", {"epsilon": 5.0}, LINEAR, "fac4d2c799c569a1", 80.85, None),
    ("ldp-ucrl-vtr", "zhou2021", {"epsilon": 5.0}, MIXTURE, "c2378fb32af62ec2", 4.416703444876657, 2 * 4 * 40),
    ("lsvi-ucb", "random-linear", {}, {"seed": 3}, "eed86a22cede90b6", 3.890064663685829, None),
    ("dp-lsvi-ucb++", "random-linear", {"epsilon": 50.0, "switching": False}, {"seed": 3}, "51c24e60a6aa9371",
     1.3173180119975973, 4 * 3 * 40),
    ("luyo", "random-linear", {"epsilon": 50.0}, {"seed": 3}, "f82f8fb85eec1fce", 11.86252665165517, 3 * 3 * 40),
    ("ngo", "random-linear", {"epsilon": 50.0}, {"seed": 3}, "cfc498d66640b5b4", 16.8049039160009, None),
    ("ldp-ucrl-vtr", "random-mixture", {"epsilon": 50.0}, {"seed": 3}, "cc1fc188ab15a990", 4.916519532738376,
     2 * 3 * 40),
]


@pytest.mark.parametrize(("agent_name", "env", "agent_options", "env_options", "digest", "regret", "releases"),
                         CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_outputs_are_pinned(agent_name, env, agent_options, env_options, digest, regret, releases) -> None:
    spec = RunSpec(agent_name, env, EPISODES, num_seeds=1, agent_options=tuple(agent_options.items()),
                   env_options=tuple(env_options.items()))
    mdp = build_environment(spec)
    agent_seed, env_seed = np.random.SeedSequence(7).spawn(2)
    agent = build_agent(spec, mdp, np.random.default_rng(agent_seed))
    evaluator = DeterministicPolicyEvaluator(mdp)
    rng = np.random.default_rng(env_seed)
    policies, regrets = [], []
    for _ in range(EPISODES):
        policy = agent.begin_episode()
        policies.append(policy.copy())
        regrets.append(evaluator.regret(policy))
        agent.end_episode(rollout(mdp, policy, rng))
    assert hashlib.sha256(np.stack(policies).astype(np.int64).tobytes()).hexdigest()[:16] == digest
    assert float(np.sum(regrets)) == pytest.approx(regret, rel=1e-9, abs=1e-9)
    if releases is not None:
        assert agent.ledger.n_releases == releases
