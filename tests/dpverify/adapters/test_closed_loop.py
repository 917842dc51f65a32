"""ClosedLoopAgent: a user's loop run(env) driven one step at a time, its protocol errors, faults and hangs."""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from typing import Any

import numpy as np
import pytest

greenlet = pytest.importorskip("greenlet", reason="greenlet, a dependency of dpverify, is not installed here")

from dpverify.adapters import ClosedLoopAgent, LoopProtocolError, SeededGlobalRng  # noqa: E402
from dpverify.adapters.global_rng import keep_installed  # noqa: E402
from dpverify.agents.core.base import play_step_by_step, run_episodes  # noqa: E402
from dpverify.agents.envs import min2021_mdp  # noqa: E402
from dpverify.errors import InvalidParameterError  # noqa: E402
from dpverify.usercode import UserCodeError, UserCodeTimeout  # noqa: E402

MDP = min2021_mdp(horizon=3, num_actions=4)


def _deterministic_next(h: int, s: int, a: int) -> int:
    return (s + a) % MDP.num_states


class Recorder:
    """A loop of the shape RL code has: reset, then H steps, over K episodes; it records what it saw."""

    def __init__(self, episodes: int) -> None:
        self.episodes, self.seen = episodes, []

    def __call__(self, env: Any) -> None:
        for _ in range(self.episodes):
            state, info = env.reset(seed=123)
            assert info == {}
            seen = [state]
            terminated = False
            h = 0
            while not terminated:
                state, reward, terminated, truncated, _ = env.step((h + state) % env.action_space.n)
                assert truncated is False
                seen += [reward, state]
                h += 1
            self.seen.append(seen)


def _play(agent: Any, episodes: int) -> list[Any]:
    return [play_step_by_step(agent, MDP, k % 2, _deterministic_next, k + 1)[1] for k in range(episodes)]


def test_the_loop_sees_the_states_and_rewards_of_the_episodes_played() -> None:
    loop = Recorder(3)
    agent = ClosedLoopAgent(loop, MDP)
    trajectories = _play(agent, 3)
    assert len(loop.seen) == 3
    for seen, trajectory in zip(loop.seen, trajectories, strict=True):
        assert seen[0::2] == [int(s) for s in trajectory.states]
        assert seen[1::2] == pytest.approx([float(r) for r in trajectory.rewards])
        assert [int(a) for a in trajectory.actions] == [(h + int(s)) % 4 for h, s in enumerate(trajectory.states[:-1])]
    assert agent._user is not None and agent._user.dead  # the loop returned after its K episodes


def test_the_environment_follows_gymnasium_conventions() -> None:
    spaces: dict[str, Any] = {}

    def loop(env: Any) -> None:
        spaces.update(obs=env.observation_space.n, act=env.action_space.n, horizon=env.horizon,
                      contains=(env.action_space.contains(3), env.action_space.contains(4)))
        env.reset()
        for _ in range(env.horizon):
            env.step(0)

    _play(ClosedLoopAgent(loop, MDP), 1)
    assert spaces == {"obs": MDP.num_states, "act": 4, "horizon": 3, "contains": (True, False)}


def test_regret_of_a_closed_loop_agent_is_run_like_any_step_level_agent() -> None:
    regret, _ = run_episodes(MDP, ClosedLoopAgent(Recorder(5), MDP), 5, np.random.default_rng(0))
    assert regret.shape == (5,) and np.all(np.isfinite(regret))


def test_a_loop_that_steps_past_the_episode_is_named() -> None:
    def loop(env: Any) -> None:
        env.reset()
        for _ in range(env.horizon + 1):
            env.step(0)

    with pytest.raises(LoopProtocolError, match="stepped past the end of episode 1"):
        _play(ClosedLoopAgent(loop, MDP), 1)


def test_a_loop_that_resets_mid_episode_is_named() -> None:
    def loop(env: Any) -> None:
        env.reset()
        env.step(0)
        env.reset()

    with pytest.raises(LoopProtocolError, match="reset the environment before stage 2 of episode 1"):
        _play(ClosedLoopAgent(loop, MDP), 1)


def test_a_loop_that_ends_early_refuses_the_next_episode() -> None:
    agent = ClosedLoopAgent(Recorder(1), MDP)
    _play(agent, 1)
    with pytest.raises(LoopProtocolError, match="ended after 1 episodes"):
        agent.act(0, 0)


def test_an_exception_in_the_loop_is_the_users_and_names_the_loop() -> None:
    def loop(env: Any) -> None:
        env.reset()
        raise KeyError("no such table")

    with pytest.raises(UserCodeError, match=r"the agent peer raised KeyError: 'no such table' \(in its loop\)"):
        _play(ClosedLoopAgent(loop, MDP, name="peer"), 1)


def test_a_loop_that_hangs_is_stopped_at_the_call_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPVERIFY_CALL_TIMEOUT", "0.3")
    release = threading.Event()

    def loop(env: Any) -> None:
        env.reset()
        release.wait(30)

    start = time.perf_counter()
    with pytest.raises(UserCodeTimeout, match=r"did not return from its loop within 0.3 s \(the --call-timeout"):
        _play(ClosedLoopAgent(loop, MDP), 1)
    assert time.perf_counter() - start < 10
    release.set()


