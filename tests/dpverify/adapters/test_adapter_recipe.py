"""CONTRIBUTING.md's recipe for an adapter, followed once: code of another shape (here a callback learner with
``choose(state) -> action`` and ``learn(state, action, reward, next_state)``, as much tabular RL code is written)
becomes a step-level agent by one small class, and every driver of the step protocol then takes it unchanged —
the episode loop with its exact regret estimate, the auditor's tapes and the no-data control."""

from __future__ import annotations

import numpy as np

from dpverify.agents.core.base import Trajectory, acts_step_by_step, run_episodes
from dpverify.agents.core.tapes import ordinary_tapes, run_on_tapes
from dpverify.agents.envs.min2021 import min2021_mdp


class CallbackQLearner:
    """The code as written: it knows nothing of dpverify (tabular Q-learning, ties broken by its own coins)."""

    def __init__(self, num_states: int, num_actions: int, horizon: int, seed: int) -> None:
        self.q = np.full((horizon, num_states, num_actions), float(horizon))  # optimistic: it explores
        self.coins = np.random.default_rng(seed)
        self.stage = 0

    def choose(self, state: int) -> int:
        row = self.q[self.stage, state]
        return int(self.coins.choice(np.flatnonzero(row == row.max())))

    def learn(self, state: int, action: int, reward: float, next_state: int) -> None:
        h = self.stage
        target = reward + (self.q[h + 1, next_state].max() if h + 1 < len(self.q) else 0.0)
        self.q[h, state, action] += 0.5 * (target - self.q[h, state, action])
        self.stage = (h + 1) % len(self.q)


class CallbackAdapter:
    """The adapter the recipe asks for: the step-level protocol (``act``, ``observe``, ``end_episode``) on top
    of the callback learner, nothing else."""

    def __init__(self, learner: CallbackQLearner) -> None:
        self.learner = learner

    def act(self, h: int, state: int) -> int:
        return self.learner.choose(state)

    def observe(self, h: int, state: int, action: int, reward: float, next_state: int) -> None:
        self.learner.learn(state, action, reward, next_state)

    def end_episode(self, trajectory: Trajectory | None) -> None:
        self.learner.stage = 0


def _adapted(mdp, seed: int = 0) -> CallbackAdapter:
    return CallbackAdapter(CallbackQLearner(mdp.num_states, mdp.num_actions, mdp.horizon, seed))


def test_the_adapted_learner_runs_with_its_regret_estimate_and_its_no_data_control() -> None:
    mdp = min2021_mdp(horizon=2)
    agent = _adapted(mdp)
    assert acts_step_by_step(agent)
    regret, _ = run_episodes(mdp, agent, 300, np.random.default_rng(1))
    control, _ = run_episodes(mdp, _adapted(mdp), 300, np.random.default_rng(1), users=False)
    assert regret.shape == control.shape == (300,) and np.all(np.isfinite(regret)) and np.all(np.isfinite(control))
    # It learns (its optimistic start explores): the last third's regret is far below the first third's.
    assert regret[-100:].mean() < 0.5 * regret[:100].mean()


def test_the_auditors_tapes_drive_the_adapted_learner() -> None:
    mdp = min2021_mdp(horizon=2)
    tapes = ordinary_tapes(mdp, 5, seed=3)
    first = run_on_tapes(_adapted(mdp), mdp, tapes)
    again = run_on_tapes(_adapted(mdp), mdp, tapes)
    assert len(first) == 5 and all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
