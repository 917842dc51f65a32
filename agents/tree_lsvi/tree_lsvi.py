"""Tree-aggregated LSVI: the layer the Luyo et al. 2021 and Ngo et al. 2022 agents share.

Both agents run LSVI-UCB (Jin et al. 2020) on noisy statistics. The Gram matrix G_h = Σ_τ φ_τφ_τᵀ of
every stage is released through the binary-tree mechanism (:class:`BinaryTreeSum`; Chan, Shi & Song
2011): at the end of episode k the node (k − lowbit(k), k] is published once with fresh noise, and the
noisy prefix sum over users 1..k is the sum of the noisy nodes of the binary decomposition of k. The
agents differ in how they obtain the regression target Σ_τ φ_τ(r_τ + V_{h+1}(s'_τ)) and when they
re-plan; this module holds the rest.

Regression with noisy statistics (stages 0-indexed, V_H = 0):

    Λ̃_h = G̃_h + (λ + Γ) I,   w_h = Λ̃_h⁻¹ ũ_h
    Q_h(s, a) = min{ w_hᵀφ_h(s, a) + β ‖φ_h(s, a)‖_{Λ̃_h⁻¹}, H − h },   V_h = [max_a Q_h]_{[0, H−h]}

Γ is a high-probability bound on the operator norm of the tree noise on G̃
(:func:`dpverify.agents.core.noise_bounds.goe_norm_bound` with the entry std s·√(⌊log₂K⌋+1) of a sum of that
many GOE draws), times ``shift_multiplier``: the shift of Shariff & Sheffet 2018 that keeps Λ̃ positive
definite (Sahu 2025 adds 2λ̃_Λ for the same reason). If the shifted noisy matrix still has an
eigenvalue below λ (probability ≤ p), its eigenvalues are floored at λ (post-processing; counted in
``psd_corrections``).

Confidence radius: β = beta_multiplier · d·H·√ι (Jin et al. 2020 Theorem 3.1, ι = log(2dKH/p), as in
:mod:`dpverify.agents.nonprivate.lsvi_ucb`) + privacy_beta_multiplier · (γ + Γ·2H√d)/√(λ + Γ), where γ bounds the ℓ2
norm of the noise on ũ w.h.p. and 2H√d bounds ‖w‖ (Jin et al. Lemma B.1): the regression error the noise
causes in the Λ̃ norm (Shariff & Sheffet 2018, Proposition 4 style). Every value is in ``settings()``.

Ties are broken at random with a generator spawned from the agent's; noise comes from a second spawned
generator (so the actions depend on other users' data only through the billboard).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GOEMechanism, Mechanism

from ..core.base import Trajectory
from ..core.billboard import Billboard, stages
from ..core.noise_bounds import floored_inverse, goe_norm_bound
from ..core.private import PrivateAgent, PrivateRegressionConfig, check_term_norms, require_mechanism
from ..envs.linear_mdp import LinearMDP
from ..nonprivate.lsvi_ucb import theory_beta

#: Default multipliers of the radius: Jin et al.'s d·H·√ι and the privacy term (docs/private_agents.md).
DEFAULT_BETA_MULTIPLIER = 0.01
DEFAULT_PRIVACY_BETA_MULTIPLIER = 0.01


class BinaryTreeSum:
    """The binary mechanism (Chan, Shi & Song 2011) for a running sum of per-user terms, per stage.

    At the k-th call of :meth:`add` (user k), the node (k − lowbit(k), k] is formed from raw partial sums
    and published for every stage through ``billboard.publish_block(k, stages(family, mechanism, H), nodes, "tree",
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

    def add(self, terms: np.ndarray | None) -> None:
        """Add user k's terms (shape (H, *shape)) and publish the node ending at k for every stage; None is an
        empty slot (no user data at k): the node is still published on schedule, with nothing of slot k in it."""
        k = self.count + 1
        if terms is None:
            terms = np.zeros_like(self.prefix)
        if k > self.max_users:
            raise InvalidParameterError("episodes", f"must be <= {self.max_users} (the calibrated K)", k)
        level = (k & -k).bit_length() - 1
        node = self._raw[:level].sum(axis=0) + terms
        labels = stages(self.family, self.mechanism, self.horizon)
        noisy = np.asarray(self.billboard.publish_block(k, labels, node, "tree", self.rng))
        self._raw[level] = node
        self._raw[:level] = 0.0
        self._noisy[level] = noisy
        self._noisy[:level] = 0.0
        self.prefix = self._noisy.sum(axis=0)
        self.count = k


@dataclass(frozen=True)
class TreeLsviConfig(PrivateRegressionConfig):
    """The private regression config of tree-aggregated LSVI (module docstring): multipliers of Jin et al.'s
    d·H·√ι (``beta_multiplier``, default 0.01) and of the privacy term (``privacy_beta_multiplier``,
    default 0.01), λ (``regularization``, default 1)."""

    beta_multiplier: float = DEFAULT_BETA_MULTIPLIER
    privacy_beta_multiplier: float = DEFAULT_PRIVACY_BETA_MULTIPLIER


class TreeLsviAgent(PrivateAgent):
    """LSVI-UCB on a tree-released Gram matrix (module docstring); subclasses add the target and re-planning.

    Args:
        mdp: a finite :class:`~dpverify.agents.envs.linear_mdp.LinearMDP`.
        config: the agent's :class:`TreeLsviConfig` subclass.
        rng: the agent's generator; two generators are spawned from it (noise, tie-breaking).
        billboard: optionally a :class:`~dpverify.agents.core.billboard.Billboard` to publish on (e.g. with
            ``keep_history=True`` for audits); its relation must equal ``config.relation``.
    """

    privacy_notion = "jdp"
    mdp_type = LinearMDP
    config: TreeLsviConfig

    def __init__(self, mdp: LinearMDP, config: TreeLsviConfig, rng: np.random.Generator,
                 billboard: Billboard | None = None) -> None:
        self.set_up_privacy(mdp, config, rng, billboard)
        H, S, A, d = self.horizon, self.num_states, self.num_actions, self.dim
        self.features = mdp.features
        self._flat_features = mdp.features.reshape(H, S * A, d)
        self.noise_rng, self.tie_rng = rng.spawn(2)
        gram_mechanism = self.mechanism("gram", GOEMechanism)
        self.gram_tree = BinaryTreeSum(self.billboard, "gram", gram_mechanism, H, (d, d), config.num_episodes,
                                       self.noise_rng)
        self.episode = 0
        self.policy_updates = 0
        self.psd_corrections = 0
        self.q = np.zeros((H, S, A))
        self.set_up()

    def set_up(self) -> None:
        """The agent's own statistics and radius (:meth:`set_radius`); called at the end of construction."""
        raise NotImplementedError

    def set_radius(self, failure_probability: float, target_noise_bound: float) -> None:
        """Γ, γ and β (module docstring), with the noise bounds holding jointly w.p. ≥ 1 − ``failure_probability``
        per stage and re-plan."""
        config, d, H = self.config, self.dim, self.horizon
        tree_entry_std = require_mechanism(self.gram_tree.mechanism, GOEMechanism, "gram").entry_std * math.sqrt(
            self.gram_tree.levels)
        self.gram_shift = config.shift_multiplier * goe_norm_bound(tree_entry_std, d, failure_probability)
        self.target_noise_bound = target_noise_bound
        self.theory_beta = theory_beta(d, H, config.num_episodes, config.failure_probability)
        self.privacy_beta = (self.target_noise_bound + self.gram_shift * 2.0 * H * math.sqrt(d)) / math.sqrt(
            config.regularization + self.gram_shift)
        self.beta = config.beta_multiplier * self.theory_beta + config.privacy_beta_multiplier * self.privacy_beta

    def derived_settings(self) -> dict[str, Any]:
        return {
            "gram_shift": self.gram_shift,
            "target_noise_bound": self.target_noise_bound,
            "theory_beta": self.theory_beta,
            "privacy_beta": self.privacy_beta,
            "beta": self.beta,
            "policy_updates": self.policy_updates,
            "psd_corrections": self.psd_corrections,
        }

    # ---- planning on published statistics ----------------------------------------------------------------

    def shifted_gram(self) -> np.ndarray:
        """Λ̃_h = G̃_h + (λ + Γ)I for every stage, from the published tree prefix."""
        return self.gram_tree.prefix + (self.config.regularization + self.gram_shift) * np.eye(self.dim)

    def gram_inverse(self, gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Λ̃⁻¹, log det Λ̃) with eigenvalues floored at λ (counted in ``psd_corrections``)."""
        inverse, logdet, corrections = floored_inverse(gram, self.config.regularization)
        self.psd_corrections += corrections
        return inverse, logdet

    def backward_pass(self, inverse: np.ndarray, target: Callable[[int, np.ndarray], np.ndarray]) -> np.ndarray:
        """LSVI with Λ̃⁻¹ = ``inverse`` and ũ_h = ``target(h, V_{h+1})``; fills and returns Q, shape (H, S, A)."""
        H, S = self.horizon, self.num_states
        bonus_sq = np.einsum("hnd,hde,hne->hn", self._flat_features, inverse, self._flat_features)
        bonus = self.beta * np.sqrt(np.maximum(bonus_sq, 0.0)).reshape(H, S, self.num_actions)
        next_values = np.zeros(S)
        for h in range(H - 1, -1, -1):
            w = inverse[h] @ target(h, next_values)
            cap = float(H - h)
            self.q[h] = np.minimum(self.features[h] @ w + bonus[h], cap)
            next_values = np.minimum(np.maximum(self.q[h].max(axis=-1), 0.0), cap)
        return self.q

    def visited_features(self, trajectory: Trajectory) -> np.ndarray:
        """φ_h(s_h, a_h) of every stage (H, d), checked against the bound the sensitivities assume."""
        x = self.features[np.arange(self.horizon), trajectory.states[:-1], trajectory.actions]
        check_term_norms(np.linalg.norm(x, axis=1), self.config.feature_norm_bound, "features")
        return x
