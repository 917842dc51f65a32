"""LSVI-UCB — least-squares value iteration with UCB bonuses (Jin, Yang, Wang & Jordan 2020, Algorithm 1).

For each episode k, backward over stages h = H−1, …, 0 (0-indexed):

    Λ_h = λI + Σ_{τ<k} φ_τ φ_τᵀ,                           φ_τ = φ_h(s_h^τ, a_h^τ)
    w_h = Λ_h⁻¹ Σ_{τ<k} φ_τ [r_h(s_h^τ, a_h^τ) + V_{h+1}(s_{h+1}^τ)]
    Q_h(s, a) = min{ w_hᵀφ_h(s, a) + β ‖φ_h(s, a)‖_{Λ_h⁻¹}, H − h }
    V_h(s) = [max_a Q_h(s, a)]_{[0, H−h]}

and the user follows π_h(s) ∈ argmax_a Q_h(s, a), ties broken uniformly at random.

Jin et al. cap Q at H; we cap at H − h (the largest possible value-to-go, so optimism is unchanged) and
clip the regression targets V_{h+1} to [0, H − h − 1], so every target r + V lies in [0, H] — the range
that the sensitivity bounds of private variants assume.

Confidence radius: Theorem 3.1 of Jin et al. takes β = c·d·H·√ι with ι = log(2dT/p), T = KH, an absolute
constant c and failure probability p. We use ``beta = beta_multiplier × d·H·√ι`` (c = 1 absorbed in the
multiplier); the theory value with multiplier 1 keeps every bonus above H for millions of episodes
(docs/agents.md). Both the theory value and the effective β are reported by :meth:`settings`.

Defaults: ``regularization`` λ = 0.01 and ``beta_multiplier`` 0.003 (effective β ≈ 2.7 at d = 10, H = 20,
K = 10⁴), tuned on the Min et al. MDP with ‖φ‖ ≤ 1. Why λ should be compared with one observation's
contribution to Λ, the measurements behind both defaults and how to retune them on another instance are in
docs/agents.md ("Confidence radii: multipliers and defaults").

Cost per episode: O(H(d² + dS + SAd)), independent of k — the regression sums come from
:class:`dpverify.agents.core.statistics.RidgeStatistics` (aggregated by next state, Sherman–Morrison inverse,
bonuses downdated in place).

"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate

from ..core.base import Agent, Trajectory
from ..core.planning import TIE_TOLERANCE, sample_greedy_actions
from ..core.statistics import RidgeStatistics
from ..envs.linear_mdp import LinearMDP

DEFAULT_BETA_MULTIPLIER = 0.003
DEFAULT_REGULARIZATION = 0.01


@dataclass(frozen=True)
class LsviUcbConfig:
    """Hyper-parameters of LSVI-UCB.

    Attributes:
        num_episodes: K, the planned number of episodes (enters ι = log(2dKH/p)).
        beta_multiplier: multiplier of the theory radius d·H·√ι (default 0.003, see module docstring).
        regularization: λ of the ridge regression (default 0.01, see module docstring; Jin et al.: λ = 1).
        failure_probability: p of Jin et al. Theorem 3.1.
    """

    num_episodes: int
    beta_multiplier: float = DEFAULT_BETA_MULTIPLIER
    regularization: float = DEFAULT_REGULARIZATION
    failure_probability: float = 0.01

    def __post_init__(self) -> None:
        _validate.integer("num_episodes", self.num_episodes, minimum=1)
        _validate.non_negative("beta_multiplier", self.beta_multiplier)
        _validate.positive("regularization", self.regularization)
        _validate.open_unit("failure_probability", self.failure_probability)


def theory_beta(dim: int, horizon: int, num_episodes: int, failure_probability: float) -> float:
    """d·H·√ι with ι = log(2dT/p), T = KH (Jin et al. 2020, Theorem 3.1, c = 1)."""
    iota = math.log(2 * dim * num_episodes * horizon / failure_probability)
    return dim * horizon * math.sqrt(iota)


class LsviUcb(Agent):
    """LSVI-UCB on a finite :class:`~dpverify.agents.envs.linear_mdp.LinearMDP` (module docstring)."""

    name = "lsvi-ucb"
    config_class = LsviUcbConfig

    def __init__(
        self,
        mdp: LinearMDP,
        config: LsviUcbConfig,
        rng: np.random.Generator,
    ) -> None:
        self.mdp = mdp
        self.config = config
        self.rng = rng
        self.horizon, self.num_states, self.num_actions = mdp.horizon, mdp.num_states, mdp.num_actions
        self.features = mdp.features
        self.statistics = RidgeStatistics(mdp.features, mdp.rewards, config.regularization)
        self.theory_beta = theory_beta(mdp.dim, mdp.horizon, config.num_episodes, config.failure_probability)
        self.beta = config.beta_multiplier * self.theory_beta
        self.q = np.zeros((self.horizon, self.num_states, self.num_actions))

    def derived_settings(self) -> dict[str, Any]:
        return {"theory_beta": self.theory_beta, "beta": self.beta}

    def plan(self) -> np.ndarray:
        """Backward least-squares value iteration; fills and returns Q, shape (H, S, A).

        The bonuses of every stage are taken at once; the stage loop is two small products, one
        product with the features and two in-place clips (numpy call overhead dominates at small d, S).
        """
        stats = self.statistics
        bonus = self.beta * np.sqrt(stats.bonus_squared_all())
        q, features, inverse = self.q, self.features, stats.inverse
        next_state_sums, reward_sums = stats.next_state_sums, stats.reward_sums
        minimum, maximum = np.minimum, np.maximum
        next_values = np.zeros(self.num_states)
        for h in range(self.horizon - 1, -1, -1):
            w = inverse[h] @ (next_state_sums[h] @ next_values + reward_sums[h])
            cap = float(self.horizon - h)
            q_h = q[h]
            np.add(features[h] @ w, bonus[h], out=q_h)
            minimum(q_h, cap, out=q_h)
            next_values = q_h.max(axis=-1)
            maximum(next_values, 0.0, out=next_values)
            minimum(next_values, cap, out=next_values)
        return q

    def begin_episode(self) -> np.ndarray:
        return sample_greedy_actions(self.plan(), self.rng, TIE_TOLERANCE)

    def end_episode(self, trajectory: Trajectory) -> None:
        self.statistics.add_episode(trajectory.states, trajectory.actions)
