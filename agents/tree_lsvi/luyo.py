"""Luyo et al. 2021 — privacy-preserving LSVI-UCB with the binary-tree mechanism and batched updates (JDP).

Luyo, Garcelon, Lazaric & Pirotta 2021, "Differentially private exploration in reinforcement learning with
linear representation" (arXiv 2112.01585), model-free part: LSVI-UCB (Jin et al. 2020) whose regression
statistics are privatised with the binary-tree ("binary") mechanism of Chan, Shi & Song 2011 (also
Dwork et al. 2010; Shariff & Sheffet 2018 for linear bandits) and whose policy is updated only at the
ends of batches (low switching). Sahu 2025 describes it in its related work (§1, "Linear MDPs") and uses
it as a baseline in Figure 1(a).

What is privatised (the design, and why it is valid)
---------------------------------------------------
LSVI-UCB regresses r + V_{h+1}(s') on φ_h(s, a), and V_{h+1} changes whenever the policy is re-planned,
so the vector Σ_τ φ_τ (r_τ + V(s'_τ)) cannot be maintained by a tree of *fixed* partial sums. Luyo et
al. privatise sums that do not depend on the current V. With a finite state space (every environment
of :mod:`dpverify.agents.envs`) three per-stage sums are V-independent and determine every regression:

    G_h = Σ_τ φ_τ φ_τᵀ                (d × d, "gram")
    M_h = Σ_τ φ_τ e_{s'_τ}ᵀ           (d × S, "next_state", released flattened as a d·S vector)
    ρ_h = Σ_τ φ_τ r_h(s_τ, a_τ)        (d, "reward")

because Σ_τ φ_τ (r_τ + V(s'_τ)) = M_h V + ρ_h for *any* V (the next-state aggregation of
:class:`dpverify.agents.core.statistics.RidgeStatistics`). Each is tree-privatised once; M̃_h V + ρ̃_h for the current
V is post-processing of published values, so re-planning costs no privacy.

Binary-tree mechanism. Users are the leaves 1..K (user k = episode k). At the end of episode k the node
(k − lowbit(k), k] — the sum of the terms of users k − lowbit(k) + 1, …, k — is released once, with fresh
noise, through :meth:`dpverify.agents.core.billboard.Billboard.publish_block` with ``users="tree"`` (ledger pattern
:class:`dpverify.ledger.BinaryTreeNode`), for every stage and each of the three families (3H releases per
episode). The noisy prefix sum over users 1..k is the sum of the released nodes of the binary
decomposition of k (at most ⌊log₂K⌋ + 1 of them); each user lies in at most ⌊log₂K⌋ + 1 nodes per stage
and family, which is what the per-user ledger counts.

Sensitivities (replace-one; add/remove halves the vector bounds and divides the Gram bound by √2), with
‖φ‖₂ ≤ F (checked at construction and at every release) and r ∈ [0, 1]
(:mod:`dpverify.sensitivity`): one user's terms are φφᵀ (Frobenius ‖φ‖² ≤ F²), φ e_{s'}ᵀ (Frobenius norm
exactly ‖φ‖ ≤ F: a single non-zero column) and φ r (ℓ2 ≤ F). A node sums distinct users' terms, so
replacing one user changes one term of the node: Δ_gram = √2·F² (Frobenius: ‖xxᵀ − yyᵀ‖_F² ≤ ‖x‖⁴ + ‖y‖⁴),
Δ_next_state = 2F (‖φe_sᵀ − φ′e_tᵀ‖_F ≤ ‖φ‖ + ‖φ′‖; this is
``vector_sum_sensitivity(SumBound(1, F, 1))``), Δ_reward = 2F.

Accounting. :func:`luyo_schedule` lists the three families with users "tree" over K episodes × H stages;
:func:`dpverify.calibration.calibrate` gives every release the same ρ0 = ρ / (releases touching the
worst user) = ρ / (3H(⌊log₂K⌋ + 1)) and noise σ = Δ/√(2ρ0) (Gaussian), s = Δ_F/(2√ρ0) (GOE), so the
published statistics are (ε, δ)-DP exactly (one-sided, ``conversion="exact"``) and, by the billboard lemma
(Hsu et al. 2014; Sahu 2025 Lemma 2.4), the actions are (ε, δ)-JDP. After a run of K episodes the ledger
of :attr:`LuyoAgent.billboard` accounts to exactly :meth:`LuyoAgent.claimed_guarantee`.

Batches. The policy is re-planned only at the start of episodes 1, B + 1, 2B + 1, … (fixed-length
batches, the low-switching scheme of Luyo et al.); within a batch the same Q is used (ties re-drawn at
random each episode). Default B = ⌈K^{2/5}⌉: Luyo et al.'s K^{3/5} rate comes from about K^{3/5} batches
of length K^{2/5}. In this implementation privacy does not depend on B (the tree releases every episode
and re-planning is post-processing), so B only trades computation and adaptivity; it is a config field.

Regression, shift, radius and tie-breaking: :mod:`dpverify.agents.tree_lsvi.tree_lsvi` (shared with Ngo et al.), with
the target ũ_h = M̃_h V_{h+1} + ρ̃_h. Per-episode cost
O(H(d² log K + dS log K)) for the tree plus O(H(SAd² + d³)) per re-plan — independent of k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.calibration import ReleaseSchedule, StatisticSpec
from dpverify.ledger import user_pattern
from dpverify.mechanisms import GaussianMechanism
from dpverify.neighbouring import Neighbouring
from dpverify.sensitivity import SumBound, gram_sum_sensitivity, vector_sum_sensitivity

from ..core.base import Trajectory
from ..core.noise_bounds import gaussian_norm_bound
from ..core.planning import TIE_TOLERANCE, sample_greedy_actions
from ..envs.linear_mdp import LinearMDP
from .tree_lsvi import BinaryTreeSum, TreeLsviAgent, TreeLsviConfig


@dataclass(frozen=True)
class LuyoConfig(TreeLsviConfig):
    """Hyper-parameters of the Luyo et al. 2021 agent (module docstring).

    Attributes: those of :class:`~dpverify.agents.tree_lsvi.tree_lsvi.TreeLsviConfig` (K, the target (ε, δ)-JDP,
    F, relation, conversion, shift_multiplier, p, the radius multipliers, λ) and
        batch_length: B, episodes per batch; ``None`` means ⌈K^{2/5}⌉.
    """

    batch_length: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.batch_length is not None:
            _validate.integer("batch_length", self.batch_length, minimum=1)

    @property
    def effective_batch_length(self) -> int:
        if self.batch_length is not None:
            return int(self.batch_length)
        return max(1, math.ceil(self.num_episodes ** 0.4))


def luyo_schedule(horizon: int, episodes: int, dim: int, num_states: int,
                  relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
                  feature_norm_bound: float = 1.0) -> ReleaseSchedule:
    """The release schedule of :class:`LuyoAgent`: three tree-privatised families (module docstring)."""
    relation = Neighbouring.parse(relation)
    F = _validate.positive("feature_norm_bound", feature_norm_bound)
    unit = SumBound(1.0, F, 1.0)
    tree = user_pattern("tree")
    stats = (
        StatisticSpec("gram", "tree node of Σ φφᵀ (Luyo et al. 2021; Chan et al. 2011), GOE", "symmetric-matrix",
                      dim, gram_sum_sensitivity(unit, relation), tree),
        StatisticSpec("next_state", "tree node of Σ φ e_{s'}ᵀ (d×S, flattened)", "vector", dim * num_states,
                      vector_sum_sensitivity(unit, relation), tree),
        StatisticSpec("reward", "tree node of Σ φ r", "vector", dim, vector_sum_sensitivity(unit, relation), tree),
    )
    return ReleaseSchedule(
        name="luyo2021",
        source="Luyo et al. 2021 (privatised LSVI-UCB); binary mechanism of Chan, Shi & Song 2011",
        relation=relation,
        episodes=episodes,
        stages=horizon,
        statistics=stats,
        assumptions=(
            f"‖φ(s,a)‖₂ ≤ {F:g}, checked at construction and at every release",
            "rewards r_h(s,a) ∈ [0, 1]",
            f"neighbouring relation: {relation.value}",
            "each tree node released once per (episode, stage) with fresh noise; prefix sums are post-processing",
        ),
    )


class LuyoAgent(TreeLsviAgent):
    """Privatised LSVI-UCB with the binary-tree mechanism and fixed-length batches (module docstring).

    Built like every :class:`~dpverify.agents.tree_lsvi.tree_lsvi.TreeLsviAgent`; :meth:`set_up` adds the next-state
    and reward trees and the radius.
    """

    name = "luyo"
    config_class = LuyoConfig
    config: LuyoConfig

    def set_up(self) -> None:
        config = self.config
        H, S, d, K = self.horizon, self.num_states, self.dim, config.num_episodes
        next_mech = self.mechanism("next_state", GaussianMechanism)
        reward_mech = self.mechanism("reward", GaussianMechanism)
        self.next_state_tree = BinaryTreeSum(self.billboard, "next_state", next_mech, H, (d * S,), K, self.noise_rng)
        self.reward_tree = BinaryTreeSum(self.billboard, "reward", reward_mech, H, (d,), K, self.noise_rng)
        self.batch_length = config.effective_batch_length
        # Noise bounds of a prefix sum (at most `levels` nodes) holding jointly w.p. ≥ 1 − p.
        p = config.failure_probability / (2.0 * H * max(1, math.ceil(K / self.batch_length)))
        levels = self.gram_tree.levels
        self.set_radius(p, math.sqrt(levels) * (
            gaussian_norm_bound(next_mech.sigma, d, p) * H * math.sqrt(S) + gaussian_norm_bound(reward_mech.sigma, d, p)
        ))

    def release_schedule(self, mdp: LinearMDP, config: LuyoConfig) -> ReleaseSchedule:
        return luyo_schedule(mdp.horizon, config.num_episodes, mdp.dim, mdp.num_states, config.relation,
                             config.feature_norm_bound)

    def derived_settings(self) -> dict[str, Any]:
        return {"batch_length_used": self.batch_length, **super().derived_settings()}

    def plan(self) -> np.ndarray:
        """LSVI on the published (noisy) prefix sums; fills and returns Q, shape (H, S, A)."""
        inverse, _ = self.gram_inverse(self.shifted_gram())
        next_state = self.next_state_tree.prefix.reshape(self.horizon, self.dim, self.num_states)
        rewards = self.reward_tree.prefix
        self.backward_pass(inverse, lambda h, next_values: next_state[h] @ next_values + rewards[h])
        self.policy_updates += 1
        return self.q

    def begin_episode(self) -> np.ndarray:
        self.check_episode(self.episode + 1)
        if self.episode % self.batch_length == 0:
            self.plan()
        return sample_greedy_actions(self.q, self.tie_rng, TIE_TOLERANCE)

    def end_episode(self, trajectory: Trajectory | None) -> None:
        """The server adds user k's terms to the three trees (publishing node (k − lowbit(k), k]); None is an
        empty slot (:mod:`dpverify.agents.core.base`): the nodes are published with nothing of slot k in them."""
        if trajectory is None:
            for tree in (self.gram_tree, self.next_state_tree, self.reward_tree):
                tree.add(None)
            self.episode += 1
            return
        H, S = self.horizon, self.num_states
        h = np.arange(H)
        x = self.visited_features(trajectory)
        next_terms = np.zeros((H, self.dim, S))
        next_terms[h, :, trajectory.states[1:]] = x
        self.gram_tree.add(x[:, :, None] * x[:, None, :])
        self.next_state_tree.add(next_terms.reshape(H, self.dim * S))
        self.reward_tree.add(x * self.mdp.rewards[h, trajectory.states[:-1], trajectory.actions][:, None])
        self.episode += 1
