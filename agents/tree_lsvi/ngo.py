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
  & Song 2011; :class:`dpverify.agents.tree_lsvi.luyo.BinaryTreeSum`): at the end of every episode k the node
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

Regression, shift, radius and tie-breaking: :mod:`dpverify.agents.tree_lsvi.tree_lsvi` (shared with Luyo et al.),
with the target ũ_h released at each update and γ the w.h.p. norm bound of its noise. The switching
test: update when log det Λ̃_h ≥ log det Λ̃_h(last update) + log 2 for some h.

Per-episode cost:
O(H d² log K) for the tree and O(H d³) for the determinant test, plus O(H(SAd² + dS)) per update —
independent of k (the server keeps next-state-aggregated raw sums, so u_h = M_h V + ρ_h costs O(dS)).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.calibration import ReleaseSchedule, StatisticSpec
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger, user_pattern
from dpverify.mechanisms import GaussianMechanism, Mechanism
from dpverify.neighbouring import Neighbouring
from dpverify.sensitivity import SumBound, gram_sum_sensitivity, vector_sum_sensitivity

from ..core.base import Trajectory
from ..core.noise_bounds import gaussian_norm_bound
from ..core.planning import TIE_TOLERANCE, sample_greedy_actions
from ..envs.linear_mdp import LinearMDP
from .tree_lsvi import TreeLsviAgent, TreeLsviConfig


