"""LDP-LinUCB — Zheng et al. 2020: every user privatises its own statistics before sending them, (ε, δ)-LDP.

Zheng, Cai, Huang, Li & Wang 2020, "Locally differentially private (contextual) bandits learning" (NeurIPS
2020; arXiv:2006.00701), the contextual linear case of their (ε, δ)-LDP framework. Two parties:

* **user t** receives the server's broadcast (V⁻¹ and θ̂ of the messages of users 1..t−1), pulls
  argmax_a ⟨θ̂, x_{c,a}⟩ + β‖x_{c,a}‖_{V⁻¹} in its own context (:func:`~dpverify.agents.bandits.linucb.ucb_scores`),
  observes its reward r ∈ [0, 1] (clipped), and sends x xᵀ through the GOE mechanism and x·r through the
  Gaussian mechanism, each with fresh noise, published with ``users="current"`` and ``episode=t`` (so
  ``billboard.messages_of(t)`` is exactly what user t sent);
* the **server** only sums the messages: V = Σ messages + (λ_reg + Γ_t) I, u = Σ target messages, where
  Γ_t = shift_multiplier · (a bound on the operator norm of the sum of t − 1 GOE noises: entry std s√(t − 1),
  :func:`~dpverify.agents.core.noise_bounds.goe_norm_bound`) — the shifted regulariser again, growing with the
  number of messages (eigenvalues below λ_reg floored, post-processing).

The radius is the shifted OFUL radius with the message noise on u: β_t = beta_multiplier · β(ρ_min = λ_reg,
ρ_max = λ_reg + 2Γ_t) + privacy_beta_multiplier · ‖Σ noise on u‖/√λ_reg
(:func:`~dpverify.agents.core.noise_bounds.gaussian_norm_bound` with std σ√(t − 1)): a width of order t^{1/4},
hence the T^{3/4} regret of Zheng et al.

Privacy (:func:`ldp_linucb_schedule`). Local DP compares any two inputs of one user (replace-one): with
‖x‖ ≤ F (checked) and r ∈ [0, 1], ‖x xᵀ − x′x′ᵀ‖_F ≤ √2·F² and ‖x r − x′r′‖ ≤ 2F
(:mod:`dpverify.sensitivity`). Each user sends 2 messages, each with ρ0 = ρ/2 (:func:`dpverify.calibration.
calibrate`), so each user's messages are (ε, δ)-DP in that user's data: (ε, δ)-LDP. A user sends once, so
an empty slot (no user) has no meaning for local DP and is refused; the no-data control sends the messages of
zero statistics (:meth:`LdpLinUcb.end_episode_without_data`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.calibration import Calibration, NamedSchedule, ReleaseSchedule, StatisticSpec
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism
from dpverify.neighbouring import Neighbouring
from dpverify.sensitivity import SumBound, gram_sum_sensitivity, vector_sum_sensitivity

from ..core.noise_bounds import gaussian_norm_bound, goe_norm_bound
from ..core.private import PrivateRegressionConfig, check_term_norms, require_mechanism
from ..envs.bandit import Bandit
from .linucb import DEFAULT_BETA_MULTIPLIER, confidence_radius, theta_bound, ucb_scores
from .rounds import BanditRule, BatchedBandit, PrivateBandit, Round, twin_builder

REWARD_BOUND = 1.0
DEFAULT_PRIVACY_BETA_MULTIPLIER = 0.1
#: Who a message of round t reads: user t only.
CURRENT = "current"


@dataclass(frozen=True)
class LdpLinUcbConfig(PrivateRegressionConfig):
    """Hyper-parameters of LDP-LinUCB (module docstring): those of every private agent (K, the per-user (ε, δ),
    F, conversion, shift_multiplier, p; the relation is replace-one: local DP), the radius multipliers,
    λ_reg and S ≥ ‖θ‖ (``theta_bound``, None: √d)."""

    beta_multiplier: float = DEFAULT_BETA_MULTIPLIER
    privacy_beta_multiplier: float = DEFAULT_PRIVACY_BETA_MULTIPLIER
    theta_bound: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.relation != Neighbouring.REPLACE_ONE.value:
            raise InvalidParameterError("relation", "must be replace-one: local DP compares two inputs of one user",
                                        self.relation)
        if self.theta_bound is not None:
            _validate.positive("theta_bound", self.theta_bound)


def ldp_linucb_schedule(episodes: int, dim: int, relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
                        feature_norm_bound: float = 1.0) -> ReleaseSchedule:
    """Each user's two messages, x xᵀ (GOE) and x·r (Gaussian) (module docstring)."""
    relation = Neighbouring.parse(relation)
    F = _validate.positive("feature_norm_bound", feature_norm_bound)
    bound = SumBound(1.0, F, REWARD_BOUND)
    return ReleaseSchedule(
        name="ldp-linucb",
        source="Zheng et al. 2020 (LDP contextual linear bandits: Gaussian mechanisms on x xᵀ and x·r)",
        relation=relation,
        episodes=episodes,
        stages=1,
        statistics=(
            StatisticSpec("gram", "x xᵀ of user t (GOE)", "symmetric-matrix", dim,
                          gram_sum_sensitivity(bound, relation), CURRENT),
            StatisticSpec("target", "x·r of user t (Gaussian)", "vector", dim,
                          vector_sum_sensitivity(bound, relation), CURRENT),
        ),
        assumptions=(
            f"‖x‖₂ ≤ {F:g}, checked at construction and at every round",
            f"rewards clipped to [0, {REWARD_BOUND:g}]",
            f"neighbouring relation: {relation.value} (local DP: any two inputs of one user)",
            "each user's messages touch only that user; fresh noise per message",
        ),
    )


