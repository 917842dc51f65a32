"""The registered environments as Gymnasium environments (optional extra: ``pip install 'dpverify[gym]'``).

Importing this module imports gymnasium and registers every environment of
:data:`dpverify.agents.registry.ENVIRONMENTS` as ``dpverify/<name>-v0`` (:func:`register`, idempotent), so
code written against Gymnasium runs on them unchanged::

    import gymnasium
    env = gymnasium.make("dpverify.agents.envs.gym:dpverify/min2021-v0", horizon=5)   # imports and registers
    # or: import dpverify.agents.envs.gym, then gymnasium.make("dpverify/bernoulli-bandit-v0", num_arms=5)

Gymnasium 1.x has no plugin entry points (the ``"module:id"`` form above imports the registering module);
nothing else in dpverify imports gymnasium. The make kwargs are the environment's options, as for
:func:`dpverify.agents.registry.build_environment` (``num_episodes`` too, which the zhou2021 instance uses).

One Gymnasium episode is one episode of the finite-horizon MDP (a bandit: one round, horizon 1):

* **spaces**: ``Discrete(S)`` observations (the state; a bandit's context, and after the round its outcome
  state, :mod:`dpverify.agents.envs.bandit`) and ``Discrete(A)`` actions;
* **reset(seed=...)** seeds ``self.np_random`` (an explicit ``numpy.random.Generator``); every draw — the
  initial state and each next state — uses it and nothing else;
* **step** returns ``(obs, reward, terminated, truncated, info)``; the reward is realised from the
  environment's law: r_h(s, a) of an MDP (deterministic there, Jin et al. 2020), the level of the sampled
  outcome of a bandit; ``terminated`` is True after the H-th step, ``truncated`` is always False;
* **info** carries the stage and the exact expected regret contribution of the step,
  ``regret = V*_h(s) − Q*_h(s, a)`` (from backward induction, :func:`dpverify.agents.core.planning.optimal_values`),
  and ``expected_reward`` (r_h(s, a); a bandit arm's mean). By the performance-difference lemma (Kakade &
  Langford 2002, Lemma 6.1) the expected sum of ``regret`` over an episode is V*(ρ) − V^π(ρ), the episode's
  exact regret, without the noise of realised rewards; reset's info gives ``optimal_value`` = V*_0(s_0).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from dpverify.errors import InvalidParameterError

from ..core.planning import optimal_values
from .bandit import Bandit

#: The namespace of the registered ids.
NAMESPACE = "dpverify"
#: The version suffix of the registered ids.
VERSION = 0
#: The run length K given to an environment's factory unless make is passed ``num_episodes``.
DEFAULT_EPISODES = 10_000


class TabularEnv(gymnasium.Env[np.int64, np.int64]):
    """A finite-horizon MDP or bandit of dpverify as a Gymnasium environment (module docstring).

    Args:
        env: a registered environment name, or an already built model (an MDP of
            :mod:`dpverify.agents.envs.linear_mdp` or a :class:`~dpverify.agents.envs.bandit.Bandit`).
        num_episodes: the run length K passed to the environment's factory (zhou2021 sets its gap from it);
            default :data:`DEFAULT_EPISODES`.
        render_mode: must be None (there is nothing to render).
        **options: the environment's options.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, env: Any = "min2021", num_episodes: int = DEFAULT_EPISODES, render_mode: str | None = None,
                 **options: Any) -> None:
        if render_mode is not None:
            raise InvalidParameterError("render_mode", "must be None (nothing to render)", render_mode)
        if isinstance(env, str):
            from ..registry import build_environment

            env = build_environment(env, num_episodes, options)
        elif options:
            raise InvalidParameterError("options", "must be empty when a built model is given", sorted(options))
        self.model = env
        self.optimal = optimal_values(env)
        self.observation_space = spaces.Discrete(env.num_states)
        self.action_space = spaces.Discrete(env.num_actions)
        self._stage = 0
        self._state = 0
        self._done = True

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.int64, dict[str, Any]]:
        super().reset(seed=seed)
        self._state = self.model.sample_initial_state(self.np_random)
        self._stage = 0
        self._done = False
        return np.int64(self._state), {"stage": 0, "optimal_value": float(self.optimal.values[0, self._state])}

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise InvalidParameterError("step", "needs reset() first: the episode has terminated", self._stage)
        if not self.action_space.contains(action):
            raise InvalidParameterError("action", f"must be an integer in 0..{self.model.num_actions - 1}", action)
        h, s, a = self._stage, self._state, int(action)
        expected, next_state = self.model.step(h, s, a, self.np_random)
        reward = float(self.model.reward_of(np.array([next_state]))[0]) if isinstance(self.model, Bandit) else expected
        info = {"stage": h, "regret": float(self.optimal.values[h, s] - self.optimal.q[h, s, a]),
                "expected_reward": expected}
        self._stage, self._state = h + 1, next_state
        self._done = self._stage >= self.model.horizon
        return np.int64(next_state), reward, self._done, False, info


def env_id(name: str) -> str:
    """The Gymnasium id of a registered environment: ``dpverify/<name>-v0``."""
    return f"{NAMESPACE}/{name}-v{VERSION}"


def register() -> list[str]:
    """Register every environment of the registry with Gymnasium (once; a later call adds only new names);
    returns the ids registered."""
    from ..registry import ENVIRONMENTS

    ids = []
    for name in ENVIRONMENTS:
        gym_id = env_id(name)
        if gym_id not in gymnasium.registry:
            gymnasium.register(gym_id, entry_point=f"{__name__}:TabularEnv", kwargs={"env": name})
        ids.append(gym_id)
    return ids


register()
