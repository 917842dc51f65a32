"""Tree-aggregated DP-LSVI-UCB++: every private statistic released through binary-tree counters.

The statistics of ``DpLsviUcbPlusPlus(config with aggregation="tree")``
(:mod:`dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp`; Sahu 2025, "DP-LSVI-UCB++", Algorithm 1). The learning rule is
unchanged; only *how* the weighted sums are privatised changes.

Sahu 2025 releases, for every episode k and stage h, four prefix sums over users 1..k−1 with fresh noise
(4HK releases; each user is read by ≈ 4HK of them). Here the per-user terms are summed by the binary
mechanism (Dwork, Naor, Pitassi & Rothblum 2010; Chan, Shi & Song 2011), as Luyo et al. 2021 and Ngo et
al. 2022 do (:mod:`dpverify.agents.tree_lsvi.tree_lsvi`), so each user is read by ⌊log₂K⌋ + 1 releases per stage
and family.

What is privatised. The three vector statistics of Algorithm 1 (lines 6–8) are Σ_i w_i φ_i V(s'_i) for
V = V̂_{k,h+1}, V̌_{k,h+1} and V̂²_{k,h+1}: they depend on the *current* value functions, so they cannot be
accumulated in a tree of fixed partial sums. With a finite state space they are all M_h V for the
V-independent d × S matrix

    M_h = Σ_i w_i φ_i e_{s'_i}ᵀ          (``next_state``, released flattened as a d·S vector)

(the next-state aggregation of :class:`dpverify.agents.core.statistics.RidgeStatistics`), so two families
are privatised per stage, both with users ``"tree"``:

    ``gram``        G_h = Σ_i w_i φ_i φ_iᵀ      (GOE mechanism, Frobenius sensitivity)
    ``next_state``  M_h                          (Gaussian mechanism, ℓ2 = Frobenius sensitivity)

with w_i = σ̄_{i,h}⁻². At the end of episode k (after user k's terms are formed) the node
(k − lowbit(k), k] of each family is released once per stage with fresh noise
(:class:`dpverify.agents.tree_lsvi.tree_lsvi.BinaryTreeSum`, ``Billboard.publish_block``, users ``"tree"``); the
noisy prefix over users 1..k−1 read at the start of episode k is the sum of the released nodes of the
binary decomposition of k − 1. Everything the planner uses — Λ̃_{k,h} = G̃_h + (λ + 2c_Λλ̃_Λ)I floored at λ,
its inverse, log-determinant and bonuses, and ŵ = Λ̃⁻¹M̃_hV̂, w̌ = Λ̃⁻¹M̃_hV̌, w̄ = Λ̃⁻¹M̃_hV̂² — is
post-processing of published values, so re-planning with new value functions costs no privacy.

Sensitivities (docs/derivations.md, "Sensitivities of the released sums"; docs/private_agents.md, "Tree
aggregation"). Under the weight bound W (σ̄⁻² ≤ 1/H² by line 25 for ``sensitivity_model="derived"``, ≤ 1
for ``"paper"``, checked when a user's terms are added) and ‖φ‖ ≤ F (checked at construction): one
user's term of a node is w φφᵀ (Frobenius ≤ W F²) and w φ e_{s'}ᵀ (Frobenius = w‖φ‖ ≤ W F: one non-zero
column). A node is a sum over distinct users, so replacing one user changes one term:
Δ_gram = √2·W F² (‖xxᵀ − yyᵀ‖²_F ≤ ‖x‖⁴ + ‖y‖⁴ for the GOE's Frobenius calibration) and
Δ_next_state = 2 W F (add/remove: W F² and W F) — :func:`dpverify.sensitivity.gram_sum_sensitivity` and
:func:`dpverify.sensitivity.vector_sum_sensitivity` with ``SumBound(W, F, 1)``. Each user's weights
depend only on published values and the user's own data, so the releases compose adaptively.

Accounting. :func:`dp_lsvi_ucbpp_tree_schedule` lists the two families over K episodes × H stages with
users ``"tree"`` (ledger pattern :class:`dpverify.ledger.BinaryTreeNode`: the release at episode k reads
users (k − lowbit(k), k]); :func:`dpverify.calibration.calibrate` gives every release
ρ0 = ρ/(2H(⌊log₂K⌋ + 1)) (the worst user, user 1, lies in one node per level), and the billboard's
ledger accounts exactly what was published.

Noise of what the planner reads. The prefix over users 1..k−1 sums popcount(k − 1) released nodes, so
its noise is GOE with entry std s·√popcount(k − 1) (Gram) and Gaussian with std σ·√popcount(k − 1) per
entry of M̃_h; M̃_hV then carries N(0, σ²·popcount·‖V‖²I) with ‖V‖₂ ≤ H√S (V̂ clipped to [0, H]).
:func:`tree_noise_stds` returns the worst case over k ≤ K of both (c = max popcount(k − 1)); the
constants λ̃_Λ, L and the radii of Sahu 2025 (Lemma A.1, Theorem 3.2) are evaluated for them exactly
as the fresh variant evaluates them for its per-release noise
(:func:`dpverify.agents.dp_lsvi_ucb_pp.constants.noise_constants_for_std`).

The other two counters — the full dyadic tree with Honaker's estimator (``aggregation="honaker"``, counter
``"dyadic"``: :mod:`dpverify.agents.core.dyadic_tree`) and the square-root Toeplitz factorisation
(``aggregation="factorised"``: :mod:`dpverify.agents.core.factorised_sum`) — release the same two families with other
ledger patterns; their accounting and prefix noise are derived in those modules and in docs/private_agents.md.

Cost per episode: two tree insertions (O(H(d² + dS)·log K) additions), one batched eigendecomposition of
the H prefix Gram matrices, O(H(d² + dS + SAd²)) arithmetic — 2H published values per episode instead of
the fresh variant's 4H.
"""

