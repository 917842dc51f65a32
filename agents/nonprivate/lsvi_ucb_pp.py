"""LSVI-UCB++ — variance-weighted LSVI with optimistic and pessimistic values and rare switching.

He, Zhao, Zhou & Gu 2023 ("Nearly minimax optimal RL for linear MDPs"), as restated in Sahu 2025 §3 and
Algorithm 1 (with every noise term set to zero). Stages 0-indexed, H stages, for episode k:

Weighted ridge regressions (Sahu 2025 §3, the three displayed estimators):

    Λ_h = λI + Σ_{i<k} σ̄_{i,h}⁻² φ_i φ_iᵀ
    ŵ_h = Λ_h⁻¹ Σ σ̄⁻² φ_i V̂_{h+1}(s'_i),  w̌_h = Λ_h⁻¹ Σ σ̄⁻² φ_i V̌_{h+1}(s'_i),  w̄_h = Λ_h⁻¹ Σ σ̄⁻² φ_i V̂_{h+1}(s'_i)²

Rare switching (Algorithm 1 line 10): if det Λ_{h'} ≥ 2 det Λ_{h'} at the last switch for *some* stage
h', every stage is updated (lines 11–12), else Q̂, Q̌ are kept (lines 15–16):

    Q̂_h(s, a) = min{ r_h(s, a) + ŵ_hᵀφ + β̂‖φ‖_{Λ_h⁻¹}, Q̂_h^{old}(s, a), H − h }
    Q̌_h(s, a) = max{ r_h(s, a) + w̌_hᵀφ − β̌‖φ‖_{Λ_h⁻¹}, Q̌_h^{old}(s, a), 0 }
    V̂_h(s) = max_a Q̂_h(s, a),  V̌_h(s) = max_a Q̌_h(s, a),  π_h(s) ∈ argmax_a Q̂_h(s, a) (random ties).

Two corrections to the printed Algorithm 1, both following He et al.: the switching test is made once
per episode before the backward pass (the printed loop sets k_last ← k inside the stage loop, after
which the test could never fire for the remaining stages), and
the pessimistic value takes max{·, Q̌^{old}, 0} (the printed min{·, Q̌^{old}, 0} would pin Q̌ at ≤ 0).
Values are capped at H − h (the largest value-to-go) and the regression targets are clipped to
[0, H − h − 1] ⊂ [0, H] (the range the private variant's sensitivities assume).

Variance weights (Sahu 2025 §3 and Algorithm 1 lines 9, 24–25; E and D from Lemma B.3), for the visited
(s_h, a_h) with φ = φ_h(s_h, a_h) and n = ‖φ‖_{Λ_h⁻¹}:

    V̄ = [w̄_hᵀφ]_{[0, H²]} − [ŵ_hᵀφ]²_{[0, H]}
    E = min{β̄ n, H²} + min{2H β̂ n, H²}
    D = min{c_D · 4d³H² (ŵ_hᵀφ − w̌_hᵀφ + 2β̂ n), d³H³}
    σ = √max{V̄ + E + D + H, 0},   σ̄ = max{σ, H, c_σ · 2d³H² √n},   weight σ̄⁻².

Confidence radii (Sahu 2025 Theorem 3.2 with no privacy noise, L = 1, λ̃ = λ, failure probability p;
ι = log(H K⁴ d / (p λ))):

    β̂ = β̌ = H√(dλ) + √(d³H²)·ι,   β̄ = H²√(dλ) + √(d³H⁴)·ι,

each multiplied by its own multiplier. The theory coefficients 2d³H² (σ̄ floor) and 4d³H² (D) make every
weight ≈ 10⁻¹³ at d = 10, H = 20, so nothing is learned at practical K; they carry the
multipliers c_σ and c_D.

Defaults: β̂, β̌, β̄ multipliers 10⁻⁵, c_σ = c_D = 0, λ = 10⁻⁴ (how they were chosen, and how to choose them
on another instance: docs/agents.md, "Confidence radii: multipliers and defaults"). Every radius used is
reported by :meth:`LsviUcbPlusPlus.settings`.

Cost per episode O(H(d² + dS + SAd)), independent of k (statistics aggregated by next state,
:class:`dpverify.agents.core.statistics.RidgeStatistics`). The private variant, DP-LSVI-UCB++
(:mod:`dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp`), runs the same learning rule on released statistics;
the two share :func:`backup` (lines 11–12, 18–19) and :func:`variance_weights_from` (lines 9, 24–25).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.errors import InvalidParameterError

from ..core.base import Agent, Trajectory
from ..core.planning import TIE_TOLERANCE, sample_greedy_actions
from ..core.statistics import RidgeStatistics
from ..envs.linear_mdp import LinearMDP

DEFAULT_BETA_MULTIPLIER = 1e-5
DEFAULT_REGULARIZATION = 1e-4


@dataclass(frozen=True)
class LsviUcbPlusPlusConfig:
    """Hyper-parameters of LSVI-UCB++ (module docstring).

    Attributes:
        num_episodes: K (enters ι).
        beta_hat_multiplier, beta_check_multiplier, beta_bar_multiplier: multipliers of β̂, β̌, β̄.
        variance_floor_multiplier: c_σ, multiplier of 2d³H²√n in σ̄.
        disagreement_multiplier: c_D, multiplier of 4d³H² in D.
        regularization: λ (default 10⁻⁴, see module docstring); ``None`` means 1/H² (the previous default).
        failure_probability: p in ι.
        switching: if False, update Q̂, Q̌ every episode (an ablation; the algorithm switches rarely).
    """

    num_episodes: int
    beta_hat_multiplier: float = DEFAULT_BETA_MULTIPLIER
    beta_check_multiplier: float = DEFAULT_BETA_MULTIPLIER
    beta_bar_multiplier: float = DEFAULT_BETA_MULTIPLIER
    variance_floor_multiplier: float = 0.0
    disagreement_multiplier: float = 0.0
    regularization: float | None = DEFAULT_REGULARIZATION
    failure_probability: float = 0.01
    switching: bool = True

    def __post_init__(self) -> None:
        _validate.integer("num_episodes", self.num_episodes, minimum=1)
        for name in ("beta_hat_multiplier", "beta_check_multiplier", "beta_bar_multiplier",
                     "variance_floor_multiplier", "disagreement_multiplier"):
            _validate.non_negative(name, getattr(self, name))
        if self.regularization is not None:
            _validate.positive("regularization", self.regularization)
        _validate.open_unit("failure_probability", self.failure_probability)
        if not isinstance(self.switching, bool):
            raise InvalidParameterError("switching", "must be True or False", self.switching)


def theory_radii(dim: int, horizon: int, num_episodes: int, regularization: float,
                 failure_probability: float) -> dict[str, float]:
    """β̂ = β̌ and β̄ of Sahu 2025 Theorem 3.2 without privacy noise (L = 1, λ̃ = λ, constants 1)."""
    iota = math.log(horizon * num_episodes**4 * dim / (failure_probability * regularization))
    hat = horizon * math.sqrt(dim * regularization) + math.sqrt(dim**3 * horizon**2) * iota
    bar = horizon**2 * math.sqrt(dim * regularization) + math.sqrt(dim**3 * horizon**4) * iota
    return {"beta_hat": hat, "beta_check": hat, "beta_bar": bar}


def variance_weights_from(hat: np.ndarray, check: np.ndarray, bar: np.ndarray, n: np.ndarray, H: int, d: int,
                          beta_hat: float, beta_bar: float, disagreement_coefficient: float,
                          variance_floor_coefficient: float) -> np.ndarray:
    """σ̄⁻² (module docstring) from ŵᵀφ, w̌ᵀφ, w̄ᵀφ and the bonus norm n = ‖φ‖_{Λ⁻¹} at the visited pairs,
    elementwise (any common shape; :class:`LsviUcbPlusPlus` and the batched DP variant share it)."""
    variance = np.clip(bar, 0.0, H**2) - np.clip(hat, 0.0, H) ** 2
    error = np.minimum(beta_bar * n, H**2) + np.minimum(2 * H * beta_hat * n, H**2)
    disagreement = np.minimum(disagreement_coefficient * (hat - check + 2 * beta_hat * n), d**3 * H**3)
    sigma = np.sqrt(np.maximum(variance + error + disagreement + H, 0.0))
    sigma_bar = np.maximum(np.maximum(sigma, H), variance_floor_coefficient * np.sqrt(n))
    return sigma_bar**-2.0


def learning_rule_settings(agent: Any) -> dict[str, Any]:
    """What LSVI-UCB++ and DP-LSVI-UCB++ both report of the learning rule: λ, the theory radii, the radii used
    and the coefficients of σ̄'s floor and of D."""
    return {
        "regularization_used": agent.regularization,
        "theory_beta_hat": agent.theory["beta_hat"],
        "theory_beta_check": agent.theory["beta_check"],
        "theory_beta_bar": agent.theory["beta_bar"],
        "beta_hat": agent.beta_hat,
        "beta_check": agent.beta_check,
        "beta_bar": agent.beta_bar,
        "variance_floor_coefficient": agent.variance_floor_coefficient,
        "disagreement_coefficient": agent.disagreement_coefficient,
    }


