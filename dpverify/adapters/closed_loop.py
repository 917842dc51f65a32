"""Code that owns its loop, driven one step at a time: :class:`ClosedLoopAgent`.

Much RL code is a closed loop — ``run(env)`` resets the environment at the start of each episode, steps it
``H`` times and learns in between, all in one function. dpverify's protocol instead asks the agent for each
action (:mod:`dpverify.agents.core.tapes`, step level). :class:`ClosedLoopAgent` joins the two: the user's loop
runs in a thread of its own on a :class:`LoopEnv`, whose ``reset()`` and ``step(action)`` hand control back
to dpverify, which answers with the user's states as it plays the episode. Exactly one side runs at any
time (every hand-off waits for the other), so the run is as deterministic as the code and the seeds.

**The environment it sees** follows Gymnasium's conventions (https://gymnasium.farama.org, ``Env.reset``
and ``Env.step``) without depending on it: ``reset(seed=None, options=None) -> (state, info)``;
``step(action) -> (next_state, reward, terminated, truncated, info)``, ``terminated`` True at the episode's
H-th step; ``observation_space.n``, ``action_space.n`` and ``horizon``. A ``seed`` passed to ``reset`` is
ignored (the auditor chooses the users). The user's loop must run exactly H steps per episode and may run
at most K episodes.

**Timing.** The user's code runs between two hand-offs; dpverify waits at most the call limit
(:func:`dpverify.limits.call_timeout`, ``--call-timeout``) for the next one, then raises
:class:`~dpverify.usercode.UserCodeTimeout` naming "its loop"; an exception in the loop is a
:class:`~dpverify.usercode.UserCodeError` "(in its loop)". A loop thread left waiting (a run stopped before
its K episodes) is ended when the agent is collected (:meth:`ClosedLoopAgent.close`).

An empty slot (``end_episode(None)``, the add/remove-one neighbour) cannot be expressed to a loop that
expects a user every episode: such agents are audited under replace-one.
"""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dpverify.errors import InvalidParameterError
from dpverify.limits import call_timeout
from dpverify.usercode import UserCodeError, UserCodeTimeout


class LoopProtocolError(InvalidParameterError):
    """The user's loop broke the environment's protocol (stepped past an episode, reset mid-episode...)."""


class _Closed(BaseException):
    """Raised inside the user's loop (at its pending ``reset``/``step``) to end a thread nobody drives any more."""


@dataclass(frozen=True)
class Discrete:
    """A finite space {0, …, n − 1} (the ``n`` of Gymnasium's ``spaces.Discrete``)."""

    n: int

    def contains(self, x: object) -> bool:
        return isinstance(x, int) and 0 <= x < self.n


class LoopEnv:
    """The environment the user's loop is given (module docstring): each call hands control to dpverify."""

    def __init__(self, channel: _Channel, num_states: int, num_actions: int, horizon: int) -> None:
        self._channel = channel
        self.observation_space = Discrete(num_states)
        self.action_space = Discrete(num_actions)
        self.horizon = horizon

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        state = self._channel.user_says(("reset", None))
        return int(state), {}

    def step(self, action: Any) -> tuple[int, float, bool, bool, dict[str, Any]]:
        state, reward, terminated = self._channel.user_says(("action", action))
        return int(state), float(reward), bool(terminated), False, {}


class _Channel:
    """The two hand-off queues between dpverify (the main side) and the user's loop (its thread)."""

    def __init__(self) -> None:
        self.to_user: queue.Queue[Any] = queue.Queue(maxsize=1)
        self.to_main: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)

    def user_says(self, event: tuple[str, Any]) -> Any:
        """(User side) report ``event`` and wait for dpverify's answer."""
        self.to_main.put(event)
        answer = self.to_user.get()
        if answer is _CLOSE:
            raise _Closed
        return answer


_CLOSE = object()


def _close(channel: _Channel, thread: threading.Thread | None) -> None:
    """End a loop thread waiting at a hand-off (the agent is done with, or was collected)."""
    if thread is None or not thread.is_alive() or thread is threading.current_thread():
        return
    try:
        channel.to_user.put_nowait(_CLOSE)
    except queue.Full:  # pragma: no cover - the user side holds an unread answer: it is running, not waiting
        return
    thread.join(timeout=1.0)


