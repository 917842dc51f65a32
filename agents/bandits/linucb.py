"""LinUCB (OFUL) — the optimistic linear bandit rule the three linear agents share, and its non-private agent.

Abbasi-Yadkori, Pál & Szepesvári 2011 ("Improved algorithms for linear stochastic bandits"), the OFUL rule:
with V = λ_reg I + Σ_s x_s x_sᵀ and u = Σ_s x_s r_s over the past rounds, θ̂ = V⁻¹u, round t pulls in context c

    argmax_a ⟨θ̂, x_{c,a}⟩ + β_t ‖x_{c,a}‖_{V⁻¹}                                         (:func:`ucb_scores`)

with β_t the radius of their Theorem 2 (:func:`confidence_radius`). The private agents run the same rule on
privatised sums shifted by a bound on their noise (the shifted regulariser of Shariff & Sheffet 2018):
then V's eigenvalues lie in [ρ_min, ρ_max] w.h.p. and the radius is Shariff & Sheffet's confidence radius for
a shifted regulariser,

    β_t = R √(2 log(1/p) + d log(ρ_max/ρ_min + t L²/(d ρ_min))) + S √ρ_max   (+ γ, the noise on u),

which is Abbasi-Yadkori et al.'s with ρ_min = ρ_max = λ_reg. R = ½ (a reward in [0, 1] is ½-sub-Gaussian,
Hoeffding's lemma), L the feature-norm bound, S the bound on ‖θ‖ (``theta_bound``; default √d, which covers
every instance of :mod:`dpverify.agents.envs.bandit_instances`: one-hot arms with means in [0, 1], or
‖θ‖ = 1). The radius used is ``beta_multiplier`` × this theory value (reported in ``settings()``): the theory
constant explores far longer than practice needs, as for every agent here (docs/private_agents.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate

from ..core.noise_bounds import floored_inverse_factor
from ..envs.bandit import Bandit
from .rounds import BanditAgent, BanditRule, Round

#: R, the sub-Gaussian constant of a reward in [0, 1] (Hoeffding's lemma).
REWARD_SUBGAUSSIAN = 0.5
DEFAULT_BETA_MULTIPLIER = 0.1


def confidence_radius(rounds: int, dim: int, feature_norm: float, rho_min: float, rho_max: float,
                      theta_bound: float, failure_probability: float) -> float:
    """β after ``rounds`` rounds (module docstring; Shariff & Sheffet 2018's radius for a shifted regulariser,
    which is Abbasi-Yadkori et al. 2011, Theorem 2, at ρ_min = ρ_max = λ)."""
    inside = (2.0 * math.log(1.0 / failure_probability)
              + dim * math.log(rho_max / rho_min + rounds * feature_norm**2 / (dim * rho_min)))
    return REWARD_SUBGAUSSIAN * math.sqrt(inside) + theta_bound * math.sqrt(rho_max)


def ucb_scores(features: np.ndarray, gram: np.ndarray, target: np.ndarray, floor: float,
               beta: float | np.ndarray) -> tuple[np.ndarray, int]:
    """(⟨θ̂, x⟩ + β‖x‖_{V⁻¹} for every trial, context and arm (n, C, A), flooring corrections).

    ``gram`` is V (n, d, d), ``target`` u (n, d); V's eigenvalues below ``floor`` are raised to it
    (post-processing; :func:`dpverify.agents.core.noise_bounds.floored_inverse_factor`, W Wᵀ = V⁻¹)."""
    factor, _, corrections = floored_inverse_factor(gram, floor)
    n, (C, A, d) = gram.shape[0], features.shape
    flat = features.reshape(C * A, d)
    theta = np.matvec(factor, np.matvec(np.swapaxes(factor, -1, -2), target))  # V⁻¹u = W (Wᵀu)
    means = np.matvec(flat, theta)  # ⟨θ̂, x⟩, (n, C·A)
    projected = flat @ factor  # xᵀW = (Wᵀx)ᵀ, so ‖·‖² = xᵀV⁻¹x; one product per trial
    widths = np.sqrt(np.sum(projected * projected, axis=-1))
    return (means + np.asarray(beta)[..., None] * widths).reshape(n, C, A), corrections


@dataclass(frozen=True)
class LinUcbConfig:
    """Hyper-parameters of LinUCB (module docstring).

    Attributes:
        num_episodes: K, the rounds.
        beta_multiplier: multiplier of the theory radius.
        regularization: λ_reg.
        theta_bound: S ≥ ‖θ‖ (None: √d).
        failure_probability: p of the radius.
    """

    num_episodes: int
    beta_multiplier: float = DEFAULT_BETA_MULTIPLIER
    regularization: float = 1.0
    theta_bound: float | None = None
    failure_probability: float = 0.01

    def __post_init__(self) -> None:
        _validate.integer("num_episodes", self.num_episodes, minimum=1)
        _validate.non_negative("beta_multiplier", self.beta_multiplier)
        _validate.positive("regularization", self.regularization)
        if self.theta_bound is not None:
            _validate.positive("theta_bound", self.theta_bound)
        _validate.open_unit("failure_probability", self.failure_probability)


def theta_bound(config: Any, dim: int) -> float:
    """S of a config (its ``theta_bound``, or √d)."""
    return math.sqrt(dim) if config.theta_bound is None else float(config.theta_bound)


class LinUcbRule(BanditRule):
    """LinUCB on the exact sums V = λ_reg I + Σ x xᵀ, u = Σ x r (module docstring)."""

    def __init__(self, bandit: Bandit, config: LinUcbConfig, randomness: Any, channel: Any = None,
                 calibration: Any = None) -> None:
        super().__init__(bandit, config, randomness, channel, calibration)
        self.gram = np.broadcast_to(config.regularization * np.eye(self.dim), (self.n, self.dim, self.dim)).copy()
        self.target = np.zeros((self.n, self.dim))
        self.beta = 0.0

    def scores(self) -> np.ndarray:
        c = self.config
        self.beta = c.beta_multiplier * confidence_radius(
            self.round, self.dim, self.bandit.feature_norm_bound, c.regularization, c.regularization,
            theta_bound(c, self.dim), c.failure_probability)
        scores, _ = ucb_scores(self.features, self.gram, self.target, c.regularization, self.beta)
        return scores

    def learn(self, played: Round | None) -> None:
        if played is not None:
            x = self.pulled_features(played)
            self.gram += x[:, :, None] * x[:, None, :]
            self.target += x * np.clip(played.rewards, 0.0, 1.0)[:, None]
        self.round += 1

    def settings(self) -> dict[str, Any]:
        return {"beta": self.beta, "theta_bound": theta_bound(self.config, self.dim)}


class LinUcb(BanditAgent):
    """Non-private LinUCB (Abbasi-Yadkori et al. 2011) on a bandit: the counterpart of ``jdp-linucb`` and
    ``ldp-linucb`` (the same rule on exact sums)."""

    name = "linucb"
    config_class = LinUcbConfig
    rule_class = LinUcbRule


__all__ = ["LinUcb", "LinUcbConfig", "LinUcbRule", "confidence_radius", "theta_bound", "ucb_scores"]
