"""Sufficient statistics of the agents' ridge regressions.

:class:`RidgeStatistics` is read by LSVI-UCB (directly, all stages at once) and by LSVI-UCB++ through its
*release* methods only (the names listed below). DP-LSVI-UCB++ passes LSVI-UCB++ a
:class:`PublishedRidgeStatistics` — :class:`dpverify.agents.dp_lsvi_ucb_pp.PrivatisedRidgeStatistics` (fresh
noise at every release) or :class:`dpverify.agents.dp_lsvi_ucb_pp_tree.TreeRidgeStatistics` (tree nodes) —
whose release methods answer from statistics published on the billboard (``release_grams`` at the start of
an episode, ``release_sums`` in the backward pass), so the learning rule is unchanged. The other private
agents keep their own statistics (tree nodes, or each user's messages).

:class:`RidgeStatistics` (LSVI-UCB, LSVI-UCB++; a linear MDP with finite S). For each stage h it keeps

    Λ_h = λI + Σ_i w_i φ_i φ_iᵀ                     (``gram``, and its inverse by Sherman–Morrison)
    M_h = Σ_i w_i φ_i e_{s'_i}ᵀ                       (``next_state_sums``, d × S)
    ρ_h = Σ_i w_i φ_i r_h(s_i, a_i)                   (``reward_sums``, d)

with φ_i = φ_h(s_i, a_i), s'_i the next state and w_i the regression weight (1 for LSVI-UCB, σ̄⁻² for
LSVI-UCB++). Because S is finite, Σ_i w_i φ_i V(s'_i) = M_h V for *any* value function V in O(dS), so a
whole regression costs O(d² + dS) however many episodes were seen (no O(K²) replay).
Release methods: :meth:`~RidgeStatistics.gram_matrix`, :meth:`~RidgeStatistics.gram_inverse`,
:meth:`~RidgeStatistics.weighted_sum`, :meth:`~RidgeStatistics.bonus_squared`. A Gram release with
GOE noise is no longer a rank-one update: :class:`PublishedRidgeStatistics` factors its noisy Λ̃ directly
(d × d, eigenvalues floored: :func:`dpverify.agents.noise_bounds.floored_inverse_factor`) and computes the
bonuses from that factor.

:class:`ValueTargetStatistics` (UCRL-VTR; a linear mixture MDP). For each stage h it keeps
Σ_h = λI + Σ_i x_i x_iᵀ and b_h = Σ_i x_i y_i, where x_i = φ_{V_{i,h+1}}(s_i, a_i) depends on the value
function of episode i and y_i = V_{i,h+1}(s'_i) (Ayoub et al. 2020; Liao et al. 2021, Algorithm 1 lines 13–20).
It is the statistics of UCRL-VTR; LDP-UCRL-VTR's server keeps sums of privatised messages instead.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from dpverify import _validate
from dpverify.agents.linalg import downdate_weighted_norms, rank_one_terms, sherman_morrison
from dpverify.agents.noise_bounds import floored_inverse_factor
from dpverify.errors import InvalidParameterError

if TYPE_CHECKING:
    from dpverify.agents.billboard import Billboard
    from dpverify.calibration import Calibration

#: Relative slack of the private statistics' weight check (floating-point rounding only).
WEIGHT_CHECK_TOLERANCE = 1e-9


class RidgeStatistics:
    """Per-stage weighted ridge-regression statistics of a finite linear MDP (module docstring).

    Args:
        features: φ_h(s, a), shape (H, S, A, d).
        rewards: r_h(s, a), shape (H, S, A) (for ``reward_sums``; Jin et al. 2020 regress r + V).
        regularization: λ > 0.
    """

    def __init__(self, features: np.ndarray, rewards: np.ndarray, regularization: float) -> None:
        self.regularization = _validate.positive("regularization", regularization)
        self.features = features
        self.rewards = rewards
        horizon, num_states, num_actions, dim = features.shape
        self.horizon, self.num_states, self.num_actions, self.dim = horizon, num_states, num_actions, dim
        self._flat_features = features.reshape(horizon, num_states * num_actions, dim)
        self.gram = np.broadcast_to(self.regularization * np.eye(dim), (horizon, dim, dim)).copy()
        self.inverse = np.broadcast_to(np.eye(dim) / self.regularization, (horizon, dim, dim)).copy()
        self.logdet = np.full(horizon, dim * np.log(self.regularization))
        self.next_state_sums = np.zeros((horizon, dim, num_states))
        self.reward_sums = np.zeros((horizon, dim))
        self.count = 0
        # ‖φ_h(s, a)‖²_{Λ_h⁻¹} for every (h, s, a), kept current by rank-one downdates.
        self._bonus_squared = np.einsum("hnd,hnd->hn", self._flat_features, self._flat_features) / self.regularization

    # ---- data ---------------------------------------------------------------------------------------

    def add_episode(self, states: np.ndarray, actions: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Add one episode: transition (s_h, a_h, s_{h+1}) to stage h's regression with weight w_h.

        ``states`` has length H + 1, ``actions`` length H, ``weights`` length H (default all 1). All H
        stages are updated in one batched Sherman–Morrison step, O(H(d² + SAd)).
        """
        h = np.arange(self.horizon)
        if weights is None:
            weights = np.ones(self.horizon)
        else:
            weights = np.asarray(weights, dtype=np.float64)
            if weights.shape != (self.horizon,) or np.any(~np.isfinite(weights)) or np.any(weights < 0):
                raise InvalidParameterError("weights", f"must be {self.horizon} finite non-negative numbers", weights)
        s, a, s_next = states[:-1], actions, states[1:]
        x = self.features[h, s, a]  # (H, d)
        terms = rank_one_terms(self.inverse, x, weights)  # A⁻¹x and 1 + w xᵀA⁻¹x, shared by both updates
        self._bonus_squared = downdate_weighted_norms(self._bonus_squared, self._flat_features, self.inverse, x,
                                                      weights, terms)
        self.inverse, ratio = sherman_morrison(self.inverse, x, weights, terms)
        self.logdet += np.log(ratio)
        weighted_x = weights[:, None] * x
        self.gram += weighted_x[:, :, None] * x[:, None, :]
        self.next_state_sums[h, :, s_next] += weighted_x
        self.reward_sums += weighted_x * self.rewards[h, s, a][:, None]
        self.count += 1

    # ---- releases (override these in a private variant) --------------------------------------------

    def gram_matrix(self, h: int) -> np.ndarray:
        """Λ_h (d × d)."""
        return self.gram[h]

    def gram_inverse(self, h: int) -> np.ndarray:
        """Λ_h⁻¹ (d × d), maintained by Sherman–Morrison."""
        return self.inverse[h]

    def weighted_sum(self, h: int, next_values: np.ndarray, include_rewards: bool = False) -> np.ndarray:
        """Σ_i w_i φ_i [r_i·1{include_rewards} + V(s'_i)] = M_h V (+ ρ_h), a d-vector, in O(dS)."""
        total = self.next_state_sums[h] @ next_values
        return total + self.reward_sums[h] if include_rewards else total

    def bonus_squared(self, h: int) -> np.ndarray:
        """‖φ_h(s, a)‖²_{Λ_h⁻¹} for every (s, a): shape (S, A) (never below 0)."""
        return np.maximum(self._bonus_squared[h], 0.0).reshape(self.num_states, self.num_actions)

    def bonus_squared_all(self) -> np.ndarray:
        """:meth:`bonus_squared` of every stage at once: shape (H, S, A)."""
        return np.maximum(self._bonus_squared, 0.0).reshape(self.horizon, self.num_states, self.num_actions)

    def log_determinants(self) -> np.ndarray:
        """:meth:`log_determinant` of every stage, shape (H,)."""
        return self.logdet.copy()

    def log_determinant(self, h: int) -> float:
        """log det Λ_h (matrix determinant lemma; for the rare-switching test of LSVI-UCB++)."""
        return float(self.logdet[h])