def backup(q_hat: np.ndarray, q_check: np.ndarray, rewards: np.ndarray, phi: np.ndarray, w_hat: np.ndarray,
           w_check: np.ndarray, bonus: np.ndarray, beta_hat: float, beta_check: float, cap: float
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One stage of the optimistic/pessimistic backup (Sahu 2025 Alg. 1 lines 11–12 and 18–19, with the
    corrections of the module docstring): Q̂_h, Q̌_h (S, A) from the previous ones and the regressions, and
    V̂_h, V̌_h (S); ``phi`` (S, A, d), ``bonus`` = ‖φ‖_{Λ_h⁻¹} (S, A), ``cap`` = H − h."""
    optimistic = rewards + phi @ w_hat + beta_hat * bonus
    pessimistic = rewards + phi @ w_check - beta_check * bonus
    q_hat = np.minimum(np.minimum(optimistic, q_hat), cap)
    q_check = np.minimum(np.maximum(np.maximum(pessimistic, q_check), 0.0), cap)
    return q_hat, q_check, np.clip(q_hat.max(axis=-1), 0.0, cap), np.clip(q_check.max(axis=-1), 0.0, cap)


class LsviUcbPlusPlus(Agent):
    """LSVI-UCB++ on a finite :class:`~dpverify.agents.envs.linear_mdp.LinearMDP` (module docstring)."""

    name = "lsvi-ucb++"
    config_class = LsviUcbPlusPlusConfig

    def __init__(self, mdp: LinearMDP, config: LsviUcbPlusPlusConfig, rng: np.random.Generator) -> None:
        self.mdp = mdp
        self.config = config
        self.rng = rng
        H, S, A, d = mdp.horizon, mdp.num_states, mdp.num_actions, mdp.dim
        self.horizon, self.num_states, self.num_actions, self.dim = H, S, A, d
        self.features = mdp.features
        self.rewards = mdp.rewards
        self.regularization = config.regularization if config.regularization is not None else 1.0 / H**2
        self.statistics = RidgeStatistics(mdp.features, mdp.rewards, self.regularization)
        self.theory = theory_radii(d, H, config.num_episodes, self.regularization, config.failure_probability)
        self.beta_hat = config.beta_hat_multiplier * self.theory["beta_hat"]
        self.beta_check = config.beta_check_multiplier * self.theory["beta_check"]
        self.beta_bar = config.beta_bar_multiplier * self.theory["beta_bar"]
        self.variance_floor_coefficient = config.variance_floor_multiplier * 2 * d**3 * H**2
        self.disagreement_coefficient = config.disagreement_multiplier * 4 * d**3 * H**2
        caps = (H - np.arange(H))[:, None, None].astype(np.float64)
        self.q_hat = np.broadcast_to(caps, (H, S, A)).copy()  # Algorithm 1 line 2: Q̂_0 = H (capped at H − h)
        self.q_check = np.zeros((H, S, A))  # Q̌_0 = 0
        self.v_hat = np.zeros((H + 1, S))
        self.v_check = np.zeros((H + 1, S))
        self.v_hat[:H] = caps[:, :, 0]
        self._last_switch_logdet = self.statistics.log_determinants()
        self.num_switches = 0
        # regression weights of the current episode, used for the variance estimate after the rollout
        self._w_hat = np.zeros((H, d))
        self._w_check = np.zeros((H, d))
        self._w_bar = np.zeros((H, d))
        self._bonus_norm = np.zeros((H, S, A))

    def derived_settings(self) -> dict[str, Any]:
        return learning_rule_settings(self)

    def plan(self) -> np.ndarray:
        """One backward pass (module docstring); returns Q̂, shape (H, S, A)."""
        stats = self.statistics
        logdets = stats.log_determinants()
        # Algorithm 1 line 10: det Λ_{h'} ≥ 2 det Λ_{h'}(k_last) for some h', on log-determinants.
        switch = bool(np.any(logdets >= self._last_switch_logdet + math.log(2.0))) or not self.config.switching
        for h in range(self.horizon - 1, -1, -1):
            inverse = stats.gram_inverse(h)
            self._w_hat[h] = inverse @ stats.weighted_sum(h, self.v_hat[h + 1])
            self._w_check[h] = inverse @ stats.weighted_sum(h, self.v_check[h + 1])
            self._w_bar[h] = inverse @ stats.weighted_sum(h, self.v_hat[h + 1] ** 2)
            self._bonus_norm[h] = np.sqrt(stats.bonus_squared(h))
            if switch:
                self.q_hat[h], self.q_check[h], self.v_hat[h], self.v_check[h] = backup(
                    self.q_hat[h], self.q_check[h], self.rewards[h], self.features[h], self._w_hat[h],
                    self._w_check[h], self._bonus_norm[h], self.beta_hat, self.beta_check, float(self.horizon - h))
        if switch and self.config.switching:
            self._last_switch_logdet = stats.log_determinants()
            self.num_switches += 1
        return self.q_hat

    def begin_episode(self) -> np.ndarray:
        return sample_greedy_actions(self.plan(), self.rng, TIE_TOLERANCE)

    # ---- learning -----------------------------------------------------------------------------------

    def variance_weights(self, trajectory: Trajectory) -> np.ndarray:
        """σ̄_{k,h}⁻² for the visited (s_h, a_h) of every stage (module docstring), shape (H,)."""
        H, d = self.horizon, self.dim
        h = np.arange(H)
        s, a = trajectory.states[:-1], trajectory.actions
        phi = self.features[h, s, a]  # (H, d)
        hat = np.einsum("hd,hd->h", self._w_hat, phi)
        check = np.einsum("hd,hd->h", self._w_check, phi)
        bar = np.einsum("hd,hd->h", self._w_bar, phi)
        return variance_weights_from(hat, check, bar, self._bonus_norm[h, s, a], H, d, self.beta_hat,
                                     self.beta_bar, self.disagreement_coefficient, self.variance_floor_coefficient)

    def end_episode(self, trajectory: Trajectory) -> None:
        self.statistics.add_episode(trajectory.states, trajectory.actions, self.variance_weights(trajectory))
