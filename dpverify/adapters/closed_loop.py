"""Code that owns its loop, driven one step at a time: :class:`ClosedLoopAgent`.

Much RL code is a closed loop — ``run(env)`` resets the environment at the start of each episode, steps it
``H`` times and learns in between, all in one function. dpverify's protocol instead asks the agent for each
action (:mod:`dpverify.agents.core.tapes`, step level). :class:`ClosedLoopAgent` joins the two: the user's loop
runs in a greenlet of its own (a coroutine with its own stack, https://greenlet.readthedocs.io) on a
:class:`LoopEnv`, whose ``reset()`` and ``step(action)`` switch back to dpverify, which answers with the
user's states as it plays the episode. Exactly one side runs at any time, in one thread, so the run is as
deterministic as the code and the seeds; a switch costs well under a microsecond (``benchmarks/
bench_closed_loop.py switches``: 10 to 20 times less than the hand-off between two OS threads it replaces).

**The environment it sees** follows Gymnasium's conventions (https://gymnasium.farama.org, ``Env.reset``
and ``Env.step``) without depending on it: ``reset(seed=None, options=None) -> (state, info)``;
``step(action) -> (next_state, reward, terminated, truncated, info)``, ``terminated`` True at the episode's
H-th step; ``observation_space.n``, ``action_space.n`` and ``horizon``. A ``seed`` passed to ``reset`` is
ignored (the auditor chooses the users). The user's loop must run exactly H steps per episode and may run
at most K episodes.

**A bandit** (:mod:`dpverify.agents.envs.bandit`) is offered as one: :meth:`ClosedLoopAgent.bandit` gives the loop a
:class:`BanditLoopEnv`, ``context()`` / ``arms()`` / ``pull(arm) -> reward``, one user per round, mapped onto
the horizon-1 episodes underneath, so the user writes no encoding.

**Timing.** A stretch of the user's code (from one switch to the next) past the call limit
(:func:`dpverify.limits.call_timeout`, ``--call-timeout``; enforced where :func:`dpverify.usercode.time_limit` is)
raises :class:`~dpverify.usercode.UserCodeTimeout` naming "its loop"; an exception in the loop is a
:class:`~dpverify.usercode.UserCodeError` "(in its loop)". A loop left waiting (a run stopped before its K
episodes) gets ``GreenletExit`` at its pending ``reset``/``step`` from :meth:`ClosedLoopAgent.close` or when the
agent is collected.

An empty slot (``end_episode(None)``, the add/remove-one neighbour) cannot be expressed to a loop that
expects a user every episode: such agents are audited under replace-one, and their no-data control is fed
data-free users (:mod:`dpverify.agents.core.no_data`).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import greenlet
import numpy as np

from dpverify.errors import InvalidParameterError
from dpverify.limits import call_timeout
from dpverify.usercode import LimitExceeded, UserCodeError, UserCodeTimeout, time_limit


class LoopProtocolError(InvalidParameterError):
    """The user's loop broke the environment's protocol (stepped past an episode, reset mid-episode...)."""


@dataclass(frozen=True)
class Discrete:
    """A finite space {0, …, n − 1} (the ``n`` of Gymnasium's ``spaces.Discrete``)."""

    n: int

    def contains(self, x: object) -> bool:
        return isinstance(x, int) and 0 <= x < self.n


class LoopEnv:
    """The environment the user's loop is given (module docstring): each call switches to ``driver``, the
    greenlet that drives the loop (it holds no reference to the agent, which may then be collected)."""

    def __init__(self, num_states: int, num_actions: int, horizon: int) -> None:
        self.observation_space = Discrete(num_states)
        self.action_space = Discrete(num_actions)
        self.horizon = horizon
        self.driver: greenlet.greenlet | None = None
        self.closed = False

    def _say(self, event: tuple[str, Any]) -> Any:
        if self.closed or self.driver is None:
            raise greenlet.GreenletExit
        return self.driver.switch(event)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        return int(self._say(("reset", None))), {}

    def step(self, action: Any) -> tuple[int, float, bool, bool, dict[str, Any]]:
        state, reward, terminated = self._say(("action", action))
        return int(state), float(reward), bool(terminated), False, {}


class BanditLoopEnv:
    """The bandit a loop is given by :meth:`ClosedLoopAgent.bandit`: each round one user; ``context()`` is the
    round's context (an index), ``arms()`` its arms' feature vectors (A, d) and ``pull(arm)`` the user's reward
    for the arm (a level of the bandit's, read from the outcome the round ends in). A round begins at the first
    of these calls (a loop without contexts may just pull) and ends at its pull: it is one episode of horizon
    1 of the :class:`LoopEnv` underneath, whose protocol errors it reports."""

    def __init__(self, env: LoopEnv, bandit: Any) -> None:
        self._env, self._features, self._levels = env, np.asarray(bandit.features), np.asarray(bandit.levels)
        self._contexts, self.num_arms, self.dim = int(bandit.num_contexts), int(bandit.num_arms), int(bandit.dim)
        self._context: int | None = None

    def context(self) -> int:
        if self._context is None:
            self._context = self._env.reset()[0]
        return self._context

    def arms(self) -> np.ndarray:
        return self._features[self.context()].copy()

    def pull(self, arm: Any) -> float:
        self.context()
        outcome = self._env.step(arm)[0]
        self._context = None
        return float(self._levels[outcome - self._contexts])


def _run_loop(loop: Callable[[LoopEnv], Any], env: LoopEnv) -> tuple[str, Any]:
    """The loop greenlet's body: what it says when the user's loop returns."""
    loop(env)
    return ("done", None)


def _close(env: LoopEnv, user: greenlet.greenlet) -> None:
    """End a loop waiting at a switch (the agent is done with, or was collected): ``GreenletExit`` at its
    pending ``reset``/``step``. What its clean-up raises is dropped (nobody waits for the loop any more)."""
    env.closed = True
    if not user or user is greenlet.getcurrent():  # not waiting (finished), or closing itself
        return
    with contextlib.suppress(Exception):  # greenlet.error too: collected in another thread, killed there later
        user.parent = greenlet.getcurrent()
        user.throw()


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
        self._env = LoopEnv(int(mdp.num_states), self._num_actions, self._horizon)
        self._user: greenlet.greenlet | None = None
        self._pending: tuple[str, Any] | None = None  # what the user's loop said last (unanswered)
        self._reward = 0.0
        self._episodes = 0
        self._finalizer: weakref.finalize | None = None

    @classmethod
    def bandit(cls, loop: Callable[[BanditLoopEnv], Any], bandit: Any, **options: Any) -> ClosedLoopAgent:
        """The agent driving ``loop(env)`` over the rounds of ``bandit`` (a :class:`BanditLoopEnv`); ``options``
        as for the constructor."""
        if int(getattr(bandit, "horizon", 0)) != 1 or not hasattr(bandit, "levels"):
            raise InvalidParameterError("bandit", "must be a bandit environment (horizon 1, reward levels)",
                                        type(bandit).__name__)
        if not callable(loop):
            raise InvalidParameterError("loop", "must be callable as loop(env)", type(loop).__name__)
        return cls(lambda env: loop(BanditLoopEnv(env, bandit)), bandit, **options)

    # ---- the protocol's other attributes ---------------------------------------------------------------

    def __getattr__(self, attribute: str) -> Any:
        protocol = self.__dict__.get("_protocol")
        if protocol is None or attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(protocol, attribute)

    # ---- driving the loop --------------------------------------------------------------------------------

    def _switch(self, *args: Any) -> tuple[str, Any]:
        """Run the user's loop (started with ``args``, or answered ``args[0]``) until it says what it does next;
        ``around`` is entered before and left after, so that every draw of the user's code is inside."""
        user = self._user
        if user is None or user.dead:  # the loop returned (or was closed): it says no more
            return ("done", None)
        limit = call_timeout()
        if self._around is not None:
            self._around.enter()
        try:
            with time_limit(limit, lambda: UserCodeTimeout(self._name, "its loop", float(limit or 0.0),
                                                           "--call-timeout")):
                self._env.driver = user.parent = greenlet.getcurrent()
                event = user.switch(*args)
        except (KeyboardInterrupt, LimitExceeded, UserCodeError):
            raise
        except BaseException as exc:  # the user's code (raised out of its loop)
            raise UserCodeError(self._name, "its loop", type(exc).__name__, str(exc)) from exc
        finally:
            if self._around is not None:
                self._around.leave()
        if not isinstance(event, tuple):  # the loop raised GreenletExit itself: greenlet returns it
            raise UserCodeError(self._name, "its loop", type(event).__name__, str(event))
        return event

    def _start(self) -> tuple[str, Any]:
        self._user = greenlet.greenlet(_run_loop)
        self._finalizer = weakref.finalize(self, _close, self._env, self._user)
        return self._switch(self._loop, self._env)

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
            event = self._start() if self._user is None else self._pending
            if event is None:
                raise LoopProtocolError("act", "at stage 1 must follow the previous episode's end_episode", h)
            self._expect(event, "reset", "where an episode was to begin")
            self._episodes += 1
            event = self._switch(state)
        else:
            event = self._switch((state, self._reward, False))
        self._pending = None
        return self._expect(event, "action", f"before stage {h + 1} of episode {self._episodes} (H = {self._horizon})")

    def observe(self, h: int, state: int, action: int, reward: float, next_state: int) -> None:
        """The reward of the step (the loop gets it with the next state, at the next switch)."""
        self._reward = float(reward)

    def end_episode(self, trajectory: Any) -> None:
        """The episode's last step answered (``terminated``); the loop learns until it resets or returns."""
        if trajectory is None:
            raise InvalidParameterError("end_episode(None)", "cannot be told to a closed-loop agent, whose loop "
                                        "expects a user every episode: audit it under replace-one", self._name)
        final = int(trajectory.states[-1])
        self._pending = self._switch((final, self._reward, True))
        if self._pending[0] == "action":
            raise LoopProtocolError("loop", f"stepped past the end of episode {self._episodes} "
                                    f"(H = {self._horizon} steps, terminated was True)", self._name)

    def close(self) -> None:
        """End the loop if it waits at a switch (also done when the agent is collected); it says no more."""
        if self._finalizer is not None:
            self._finalizer()
            self._pending = ("done", None)
