"""JDP-LinUCB — Shariff & Sheffet 2018: LinUCB on a tree-privatised Gram matrix and target, (ε, δ)-JDP.

Shariff & Sheffet 2018, "Differentially private contextual linear bandits" (NeurIPS 2018; arXiv:1810.00068):
linear UCB made jointly private with the tree-based algorithm, in its additive-Gaussian-noise instantiation.
User t's data is its context (the arm set of its round) and its rewards; its round contributes
z_t = (x_t, r_t) ∈ ℝ^{d+1}, x_t the feature of the arm it was given and r_t its reward, and the learner keeps
the augmented Gram matrix M_t = Σ_{s≤t} z_s z_sᵀ, whose top-left block is Σ x xᵀ and whose last column holds
Σ x r. M is released through the binary mechanism (:class:`~dpverify.agents.bandits.counters.TreeCounter`):
at round t the node (t − lowbit(t), t] of M with symmetric Gaussian noise (the GOE mechanism,
:class:`dpverify.mechanisms.GOEMechanism`), each node once, ``users="tree"``. Round t + 1 plans from the
noisy prefix M̃_t only:

    V = M̃[:d, :d] + (λ_reg + Γ) I,   u = M̃[:d, d],   θ̂ = V⁻¹u,
    arm(c) = argmax_a ⟨θ̂, x_{c,a}⟩ + β ‖x_{c,a}‖_{V⁻¹}                  (:mod:`dpverify.agents.bandits.linucb`)

Γ (``shift``) bounds the operator norm of the prefix noise (≤ ⌊log₂K⌋ + 1 GOE nodes of entry std s: entry std
s√levels, :func:`~dpverify.agents.core.noise_bounds.goe_norm_bound`, union over the K rounds) times
``shift_multiplier``: Shariff & Sheffet's shifted regulariser, which keeps V's eigenvalues in
[λ_reg, λ_reg + 2Γ] w.h.p. (eigenvalues below λ_reg are floored, post-processing). The radius is their
confidence radius for a shifted regulariser: β = beta_multiplier · β(ρ_min = λ_reg, ρ_max = λ_reg + 2Γ)
+ privacy_beta_multiplier · γ, with γ = ‖noise on u‖/√λ_reg
(:func:`~dpverify.agents.core.noise_bounds.gaussian_norm_bound` of the d entries of
std s√levels in M̃'s last column).

Privacy (:func:`jdp_linucb_schedule`). With ‖x‖ ≤ F (checked at construction and at every round) and the
reward clipped to [0, 1], ‖z‖² ≤ F² + 1, so one user moves a node by ‖z zᵀ − z′z′ᵀ‖_F ≤ √2·(F² + 1) under
replace-one (F² + 1 under add/remove; :func:`dpverify.sensitivity.gram_sum_sensitivity`). A user lies in one
node per level, ⌊log₂K⌋ + 1 releases; :func:`dpverify.calibration.calibrate` gives every node ρ0 = ρ/levels,
so the published nodes are (ε, δ)-DP (exact conversion) and, every action being a function of the billboard
and the user's own context, the actions are (ε, δ)-JDP by the billboard lemma (Hsu et al. 2014; the argument of
Shariff & Sheffet 2018 for their scheme). The noise is calibrated by dpverify for the target (ε, δ) instead of
the paper's closed-form scales: the same mechanism, accounted exactly by the ledger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpverify import _validate
from dpverify.calibration import Calibration, NamedSchedule, ReleaseSchedule, StatisticSpec
from dpverify.mechanisms import GOEMechanism
from dpverify.neighbouring import Neighbouring
from dpverify.sensitivity import SumBound, gram_sum_sensitivity

from ..core.noise_bounds import gaussian_norm_bound, goe_norm_bound
from ..core.private import PrivateRegressionConfig, check_term_norms, require_mechanism
from ..envs.bandit import Bandit
from .counters import TREE, TreeCounter
from .linucb import DEFAULT_BETA_MULTIPLIER, confidence_radius, theta_bound, ucb_scores
from .rounds import BanditRule, BatchedBandit, PrivateBandit, Round, twin_builder

#: The reward bound B the sensitivities assume (rewards are clipped to [0, B]).
REWARD_BOUND = 1.0
DEFAULT_PRIVACY_BETA_MULTIPLIER = 0.1


@dataclass(frozen=True)
class JdpLinUcbConfig(PrivateRegressionConfig):
    """Hyper-parameters of JDP-LinUCB (module docstring): those of every private agent (K, the target (ε, δ),
    F, relation, conversion, shift_multiplier, p), the radius multipliers, λ_reg, and S ≥ ‖θ‖
    (``theta_bound``, None: √d)."""

    beta_multiplier: float = DEFAULT_BETA_MULTIPLIER
    privacy_beta_multiplier: float = DEFAULT_PRIVACY_BETA_MULTIPLIER
    theta_bound: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.theta_bound is not None:
            _validate.positive("theta_bound", self.theta_bound)


def jdp_linucb_schedule(episodes: int, dim: int, relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
                        feature_norm_bound: float = 1.0) -> ReleaseSchedule:
    """The tree nodes of the augmented Gram matrix Σ z zᵀ, z = (x, r) (module docstring)."""
    relation = Neighbouring.parse(relation)
    F = _validate.positive("feature_norm_bound", feature_norm_bound)
    dim = _validate.integer("dim", dim, minimum=1)
    augmented_norm = math.sqrt(F * F + REWARD_BOUND * REWARD_BOUND)
    return ReleaseSchedule(
        name="jdp-linucb",
        source="Shariff & Sheffet 2018 (tree-based algorithm, additive Gaussian noise)",
        relation=relation,
        episodes=episodes,
        stages=1,
        statistics=(StatisticSpec("gram", "tree node of Σ z zᵀ, z = (x, r) (Shariff & Sheffet 2018), GOE",
                                  "symmetric-matrix", dim + 1,
                                  gram_sum_sensitivity(SumBound(1.0, augmented_norm), relation), TREE),),
        assumptions=(
            f"‖x‖₂ ≤ {F:g}, checked at construction and at every round",
            f"rewards clipped to [0, {REWARD_BOUND:g}]",
            f"neighbouring relation: {relation.value}",
            "each tree node released once with fresh noise; prefix sums are post-processing",
        ),
    )


def _named_build(horizon: int, episodes: int, dim: int, model: str, relation: Neighbouring) -> ReleaseSchedule:
    return jdp_linucb_schedule(episodes, dim, relation)


#: The schedule the registry card of ``jdp-linucb`` offers to ``dpverify calibrate`` (``--dim`` is d; every
#: bandit round is one stage, so ``--horizon`` is ignored; Shariff & Sheffet print noise scales only in Õ).
NAMED_SCHEDULE = NamedSchedule(name="jdp-linucb", build=_named_build, models=("tree",), default_model="tree")


class JdpLinUcbRule(BanditRule):
    """JDP-LinUCB for n trials (module docstring)."""

    #: The counter of the augmented Gram matrix (planted variants swap it: :mod:`dpverify.audits.bandit_zoo`).
    counter_class: ClassVar[type[TreeCounter]] = TreeCounter

    def __init__(self, bandit: Bandit, config: JdpLinUcbConfig, randomness: Any, channel: Any,
                 calibration: Calibration) -> None:
        super().__init__(bandit, config, randomness, channel, calibration)
        d, K = self.dim, config.num_episodes
        mechanism = require_mechanism(calibration.mechanism("gram"), GOEMechanism, "gram")
        self.tree = self.counter_class(channel, "gram", mechanism, self.n, (d + 1, d + 1), K)
        prefix_std = mechanism.entry_std * math.sqrt(self.tree.levels)
        p = config.failure_probability / (2.0 * K)  # each of the two noise bounds at each of the K rounds
        self.shift = config.shift_multiplier * goe_norm_bound(prefix_std, d + 1, p)
        self.target_noise = gaussian_norm_bound(prefix_std, d, p)
        self.privacy_beta = self.target_noise / math.sqrt(config.regularization)
        self.beta = 0.0
        self.psd_corrections = 0

    def scores(self) -> np.ndarray:
        c, d = self.config, self.dim
        self.beta = (c.beta_multiplier * confidence_radius(
            self.round, d, c.feature_norm_bound, c.regularization, c.regularization + 2.0 * self.shift,
            theta_bound(c, d), c.failure_probability) + c.privacy_beta_multiplier * self.privacy_beta)
        published = self.published()
        gram = published[:, :d, :d] + (c.regularization + self.shift) * np.eye(d)
        scores, corrections = ucb_scores(self.features, gram, published[:, :d, d], c.regularization, self.beta)
        self.psd_corrections += corrections
        return scores

    def published(self) -> np.ndarray:
        """M̃, the noisy prefix of the augmented Gram matrix the round plans from (n, d + 1, d + 1)."""
        return self.tree.prefix

    def round_terms(self, played: Round | None) -> np.ndarray:
        """z zᵀ of every trial's user, z = (x, r) with ‖x‖ checked and r clipped (0 for an empty slot)."""
        if played is None:
            return np.zeros((self.n, self.dim + 1, self.dim + 1))
        x = self.pulled_features(played)
        check_term_norms(np.linalg.norm(x, axis=-1), self.config.feature_norm_bound, "features")
        z = np.concatenate([x, np.clip(played.rewards, 0.0, REWARD_BOUND)[:, None]], axis=-1)
        return z[:, :, None] * z[:, None, :]

    def learn(self, played: Round | None) -> None:
        self.tree.add(self.round_terms(played))
        self.round += 1

    def settings(self) -> dict[str, Any]:
        return {"gram_shift": self.shift, "target_noise_bound": self.target_noise, "privacy_beta": self.privacy_beta,
                "beta": self.beta, "theta_bound": theta_bound(self.config, self.dim),
                "psd_corrections": self.psd_corrections, "tree_levels": self.tree.levels}


class JdpLinUcb(PrivateBandit):
    """JDP-LinUCB (Shariff & Sheffet 2018) on a :class:`~dpverify.agents.envs.bandit.Bandit` (module docstring)."""

    name = "jdp-linucb"
    privacy_notion = "jdp"
    config_class = JdpLinUcbConfig
    rule_class = JdpLinUcbRule

    def release_schedule(self, mdp: Bandit, config: JdpLinUcbConfig) -> ReleaseSchedule:
        return jdp_linucb_schedule(config.num_episodes, mdp.dim, config.relation, config.feature_norm_bound)


class BatchedJdpLinUcb(BatchedBandit):
    """JDP-LinUCB for n trials at once: the same rule (:mod:`dpverify.agents.bandits.rounds`)."""

    agent_class = JdpLinUcb


#: The registry card's batched twin: every option, both relations.
build_twin = twin_builder(BatchedJdpLinUcb, "jdp-linucb")


__all__ = ["NAMED_SCHEDULE", "BatchedJdpLinUcb", "JdpLinUcb", "JdpLinUcbConfig", "JdpLinUcbRule", "build_twin",
           "jdp_linucb_schedule"]
