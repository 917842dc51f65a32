"""The agent interface, one episode's trajectory, and the interaction loop with exact regret.

An episode k runs as follows (:func:`run_episodes`):

1. ``policy = agent.begin_episode()`` — the agent plans and returns the *deployed* deterministic policy
   π_k as an (H, S) integer array (ties among maximising actions already broken at random with the
   agent's generator, so this is exactly what the user will follow);
2. the exact regret ρᵀ(V*_0 − V^{π_k}_0) of that policy is computed by backward induction
   (:class:`dpverify.agents.core.planning.DeterministicPolicyEvaluator`) — never from realised rewards;
3. the user follows π_k in the environment (:func:`rollout`), with the environment's own generator;
4. ``agent.end_episode(trajectory)`` — the agent adds the user's data to its statistics.

Private agents also accept ``end_episode(None)``: an *empty slot*, episode k happened (the agent planned
and made its releases on schedule) but no user's data arrives from it; the episode counter advances and
nothing is added to any statistic. This is the "user absent" side of an add/remove-one neighbour
(:mod:`dpverify.agent_audit`); :func:`run_episodes` never passes None.

Agents take every random number from the ``numpy.random.Generator`` they are constructed with; the
environment's sampling uses a separate generator spawned from the same ``SeedSequence``.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpverify.errors import InvalidParameterError

from .no_data import data_free_law, data_free_next_state, weighted_expected_return
from .planning import DeterministicPolicyEvaluator


@dataclass(frozen=True, eq=False)
class Trajectory:
    """One user's episode: states s_0..s_H (length H + 1), actions a_0..a_{H−1}, rewards r_0..r_{H−1}."""

    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray


