"""Tree-aggregated DP-LSVI-UCB++ (``aggregation="tree"``) for many independent runs at once.

The same algorithm as ``DpLsviUcbPlusPlus(config with aggregation="tree")``
(:mod:`dpverify.agents.dp_lsvi_ucb_pp.tree`; Sahu 2025, Algorithm 1, with the binary mechanism of Chan, Shi &
Song 2011): the planner of the fresh-noise twin (:class:`~dpverify.agents.dp_lsvi_ucb_pp.batched.
BatchedDpLsviUcbPlusPlus`: rare switching on the released log-determinants, Q̂/Q̌ updates, variance weights)
reading, at the start of episode k, the published prefixes over users 1..k−1 of two binary trees — G_h (GOE)
and M_h (d·S) — and at the end of episode k releasing node (k − lowbit(k), k] of both with user k's weighted
terms. The vector statistics are M̃_h V̂, M̃_h V̌, M̃_h V̂² (post-processing, no release).

Arithmetic, trial by trial: the reference regresses stage by stage with matrix–vector products, made here
by ``np.matvec`` (the same BLAS call per trial). Randomness: as the reference agent (tie keys from its generator,
noise from its first spawned child, one draw per tree node block: :func:`~dpverify.agents.tree_lsvi.batched.
node_noise`), so under ``PerTrialRandomness`` the twin's policies and releases equal the reference agent's
(``tests/agents/dp_lsvi_ucb_pp/test_batched_tree.py``). The dyadic (Honaker) and factorised counters run the
reference agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GOEMechanism

from ..core.batching import twin_config
from ..core.statistics import WEIGHT_CHECK_TOLERANCE
from ..envs.linear_mdp import LinearMDP
from ..tree_lsvi.batched import BatchedTreeSum, node_noise
from .batched import BatchedDpLsviUcbPlusPlus
from .dp_lsvi_ucb_pp import DpLsviUcbPlusPlusConfig


class BatchedDpLsviUcbPlusPlusTree(BatchedDpLsviUcbPlusPlus):
    """n independent runs of tree-aggregated DP-LSVI-UCB++ (module docstring)."""

    name = "dp-lsvi-ucb++ tree (batched)"
    aggregation = "tree"
    config_class = DpLsviUcbPlusPlusConfig

    def __init__(self, mdp: LinearMDP, config: DpLsviUcbPlusPlusConfig, randomness: Any,
                 record: Sequence[int] | None = None) -> None:
        super().__init__(mdp, config, randomness, record)
        self.next_state_mechanism = self.reference.calibration.mechanism("next_state")
        n, H, d, S, K = self.n, self.horizon, self.dim, self.num_states, config.num_episodes
        self.gram_tree = BatchedTreeSum(n, H, (d, d), K)
        self.next_state_tree = BatchedTreeSum(n, H, (d * S,), K)
        self.next_state_prefix = np.zeros((n, H, d, S))

    def published_grams(self) -> np.ndarray:
        """The published prefix of the Gram tree over users 1..k−1 (no release at the start of an episode)."""
        self.next_state_prefix = self.next_state_tree.prefix.reshape(self.n, self.horizon, self.dim, self.num_states)
        return self.gram_tree.prefix

    def regress(self, h: int) -> None:
        """ŵ, w̌, w̄ = Λ̃⁻¹ M̃_h V for V = V̂, V̌, V̂² (targets clipped to [0, H]), with the reference's products."""
        inverse = self.noisy_inverse[:, h]
        m = self.next_state_prefix[:, h]
        v_hat = self.clip_targets(self.v_hat[:, h + 1], h)
        v_check = self.clip_targets(self.v_check[:, h + 1], h)
        for out, target in ((self.w_hat, v_hat), (self.w_check, v_check), (self.w_bar, v_hat**2)):
            out[:, h] = np.matvec(inverse, np.matvec(m, target))
        self.bonus_norm[:, h] = np.sqrt(self.noisy_bonus[:, h])

    def end_episode(self, states: np.ndarray, actions: np.ndarray) -> None:
        """Every trial's σ̄⁻² and weighted terms join both trees, publishing node k of every stage."""
        w = self.variance_weights(states, actions)
        if np.any(w > self.max_weight * (1.0 + WEIGHT_CHECK_TOLERANCE)):
            raise InvalidParameterError("weights", f"must be <= {self.max_weight:g} (sensitivity assumption)",
                                        float(w.max()))
        n, H, d, S = self.n, self.horizon, self.dim, self.num_states
        h = np.arange(H)[None, :]
        trial = np.arange(n)[:, None]
        x = self.user_features(h, states[:, :-1], actions)
        weighted_x = w[:, :, None] * x
        next_terms = np.zeros((n, H, d, S))
        next_terms[trial, h, :, states[:, 1:]] = weighted_x
        self._add(weighted_x[..., :, None] * x[..., None, :], next_terms.reshape(n, H, d * S))

    def end_episode_empty(self) -> None:
        """An empty slot in every trial: both trees publish node k on schedule with nothing of a user in it."""
        n, H, d, S = self.n, self.horizon, self.dim, self.num_states
        self._add(np.zeros((n, H, d, d)), np.zeros((n, H, d * S)))

    def _add(self, gram_terms: np.ndarray, next_terms: np.ndarray) -> None:
        H = self.horizon
        for tree, family, mechanism, terms in ((self.gram_tree, "gram", self.gram_mechanism, gram_terms),
                                               (self.next_state_tree, "next_state", self.next_state_mechanism,
                                                next_terms)):
            noisy = tree.add(terms, node_noise(self.randomness, mechanism, H, terms.shape[2:]),
                             symmetrise=isinstance(mechanism, GOEMechanism))
            for stage in range(H):
                self._publish(family, stage, noisy[:, stage])
        self.count += 1


def covers(options: dict[str, Any]) -> bool:
    """Whether a batched twin implements DP-LSVI-UCB++ with these options: fresh noise or the binary tree."""
    return options.get("aggregation", "fresh") in ("fresh", "tree")


def build_twin(mdp: LinearMDP, num_episodes: int, options: dict[str, Any], randomness: Any,
               record: Sequence[int] | None) -> BatchedDpLsviUcbPlusPlus:
    """The batched DP-LSVI-UCB++ for the reference agent's options: the fresh twin, or this tree twin."""
    config = twin_config(DpLsviUcbPlusPlusConfig, "dp-lsvi-ucb++", num_episodes, options)
    twin = BatchedDpLsviUcbPlusPlusTree if config.aggregation == "tree" else BatchedDpLsviUcbPlusPlus
    return twin(mdp, config, randomness, record=record)