def test_ctrl_c_in_the_loop_is_never_made_the_user_s_error() -> None:
    def loop(env: Any) -> None:
        env.reset()
        raise KeyboardInterrupt  # where a real Ctrl-C lands: the loop runs in this thread

    with pytest.raises(KeyboardInterrupt):
        _play(ClosedLoopAgent(loop, MDP), 1)


def test_a_seeded_global_stream_is_swapped_once_per_run_inside_keep_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    def loop(env: Any) -> None:
        for _ in range(3):
            env.reset()
            for _ in range(env.horizon):
                env.step(int(np.random.randint(4)))  # noqa: NPY002 (code as it is written)

    def actions(keep: bool) -> tuple[list[int], int]:
        swaps = []
        set_state = np.random.set_state
        monkeypatch.setattr(np.random, "set_state", lambda state: swaps.append(1) or set_state(state))
        agent = ClosedLoopAgent(loop, MDP, around=SeededGlobalRng(np.random.default_rng(5)))
        with keep_installed() if keep else contextlib.nullcontext():
            played = [int(a) for t in _play(agent, 3) for a in t.actions]
        monkeypatch.setattr(np.random, "set_state", set_state)
        return played, len(swaps)

    caller = np.random.get_state()  # noqa: NPY002
    (kept, kept_swaps), (each, each_swaps) = actions(True), actions(False)
    assert kept == each  # the same draws
    assert kept_swaps == 2  # in once and out once for the run
    assert each_swaps == 2 * (1 + 3 * (MDP.horizon + 1))  # without it, in and out at each of the 13 stretches
    assert all(np.array_equal(a, b) for a, b in zip(caller, np.random.get_state(), strict=True))  # noqa: NPY002


def test_an_empty_slot_is_refused_with_the_relation_to_use() -> None:
    agent = ClosedLoopAgent(Recorder(2), MDP)
    _play(agent, 1)
    with pytest.raises(InvalidParameterError, match="replace-one"):
        agent.end_episode(None)


def test_close_ends_a_loop_waiting_at_a_switch_and_collection_does_too() -> None:
    cleaned: list[str] = []

    def loop(env: Any) -> None:
        try:
            Recorder(5)(env)
        finally:
            cleaned.append("clean-up ran")

    agent = ClosedLoopAgent(loop, MDP)
    _play(agent, 2)
    user = agent._user
    assert user is not None and user and not user.dead  # waiting at its next reset
    agent.close()
    assert user.dead and cleaned == ["clean-up ran"]
    with pytest.raises(LoopProtocolError, match="ended after 2 episodes"):
        agent.act(0, 0)
    other = ClosedLoopAgent(loop, MDP)
    _play(other, 1)
    user = other._user
    assert user is not None and not user.dead
    del other
    gc.collect()
    assert user.dead and cleaned == ["clean-up ran"] * 2


def test_a_loop_that_swallows_the_close_and_steps_on_is_ended_all_the_same() -> None:
    def loop(env: Any) -> None:
        env.reset()
        try:
            env.step(0)
        except BaseException:  # code that swallows everything, GreenletExit included
            pass
        env.step(0)  # raises GreenletExit again, without switching: the agent is closed

    agent = ClosedLoopAgent(loop, MDP)
    agent.act(0, 0)
    agent.close()
    assert agent._user is not None and agent._user.dead


def test_a_closed_loop_agent_runs_inside_a_caller_s_own_greenlet() -> None:
    """The loop switches back to whoever drives it: here a greenlet of the caller's, not the main one."""
    loop = Recorder(2)
    driver = greenlet.greenlet(lambda: _play(ClosedLoopAgent(loop, MDP), 2))
    trajectories = driver.switch()
    assert driver.dead and len(trajectories) == 2 and len(loop.seen) == 2


def test_the_protocol_object_answers_for_the_rest_of_the_protocol() -> None:
    class Protocol:
        privacy_notion = "jdp"
        ledger = "the ledger"

    agent = ClosedLoopAgent(Recorder(1), MDP, protocol=Protocol())
    assert agent.privacy_notion == "jdp" and agent.ledger == "the ledger"
    with pytest.raises(AttributeError):
        _ = agent.settings  # neither the adapter nor its protocol has it
    assert not hasattr(ClosedLoopAgent(Recorder(1), MDP), "ledger")


def test_around_brackets_every_stretch_of_the_users_code() -> None:
    events: list[str] = []

    class Around:
        def enter(self) -> None:
            events.append("enter")

        def leave(self) -> None:
            events.append("leave")

    def loop(env: Any) -> None:
        env.reset()
        for _ in range(env.horizon):
            events.append("user")
            env.step(0)

    _play(ClosedLoopAgent(loop, MDP, around=Around()), 1)
    assert events.count("enter") == events.count("leave") == 5  # start, H − 1 steps, the end of the episode
    for i, event in enumerate(events):
        if event == "user":
            assert events[:i].count("enter") == events[:i].count("leave") + 1


def test_a_loop_that_is_not_callable_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="loop"):
        ClosedLoopAgent("run", MDP)  # type: ignore[arg-type]