from __future__ import annotations

import math

import numpy as np

from dpverify import _validate
from dpverify.calibration import Calibration, ReleaseSchedule, StatisticSpec
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism
from dpverify.neighbouring import Neighbouring
from dpverify.sensitivity import SumBound, gram_sum_sensitivity, vector_sum_sensitivity

from ..core.billboard import Billboard
from ..core.dyadic_tree import DyadicTreeSum, level_family, max_prefix_variance_factor
from ..core.factorised_sum import FactorisedSum, max_prefix_noise_factor, square_root_blt
from ..core.private import require_mechanism
from ..core.statistics import PublishedGrams, checked_weights, post_process_grams
from ..tree_lsvi.tree_lsvi import BinaryTreeSum
from .schedule import dp_lsvi_ucbpp_setting

TREE_FAMILIES: tuple[str, ...] = ("gram", "next_state")
#: The running-sum counters: ``"binary"`` (Chan, Shi & Song 2011: one tree node per episode), ``"dyadic"``
#: (every node, with Honaker's estimator: :mod:`dpverify.agents.core.dyadic_tree`) and ``"factorised"`` (a square-root
#: Toeplitz factor in BLT form: :mod:`dpverify.agents.core.factorised_sum`).
COUNTERS: tuple[str, ...] = ("binary", "dyadic", "factorised")