class ClosedLoopAgent:
    """A step-level agent (``act``/``observe``/``end_episode``) driving ``loop(env)`` (module docstring).

    ``mdp`` gives the sizes of the :class:`LoopEnv`; ``name`` is used in messages; ``protocol`` is an object
    whose attributes answer for the rest of the private-agent protocol (``billboard``, ``ledger``, ``config``,
    ``claimed_guarantee``, ``settings``, ``privacy_notion``...), looked up there when this object lacks them;
    ``around`` (e.g. a :class:`~dpverify.adapters.SeededGlobalRng`) has ``enter()``/``leave()`` called around
    every stretch of the user's code.
    """

    def __init__(self, loop: Callable[[LoopEnv], Any], mdp: Any, *, name: str = "closed-loop agent",
                 protocol: Any = None, around: Any = None) -> None:
        if not callable(loop):
            raise InvalidParameterError("loop", "must be callable as loop(env)", type(loop).__name__)
        self._loop, self._name, self._protocol, self._around = loop, name, protocol, around
        self._horizon, self._num_actions = int(mdp.horizon), int(mdp.num_actions)
        self._channel = _Channel()
        self._env = LoopEnv(self._channel, int(mdp.num_states), self._num_actions, self._horizon)
        self._thread: threading.Thread | None = None
        self._pending: tuple[str, Any] | None = None  # what the user's loop said last (unanswered)
        self._reward = 0.0
        self._episodes = 0
        self._finalizer: weakref.finalize | None = None

    # ---- the protocol's other attributes ---------------------------------------------------------------

    def __getattr__(self, attribute: str) -> Any:
        protocol = self.__dict__.get("_protocol")
        if protocol is None or attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(protocol, attribute)

    # ---- driving the loop --------------------------------------------------------------------------------

    @staticmethod
    def _run_loop(loop: Callable[[LoopEnv], Any], env: LoopEnv, channel: _Channel) -> None:
        """The loop thread's body (it holds no reference to the agent, which may then be collected)."""
        try:
            loop(env)
        except _Closed:
            return
        except BaseException as exc:  # the user's code: said by the main side
            channel.to_main.put(("error", exc))
            return
        channel.to_main.put(("done", None))

    def _hand_over(self, send: Callable[[], None]) -> tuple[str, Any]:
        """Let the user's loop run (``send`` wakes it) and wait for what it says next; ``around`` is entered
        before it wakes and left after it has said it (so every draw of the user's code is inside)."""
        limit = call_timeout()
        if self._around is not None:
            self._around.enter()
        try:
            send()
            event = self._channel.to_main.get(timeout=limit)
        except queue.Empty:
            raise UserCodeTimeout(self._name, "its loop", limit, "--call-timeout") from None
        finally:
            if self._around is not None:
                self._around.leave()
        if event[0] == "error":
            exc = event[1]
            raise UserCodeError(self._name, "its loop", type(exc).__name__, str(exc)) from exc
        return event

    def _answer(self, value: Any) -> tuple[str, Any]:
        return self._hand_over(lambda: self._channel.to_user.put(value))

    def _start(self) -> tuple[str, Any]:
        self._thread = threading.Thread(target=self._run_loop, args=(self._loop, self._env, self._channel),
                                        name=f"dpverify loop: {self._name}", daemon=True)
        self._finalizer = weakref.finalize(self, _close, self._channel, self._thread)
        return self._hand_over(self._thread.start)

    def _expect(self, event: tuple[str, Any], kind: str, when: str) -> Any:
        said, value = event
        if said == kind:
            return value
        if said == "done":
            raise LoopProtocolError("loop", f"ended after {self._episodes} episodes, {when}", self._name)
        what = "reset the environment" if said == "reset" else "stepped the environment"
        raise LoopProtocolError("loop", f"{what} {when}", self._name)

    def act(self, h: int, state: int) -> Any:
        """The action the user's loop takes at stage ``h`` (0-based) in ``state``."""
        if h == 0:
            event = self._start() if self._thread is None else self._pending
            if event is None:
                raise LoopProtocolError("act", "at stage 1 must follow the previous episode's end_episode", h)
            self._expect(event, "reset", "where an episode was to begin")
            self._episodes += 1
            event = self._answer(state)
        else:
            event = self._answer((state, self._reward, False))
        self._pending = None
        return self._expect(event, "action", f"before stage {h + 1} of episode {self._episodes} (H = {self._horizon})")

    def observe(self, h: int, state: int, action: int, reward: float, next_state: int) -> None:
        """The reward of the step (the loop gets it with the next state, at the next hand-off)."""
        self._reward = float(reward)

    def end_episode(self, trajectory: Any) -> None:
        """The episode's last step answered (``terminated``); the loop learns until it resets or returns."""
        if trajectory is None:
            raise InvalidParameterError("end_episode(None)", "cannot be told to a closed-loop agent, whose loop "
                                        "expects a user every episode: audit it under replace-one", self._name)
        final = int(trajectory.states[-1])
        self._pending = self._answer((final, self._reward, True))
        if self._pending[0] == "action":
            raise LoopProtocolError("loop", f"stepped past the end of episode {self._episodes} "
                                    f"(H = {self._horizon} steps, terminated was True)", self._name)

    def close(self) -> None:
        """End the loop thread if it waits at a hand-off (also done when the agent is collected)."""
        if self._finalizer is not None:
            self._finalizer()