@dataclass(frozen=True)
class NgoConfig(TreeLsviConfig):
    """Hyper-parameters of the Ngo et al. 2022 agent (module docstring).

    Attributes: those of :class:`~dpverify.agents.tree_lsvi.tree_lsvi.TreeLsviConfig` and
        max_updates: cap on data-dependent policy updates; ``None`` means ⌈d·log₂(1 + K F²/(dλ))⌉.
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

    def ledger(self, mechanisms: Mapping[str, Mechanism]) -> PrivacyLedger:
        ranges = {family: (first, last) for family, first, last in self.episode_ranges}
        ledger = PrivacyLedger(self.relation)
        for spec in self.statistics:
            episodes = ranges.get(spec.family, (1, self.episodes))
            ledger.record_block(spec.family, episodes, (1, self.stages), mechanisms[spec.family], spec.users)
        return ledger


def ngo_schedule(horizon: int, episodes: int, dim: int, max_updates: int,
                 relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
                 feature_norm_bound: float = 1.0) -> PlannedReleaseSchedule:
    """The release schedule of :class:`NgoAgent` (module docstring)."""
    relation = Neighbouring.parse(relation)
    F = _validate.positive("feature_norm_bound", feature_norm_bound)
    max_updates = _validate.integer("max_updates", max_updates, minimum=1)
    H = float(horizon)
    stats = (
        StatisticSpec("gram", "tree node of Σ φφᵀ (binary mechanism), GOE", "symmetric-matrix", dim,
                      gram_sum_sensitivity(SumBound(1.0, F, 1.0), relation), user_pattern("tree")),
        StatisticSpec("target", "Σ_{τ<k} φ(r + V_{h+1}(s')) at a policy update", "vector", dim,
                      vector_sum_sensitivity(SumBound(1.0, F, H), relation), user_pattern("prefix")),
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


class NgoAgent(TreeLsviAgent):
    """Privatised LSVI-UCB with adaptive batching (module docstring).

    Built like every :class:`~dpverify.agents.tree_lsvi.tree_lsvi.TreeLsviAgent`; :meth:`set_up` adds the server's raw
    sums, the target mechanism and the radius.
    """

    name = "ngo"
    config_class = NgoConfig
    config: NgoConfig

    def set_up(self) -> None:
        config = self.config
        H, d = self.horizon, self.dim
        self.max_updates = config.effective_max_updates(d)
        target_mechanism = self.mechanism("target", GaussianMechanism)
        self.target_mechanism = target_mechanism
        # The server's raw, V-independent aggregates (never published; u_h = M_h V + ρ_h is).
        self._next_state_sums = np.zeros((H, d, self.num_states))
        self._reward_sums = np.zeros((H, d))
        p = config.failure_probability / (2.0 * H * config.num_episodes)
        self.set_radius(p, gaussian_norm_bound(target_mechanism.sigma, d, p))
        self.update_episodes: list[int] = []
        self._last_logdet = np.full(H, -np.inf)

    def release_schedule(self, mdp: LinearMDP, config: NgoConfig) -> ReleaseSchedule:
        return ngo_schedule(mdp.horizon, config.num_episodes, mdp.dim, config.effective_max_updates(mdp.dim),
                            config.relation, config.feature_norm_bound)

    @property
    def update_budget_exhausted(self) -> bool:
        return self.policy_updates >= self.max_updates

    def derived_settings(self) -> dict[str, Any]:
        return {
            "max_updates_used": self.max_updates,
            **super().derived_settings(),
            "update_episodes": list(self.update_episodes),
            "update_budget_exhausted": self.update_budget_exhausted,
        }

    # ---- planning ----------------------------------------------------------------------------------------

    def _log_determinant(self, gram: np.ndarray) -> np.ndarray:
        """log det Λ̃_h (eigenvalues floored at λ as in :func:`dpverify.agents.core.noise_bounds.floored_inverse`),
        by Cholesky.

        Two Cholesky factorisations (of Λ̃ − λI, to confirm no eigenvalue is below λ, and of Λ̃) cost a
        fraction of an eigendecomposition; the eigendecomposition is used only when a floor is needed.
        """
        lam = self.config.regularization
        try:
            np.linalg.cholesky(gram - lam * np.eye(self.dim))
        except np.linalg.LinAlgError:
            return self.gram_inverse(gram)[1]
        chol = np.linalg.cholesky(gram)
        return 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)

    def plan(self, k: int, inverse: np.ndarray, release: bool) -> np.ndarray:
        """Backward LSVI at episode k; with ``release``, publish ũ_h (users 1..k−1) for every stage."""

        def target(h: int, next_values: np.ndarray) -> np.ndarray:
            if not release:  # no data yet: the sum over zero users is 0 and nothing is read
                return np.zeros(self.dim)
            raw = self._next_state_sums[h] @ next_values + self._reward_sums[h]
            return self.billboard.publish("target", k, h + 1, self.target_mechanism, raw, "prefix", self.noise_rng)

        return self.backward_pass(inverse, target)

    def begin_episode(self) -> np.ndarray:
        k = self.episode + 1
        self.check_episode(k)
        gram = self.shifted_gram()
        if k == 1:
            inverse, logdet = self.gram_inverse(gram)
            self.plan(k, inverse, release=False)
            self._last_logdet = logdet
        elif not self.update_budget_exhausted and np.any(
                self._log_determinant(gram) >= self._last_logdet + math.log(2.0)):
            inverse, logdet = self.gram_inverse(gram)
            self.plan(k, inverse, release=True)
            self._last_logdet = logdet
            self.policy_updates += 1
            self.update_episodes.append(k)
        return sample_greedy_actions(self.q, self.tie_rng, TIE_TOLERANCE)

    def end_episode(self, trajectory: Trajectory | None) -> None:
        """User k's terms join the Gram tree and the sums; None is an empty slot (:mod:`dpverify.agents.core.base`)."""
        if trajectory is None:
            self.gram_tree.add(None)
            self.episode += 1
            return
        h = np.arange(self.horizon)
        s, a, s_next = trajectory.states[:-1], trajectory.actions, trajectory.states[1:]
        x = self.visited_features(trajectory)
        self.gram_tree.add(x[:, :, None] * x[:, None, :])
        self._next_state_sums[h, :, s_next] += x
        self._reward_sums += x * self.mdp.rewards[h, s, a][:, None]
        self.episode += 1