def expected_rewards(mdp: Any, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """r_h(s_h, a_h) of every stage: the expected rewards of an episode (what exact regret is made of)."""
    return np.asarray(mdp.rewards)[np.arange(len(actions)), states[:-1], actions]


def rewards_seen(mdp: Any, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """The rewards an agent is shown for an episode: the known r_h(s_h, a_h) of an MDP, or — in an environment whose
    rewards the agent must learn (``rewards_known`` False: a bandit, whose ``rewards`` are the arms' means) — the
    rewards the user realised (``realised_rewards``), never the means."""
    if getattr(mdp, "rewards_known", True):
        return expected_rewards(mdp, states, actions)
    return np.asarray(mdp.realised_rewards(states, actions), dtype=float)


def _reward_seen(mdp: Any, stage: int, state: int, action: int, next_state: int) -> float:
    """One step's reward as :func:`rewards_seen` shows it."""
    if getattr(mdp, "rewards_known", True):
        return float(mdp.rewards[stage, state, action])
    return float(mdp.realised_rewards(np.array([state, next_state]), np.array([action]))[0])


def rollout(mdp: Any, policy: np.ndarray, rng: np.random.Generator) -> Trajectory:
    """Follow the deterministic policy (H, S) for one episode, sampling with ``rng``."""
    horizon = mdp.horizon
    states = np.empty(horizon + 1, dtype=np.int64)
    actions = np.empty(horizon, dtype=np.int64)
    uniforms = rng.random(horizon)
    states[0] = mdp.sample_initial_state(rng)
    for h in range(horizon):
        a = policy[h, states[h]]
        actions[h] = a
        states[h + 1] = mdp.sample_next_state(h, states[h], a, uniforms[h])
    return Trajectory(states, actions, rewards_seen(mdp, states, actions))


class Agent(abc.ABC):
    """An episodic agent for a finite-horizon MDP.

    Subclasses set ``name`` and ``config`` (a frozen dataclass of every hyper-parameter, including the
    confidence-radius multipliers) and implement :meth:`begin_episode` and :meth:`end_episode`.
    """

    name: str = "agent"
    config: Any
    #: The config dataclass; ``config_class(num_episodes, **options)`` builds it from registry options.
    config_class: ClassVar[type]

    @classmethod
    def from_options(cls, mdp: Any, num_episodes: int, rng: np.random.Generator, /, **options: Any) -> Agent:
        """The registry's factory: the agent for K = ``num_episodes`` with ``options`` as config fields."""
        return cls(mdp, cls.config_class(num_episodes, **options), rng)  # type: ignore[call-arg]

    @abc.abstractmethod
    def begin_episode(self) -> np.ndarray:
        """Plan for the next episode and return the deployed deterministic policy, shape (H, S)."""

    @abc.abstractmethod
    def end_episode(self, trajectory: Trajectory) -> None:
        """Add the episode's data to the agent's statistics."""

    def settings(self) -> dict[str, Any]:
        """Every hyper-parameter actually used (config fields plus derived radii), JSON-serialisable."""
        settings: dict[str, Any] = {"agent": self.name}
        if dataclasses.is_dataclass(self.config) and not isinstance(self.config, type):
            settings.update(dataclasses.asdict(self.config))
        settings.update(self.derived_settings())
        return settings

    def derived_settings(self) -> dict[str, Any]:
        """Derived constants (theory radii, effective radii); subclasses extend this."""
        return {}


def run_episodes(
    mdp: Any,
    agent: Any,
    num_episodes: int,
    rng: np.random.Generator,
    callback: Callable[[int], None] | None = None,
    users: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Run ``num_episodes`` episodes; return (exact per-episode regret, [distinct-policy change flags]).

    ``users=False`` runs the no-data control (:mod:`dpverify.agents.core.learning`): every episode the agent plans
    and deploys its policy, whose regret is exact as usual, and its user slot is empty (``end_episode(None)``;
    an agent that defines ``end_episode_without_data()`` — a local-DP agent — ends it that way instead).
    A step-level agent, which acts on a user's states, is fed data-free users instead
    (:mod:`dpverify.agents.core.no_data`).

    A step-level agent (``act(h, state)``, :mod:`dpverify.agents.core.tapes`) has no policy table to evaluate: its
    regret is the unbiased one-sample estimate of :func:`_step_episode` instead, and its "policy" the partial
    policy of each episode.

    The second value is a boolean array: entry k is True when π_k differs from π_{k−1} (used by tests to
    check that an agent changes its policy).
    """

    evaluator = DeterministicPolicyEvaluator(mdp)
    regrets = np.empty(num_episodes)
    changed = np.zeros(num_episodes, dtype=bool)
    previous: np.ndarray | None = None
    stepwise = acts_step_by_step(agent)
    law = data_free_law(mdp) if stepwise and not users else None
    for k in range(num_episodes):
        if stepwise and law is not None:
            regrets[k], policy = _step_episode_without_data(mdp, agent, evaluator, rng, k + 1, law)
        elif stepwise:
            regrets[k], policy = _step_episode(mdp, agent, evaluator, rng, k + 1)
        else:
            policy = checked_policy(agent.begin_episode(), mdp, k + 1)
            regrets[k] = evaluator.regret(policy)
            if users:
                agent.end_episode(rollout(mdp, policy, rng))
            else:
                _end_without_data(agent)
        changed[k] = previous is not None and not np.array_equal(policy, previous)
        previous = policy
        if callback is not None:
            callback(k)
    return regrets, changed


def _end_without_data(agent: Any) -> None:
    """End the episode of the no-data control: ``agent.end_episode_without_data()`` when the agent defines it (a
    local-DP agent, whose users must send a message: it sends one computed from no data), else the empty slot
    ``agent.end_episode(None)``."""
    without = getattr(agent, "end_episode_without_data", None)
    if callable(without):
        without()
    else:
        agent.end_episode(None)


def _step_episode(mdp: Any, agent: Any, evaluator: DeterministicPolicyEvaluator, rng: np.random.Generator,
                  episode: int) -> tuple[float, np.ndarray]:
    """One episode of a step-level agent (:mod:`dpverify.agents.core.tapes`) in the environment: the user's states
    are sampled as :func:`rollout` samples them, the agent is asked for each action. Its policy is never seen
    whole, so the regret is the one-sample estimate V*_0(s_0) − Σ_h r_h, unbiased for ρᵀ(V*_0 − V^{π_k}_0)
    given the agent's state at the episode's start (the expectation over s_0 ~ ρ and the transitions). Returns
    (the estimate, the partial policy of the episode)."""

    uniforms = rng.random(mdp.horizon)
    initial = mdp.sample_initial_state(rng)
    partial, trajectory = play_step_by_step(
        agent, mdp, initial, lambda h, s, a: int(mdp.sample_next_state(h, s, a, uniforms[h])), episode)
    value = float(evaluator.optimal.values[0, trajectory.states[0]])
    return value - float(np.sum(expected_rewards(mdp, trajectory.states, trajectory.actions))), partial


def _step_episode_without_data(mdp: Any, agent: Any, evaluator: DeterministicPolicyEvaluator,
                               rng: np.random.Generator, episode: int, law: np.ndarray) -> tuple[float, np.ndarray]:
    """One control episode of a step-level agent fed a data-free user (:mod:`dpverify.agents.core.no_data`):
    (the importance-weighted regret estimate, the partial policy), drawing from ``rng`` what :func:`_step_episode`
    draws (the same uniforms, in the same order)."""
    uniforms = rng.random(mdp.horizon)
    initial = mdp.sample_initial_state(rng)
    partial, trajectory = play_step_by_step(agent, mdp, initial, data_free_next_state(law, uniforms), episode)
    value = float(evaluator.optimal.values[0, trajectory.states[0]])
    return value - weighted_expected_return(mdp, trajectory.states, trajectory.actions, law), partial


# ---- driving an agent: policy-level (begin_episode) or step-level (act) -----------------------------------


def checked_policy(policy: object, mdp: Any, episode: int | None = None) -> np.ndarray:
    """The deployed policy as an (H, S) int64 array, or an error naming what was expected.

    A policy must be an array of integers (any integer dtype; booleans and floats are refused, so an action
    is never silently truncated) of shape (H, S) with every action in [0, A) — action −1 is an error, never
    the last action.
    """
    where = f" (episode {episode})" if episode is not None else ""
    expected = (int(mdp.horizon), int(mdp.num_states))
    if policy is None:
        raise InvalidParameterError("policy", f"must be an integer array of shape (H, S) = {expected}{where}", None)
    array = np.asarray(policy)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise InvalidParameterError("policy", f"must be an integer array of shape (H, S) = {expected}{where}",
                                    f"dtype {array.dtype}")
    if array.shape != expected:
        raise InvalidParameterError("policy", f"must have shape (H, S) = {expected}{where}", array.shape)
    actions = int(mdp.num_actions)
    if array.size and (int(array.min()) < 0 or int(array.max()) >= actions):
        bad = int(array.min()) if int(array.min()) < 0 else int(array.max())
        raise InvalidParameterError("policy", f"actions must lie in [0, {actions}){where}", bad)
    return array.astype(np.int64, copy=False)


#: The entry of a step-level agent's partial policy at a state the user did not visit (module docstring).
UNSEEN = -1


def acts_step_by_step(agent: Any) -> bool:
    """Whether ``agent`` is a step-level agent (it has a callable ``act``; module docstring)."""
    return callable(getattr(agent, "act", None))


def checked_action(action: object, mdp: Any, stage: int, episode: int | None = None) -> int:
    """A step-level agent's action as an int in [0, A), or an error naming what was expected (no float, bool
    or negative action is ever truncated or wrapped)."""
    actions = int(mdp.num_actions)
    if type(action) is int and 0 <= action < actions:  # (the usual answer, checked without more ado)
        return action
    where = f" (episode {episode}, stage {stage + 1})" if episode is not None else f" (stage {stage + 1})"
    value = action.item() if isinstance(action, np.ndarray) and action.shape == () else action
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InvalidParameterError("act()", f"must return an integer action in [0, {actions}){where}",
                                    f"{type(action).__name__} {action!r:.40}")
    if not 0 <= int(value) < actions:
        raise InvalidParameterError("act()", f"must return an action in [0, {actions}){where}", int(value))
    return int(value)


def begin_step_episode(agent: Any, episode: int) -> None:
    """A step-level agent's optional ``begin_episode()``, which must return None."""
    begin = getattr(agent, "begin_episode", None)
    if callable(begin) and begin() is not None:
        raise InvalidParameterError("begin_episode()", "must return None for an agent that acts step by step "
                                    "(with act(h, state))", f"episode {episode}")


def play_step_by_step(agent: Any, mdp: Any, initial_state: int, next_state: Callable[[int, int, int], int],
                      episode: int) -> tuple[np.ndarray, Trajectory]:
    """One episode of a step-level agent: ``begin_episode()`` (optional), then per stage ``act(h, s)``, the
    user's move ``next_state(h, s, a)`` and ``observe(h, s, a, r, s')`` (optional), then
    ``end_episode(trajectory)``; returns (the partial policy, the trajectory)."""
    begin_step_episode(agent, episode)
    horizon = int(mdp.horizon)
    act, observe = agent.act, getattr(agent, "observe", None)
    observe = observe if callable(observe) else None
    partial = np.full((horizon, int(mdp.num_states)), UNSEEN, dtype=np.int64)
    states = np.empty(horizon + 1, dtype=np.int64)
    actions = np.empty(horizon, dtype=np.int64)
    states[0] = initial_state
    s = int(states[0])
    for h in range(horizon):
        a = checked_action(act(h, s), mdp, h, episode)
        actions[h] = partial[h, s] = a
        states[h + 1] = next_state(h, s, a)
        after = int(states[h + 1])
        if observe is not None:
            observe(h, s, a, _reward_seen(mdp, h, s, a, after), after)
        s = after
    trajectory = Trajectory(states, actions, rewards_seen(mdp, states, actions))
    agent.end_episode(trajectory)
    return partial, trajectory