def _named_build(horizon: int, episodes: int, dim: int, model: str, relation: Neighbouring) -> ReleaseSchedule:
    return ldp_linucb_schedule(episodes, dim, relation)


#: The schedule the registry card of ``ldp-linucb`` offers to ``dpverify calibrate`` (``--dim`` is d).
NAMED_SCHEDULE = NamedSchedule(name="ldp-linucb", build=_named_build, models=("local",), default_model="local")


class LdpLinUcbRule(BanditRule):
    """LDP-LinUCB for n trials: the users' messages and the server's sums (module docstring)."""

    def __init__(self, bandit: Bandit, config: LdpLinUcbConfig, randomness: Any, channel: Any,
                 calibration: Calibration) -> None:
        super().__init__(bandit, config, randomness, channel, calibration)
        d = self.dim
        self.gram_mechanism = require_mechanism(calibration.mechanism("gram"), GOEMechanism, "gram")
        self.target_mechanism = require_mechanism(calibration.mechanism("target"), GaussianMechanism, "target")
        self.gram_sums = np.zeros((self.n, d, d))
        self.target_sums = np.zeros((self.n, d))
        self._p = config.failure_probability / (2.0 * config.num_episodes)
        self.shift = 0.0
        self.privacy_beta = 0.0
        self.beta = 0.0
        self.psd_corrections = 0

    def scores(self) -> np.ndarray:
        """The server's broadcast after ``self.round`` messages, and user t's indices from it."""
        c, d, messages = self.config, self.dim, self.round
        root = math.sqrt(messages)
        self.shift = c.shift_multiplier * goe_norm_bound(self.gram_mechanism.entry_std * root, d, self._p)
        self.privacy_beta = gaussian_norm_bound(self.target_mechanism.sigma * root, d, self._p) / math.sqrt(
            c.regularization)
        self.beta = (c.beta_multiplier * confidence_radius(
            messages, d, c.feature_norm_bound, c.regularization, c.regularization + 2.0 * self.shift,
            theta_bound(c, d), c.failure_probability) + c.privacy_beta_multiplier * self.privacy_beta)
        gram = self.gram_sums + (c.regularization + self.shift) * np.eye(d)
        scores, corrections = ucb_scores(self.features, gram, self.target_sums, c.regularization, self.beta)
        self.psd_corrections += corrections
        return scores

    def learn(self, played: Round | None) -> None:
        """User t privatises x xᵀ and x·r and sends them; the server adds them."""
        if played is None:
            raise InvalidParameterError(
                "trajectory", "must be given: a local-DP agent's claim is about one user's messages, so it has no "
                "empty slot (add/remove is not audited for local DP)", None)
        x = self.pulled_features(played)
        check_term_norms(np.linalg.norm(x, axis=-1), self.config.feature_norm_bound, "features")
        self.send(x[:, :, None] * x[:, None, :], x * np.clip(played.rewards, 0.0, REWARD_BOUND)[:, None])

    def learn_without_data(self) -> None:
        """The no-data control's round: the user sends the messages of zero statistics — the randomiser's noise
        alone, drawn and recorded as a user's."""
        self.send(np.zeros((self.n, self.dim, self.dim)), np.zeros((self.n, self.dim)))

    def send(self, gram: np.ndarray, target: np.ndarray) -> None:
        """Publish user t's two messages (gram, then target), each with fresh noise; the server sums them."""
        t = self.round + 1
        self.gram_sums += self.channel.release(t, "gram", self.gram_mechanism, CURRENT, gram)
        self.target_sums += self.channel.release(t, "target", self.target_mechanism, CURRENT, target)
        self.round = t

    def settings(self) -> dict[str, Any]:
        return {"gram_shift_final": self.shift, "privacy_beta_final": self.privacy_beta, "beta_final": self.beta,
                "theta_bound": theta_bound(self.config, self.dim), "psd_corrections": self.psd_corrections}


class LdpLinUcb(PrivateBandit):
    """LDP-LinUCB (Zheng et al. 2020) on a :class:`~dpverify.agents.envs.bandit.Bandit` (module docstring)."""

    name = "ldp-linucb"
    privacy_notion = "ldp"
    config_class = LdpLinUcbConfig
    rule_class = LdpLinUcbRule

    def release_schedule(self, mdp: Bandit, config: LdpLinUcbConfig) -> ReleaseSchedule:
        return ldp_linucb_schedule(config.num_episodes, mdp.dim, config.relation, config.feature_norm_bound)


class BatchedLdpLinUcb(BatchedBandit):
    """LDP-LinUCB for n trials at once: the same rule (:mod:`dpverify.agents.bandits.rounds`)."""

    agent_class = LdpLinUcb


#: The registry card's batched twin (local DP: replace-one, the only relation the config accepts).
build_twin = twin_builder(BatchedLdpLinUcb, "ldp-linucb")


__all__ = ["NAMED_SCHEDULE", "BatchedLdpLinUcb", "LdpLinUcb", "LdpLinUcbConfig", "LdpLinUcbRule", "build_twin",
           "ldp_linucb_schedule"]
