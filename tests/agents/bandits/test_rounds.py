"""What the bandit agents share: the policy table of a round, ties, the episode cap, and the batched twin that is
the same rule with n trials — bit for bit the reference agent trial by trial, empty slots included."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.bandits.rounds import TrialChannel
from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.batching import SPAWNED_STREAMS, BatchRandomness, PerTrialRandomness, run_batch
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.core.tapes import ordinary_tapes, run_on_tapes, tape_arrays
from dpverify.agents.registry import AGENTS, batched_twin, build_agent, build_environment
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism

ENVS = {"jdp-linucb": ("linear-bandit", {"dim": 3, "num_arms": 4, "num_contexts": 3}),
        "ldp-linucb": ("linear-bandit", {"dim": 3, "num_arms": 4, "num_contexts": 3}),
        "dp-ucb": ("bernoulli-bandit", {"num_arms": 4})}
CLAIM = {"epsilon": 1.0, "delta": 1e-5}


def _reference(agent: str, mdp, K: int, seed: int, tapes, options: dict):
    board = Billboard(options.get("relation", "replace-one"), keep_history=True)
    built = build_agent(agent, mdp, K, np.random.default_rng(np.random.SeedSequence(seed)), options, billboard=board)
    return run_on_tapes(built, mdp, tapes), board.history()


@pytest.mark.parametrize(("agent", "relation"), [("jdp-linucb", "replace-one"), ("jdp-linucb", "add-remove-one"),
                                                 ("ldp-linucb", "replace-one"), ("dp-ucb", "replace-one"),
                                                 ("dp-ucb", "add-remove-one")])
def test_the_twin_is_the_reference_agent_trial_by_trial(agent: str, relation: str) -> None:
    env, env_options = ENVS[agent]
    K, n = 12, 3
    mdp = build_environment(env, K, env_options)
    tapes = list(ordinary_tapes(mdp, K, 7))
    if relation == "add-remove-one":
        tapes[2] = tapes[6] = None  # empty slots: the round happens, no user
    options = {**CLAIM, "relation": relation}
    references = [_reference(agent, mdp, K, 100 + i, tapes, options) for i in range(n)]
    twin = batched_twin(agent, options)
    assert twin is not None
    generators = [np.random.default_rng(np.random.SeedSequence(100 + i)) for i in range(n)]
    batched = twin(mdp, K, options, PerTrialRandomness(generators, SPAWNED_STREAMS), None)
    initial, table = tape_arrays(tapes)
    policies = run_batch(batched, initial, table, empty=[k for k, t in enumerate(tapes) if t is None])
    for i, (reference_policies, history) in enumerate(references):
        assert all(np.array_equal(policies[k + 1][i], reference_policies[k]) for k in range(K))
        assert len(batched.releases) == len(history)
        for (family, episode, stage, value), release in zip(batched.releases, history, strict=True):
            assert (family, episode, stage) == (release.family, release.episode, release.stage)
            assert np.array_equal(value[i], release.value)


def test_a_round_deploys_an_arm_per_context_and_arm_zero_at_the_outcomes() -> None:
    mdp = build_environment("linear-bandit", 5, {"dim": 3, "num_arms": 4, "num_contexts": 3})
    agent = build_agent("jdp-linucb", mdp, 5, np.random.default_rng(0), CLAIM)
    policy = agent.begin_episode()
    assert policy.shape == (1, mdp.num_states) and np.all(policy[0, 3:] == 0)
    assert np.all((policy[0, :3] >= 0) & (policy[0, :3] < 4))


def test_ties_are_broken_at_random() -> None:
    mdp = build_environment("bernoulli-bandit", 5, {"num_arms": 4})
    first = {int(build_agent("ucb", mdp, 5, np.random.default_rng(s)).begin_episode()[0, 0]) for s in range(40)}
    assert first == {0, 1, 2, 3}  # every arm unpulled (index +∞): each chosen


@pytest.mark.parametrize("agent", sorted(ENVS))
def test_a_round_past_the_cap_is_refused(agent: str) -> None:
    env, env_options = ENVS[agent]
    mdp = build_environment(env, 3, env_options)
    built = build_agent(agent, mdp, 3, np.random.default_rng(0), CLAIM)
    run_episodes(mdp, built, 3, np.random.default_rng(1))
    with pytest.raises(InvalidParameterError, match="episodes"):
        built.begin_episode()
    twin = AGENTS[agent].batched
    assert twin is not None
    batched = twin(mdp, 3, CLAIM, BatchRandomness(np.random.default_rng(0), 4), None)
    initial, table = tape_arrays(ordinary_tapes(mdp, 3, 0))
    run_batch(batched, initial, table)
    with pytest.raises(InvalidParameterError, match="episodes"):
        batched.begin_episode()


def test_the_trial_channel_keeps_the_recorded_episodes_only() -> None:
    channel = TrialChannel(BatchRandomness(np.random.default_rng(0), 5), record=[2])
    mechanism = GaussianMechanism(1.0, 1.0, 3)
    for t in (1, 2, 3):
        noisy = channel.release(t, "x", mechanism, "current", np.zeros((5, 3)))
        assert noisy.shape == (5, 3) and np.all(noisy != 0)
    assert [(f, e, s) for f, e, s, _ in channel.releases] == [("x", 2, 1)]


def test_the_local_agent_has_no_empty_slot_but_a_no_data_round() -> None:
    env, env_options = ENVS["ldp-linucb"]
    mdp = build_environment(env, 4, env_options)
    board = Billboard("replace-one", keep_history=True)
    agent = build_agent("ldp-linucb", mdp, 4, np.random.default_rng(0), CLAIM, billboard=board)
    agent.begin_episode()
    with pytest.raises(InvalidParameterError, match="empty slot"):
        agent.end_episode(None)
    agent.end_episode_without_data()
    assert [r.family for r in board.messages_of(1)] == ["gram", "target"]
    run_episodes(mdp, agent, 3, np.random.default_rng(1), users=False)
    assert board.ledger.n_releases == 8