class PublishedRidgeStatistics(RidgeStatistics):
    """What the two private statistics of DP-LSVI-UCB++ share (Sahu 2025, Algorithm 1): the planner reads only
    published values.

    A subclass keeps its raw sums private and, once per episode k, publishes the H Gram matrices
    (:meth:`release_grams`, fresh or tree-aggregated); :meth:`_set_published_grams` derives from them — by
    post-processing only — Λ̃_{k,h} = G̃_h + (λ + shift)I with eigenvalues floored at λ, its inverse,
    log-determinant and the bonuses, which the release methods below answer from. The raw reads of the parent
    (:meth:`gram_matrix`, :meth:`weighted_sum`) refuse. :meth:`_checked_weights` enforces the weight bound the
    sensitivities assume (σ̄⁻² ≤ ``max_weight``) when a user's terms are added.
    """

    #: Where :meth:`weighted_sum`'s refusal points the caller.
    raw_read_hint = "use release_sums"

    def __init__(self, features: np.ndarray, rewards: np.ndarray, regularization: float, shift: float,
                 calibration: Calibration, billboard: Billboard, noise_rng: np.random.Generator,
                 max_weight: float) -> None:
        super().__init__(features, rewards, regularization)
        self.shift = float(shift)
        self.calibration = calibration
        self.billboard = billboard
        self.noise_rng = noise_rng
        self.max_weight = float(max_weight)
        self.released_episode = 0
        self._noisy_inverse = np.zeros((self.horizon, self.dim, self.dim))
        self._noisy_logdet = np.full(self.horizon, self.dim * math.log(regularization + shift))
        self._noisy_bonus: np.ndarray | None = np.zeros((self.horizon, self.num_states, self.num_actions))
        self._projected = np.zeros((self.horizon, self.num_states * self.num_actions, self.dim))

    @property
    def episode(self) -> int:
        """The 1-based episode k whose releases read users 1..k−1 (= users added so far + 1)."""
        return self.count + 1

    def skip_episode(self) -> None:
        """An empty slot: episode k passes with no user data (nothing is added to any sum)."""
        self.count += 1

    def _checked_weights(self, weights: np.ndarray | None) -> np.ndarray:
        """The H weights σ̄⁻² of a user, checked against the bound the sensitivities assume."""
        if weights is None:
            raise InvalidParameterError("weights", "must be given (σ̄⁻² of every stage)", None)
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (self.horizon,) or np.any(~np.isfinite(w)) or np.any(w < 0):
            raise InvalidParameterError("weights", f"must be {self.horizon} finite non-negative numbers", weights)
        if np.any(w > self.max_weight * (1.0 + WEIGHT_CHECK_TOLERANCE)):
            raise InvalidParameterError("weights", f"must be <= {self.max_weight:g} (sensitivity assumption)",
                                        float(w.max()))
        return w

    def _episode_to_release(self) -> int:
        """The current episode k, refused if its Gram matrices were already released."""
        k = self.episode
        if self.released_episode == k:
            raise InvalidParameterError("release_grams", "may be called once per episode", k)
        return k

    def _set_published_grams(self, noisy: np.ndarray) -> None:
        """Post-processing of the published Gram matrices (H, d, d) of the current episode: symmetrise, add
        (λ + shift)I, floor the eigenvalues at λ and invert (:func:`.noise_bounds.floored_inverse_factor`);
        mark the episode released."""
        noisy = 0.5 * (noisy + np.swapaxes(noisy, 1, 2)) + (self.regularization + self.shift) * np.eye(self.dim)
        scaled, self._noisy_logdet, _ = floored_inverse_factor(noisy, self.regularization)  # Λ̃⁻¹ = scaled scaledᵀ
        self._noisy_inverse = scaled @ np.swapaxes(scaled, 1, 2)
        self._projected = self._flat_features @ scaled  # ‖φ‖²_{Λ̃⁻¹} = ‖scaledᵀφ‖²
        self._noisy_bonus = None  # summed when first read (_bonus); bonus_squared_at sums the rows it needs
        self.released_episode = self.episode

    def _bonus(self) -> np.ndarray:
        """‖φ_h(s, a)‖²_{Λ̃⁻¹} of every (h, s, a), summed from the projections once per episode."""
        if self._noisy_bonus is None:
            bonus = np.square(self._projected).sum(axis=2)
            self._noisy_bonus = bonus.reshape(self.horizon, self.num_states, self.num_actions)
        return self._noisy_bonus

    # ---- the parent's release methods, answered from the published values ----------------------------

    def _check_released(self) -> None:
        if self.released_episode != self.episode:
            raise InvalidParameterError("release_grams", "must be called at the start of every episode",
                                        self.released_episode)

    def gram_inverse(self, h: int) -> np.ndarray:
        self._check_released()
        return self._noisy_inverse[h]

    def gram_inverses(self) -> np.ndarray:
        """:meth:`gram_inverse` of every stage, shape (H, d, d)."""
        self._check_released()
        return self._noisy_inverse

    def gram_matrix(self, h: int) -> np.ndarray:
        raise InvalidParameterError("gram_matrix", "is private state; use release_grams/gram_inverse", h)

    def weighted_sum(self, h: int, next_values: np.ndarray, include_rewards: bool = False) -> np.ndarray:
        raise InvalidParameterError("weighted_sum", f"is a raw read; {self.raw_read_hint}", h)

    def bonus_squared(self, h: int) -> np.ndarray:
        self._check_released()
        return self._bonus()[h]

    def bonus_squared_all(self) -> np.ndarray:
        self._check_released()
        return self._bonus()

    def bonus_squared_at(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """``bonus_squared_all()[h, states[h], actions[h]]`` for h = 0..H−1, shape (H,): the same values (each the
        same sum of the same squared projection), summing only the H rows read."""
        self._check_released()
        h = np.arange(self.horizon)
        if self._noisy_bonus is not None:
            return self._noisy_bonus[h, states, actions]
        return np.square(self._projected[h, states * self.num_actions + actions]).sum(axis=-1)

    def log_determinants(self) -> np.ndarray:
        return self._noisy_logdet.copy()

    def log_determinant(self, h: int) -> float:
        """log det of the shifted, floored noisy Λ̃_{k,h} (before any release: of (λ + shift)I = Λ̃_0)."""
        return float(self._noisy_logdet[h])


class ValueTargetStatistics:
    """Per-stage statistics Σ_h = λI + Σ x xᵀ and b_h = Σ x y of value-targeted regression (module docstring)."""

    def __init__(self, horizon: int, dim: int, regularization: float) -> None:
        self.regularization = _validate.positive("regularization", regularization)
        self.horizon, self.dim = horizon, dim
        self.gram = np.broadcast_to(self.regularization * np.eye(dim), (horizon, dim, dim)).copy()
        self.inverse = np.broadcast_to(np.eye(dim) / self.regularization, (horizon, dim, dim)).copy()
        self.targets = np.zeros((horizon, dim))
        self.count = 0

    def add_episode(self, x: np.ndarray, y: np.ndarray) -> None:
        """Add (x_h, y_h) to stage h's regression for every h: x shape (H, d), y shape (H,)."""
        self.inverse, _ = sherman_morrison(self.inverse, x, np.ones(self.horizon))
        self.gram += x[:, :, None] * x[:, None, :]
        self.targets += x * y[:, None]
        self.count += 1

    def gram_inverse(self, h: int) -> np.ndarray:
        """Σ_h⁻¹ (d × d)."""
        return self.inverse[h]

    def target_sum(self, h: int) -> np.ndarray:
        """b_h = Σ_i x_i y_i (d)."""
        return self.targets[h]