def dp_lsvi_ucbpp_tree_schedule(
    horizon: int,
    episodes: int,
    dim: int,
    num_states: int,
    sensitivity_model: str = "derived",
    relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
    feature_norm: float = 1.0,
    counter: str = "binary",
) -> ReleaseSchedule:
    """The releases of tree-aggregated DP-LSVI-UCB++: per (episode, stage) one tree node of G_h (GOE) and
    one of M_h (d·S vector), users ``"tree"`` (module docstring); with ``counter="dyadic"`` every node of the full
    dyadic tree, level l as the families ``gram_l<l>`` and ``next_state_l<l>`` (users ``"dyadic-<l>"``); with
    ``counter="factorised"`` row k of C·x for both, users the BLT factor of :func:`square_root_blt` (K).

    ``sensitivity_model``: "derived" (σ̄⁻² ≤ 1/H², Sahu 2025 line 25) or "paper" (σ̄⁻² ≤ 1, Appendix A).
    """
    counter = _validate.one_of("counter", counter, COUNTERS)
    setting = dp_lsvi_ucbpp_setting(horizon, episodes, dim, sensitivity_model, relation, feature_norm, num_states)
    model, relation, F = setting.model, setting.relation, setting.feature_norm
    dim, states = setting.dim, setting.num_states
    if states is None:
        raise InvalidParameterError("num_states", "is needed by the tree schedule (its M_h nodes are d·S vectors)",
                                    states)
    unit = SumBound(setting.weight, F, 1.0)
    gram = ("symmetric-matrix", dim, gram_sum_sensitivity(unit, relation))
    next_state = ("vector", dim * states, vector_sum_sensitivity(unit, relation))
    gram_text = "tree node of Σ σ̄⁻² φφᵀ (Sahu 2025 Alg. 1 line 26), GOE"
    next_text = "tree node of Σ σ̄⁻² φ e_{s'}ᵀ (d×S, flattened; M_h V gives lines 6–8)"
    if counter == "binary":
        stats: tuple[StatisticSpec, ...] = (
            StatisticSpec("gram", f"{gram_text}; binary mechanism", *gram, "tree"),
            StatisticSpec("next_state", f"{next_text}; binary mechanism", *next_state, "tree"),
        )
    elif counter == "factorised":
        factor = square_root_blt(setting.episodes)
        stats = (
            StatisticSpec("gram", "row of C·x for the per-user terms σ̄⁻² φφᵀ (Sahu 2025 Alg. 1 line 26), GOE; "
                          "square-root BLT factorisation", *gram, factor),
            StatisticSpec("next_state", "row of C·x for the per-user terms σ̄⁻² φ e_{s'}ᵀ (d×S, flattened); "
                          "square-root BLT factorisation", *next_state, factor),
        )
    else:
        levels = range(int(setting.episodes).bit_length())
        stats = tuple(
            StatisticSpec(level_family(family, level), f"{text}; full dyadic tree, level {level}", *shape,
                          f"dyadic-{level}")
            for family, text, shape in (("gram", gram_text, gram), ("next_state", next_text, next_state))
            for level in levels)
    mechanism = {"binary": "the binary mechanism of Chan, Shi & Song 2011",
                 "dyadic": "the full dyadic tree and Honaker 2015's estimator",
                 "factorised": "a square-root factorisation in BLT form (McMahan, Dvijotham et al. 2024)"}[counter]
    name = {"binary": "tree", "dyadic": "dyadic tree, Honaker", "factorised": "square-root factorisation"}[counter]
    release = {"binary": "each tree node released once per (episode, stage) with fresh noise; prefix sums are "
                         "post-processing",
               "dyadic": "each dyadic node released once, when complete, with fresh noise; Honaker's estimates are "
                         "post-processing",
               "factorised": "each row of C·x released once per (episode, stage) with fresh noise; the decoded "
                             "prefixes A C⁻¹y are post-processing"}[counter]
    return ReleaseSchedule(
        name=f"dp-lsvi-ucb++ {name} ({model} sensitivities)",
        source=f"Sahu 2025, Algorithm 1, with {mechanism}",
        relation=relation,
        episodes=setting.episodes,
        stages=setting.horizon,
        statistics=stats,
        assumptions=(
            f"per-user weight {setting.weight_rule}, checked when a user's terms are added",
            f"‖φ(s,a)‖₂ ≤ {F:g}, checked at construction",
            "the vector statistics are M_h V with V̂, V̌ clipped to [0, H] (post-processing of M̃_h)",
            f"neighbouring relation: {relation.value}",
            release,
        ),
    )


def max_prefix_nodes(episodes: int) -> int:
    """max over k = 1..K of popcount(k − 1), at least 1: the most released nodes a prefix over users 1..k−1
    sums. For N = K − 1 with b bits, that is b if N = 2^b − 1 and b − 1 otherwise (2^(b−1) − 1 ≤ N)."""
    n = _validate.integer("episodes", episodes, minimum=1) - 1
    bits = n.bit_length()
    return max(1, bits if n == (1 << bits) - 1 else bits - 1)


def tree_noise_stds(calibration: Calibration, horizon: int, num_states: int, episodes: int,
                    counter: str = "binary") -> tuple[float, float]:
    """(GOE entry std of the prefix Gram noise, std per coordinate of the noise on M̃_h V̂) in the worst
    case over k ≤ K: s·√c and σ·√c·H√S with c = :func:`max_prefix_nodes` for the binary tree,
    :func:`dpverify.agents.core.dyadic_tree.max_prefix_variance_factor` for the dyadic one (every level has the same
    noise) and :func:`dpverify.agents.core.factorised_sum.max_prefix_noise_factor` for the factorisation (module
    docstring)."""
    counter = _validate.one_of("counter", counter, COUNTERS)
    suffix = "_l0" if counter == "dyadic" else ""
    gram = require_mechanism(calibration.mechanism("gram" + suffix), GOEMechanism, "gram")
    next_state = require_mechanism(calibration.mechanism("next_state" + suffix), GaussianMechanism, "next_state")
    c = {"binary": lambda: float(max_prefix_nodes(episodes)),
         "dyadic": lambda: max_prefix_variance_factor(episodes),
         "factorised": lambda: max_prefix_noise_factor(square_root_blt(episodes), episodes)}[counter]()
    return gram.entry_std * math.sqrt(c), next_state.sigma * math.sqrt(c) * horizon * math.sqrt(num_states)


