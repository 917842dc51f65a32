"""UCRL-VTR — upper-confidence RL with value-targeted regression, for linear mixture MDPs.

Ayoub, Jia, Szepesvári, Wang & Yang 2020 ("Model-based RL with value-targeted regression"); Jia et al.
2020; the per-stage form is the non-private backbone of Liao et al. 2021 (Algorithm 1 with the noise removed).
The model is P_h(s'|s, a) = ⟨ψ_h(s'|s, a), θ_h⟩ with known basis ψ and rewards; θ_h is unknown.

For episode k, backward over stages h = H−1, …, 0 (0-indexed), with V_H = 0:

    φ_{V}(s, a) = Σ_s' ψ_h(s'|s, a) V_{h+1}(s')                         (features of the value target)
    θ̂_h = Σ_h⁻¹ b_h,   Σ_h = λI + Σ_{i<k} x_{i,h} x_{i,h}ᵀ,   b_h = Σ_{i<k} x_{i,h} y_{i,h}
    Q_h(s, a) = min{ r_h(s, a) + θ̂_hᵀφ_V(s, a) + β ‖φ_V(s, a)‖_{Σ_h⁻¹}, H − h }
    V_h(s) = [max_a Q_h(s, a)]_{[0, H−h]},   π_h(s) ∈ argmax_a Q_h(s, a) (random ties)

and after the episode, for every stage, x_{k,h} = φ_{V_{h+1}}(s_h, a_h) (with episode k's V_{h+1}) and
y_{k,h} = V_{h+1}(s_{h+1}) ∈ [0, H] (Liao et al. 2021, Algorithm 1: ΔΛ = x xᵀ, Δu = x y).

Confidence radius: β_k = H√(d log((1 + k H² L²/λ)/p)) + √λ B (the self-normalised bound of
Abbasi-Yadkori et al. 2011 for targets in [0, H] and ‖x‖ ≤ H·L, as used by Ayoub et al. Theorem 1 and
Jia et al.), with L the environment's ``feature_norm_bound`` and B ≥ ‖θ_h‖ (``theta_norm_bound``,
default √d: every instance of :mod:`dpverify.agents.envs` satisfies it). ``beta = beta_multiplier × β_k``;
the default multiplier 0.1 lets the agent learn the Zhou et al. instance at K ~ 10³–10⁴. β_k grows
with k (computed each episode); its final value is reported.

Cost per episode O(H(S²Ad + SAd²)), independent of k (Sherman–Morrison for Σ_h⁻¹).

The local-DP variant (:mod:`dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr`, Liao et al. 2021) plans the same way from
a server's broadcast of sums of privatised messages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate

from ..core.base import Agent, Trajectory
from ..core.planning import TIE_TOLERANCE, sample_greedy_actions
from ..core.statistics import ValueTargetStatistics
from ..envs.linear_mdp import LinearMixtureMDP

DEFAULT_BETA_MULTIPLIER = 0.1


@dataclass(frozen=True)
class UcrlVtrConfig:
    """Hyper-parameters of UCRL-VTR.

    Attributes:
        num_episodes: K (for the record; β_k uses the current k).
        beta_multiplier: multiplier of β_k (default 0.1).
        regularization: λ (default 1).
        failure_probability: p.
        theta_norm_bound: B ≥ ‖θ_h‖₂; ``None`` means √d.
    """

    num_episodes: int
    beta_multiplier: float = DEFAULT_BETA_MULTIPLIER
    regularization: float = 1.0
    failure_probability: float = 0.01
    theta_norm_bound: float | None = None

    def __post_init__(self) -> None:
        _validate.integer("num_episodes", self.num_episodes, minimum=1)
        _validate.non_negative("beta_multiplier", self.beta_multiplier)
        _validate.positive("regularization", self.regularization)
        _validate.open_unit("failure_probability", self.failure_probability)
        if self.theta_norm_bound is not None:
            _validate.positive("theta_norm_bound", self.theta_norm_bound)


def theory_beta(episode: int, dim: int, horizon: int, feature_norm: float, regularization: float,
                failure_probability: float, theta_norm_bound: float) -> float:
    """β_k = H√(d log((1 + k H² L²/λ)/p)) + √λ B (module docstring)."""
    log_term = math.log((1.0 + episode * horizon**2 * feature_norm**2 / regularization) / failure_probability)
    return horizon * math.sqrt(dim * log_term) + math.sqrt(regularization) * theta_norm_bound


class UcrlVtr(Agent):
    """UCRL-VTR on a finite :class:`~dpverify.agents.envs.linear_mdp.LinearMixtureMDP` (module docstring)."""

    name = "ucrl-vtr"
    config_class = UcrlVtrConfig

    def __init__(
        self,
        mdp: LinearMixtureMDP,
        config: UcrlVtrConfig,
        rng: np.random.Generator,
    ) -> None:
        self.mdp = mdp
        self.config = config
        self.rng = rng
        H, S, A, d = mdp.horizon, mdp.num_states, mdp.num_actions, mdp.dim
        self.horizon, self.num_states, self.num_actions, self.dim = H, S, A, d
        self.theta_norm_bound = config.theta_norm_bound if config.theta_norm_bound is not None else math.sqrt(d)
        self.statistics = ValueTargetStatistics(H, d, config.regularization)
        self.episode = 0
        self.beta = 0.0
        self.q = np.zeros((H, S, A))
        self.values = np.zeros((H + 1, S))
        self.value_features = np.zeros((H, S, A, d))

    def derived_settings(self) -> dict[str, Any]:
        return {
            "theta_norm_bound_used": self.theta_norm_bound,
            "theory_beta_final": self.theory_beta(max(self.episode - 1, 0)),
            "beta_final": self.config.beta_multiplier * self.theory_beta(max(self.episode - 1, 0)),
        }

    def theory_beta(self, episode: int) -> float:
        return theory_beta(episode, self.dim, self.horizon, self.mdp.feature_norm_bound,
                           self.config.regularization, self.config.failure_probability, self.theta_norm_bound)

    def plan(self) -> np.ndarray:
        """Backward optimistic value iteration on the estimated model; returns Q, shape (H, S, A)."""
        stats = self.statistics
        self.beta = self.config.beta_multiplier * self.theory_beta(self.episode)
        self.values[self.horizon] = 0.0
        for h in range(self.horizon - 1, -1, -1):
            x = self.mdp.value_features(h, self.values[h + 1])  # (S, A, d)
            inverse = stats.gram_inverse(h)
            theta_hat = inverse @ stats.target_sum(h)
            norms = np.sqrt(np.maximum(np.einsum("sad,de,sae->sa", x, inverse, x), 0.0))
            cap = float(self.horizon - h)
            self.q[h] = np.minimum(self.mdp.rewards[h] + x @ theta_hat + self.beta * norms, cap)
            self.values[h] = np.clip(self.q[h].max(axis=-1), 0.0, cap)
            self.value_features[h] = x
        return self.q

    def begin_episode(self) -> np.ndarray:
        return sample_greedy_actions(self.plan(), self.rng, TIE_TOLERANCE)

    def end_episode(self, trajectory: Trajectory) -> None:
        h = np.arange(self.horizon)
        s, a, s_next = trajectory.states[:-1], trajectory.actions, trajectory.states[1:]
        x = self.value_features[h, s, a]  # (H, d)
        y = self.values[h + 1, s_next]  # (H,)
        self.statistics.add_episode(x, y)
        self.episode += 1
