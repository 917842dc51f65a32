"""Sufficient statistics of the agents' ridge regressions.

:class:`RidgeStatistics` (LSVI-UCB, LSVI-UCB++; a linear MDP with finite S). For each stage h it keeps

    Λ_h = λI + Σ_i w_i φ_i φ_iᵀ                     (``gram``, and its inverse by Sherman–Morrison)
    M_h = Σ_i w_i φ_i e_{s'_i}ᵀ                       (``next_state_sums``, d × S)
    ρ_h = Σ_i w_i φ_i r_h(s_i, a_i)                   (``reward_sums``, d)

with φ_i = φ_h(s_i, a_i), s'_i the next state and w_i the regression weight (1 for LSVI-UCB, σ̄⁻² for
LSVI-UCB++). Because S is finite, Σ_i w_i φ_i V(s'_i) = M_h V for *any* value function V in O(dS), so a
whole regression costs O(d² + dS) however many episodes were seen (no O(K²) replay).

:class:`PublishedStatistics` is what DP-LSVI-UCB++ reads instead: a small protocol whose every answer is a
release (or post-processing of releases, :func:`post_process_grams`). Its two implementations keep their raw
sums to themselves and offer no raw read at all.

:class:`ValueTargetStatistics` (UCRL-VTR; a linear mixture MDP). For each stage h it keeps
Σ_h = λI + Σ_i x_i x_iᵀ and b_h = Σ_i x_i y_i, where x_i = φ_{V_{i,h+1}}(s_i, a_i) depends on the value
function of episode i and y_i = V_{i,h+1}(s'_i) (Ayoub et al. 2020; Liao et al. 2021, Algorithm 1 lines 13–20).
It is the statistics of UCRL-VTR; LDP-UCRL-VTR's server keeps sums of privatised messages instead."""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np

from dpverify import _validate
from dpverify.errors import InvalidParameterError

from .linalg import downdate_weighted_norms, rank_one_terms, sherman_morrison
from .noise_bounds import floored_inverse_factor

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


class PublishedGrams(NamedTuple):
    """What the planner of DP-LSVI-UCB++ reads of the H Gram releases of one episode (post-processing only).

    Attributes:
        inverse: Λ̃_h⁻¹ of every stage, shape (H, d, d).
        log_determinant: log det Λ̃_h (the rare-switching test, Sahu 2025 Alg. 1 line 10), shape (H,).
        projected: Wᵀφ_h(s, a) of every (h, s, a), shape (H, S, A, d), with WWᵀ = Λ̃_h⁻¹: the bonuses
            ‖φ_h(s, a)‖²_{Λ̃_h⁻¹} = ‖Wᵀφ_h(s, a)‖² of every pair (:attr:`bonus_squared`) or of some
            (:meth:`bonus_squared_at`, the same values).
    """

    inverse: np.ndarray
    log_determinant: np.ndarray
    projected: np.ndarray

    @property
    def bonus_squared(self) -> np.ndarray:
        """‖φ_h(s, a)‖²_{Λ̃_h⁻¹} of every (h, s, a), shape (H, S, A)."""
        return np.square(self.projected).sum(axis=-1)

    def bonus_squared_at(self, h: np.ndarray, s: np.ndarray, a: np.ndarray) -> np.ndarray:
        """:attr:`bonus_squared` at the pairs (h, s, a) only (each the same sum of the same squares)."""
        return np.square(self.projected[h, s, a]).sum(axis=-1)


def post_process_grams(published: np.ndarray, regularization: float, shift: float, features: np.ndarray
                       ) -> PublishedGrams:
    """Λ̃_h = sym(G̃_h) + (λ + shift)I with eigenvalues floored at λ, its inverse, log-determinant and the
    projected ``features`` (H, S, A, d) of the bonuses; leading axes of ``published`` (..., H, d, d) are trials.

    Post-processing of published values: a noisy Gram matrix need not be positive definite (Lemma A.1 of
    Sahu 2025 holds with probability 1 − δ), so it is projected onto {Λ ⪰ λI}
    (:func:`dpverify.agents.core.noise_bounds.floored_inverse_factor`, which also takes the symmetric part: Λ̃⁻¹ = WWᵀ,
    ‖φ‖²_{Λ̃⁻¹} = ‖Wᵀφ‖²).
    """
    horizon, num_states, num_actions, dim = features.shape
    scaled, log_determinant, _ = floored_inverse_factor(published + (regularization + shift) * np.eye(dim),
                                                        regularization)
    inverse = scaled @ np.swapaxes(scaled, -1, -2)
    projected = features.reshape(horizon, num_states * num_actions, dim) @ scaled
    return PublishedGrams(inverse, log_determinant,
                          projected.reshape(*scaled.shape[:-2], num_states, num_actions, dim))


def checked_weights(weights: object, horizon: int, max_weight: float) -> np.ndarray:
    """A user's H regression weights σ̄⁻², checked against the bound the sensitivities assume (an explicit
    error, never clipped: a weight above the bound would void the calibration)."""
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (horizon,) or np.any(~np.isfinite(w)) or np.any(w < 0):
        raise InvalidParameterError("weights", f"must be {horizon} finite non-negative numbers", weights)
    if np.any(w > max_weight * (1.0 + WEIGHT_CHECK_TOLERANCE)):
        raise InvalidParameterError("weights", f"must be <= {max_weight:g} (sensitivity assumption)",
                                    float(w.max()))
    return w


class PublishedStatistics(Protocol):
    """How DP-LSVI-UCB++ reads other users' data: only through releases (Sahu 2025, Algorithm 1).

    Two implementations: fresh noise at every release
    (:class:`dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp.FreshNoiseStatistics`, the paper's 4HK releases) and
    running-sum counters (:class:`dpverify.agents.dp_lsvi_ucb_pp.tree.CounterStatistics`: tree nodes, or rows of a
    factorisation, released when a user's terms are added). The raw sums stay inside them.
    """

    @property
    def episode(self) -> int:
        """The 1-based episode k whose releases read users 1..k−1."""

    def release_grams(self) -> PublishedGrams:
        """The published Gram matrices of episode k, post-processed (line 26's Λ̃_{k,h}); once per episode."""

    def release_sums(self, h: int, v_hat: np.ndarray, v_check: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The published Σ_{i<k} σ̄⁻² φ_i V(s'_i) for V = V̂, V̌, V̂² at stage h (0-based; lines 6–8)."""

    def release_all_sums(self, v_hat: np.ndarray, v_check: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`release_sums` of every stage at once, for targets known before the pass (``v_hat[h]`` stage h's,
        shape (H, S)): the same values and releases in the pass's order (stages H..1); three (H, d) stacks."""

    def add_user(self, states: np.ndarray, actions: np.ndarray, weights: np.ndarray) -> None:
        """Add user k's weighted terms (line 26), the weights checked against the sensitivity assumption."""

    def skip_user(self) -> None:
        """An empty slot (add/remove-one): episode k passes with nothing added to any sum."""


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
