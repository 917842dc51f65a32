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

from collections.abc import Callable
from typing import Any

import numpy as np


def data_free_law(mdp: Any) -> np.ndarray:
    """Q, shape (H, S, S): Q[h, s] the law of the next state from s whatever the action (module docstring)."""
    transitions = np.asarray(mdp.transitions, dtype=float)  # (H, S, A, S)
    law = transitions.mean(axis=2)
    if not getattr(mdp, "rewards_known", True):
        rho = np.asarray(mdp.initial_distribution, dtype=float)
        law = np.broadcast_to(np.einsum("s,hst->ht", rho, law)[:, None, :], law.shape).copy()
    return law


def data_free_next_state(law: np.ndarray, uniforms: np.ndarray) -> Callable[[int, int, int], int]:
    """The data-free user's move at stage h from s (whatever the action): the inverse CDF of ``law[h, s]`` at
    ``uniforms[h]`` — the uniforms :func:`dpverify.agents.core.base.rollout` draws — never onto a state of no
    mass (rounding at the top)."""
    cumulative = np.cumsum(law, axis=-1)

    def move(h: int, s: int, _a: int) -> int:
        last = int(np.flatnonzero(law[h, s])[-1])
        return int(min(np.searchsorted(cumulative[h, s], uniforms[h], side="right"), last))

    return move


def weighted_expected_return(mdp: Any, states: np.ndarray, actions: np.ndarray, law: np.ndarray) -> float:
    """Σ_h w_h r_h(s_h, a_h) with the importance weights w_h = Π_{j<h} P_j(s_{j+1} | s_j, a_j) / Q_j(s_{j+1} | s_j)
    (Precup et al. 2000): unbiased, over the data-free user's episode, for the return of the agent's partial policy
    on the real environment; the expected rewards, the terms of exact regret."""
    transitions, rewards = np.asarray(mdp.transitions), np.asarray(mdp.rewards)
    weight, value = 1.0, 0.0
    for h in range(int(mdp.horizon)):
        s, a, s_next = int(states[h]), int(actions[h]), int(states[h + 1])
        value += weight * float(rewards[h, s, a])
        weight *= float(transitions[h, s, a, s_next]) / float(law[h, s, s_next])
    return value
