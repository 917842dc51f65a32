"""Helpers shared by the tests of the private agents (Luyo et al. 2021, Ngo et al. 2022, Liao et al. 2021).

Not a test module: the agents' test files import it (pytest puts this folder on the import path).
"""

from __future__ import annotations

import numpy as np

from dpverify.agents.core.base import rollout, run_episodes


def make_agent(agent_class, config_class, mdp, episodes, seed, billboard=None, **options):
    """``agent_class(mdp, config_class(episodes, **options), rng)`` with ε = 1 unless given; the rng is
    seeded by ``SeedSequence(seed)``."""
    options.setdefault("epsilon", 1.0)
    return agent_class(mdp, config_class(episodes, **options), np.random.default_rng(np.random.SeedSequence(seed)),
                       billboard=billboard)


def drive(agent, trajectories):
    """Feed fixed trajectories; return the deployed policies and the Q tables after each begin_episode."""
    policies, qs = [], []
    for trajectory in trajectories:
        policies.append(agent.begin_episode())
        qs.append(agent.q.copy())
        agent.end_episode(trajectory)
    return policies, qs


def record_live_run(agent, mdp, episodes, env_rng):
    """Run ``episodes`` episodes on a live billboard; return the trajectories and the Q table of each episode."""
    trajectories, qs = [], []
    for _ in range(episodes):
        policy = agent.begin_episode()
        qs.append(agent.q.copy())
        trajectory = rollout(mdp, policy, env_rng)
        trajectories.append(trajectory)
        agent.end_episode(trajectory)
    return trajectories, qs


def assert_only_later_q_tables_move(live_q, base_q, changed_user) -> None:
    """The Q tables up to ``changed_user``'s episode are unchanged, some later one moved."""
    assert all(np.array_equal(a, b) for a, b in zip(live_q[:changed_user], base_q[:changed_user], strict=True))
    assert any(not np.allclose(a, b) for a, b in zip(live_q[changed_user:], base_q[changed_user:], strict=True))


def assert_learns(mdp, agent_class, config, seed):
    """Run ``config.num_episodes`` episodes (agent and environment seeded from ``SeedSequence(seed)``); assert
    the last fifth's mean regret is at most half the first fifth's, the policy changed at least 10 times, and —
    against the control that could fake it — at most half the last fifth's regret of the same agent and seeds
    given no user data (:mod:`dpverify.agents.core.learning`). Returns the agent and the per-episode regret."""
    K = config.num_episodes
    agent_seed, env_seed = np.random.SeedSequence(seed).spawn(2)
    agent = agent_class(mdp, config, np.random.default_rng(agent_seed))
    regret, changed = run_episodes(mdp, agent, K, np.random.default_rng(env_seed))
    control = agent_class(mdp, config, np.random.default_rng(agent_seed))
    control_regret, _ = run_episodes(mdp, control, K, np.random.default_rng(env_seed), users=False)
    fifth = K // 5
    assert regret[-fifth:].mean() <= 0.5 * regret[:fifth].mean()
    assert changed.sum() >= 10
    assert regret[-fifth:].mean() <= 0.5 * control_regret[-fifth:].mean(), "no better than with no user data"
    return agent, regret
