"""Ngo et al. 2022 — privatised LSVI-UCB with adaptive batching (policy updates on determinant doubling, JDP).

Ngo, Vietri & Wu 2022, "Improved regret for differentially private exploration in linear MDP" (ICML
2022, arXiv 2202.01292). Sahu 2025 describes it in its related work (§1, "Linear MDPs": adaptive
batching reduces the number of policy updates from polynomial in K to O(log K)) and uses it as a
baseline in Figure 1(a). The policy is re-computed only when the privatised Gram matrix of some stage
has doubled its determinant since the last update (rare switching, as in Wang et al. 2021 and
LSVI-UCB++), and the V-dependent regression vector is privatised once per update (per batch).

Release pattern (stages 0-indexed here, 1-indexed in the ledger)
---------------------------------------------------------------
* ``gram`` — the Gram matrices G_h = Σ_τ φ_τφ_τᵀ, privatised with the binary-tree mechanism (Chan, Shi
  & Song 2011; :class:`dpverify.agents.luyo.BinaryTreeSum`): at the end of every episode k the node
  (k − lowbit(k), k] is published per stage with GOE noise, ``users="tree"``. The determinant test runs
  every episode on the noisy prefix G̃_h (post-processing), so *when* the policy switches — which other
  users observe — depends on other users' data only through the billboard.
* ``target`` — at an update at the start of episode k, backward over h, the vector
  u_h = Σ_{τ<k} φ_τ (r_τ + V_{h+1}(s'_τ)) with the V_{h+1} just computed from published values, released
  once per stage with Gaussian noise, ``users="prefix"`` (reads users 1..k−1). Between updates nothing
  V-dependent is released: the policy of the batch is post-processing.

At most ``max_updates`` updates are made (after the initial, data-free plan at k = 1). The calibration
reserves budget for exactly that many target releases per stage, so the guarantee holds whatever the
data; when the budget is used up the last policy is kept (``update_budget_exhausted`` in
:meth:`settings`). Default cap: ⌈d·log₂(1 + K F²/(dλ))⌉, the number of times det(λI + G_h) can double
for one stage (Abbasi-Yadkori et al. 2011, Lemma 11: det ≤ (λ + K F²/d)^d) — the stages' Gram matrices
grow together (one sample each per episode), so their doublings mostly coincide.

Sensitivities (replace-one; add/remove halves the vector bound and divides the Gram bound by √2), with
‖φ‖₂ ≤ F (checked at construction and at every release), r ∈ [0, 1] and V_{h+1} clipped to
[0, H − h − 1], so every target r + V ∈ [0, H]: Δ_gram = √2·F² (Frobenius), Δ_target = 2·F·H (ℓ2)
(:mod:`dpverify.sensitivity`).

Accounting. The schedule (:func:`ngo_schedule`) has ``gram`` with users "tree" over episodes 1..K and
``target`` with users "prefix" at ``max_updates`` planned episodes 2..max_updates + 1 (the worst case:
user 1 is read by every update). :func:`dpverify.calibration.calibrate` gives every release the same
ρ0 = ρ / (H·(⌊log₂K⌋ + 1) + H·max_updates), the worst user's count, so the run is (ε, δ)-DP on the
billboard (exact conversion) and (ε, δ)-JDP for the actions (billboard lemma, Sahu 2025 Lemma 2.4). A
run whose updates reach the cap accounts to exactly :meth:`NgoAgent.claimed_guarantee`; with fewer
updates the ledger accounts to less (the unused target releases never happened).

Regression (as in :mod:`dpverify.agents.luyo`): Λ̃_h = G̃_h + (λ + Γ)I with Γ a high-probability bound on the
tree noise's operator norm (× ``shift_multiplier``; eigenvalues floored at λ if ever needed, counted),
w_h = Λ̃_h⁻¹ ũ_h, Q_h = min{w_hᵀφ + β‖φ‖_{Λ̃_h⁻¹}, H − h}, V_h = [max_a Q_h]_{[0, H−h]}. The switching
test: update when log det Λ̃_h ≥ log det Λ̃_h(last update) + log 2 for some h. β = beta_multiplier ·
d·H·√ι + privacy_beta_multiplier · (γ + Γ·2H√d)/√(λ + Γ) with γ the w.h.p. norm bound of the target noise.

Ties broken at random (generator spawned from the agent's; noise from a second one). Per-episode cost:
O(H d² log K) for the tree and O(H d³) for the determinant test, plus O(H(SAd² + dS)) per update —
independent of k (the server keeps next-state-aggregated raw sums, so u_h = M_h V + ρ_h costs O(dS)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.agents.base import Agent, Trajectory
from dpverify.agents.billboard import Billboard
from dpverify.agents.envs.linear_mdp import LinearMDP
from dpverify.agents.lsvi_ucb import theory_beta
from dpverify.agents.luyo import (
    BinaryTreeSum,
    check_term_norms,
    floored_inverse,
    gaussian_norm_bound,
    goe_norm_bound,
)
from dpverify.agents.planning import TIE_TOLERANCE, sample_greedy_actions
from dpverify.agents.private_checks import PrivateAgentConfig, billboard_for, check_agent_inputs
from dpverify.calibration import Calibration, ReleaseSchedule, StatisticSpec, calibrate
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, Mechanism
from dpverify.neighbouring import Neighbouring
from dpverify.sensitivity import SumBound, gram_sum_sensitivity, vector_sum_sensitivity


@dataclass(frozen=True)
class NgoConfig(PrivateAgentConfig):
    """Hyper-parameters of the Ngo et al. 2022 agent (module docstring).

    Attributes:
        num_episodes: K.
        epsilon, delta: the target (ε, δ)-JDP (ε required: there is no default privacy budget).
        max_updates: cap on data-dependent policy updates; ``None`` means ⌈d·log₂(1 + K F²/(dλ))⌉.
        beta_multiplier, privacy_beta_multiplier, shift_multiplier, regularization, failure_probability,
        feature_norm_bound, relation, conversion: as in :class:`dpverify.agents.luyo.LuyoConfig`.
    """

    max_updates: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_updates is not None:
            _validate.integer("max_updates", self.max_updates, minimum=1)

    def effective_max_updates(self, dim: int) -> int:
        if self.max_updates is not None:
            return int(self.max_updates)
        growth = self.num_episodes * self.feature_norm_bound**2 / (dim * self.regularization)
        return max(1, math.ceil(dim * math.log2(1.0 + growth)))


@dataclass(frozen=True)
class PlannedReleaseSchedule(ReleaseSchedule):
    """A :class:`~dpverify.calibration.ReleaseSchedule` whose families may occupy different episode ranges.

    ``episode_ranges`` maps a family to the (first, last) episodes at which it is (at most) released;
    families not listed occupy 1..episodes. Used for Ngo et al.'s per-update releases, whose planned
    worst case is ``max_updates`` prefix releases (episodes 2..max_updates + 1).
    """

    episode_ranges: tuple[tuple[str, int, int], ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        families = {s.family for s in self.statistics}
        for family, first, last in self.episode_ranges:
            if family not in families:
                raise InvalidParameterError("episode_ranges", f"names unknown family {family!r}", family)
            _validate.integer("episode_ranges first", first, minimum=1)
            _validate.integer("episode_ranges last", last, minimum=first)

    def ledger(self, mechanisms: dict[str, Mechanism]) -> PrivacyLedger:
        ranges = {family: (first, last) for family, first, last in self.episode_ranges}
        ledger = PrivacyLedger(self.relation)
        for spec in self.statistics:
            episodes = ranges.get(spec.family, (1, self.episodes))
            ledger.record_block(spec.family, episodes, (1, self.stages), mechanisms[spec.family], spec.users)
        return ledger


def ngo_schedule(horizon: int, episodes: int, dim: int, max_updates: int,
                 relation: Neighbouring | str = Neighbouring.REPLACE_ONE, feature_norm: float = 1.0) -> PlannedReleaseSchedule:
    """The release schedule of :class:`NgoAgent` (module docstring)."""
    relation = Neighbouring.parse(relation)
    F = _validate.positive("feature_norm", feature_norm)
    max_updates = _validate.integer("max_updates", max_updates, minimum=1)
    H = float(horizon)
    stats = (
        StatisticSpec("gram", "tree node of Σ φφᵀ (binary mechanism), GOE", "symmetric-matrix", dim,
                      gram_sum_sensitivity(SumBound(1.0, F, 1.0), relation), "tree"),
        StatisticSpec("target", "Σ_{τ<k} φ(r + V_{h+1}(s')) at a policy update", "vector", dim,
                      vector_sum_sensitivity(SumBound(1.0, F, H), relation), "prefix"),
    )
    return PlannedReleaseSchedule(
        name="ngo2022",
        source="Ngo, Vietri & Wu 2022 (adaptive batching); binary mechanism of Chan, Shi & Song 2011",
        relation=relation,
        episodes=episodes,
        stages=horizon,
        statistics=stats,
        assumptions=(
            f"‖φ(s,a)‖₂ ≤ {F:g}, checked at construction and at every release",
            "rewards in [0, 1] and V_{h+1} clipped to [0, H − h − 1]: targets r + V ∈ [0, H]",
            f"at most {max_updates} policy updates (each releases H target vectors reading users 1..k−1)",
            f"neighbouring relation: {relation.value}",
            "fresh noise at every release",
        ),
        episode_ranges=(("target", 2, max_updates + 1),),
    )


class NgoAgent(Agent):
    """Privatised LSVI-UCB with adaptive batching (module docstring). Arguments as :class:`dpverify.agents.luyo.LuyoAgent`."""

    name = "ngo"

    def __init__(self, mdp: LinearMDP, config: NgoConfig, rng: np.random.Generator,
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
        self.max_updates = config.effective_max_updates(d)
        self.schedule = ngo_schedule(H, K, d, self.max_updates, config.relation, config.feature_norm_bound)
        self.calibration: Calibration = calibrate(self.schedule, config.epsilon, config.delta, config.conversion)
        gram_mech = self.calibration.mechanism("gram")
        target_mech = self.calibration.mechanism("target")
        assert isinstance(gram_mech, GOEMechanism) and isinstance(target_mech, GaussianMechanism)
        self.target_mechanism = target_mech
        self.gram_tree = BinaryTreeSum(self.billboard, "gram", gram_mech, H, (d, d), K, self.noise_rng)
        # The server's raw, V-independent aggregates (never published; u_h = M_h V + ρ_h is).
        self._next_state_sums = np.zeros((H, d, S))
        self._reward_sums = np.zeros((H, d))
        levels = self.gram_tree.levels
        p = config.failure_probability / (2.0 * H * K)
        self.gram_shift = config.shift_multiplier * goe_norm_bound(gram_mech.entry_std * math.sqrt(levels), d, p)
        self.target_noise_bound = gaussian_norm_bound(target_mech.sigma, d, p)
        self.theory_beta = theory_beta(d, H, K, config.failure_probability)
        self.privacy_beta = (self.target_noise_bound + self.gram_shift * 2.0 * H * math.sqrt(d)) / math.sqrt(
            config.regularization + self.gram_shift)
        self.beta = config.beta_multiplier * self.theory_beta + config.privacy_beta_multiplier * self.privacy_beta
        self.episode = 0
        self.policy_updates = 0
        self.update_episodes: list[int] = []
        self.psd_corrections = 0
        self._last_logdet = np.full(H, -np.inf)
        self.q = np.zeros((H, S, A))

    # ---- privacy ---------------------------------------------------------------------------------------

    @property
    def ledger(self) -> PrivacyLedger:
        return self.billboard.ledger

    def claimed_guarantee(self) -> DPGuarantee:
        """The (ε, δ)-JDP claimed for K episodes with at most ``max_updates`` updates."""
        return self.calibration.ledger().guarantee(self.config.delta, self.config.conversion)

    @property
    def update_budget_exhausted(self) -> bool:
        return self.policy_updates >= self.max_updates

    def derived_settings(self) -> dict[str, Any]:
        return {
            "max_updates_used": self.max_updates,
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
            "update_episodes": list(self.update_episodes),
            "update_budget_exhausted": self.update_budget_exhausted,
            "psd_corrections": self.psd_corrections,
        }

    # ---- planning ----------------------------------------------------------------------------------------

    def _shifted_gram(self) -> np.ndarray:
        """Λ̃_h = G̃_h + (λ + Γ)I for every stage, from the published tree prefix."""
        return self.gram_tree.prefix + (self.config.regularization + self.gram_shift) * np.eye(self.dim)

    def _inverse(self, gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        inverse, logdet, corrections = floored_inverse(gram, self.config.regularization)
        self.psd_corrections += corrections
        return inverse, logdet

    def _log_determinant(self, gram: np.ndarray) -> np.ndarray:
        """log det Λ̃_h (eigenvalues floored at λ as in :func:`dpverify.agents.luyo.floored_inverse`), by Cholesky.

        Two Cholesky factorisations (of Λ̃ − λI, to confirm no eigenvalue is below λ, and of Λ̃) cost a
        fraction of an eigendecomposition; the eigendecomposition is used only when a floor is needed.
        """
        lam = self.config.regularization
        try:
            np.linalg.cholesky(gram - lam * np.eye(self.dim))
        except np.linalg.LinAlgError:
            return self._inverse(gram)[1]
        chol = np.linalg.cholesky(gram)
        return 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)

    def plan(self, k: int, inverse: np.ndarray, release: bool) -> np.ndarray:
        """Backward LSVI at episode k; with ``release``, publish ũ_h (users 1..k−1) for every stage."""
        H, S = self.horizon, self.num_states
        bonus_sq = np.einsum("hnd,hde,hne->hn", self._flat_features, inverse, self._flat_features)
        bonus = self.beta * np.sqrt(np.maximum(bonus_sq, 0.0)).reshape(H, S, self.num_actions)
        next_values = np.zeros(S)
        for h in range(H - 1, -1, -1):
            if release:
                raw = self._next_state_sums[h] @ next_values + self._reward_sums[h]
                target = self.billboard.publish("target", k, h + 1, self.target_mechanism, raw, "prefix",
                                                self.noise_rng)
            else:  # no data yet: the sum over zero users is 0 and nothing is read
                target = np.zeros(self.dim)
            w = inverse[h] @ target
            cap = float(H - h)
            self.q[h] = np.minimum(self.features[h] @ w + bonus[h], cap)
            next_values = np.clip(self.q[h].max(axis=-1), 0.0, cap)
        return self.q

    def begin_episode(self) -> np.ndarray:
        k = self.episode + 1
        gram = self._shifted_gram()
        if k == 1:
            inverse, logdet = self._inverse(gram)
            self.plan(k, inverse, release=False)
            self._last_logdet = logdet
        elif not self.update_budget_exhausted and np.any(
                self._log_determinant(gram) >= self._last_logdet + math.log(2.0)):
            inverse, logdet = self._inverse(gram)
            self.plan(k, inverse, release=True)
            self._last_logdet = logdet
            self.policy_updates += 1
            self.update_episodes.append(k)
        return sample_greedy_actions(self.q, self.tie_rng, TIE_TOLERANCE)

    def end_episode(self, trajectory: Trajectory) -> None:
        H = self.horizon
        h = np.arange(H)
        s, a, s_next = trajectory.states[:-1], trajectory.actions, trajectory.states[1:]
        x = self.features[h, s, a]
        check_term_norms(np.linalg.norm(x, axis=1), self.config.feature_norm_bound, "features")
        self.gram_tree.add(x[:, :, None] * x[:, None, :])
        self._next_state_sums[h, :, s_next] += x
        self._reward_sums += x * self.mdp.rewards[h, s, a][:, None]
        self.episode += 1
