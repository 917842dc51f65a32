"""Helpers shared by the tests of DP-LSVI-UCB++, fresh (test_dp_lsvi_ucb_pp.py) and tree-aggregated
(test_tree.py), and of the counters it runs on (core/test_dyadic_tree.py, core/test_factorised_sum.py). Not a
test module: pytest puts tests/agents on the import path, so it is ``dp_lsvi_ucb_pp.runs``."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.base import Trajectory, rollout, run_episodes
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp import DpLsviUcbPlusPlus, DpLsviUcbPlusPlusConfig
from dpverify.calibration import calibrate


def make_agent(mdp, episodes: int, seed: int, billboard: Billboard | None = None, **options) -> DpLsviUcbPlusPlus:
    """DP-LSVI-UCB++ with ε = 100 unless given, seeded by the first child of ``SeedSequence(seed)``."""
    options.setdefault("epsilon", 100.0)
    config = DpLsviUcbPlusPlusConfig(episodes, **options)
    agent_seed, _ = np.random.SeedSequence(seed).spawn(2)
    return DpLsviUcbPlusPlus(mdp, config, np.random.default_rng(agent_seed), billboard=billboard)


def env_rng(seed: int) -> np.random.Generator:
    """The environment's generator: the second child of ``SeedSequence(seed)``."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[1])


def altered(trajectory: Trajectory, mdp) -> Trajectory:
    """Another user's data: flip every state and take a different action at every stage."""
    states = (trajectory.states + 1) % mdp.num_states
    actions = (trajectory.actions + 1) % mdp.num_actions
    return Trajectory(states, actions, mdp.rewards[np.arange(mdp.horizon), states[:-1], actions])


def record_run(agent, mdp, episodes: int, rng: np.random.Generator) -> tuple[list, list]:
    """Run ``episodes`` episodes; return the trajectories and (copies of) the deployed policies."""
    trajectories, policies = [], []
    for _ in range(episodes):
        policy = agent.begin_episode()
        policies.append(policy.copy())
        trajectory = rollout(mdp, policy, rng)
        trajectories.append(trajectory)
        agent.end_episode(trajectory)
    return trajectories, policies


def feed(agent, trajectories) -> None:
    """Begin every episode and end it with the given trajectory (whatever the deployed policy)."""
    for trajectory in trajectories:
        agent.begin_episode()
        agent.end_episode(trajectory)


def assert_learns(mdp, make, episodes: int, seed: int) -> None:
    """Over ``episodes`` episodes of the agent ``make()`` builds, the last fifth's mean regret is at most half the
    first fifth's, the policy changed at least 5 times, and — against the control that could fake it — the last
    fifth's regret is at most half that of a second ``make()`` run on the same seeds with no user data
    (:mod:`dpverify.agents.core.learning`); and the agent switched at least once."""
    agent = make()
    regret, changed = run_episodes(mdp, agent, episodes, env_rng(seed))
    control, _ = run_episodes(mdp, make(), episodes, env_rng(seed), users=False)
    fifth = episodes // 5
    assert regret[-fifth:].mean() <= 0.5 * regret[:fifth].mean()
    assert changed.sum() >= 5
    assert regret[-fifth:].mean() <= 0.5 * control[-fifth:].mean(), "no better than with no user data"
    assert agent.num_switches >= 1


def assert_accounts_to_the_claim(agent, schedule, families: tuple[str, ...], conversion: str, epsilon: float,
                                 delta: float) -> None:
    """After a run of ``schedule.episodes`` episodes: every family released as often as the schedule plans (once
    per (episode, stage), or per node of a dyadic level), the ledger accounts to the claim (ε within 10⁻⁹ below
    the target) and the noise is the calibrator's for ``schedule``."""
    expected = calibrate(schedule, epsilon, delta, conversion)
    planned = {f.family: f.n_releases for f in expected.ledger().account(delta).families}
    assert set(planned) == set(families)
    assert agent.ledger.n_releases == sum(planned.values())
    account = agent.ledger.account(delta)
    assert {f.family: f.n_releases for f in account.families} == planned
    claim = agent.claimed_guarantee()
    accounted = agent.ledger.guarantee(delta, conversion)
    assert claim.delta == accounted.delta == delta
    assert accounted.epsilon == pytest.approx(claim.epsilon, rel=1e-12)
    assert epsilon * (1 - 1e-9) <= accounted.epsilon <= epsilon
    for family in families:
        for stage in expected.released_stages(family):
            assert agent.calibration.mechanism(family, stage) == expected.mechanism(family, stage)
