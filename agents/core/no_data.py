"""The no-data control of an agent that acts step by step: users whose data carry no information.

A table agent's control (:func:`dpverify.agents.core.base.run_episodes` with ``users=False``) leaves every user
slot empty, ``end_episode(None)``. A step-level agent (``act(h, state)``, :mod:`dpverify.agents.core.tapes`) — and
a closed loop (:mod:`dpverify.adapters.closed_loop`), which expects a user every episode — cannot be told an
empty slot: it acts on a user's states. Its control is the same agent, seeds and options fed **data-free users**
instead, users whose responses do not depend on what the agent does:

* the episode starts in s_0 ~ ρ, as in the real run (the context of a bandit round: the regret is measured
  on the same starting states);
* each move s_{h+1} is drawn from the **data-free law** Q_h(·|s) = (1/A) Σ_a P_h(·|s, a), the same whatever the
  action, so no reward and no transition the agent sees tells one action from another. For an environment
  whose rewards the agent learns (``mdp.rewards_known`` False: a bandit, :mod:`dpverify.agents.envs.bandit`) Q
  is also averaged over the starting states by ρ, so the reward of a round says nothing of its context either:
  rewards independent of arms and contexts.

The control differs from the real run only in the users' moves (the agent, its generator, ρ and the
environment's generator are the same). Its regret is the same kind of estimate as the real run's
(:func:`dpverify.agents.core.base._step_episode`): V*_0(s_0) minus the agent's return, where the return of a
stage reached under Q is re-weighted to P by the per-decision importance weight
W_h = Π_{j<h} P_j(s_{j+1}|s_j, a_j) / Q_j(s_{j+1}|s_j) (Precup, Sutton & Singh 2000, "Eligibility traces for
off-policy policy evaluation", eq. 4). Q ≥ P(·|s, a)/A, so W_h ≤ A^h; the estimate is unbiased for the regret of
what the agent does in the real environment from its state at the episode's start, for any behaviour that
depends on the past only (the weights need no knowledge of the agent's policy: its action is the one taken).
At horizon 1 (a bandit round) there is no weight: the regret is exactly max_a m(c, a) − m(c, a_0), as in the
real run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import play_step_by_step
from .planning import DeterministicPolicyEvaluator


def data_free_law(mdp: Any) -> np.ndarray:
    """Q, shape (H, S, S): Q[h, s] the law of the next state from s whatever the action (module docstring)."""
    transitions = np.asarray(mdp.transitions, dtype=float)  # (H, S, A, S)
    law = transitions.mean(axis=2)
    if not getattr(mdp, "rewards_known", True):
        rho = np.asarray(mdp.initial_distribution, dtype=float)
        law = np.broadcast_to(np.einsum("s,hst->ht", rho, law)[:, None, :], law.shape).copy()
    return law


def step_episode_without_data(mdp: Any, agent: Any, evaluator: DeterministicPolicyEvaluator,
                              rng: np.random.Generator, episode: int, law: np.ndarray) -> tuple[float, np.ndarray]:
    """One control episode of a step-level agent fed a data-free user (``law`` from :func:`data_free_law`):
    (the importance-weighted regret estimate, the partial policy), drawing from ``rng`` what
    :func:`dpverify.agents.core.base._step_episode` draws (the same uniforms, in the same order)."""
    uniforms = rng.random(mdp.horizon)
    initial = mdp.sample_initial_state(rng)
    cumulative = np.cumsum(law, axis=-1)

    def move(h: int, s: int, _a: int) -> int:  # inverse CDF, never onto a state of no mass (rounding at the top)
        last = int(np.flatnonzero(law[h, s])[-1])
        return int(min(np.searchsorted(cumulative[h, s], uniforms[h], side="right"), last))

    partial, trajectory = play_step_by_step(agent, mdp, initial, move, episode)
    transitions = np.asarray(mdp.transitions)
    weight, value = 1.0, 0.0
    for h in range(int(mdp.horizon)):
        s, a, s_next = (int(x) for x in (trajectory.states[h], trajectory.actions[h], trajectory.states[h + 1]))
        value += weight * float(trajectory.rewards[h])
        weight *= float(transitions[h, s, a, s_next]) / float(law[h, s, s_next])
    return float(evaluator.optimal.values[0, trajectory.states[0]]) - value, partial