class CounterStatistics:
    """The statistics of DP-LSVI-UCB++ with running-sum counters (module docstring): the agent's
    :class:`~dpverify.agents.core.statistics.PublishedStatistics`.

    Raw terms live only inside the two counters of G_h and M_h (binary tree, full dyadic tree or factorisation),
    which publish when a user's terms are added (:meth:`add_user`; :meth:`skip_user` publishes an empty slot's
    nodes on schedule). At the start of episode k the planner reads their published prefixes over users 1..k−1
    (:meth:`release_grams`, then :meth:`release_sums` per stage: M̃_h V, post-processing, no release).
    """

    def __init__(self, features: np.ndarray, regularization: float, shift: float, calibration: Calibration,
                 billboard: Billboard, noise_rng: np.random.Generator, max_weight: float, num_episodes: int,
                 counter: str = "binary") -> None:
        self.features = features
        H, S, _, d = features.shape
        self.horizon, self.num_states, self.dim = H, S, d
        self.regularization, self.shift, self.max_weight = regularization, shift, max_weight
        self.counter = _validate.one_of("counter", counter, COUNTERS)
        self.gram_tree: BinaryTreeSum | DyadicTreeSum | FactorisedSum
        self.next_state_tree: BinaryTreeSum | DyadicTreeSum | FactorisedSum
        if counter == "factorised":
            factor = square_root_blt(num_episodes)
            gram = require_mechanism(calibration.mechanism("gram"), GOEMechanism, "gram")
            next_state = require_mechanism(calibration.mechanism("next_state"), GaussianMechanism, "next_state")
            self.gram_tree = FactorisedSum(billboard, "gram", gram, factor, H, (d, d), num_episodes, noise_rng)
            self.next_state_tree = FactorisedSum(billboard, "next_state", next_state, factor, H, (d * S,),
                                                 num_episodes, noise_rng)
        elif counter == "binary":
            gram = require_mechanism(calibration.mechanism("gram"), GOEMechanism, "gram")
            next_state = require_mechanism(calibration.mechanism("next_state"), GaussianMechanism, "next_state")
            self.gram_tree = BinaryTreeSum(billboard, "gram", gram, H, (d, d), num_episodes, noise_rng)
            self.next_state_tree = BinaryTreeSum(billboard, "next_state", next_state, H, (d * S,), num_episodes,
                                                 noise_rng)
        else:
            levels = range(int(num_episodes).bit_length())
            grams = [require_mechanism(calibration.mechanism(level_family("gram", lv)), GOEMechanism, "gram")
                     for lv in levels]
            nexts = [require_mechanism(calibration.mechanism(level_family("next_state", lv)), GaussianMechanism,
                                       "next_state") for lv in levels]
            self.gram_tree = DyadicTreeSum(billboard, "gram", grams, H, (d, d), num_episodes, noise_rng)
            self.next_state_tree = DyadicTreeSum(billboard, "next_state", nexts, H, (d * S,), num_episodes,
                                                 noise_rng)
        self._next_state = np.zeros((H, d, S))
        self.users = 0

    @property
    def episode(self) -> int:
        return self.users + 1

    def release_grams(self) -> PublishedGrams:
        """The published prefixes over users 1..k−1: Λ̃_{k,h} post-processed, and M̃_h kept for the pass."""
        self._next_state = self.next_state_tree.prefix.reshape(self.horizon, self.dim, self.num_states)
        return post_process_grams(self.gram_tree.prefix, self.regularization, self.shift, self.features)

    def release_sums(self, h: int, v_hat: np.ndarray, v_check: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """M̃_h V̂, M̃_h V̌, M̃_h V̂² from the published prefix of M_h (stage h 0-based; no release)."""
        m = self._next_state[h]
        return m @ v_hat, m @ v_check, m @ v_hat**2

    def release_all_sums(self, v_hat: np.ndarray, v_check: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`release_sums` of every stage at once (targets shape (H, S); the same products; no release)."""
        m = self._next_state
        hat, check, bar = ((m @ v[:, :, None])[:, :, 0] for v in (v_hat, v_check, v_hat**2))
        return hat, check, bar

    def add_user(self, states: np.ndarray, actions: np.ndarray, weights: np.ndarray) -> None:
        """Add user k's terms to both counters, publishing their releases of episode k for every stage."""
        w = checked_weights(weights, self.horizon, self.max_weight)
        h = np.arange(self.horizon)
        x = self.features[h, states[:-1], actions]
        weighted_x = w[:, None] * x
        next_terms = np.zeros((self.horizon, self.dim, self.num_states))
        next_terms[h, :, states[1:]] = weighted_x
        self.gram_tree.add(weighted_x[:, :, None] * x[:, None, :])
        self.next_state_tree.add(next_terms.reshape(self.horizon, -1))
        self.users += 1

    def skip_user(self) -> None:
        """An empty slot: both counters publish on schedule, with nothing of slot k in their releases."""
        self.gram_tree.add(None)
        self.next_state_tree.add(None)
        self.users += 1


__all__ = [
    "COUNTERS",
    "TREE_FAMILIES",
    "CounterStatistics",
    "dp_lsvi_ucbpp_tree_schedule",
    "max_prefix_nodes",
    "tree_noise_stds",
]
