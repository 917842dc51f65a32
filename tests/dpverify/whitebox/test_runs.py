"""Controlled runs: the seeds reproduce a run, a replay keeps what would have been published, faults are caught."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.tapes import ordinary_tapes
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.registry import AGENTS
from dpverify.whitebox.runs import CouldNotRun, PatternChanged, Subject, fresh_generator, run_agent, same_policies

MDP = min2021_mdp(horizon=3, num_actions=3)


def subject(name: str = "luyo", **options):
    return Subject(AGENTS[name].factory, MDP, 6, {"epsilon": 1.0, **options}, name=name)


def seeds(n: int = 3):
    return np.random.SeedSequence(5).spawn(n)


def test_fresh_generators_repeat_their_streams_even_after_spawning() -> None:
    seed = seeds(1)[0]
    first = fresh_generator(seed)
    first.spawn(2)
    assert fresh_generator(seed).spawn(1)[0].random() == fresh_generator(seed).spawn(1)[0].random()


def test_the_same_seeds_reproduce_a_run_and_another_noise_seed_changes_only_self_noised_values() -> None:
    coins, noise, other = seeds()
    users = list(ordinary_tapes(MDP, 6, 1))
    recorded = run_agent(subject(), users, coins=coins, noise=noise)
    assert recorded.n_releases == MDP.horizon * 3 * 6 and all(r.noise is not None for r in recorded.releases)
    replay = run_agent(subject(), users, coins=coins, noise=noise, recorded=recorded)
    assert same_policies(recorded, replay) is None
    assert all(np.array_equal(a.value, b.value) for a, b in zip(recorded.releases, replay.releases, strict=True))
    # the billboard draws Luyo et al.'s noise from the agent's generator: another billboard seed changes nothing
    moved = run_agent(subject(), users, coins=coins, noise=other, recorded=recorded)
    assert all(np.array_equal(a.value, b.value) for a, b in zip(recorded.releases, moved.releases, strict=True))


def test_agent_faults_are_one_line_reasons() -> None:
    def raising(mdp, num_episodes, rng, /, **options):
        raise RuntimeError("boom\nsecond line")

    coins, noise, _ = seeds()
    with pytest.raises(CouldNotRun, match=r"raised RuntimeError: boom second line \(in its factory\)"):
        run_agent(Subject(raising, MDP, 2, {}, name="x"), [None, None], coins=coins, noise=noise)

    def own_board(mdp, num_episodes, rng, /, *, billboard=None, **options):
        return AGENTS["luyo"].factory(mdp, num_episodes, rng, **options)

    with pytest.raises(CouldNotRun, match="does not publish on the billboard it is given"):
        run_agent(Subject(own_board, MDP, 2, {"epsilon": 1.0}, name="x"), [None, None], coins=coins, noise=noise)


def test_a_replay_whose_release_pattern_leaves_the_record_raises_pattern_changed() -> None:
    coins, noise, _ = seeds()
    users = list(ordinary_tapes(MDP, 6, 1))
    recorded = run_agent(subject(), users, coins=coins, noise=noise)
    shorter = run_agent(subject(), users[:4], coins=coins, noise=noise)
    with pytest.raises(PatternChanged):
        run_agent(subject(), users, coins=coins, noise=noise, recorded=shorter)
    with pytest.raises(PatternChanged, match="of the recorded run's"):
        run_agent(subject(), users[:4], coins=coins, noise=noise, recorded=recorded)


def test_a_policy_of_the_wrong_kind_is_named() -> None:
    class Floats:
        billboard = None

        def begin_episode(self):
            return np.zeros((MDP.horizon, MDP.num_states))

    def factory(mdp, num_episodes, rng, /, *, billboard=None, **options):
        agent = Floats()
        agent.billboard = billboard
        return agent

    coins, noise, _ = seeds()
    with pytest.raises(CouldNotRun, match="policy.*integer array"):
        run_agent(Subject(factory, MDP, 1, {}, name="floats"), [None], coins=coins, noise=noise)


def test_a_run_notes_where_each_users_data_first_reached_the_agent() -> None:
    """A table agent gets user k's data at end_episode(k), after the releases of begin_episode(k); a release before
    that position cannot read user k."""
    mdp = min2021_mdp(horizon=2, num_actions=3)
    run = run_agent(Subject(AGENTS["dp-lsvi-ucb++"].factory, mdp, 4, {"epsilon": 1.0}),
                    list(ordinary_tapes(mdp, 4, 0)), coins=np.random.SeedSequence(1), noise=np.random.SeedSequence(2))
    per_episode = run.n_releases // 4
    assert run.data_seen_at == tuple(per_episode * k for k in range(1, 5))
    assert all(r.episode == 1 for r in run.releases[:run.data_seen_at[0]])
