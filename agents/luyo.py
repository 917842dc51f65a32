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
:class:`dpverify.agents.statistics.RidgeStatistics`). Each is tree-privatised once; M̃_h V + ρ̃_h for the current
V is post-processing of published values, so re-planning costs no privacy.

Binary-tree mechanism. Users are the leaves 1..K (user k = episode k). At the end of episode k the node
(k − lowbit(k), k] — the sum of the terms of users k − lowbit(k) + 1, …, k — is released once, with fresh
noise, through :meth:`dpverify.agents.billboard.Billboard.publish` with ``users="tree"`` (ledger pattern
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

Regression with noisy statistics (stages 0-indexed, V_H = 0):

    Λ̃_h = G̃_h + (λ + Γ) I,   w_h = Λ̃_h⁻¹ (M̃_h V_{h+1} + ρ̃_h)
    Q_h(s, a) = min{ w_hᵀφ_h(s, a) + β ‖φ_h(s, a)‖_{Λ̃_h⁻¹}, H − h },   V_h = [max_a Q_h]_{[0, H−h]}

Γ is a high-probability bound on the operator norm of the tree noise on G̃ (:func:`goe_norm_bound` with
the entry std s·√(⌊log₂K⌋+1) of a sum of that many GOE draws), times ``shift_multiplier``: the shift of
Shariff & Sheffet 2018 that keeps Λ̃ positive definite (Sahu 2025 adds 2λ̃_Λ for the same reason). If
the shifted noisy matrix still has an eigenvalue below λ (probability ≤ p), its eigenvalues are floored
at λ (post-processing; counted in ``psd_corrections``).

Confidence radius: β = beta_multiplier · d·H·√ι (Jin et al. 2020 Theorem 3.1, ι = log(2dKH/p), as in
:mod:`dpverify.agents.lsvi_ucb`) + privacy_beta_multiplier · (γ + Γ·2H√d)/√(λ + Γ), where γ bounds the ℓ2 norm of
the noise on M̃V + ρ̃ w.h.p. and 2H√d bounds ‖w‖ (Jin et al. Lemma B.1): the regression error the noise
causes in the Λ̃ norm (Shariff & Sheffet 2018, Proposition 4 style). Every value is in :meth:`settings`.

Ties are broken at random with a generator spawned from the agent's; noise comes from a second spawned
generator (so the actions depend on other users' data only through the billboard). Per-episode cost
O(H(d² log K + dS log K)) for the tree plus O(H(SAd² + d³)) per re-plan — independent of k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.agents.base import Agent, Trajectory
from dpverify.agents.billboard import Billboard
from dpverify.agents.envs.linear_mdp import NORM_TOLERANCE, LinearMDP
from dpverify.agents.lsvi_ucb import theory_beta
from dpverify.agents.planning import TIE_TOLERANCE, sample_greedy_actions
from dpverify.agents.private_checks import PrivateAgentConfig, billboard_for, check_agent_inputs
from dpverify.calibration import Calibration, ReleaseSchedule, StatisticSpec, calibrate
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, Mechanism
from dpverify.neighbouring import Neighbouring
from dpverify.sensitivity import SumBound, gram_sum_sensitivity, vector_sum_sensitivity

# ---- shared helpers (also used by dpverify.agents.ngo) ---------------------------------------------------------


def check_term_norms(norms: np.ndarray, assumed: float, what: str) -> None:
    """Run-time guard: every per-user feature entering a released sum has norm ≤ the assumed bound."""
    if np.any(norms > assumed * (1.0 + NORM_TOLERANCE)):
        raise InvalidParameterError(
            what, f"norm must be <= {assumed:g}, the bound the privacy calibration assumes", float(np.max(norms))
        )


def goe_norm_bound(entry_std: float, dim: int, failure_probability: float) -> float:
    """A bound on ‖(Z + Zᵀ)/√2‖₂ (Z_ij iid N(0, s²)) holding with probability ≥ 1 − p.

    E‖Z‖₂ ≤ 2√d·s (Gordon's inequality), so E‖(Z + Zᵀ)/√2‖ ≤ √2·E‖Z‖ ≤ 2√(2d)·s; the map Z ↦ ‖(Z+Zᵀ)/√2‖
    is √2-Lipschitz in ‖Z‖_F, so Gaussian concentration (Tsirelson–Ibragimov–Sudakov) adds
    s·√(4 log(1/p)): bound = s·(2√(2d) + 2√(log(1/p))).
    """
    return entry_std * (2.0 * math.sqrt(2.0 * dim) + 2.0 * math.sqrt(math.log(1.0 / failure_probability)))


def gaussian_norm_bound(sigma: float, dim: int, failure_probability: float) -> float:
    """‖N(0, σ²I_dim)‖₂ ≤ σ(√dim + √(2 log(1/p))) with probability ≥ 1 − p (Laurent & Massart 2000)."""
    return sigma * (math.sqrt(dim) + math.sqrt(2.0 * math.log(1.0 / failure_probability)))


def floored_inverse(matrix: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray, int]:
    """(A⁻¹, log det A, corrections) for a stack of symmetric matrices (..., d, d), eigenvalues floored.

    Eigenvalues below ``floor`` are raised to ``floor`` (post-processing of published values); the
    third value counts the matrices that needed it.
    """
    sym = 0.5 * (matrix + np.swapaxes(matrix, -1, -2))
    values, vectors = np.linalg.eigh(sym)
    low = values < floor
    corrections = int(np.any(low, axis=-1).sum())
    values = np.maximum(values, floor)
    inverse = np.einsum("...ij,...j,...kj->...ik", vectors, 1.0 / values, vectors)
    return inverse, np.log(values).sum(axis=-1), corrections


class BinaryTreeSum:
    """The binary mechanism (Chan, Shi & Song 2011) for a running sum of per-user terms, per stage.

    At the k-th call of :meth:`add` (user k), the node (k − lowbit(k), k] is formed from raw partial sums
    and published once per stage through ``billboard.publish(family, k, h + 1, mechanism, node, "tree",
    rng)`` with fresh noise; :attr:`prefix` is then the noisy sum over users 1..k (the sum of the noisy
    nodes of the binary decomposition of k). Raw partial sums never leave this object.

    Args:
        shape: shape of one stage's term (e.g. (d, d) or (d·S,)).
        max_users: K, the largest number of leaves (sets the number of levels ⌊log₂K⌋ + 1).
    """

    def __init__(self, billboard: Billboard, family: str, mechanism: Mechanism, horizon: int,
                 shape: tuple[int, ...], max_users: int, rng: np.random.Generator) -> None:
        self.billboard, self.family, self.mechanism, self.rng = billboard, family, mechanism, rng
        self.horizon = horizon
        self.levels = int(max_users).bit_length()
        self.max_users = int(max_users)
        self._raw = np.zeros((self.levels, horizon, *shape))
        self._noisy = np.zeros((self.levels, horizon, *shape))
        self.prefix = np.zeros((horizon, *shape))
        self.count = 0

    def add(self, terms: np.ndarray) -> None:
        """Add user k's terms (shape (H, *shape)) and publish the node ending at k for every stage."""
        k = self.count + 1
        if k > self.max_users:
            raise InvalidParameterError("episodes", f"must be <= {self.max_users} (the calibrated K)", k)
        level = (k & -k).bit_length() - 1
        node = self._raw[:level].sum(axis=0) + terms
        noisy = np.empty_like(node)
        for h in range(self.horizon):
            noisy[h] = self.billboard.publish(self.family, k, h + 1, self.mechanism, node[h], "tree", self.rng)
        self._raw[level] = node
        self._raw[:level] = 0.0
        self._noisy[level] = noisy
        self._noisy[:level] = 0.0
        self.prefix = self._noisy.sum(axis=0)
        self.count = k


# ---- configuration and schedule -----------------------------------------------------------------------


@dataclass(frozen=True)
class LuyoConfig(PrivateAgentConfig):
    """Hyper-parameters of the Luyo et al. 2021 agent (module docstring).

    Attributes:
        num_episodes: K (the tree has K leaves; the calibration covers K episodes).
        epsilon, delta: the target (ε, δ)-JDP (ε required: there is no default privacy budget).
        batch_length: B, episodes per batch; ``None`` means ⌈K^{2/5}⌉.
        beta_multiplier: multiplier of Jin et al.'s d·H·√ι (default 0.01, as LSVI-UCB).
        privacy_beta_multiplier: multiplier of the privacy term of β (default 0.01).
        shift_multiplier: multiplier of the noise bound Γ added to the Gram matrix (default 1).
        regularization: λ.
        failure_probability: p (radius and noise bounds).
        feature_norm_bound: F, the ‖φ‖ bound the sensitivities assume (the environment must not exceed it).
        relation: "replace-one" or "add-remove-one".
        conversion: zCDP/GDP→(ε, δ) route of the calibration ("exact" by default).
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
                  relation: Neighbouring | str = Neighbouring.REPLACE_ONE, feature_norm: float = 1.0) -> ReleaseSchedule:
    """The release schedule of :class:`LuyoAgent`: three tree-privatised families (module docstring)."""
    relation = Neighbouring.parse(relation)
    F = _validate.positive("feature_norm", feature_norm)
    unit = SumBound(1.0, F, 1.0)
    tree = "tree"
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


# ---- the agent ------------------------------------------------------------------------------------------


class LuyoAgent(Agent):
    """Privatised LSVI-UCB with the binary-tree mechanism and fixed-length batches (module docstring).

    Args:
        mdp: a finite :class:`~dpverify.agents.envs.linear_mdp.LinearMDP`.
        config: :class:`LuyoConfig`.
        rng: the agent's generator; two generators are spawned from it (noise, tie-breaking).
        billboard: optionally a :class:`~dpverify.agents.billboard.Billboard` to publish on (e.g. with
            ``keep_history=True`` for audits); its relation must equal ``config.relation``.
    """

    name = "luyo"

    def __init__(self, mdp: LinearMDP, config: LuyoConfig, rng: np.random.Generator,
                 billboard: Billboard | None = None) -> None:
        check_agent_inputs(mdp, LinearMDP, config.feature_norm_bound, rng)
        self.mdp, self.config = mdp, config
        H, S, A, d = mdp.horizon, mdp.num_states, mdp.num_actions, mdp.dim
        self.horizon, self.num_states, self.num_actions, self.dim = H, S, A, d
        self.features = mdp.features
        self._flat_features = mdp.features.reshape(H, S * A, d)
        self.billboard = billboard_for(billboard, config.relation)
        self.noise_rng, self.tie_rng = rng.spawn(2)
        K = config.num_episodes
        self.schedule = luyo_schedule(H, K, d, S, config.relation, config.feature_norm_bound)
        self.calibration: Calibration = calibrate(self.schedule, config.epsilon, config.delta, config.conversion)
        gram_mech = self.calibration.mechanism("gram")
        next_mech = self.calibration.mechanism("next_state")
        reward_mech = self.calibration.mechanism("reward")
        assert isinstance(gram_mech, GOEMechanism)
        assert isinstance(next_mech, GaussianMechanism) and isinstance(reward_mech, GaussianMechanism)
        self.gram_tree = BinaryTreeSum(self.billboard, "gram", gram_mech, H, (d, d), K, self.noise_rng)
        self.next_state_tree = BinaryTreeSum(self.billboard, "next_state", next_mech, H, (d * S,), K, self.noise_rng)
        self.reward_tree = BinaryTreeSum(self.billboard, "reward", reward_mech, H, (d,), K, self.noise_rng)
        self.batch_length = config.effective_batch_length
        # Noise bounds of a prefix sum (at most `levels` nodes) holding jointly w.p. ≥ 1 − p.
        levels = self.gram_tree.levels
        p = config.failure_probability / (2.0 * H * max(1, math.ceil(K / self.batch_length)))
        self.gram_shift = config.shift_multiplier * goe_norm_bound(gram_mech.entry_std * math.sqrt(levels), d, p)
        self.target_noise_bound = math.sqrt(levels) * (
            gaussian_norm_bound(next_mech.sigma, d, p) * H * math.sqrt(S) + gaussian_norm_bound(reward_mech.sigma, d, p)
        )
        self.theory_beta = theory_beta(d, H, K, config.failure_probability)
        self.privacy_beta = (self.target_noise_bound + self.gram_shift * 2.0 * H * math.sqrt(d)) / math.sqrt(
            config.regularization + self.gram_shift)
        self.beta = config.beta_multiplier * self.theory_beta + config.privacy_beta_multiplier * self.privacy_beta
        self.episode = 0
        self.policy_updates = 0
        self.psd_corrections = 0
        self.q = np.zeros((H, S, A))

    # ---- privacy ---------------------------------------------------------------------------------------

    @property
    def ledger(self):
        return self.billboard.ledger

    def claimed_guarantee(self) -> DPGuarantee:
        """The (ε, δ)-JDP claimed for a run of ``num_episodes`` episodes (the calibration, re-accounted)."""
        return self.calibration.ledger().guarantee(self.config.delta, self.config.conversion)

    def derived_settings(self) -> dict[str, Any]:
        return {
            "batch_length_used": self.batch_length,
            "claimed_epsilon": self.calibration.accounted_epsilon,
            "rho": self.calibration.rho,
            "rho0": self.calibration.rho0,
            "noise_std": {s.spec.family: s.noise_std for s in self.calibration.statistics},
            "sensitivity": {s.spec.family: s.spec.sensitivity for s in self.calibration.statistics},
            "gram_shift": self.gram_shift,
            "target_noise_bound": self.target_noise_bound,
            "theory_beta": self.theory_beta,
            "privacy_beta": self.privacy_beta,
            "beta": self.beta,
            "policy_updates": self.policy_updates,
            "psd_corrections": self.psd_corrections,
        }

    # ---- planning ----------------------------------------------------------------------------------------

    def plan(self) -> np.ndarray:
        """LSVI on the published (noisy) prefix sums; fills and returns Q, shape (H, S, A)."""
        H, S = self.horizon, self.num_states
        lam = self.config.regularization
        gram = self.gram_tree.prefix + (lam + self.gram_shift) * np.eye(self.dim)
        inverse, _, corrections = floored_inverse(gram, lam)
        self.psd_corrections += corrections
        next_state = self.next_state_tree.prefix.reshape(H, self.dim, S)
        rewards = self.reward_tree.prefix
        bonus_sq = np.einsum("hnd,hde,hne->hn", self._flat_features, inverse, self._flat_features)
        bonus = self.beta * np.sqrt(np.maximum(bonus_sq, 0.0)).reshape(H, S, self.num_actions)
        next_values = np.zeros(S)
        for h in range(H - 1, -1, -1):
            w = inverse[h] @ (next_state[h] @ next_values + rewards[h])
            cap = float(H - h)
            self.q[h] = np.minimum(self.features[h] @ w + bonus[h], cap)
            next_values = np.clip(self.q[h].max(axis=-1), 0.0, cap)
        self.policy_updates += 1
        return self.q

    def begin_episode(self) -> np.ndarray:
        if self.episode % self.batch_length == 0:
            self.plan()
        return sample_greedy_actions(self.q, self.tie_rng, TIE_TOLERANCE)

    def end_episode(self, trajectory: Trajectory) -> None:
        """The server adds user k's terms to the three trees (publishing node (k − lowbit(k), k])."""
        H, S = self.horizon, self.num_states
        h = np.arange(H)
        s, a, s_next = trajectory.states[:-1], trajectory.actions, trajectory.states[1:]
        x = self.features[h, s, a]  # (H, d)
        check_term_norms(np.linalg.norm(x, axis=1), self.config.feature_norm_bound, "features")
        next_terms = np.zeros((H, self.dim, S))
        next_terms[h, :, s_next] = x
        self.gram_tree.add(x[:, :, None] * x[:, None, :])
        self.next_state_tree.add(next_terms.reshape(H, self.dim * S))
        self.reward_tree.add(x * self.mdp.rewards[h, s, a][:, None])
        self.episode += 1
