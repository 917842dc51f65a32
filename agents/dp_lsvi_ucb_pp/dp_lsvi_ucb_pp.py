"""DP-LSVI-UCB++ (Sahu 2025, Algorithm 1): LSVI-UCB++ that reads other users' data only through releases.

Sahu 2025, "Towards optimal differentially private regret bounds in linear MDPs" (arXiv:2504.09339):
Algorithm 1, privacy Theorem A.1 / Lemma A.1, radii Theorem 3.2. :class:`DpLsviUcbPlusPlus` follows the
algorithm line by line (``# Alg. 1 l.N`` marks each step; stages are 0-indexed in code, 1-based in the
ledger's labels). Per episode k it publishes, reading users 1..k−1 (``users="prefix"``):

* ``gram``: Λ̃_{k,h} = Σ_{i<k} σ̄_{i,h}⁻² φ_iφ_iᵀ + (Z + Zᵀ)/√2 for every stage, before planning (line 26,
  GOE noise; the switching test of line 10 reads all H of them);
* ``w_hat``, ``w_check``, ``w_bar``: Σ_{i<k} σ̄_{i,h}⁻² φ_i V(s'_i) + N(0, σ²I) for V = V̂_{h+1}, V̌_{h+1},
  V̂²_{h+1}, stage by stage in the backward pass (lines 6–8) — or, in an episode whose line 10 keeps Q̂ and Q̌
  (lines 15–16, most episodes), all 3H at once: every stage's targets are then known before the pass;

the 4HK releases of :func:`dpverify.agents.dp_lsvi_ucb_pp.schedule.dp_lsvi_ucbpp_schedule`, each with fresh
noise calibrated by :func:`dpverify.calibration.calibrate` for the target (ε, δ). Everything after a release
is post-processing; the deployed policy is greedy in Q̂, a function of the billboard and the user's own state,
so the billboard lemma (Sahu 2025 Lemma 2.4) gives joint DP.

The sensitivities hold under assumptions the code enforces: ‖φ‖ ≤ F (checked against the environment at
construction), regression targets clipped to [0, H], and each user's weight σ̄⁻² ≤ 1/H² (``derived``) or ≤ 1
(``paper``), checked when the user's terms are added. With ``aggregation`` other than ``"fresh"`` the sums are
released through running-sum counters instead (:mod:`dpverify.agents.dp_lsvi_ucb_pp.tree`).

Where this code departs from the printed algorithm — fresh noise at every release, the Gram release as prefix
sum plus one draw, targets clipped to [0, H], LSVI-UCB++'s corrections (:mod:`dpverify.agents.nonprivate.lsvi_ucb_pp`),
the shift λ + 2c_Λλ̃_Λ with an eigenvalue floor, radii as registry value × multiplier — and why, is in
docs/private_agents.md ("Deviations from the printed Algorithm 1"), with the tuning of the multipliers. This
file is written to be read; the audits run many trials at once through its batched twin
(:mod:`dpverify.agents.dp_lsvi_ucb_pp.batched`), which tests tie to it bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.calibration import Calibration, ReleaseSchedule
from dpverify.errors import InvalidParameterError
from dpverify.ledger import user_pattern

from ..core.base import Trajectory
from ..core.billboard import Billboard, stages
from ..core.planning import TIE_TOLERANCE, sample_greedy_actions
from ..core.private import PrivateAgent, PrivateAgentConfig
from ..core.statistics import PublishedGrams, PublishedStatistics, checked_weights, post_process_grams
from ..envs.linear_mdp import LinearMDP
from ..nonprivate.lsvi_ucb_pp import DEFAULT_REGULARIZATION as LSVI_UCB_PP_REGULARIZATION
from ..nonprivate.lsvi_ucb_pp import backup, learning_rule_settings, variance_weights_from
from .constants import noise_constants, noise_constants_for_std
from .schedule import SENSITIVITY_MODELS, dp_lsvi_ucbpp_schedule
from .tree import CounterStatistics, dp_lsvi_ucbpp_tree_schedule, tree_noise_stds

#: Default multipliers of the registry radii (docs/private_agents.md, "Constants and multipliers").
DEFAULT_RADIUS_MULTIPLIER = 1e-5
#: How the weighted sums are privatised: fresh noise per prefix (the paper), or one of the running-sum counters.
AGGREGATIONS: tuple[str, ...] = ("fresh", "tree", "honaker", "factorised")
#: The counter of each running-sum aggregation (:data:`dpverify.agents.dp_lsvi_ucb_pp.tree.COUNTERS`).
COUNTER_OF_AGGREGATION: dict[str, str] = {"tree": "binary", "honaker": "dyadic", "factorised": "factorised"}
#: Who a release of episode k reads: users 1..k−1.
PREFIX = user_pattern("prefix")
#: The three vector families of a stage, in the order of lines 6–8.
VECTOR_FAMILIES: tuple[str, ...] = ("w_hat", "w_check", "w_bar")


@dataclass(frozen=True)
class DpLsviUcbPlusPlusConfig(PrivateAgentConfig):
    """Hyper-parameters of DP-LSVI-UCB++ (module docstring).

    Attributes (besides :class:`~dpverify.agents.core.private.PrivateAgentConfig`'s: K, over which the budget is
    spread, the target (ε, δ) of the published statistics, F, relation, conversion, the multiplier c_Λ of
    λ̃_Λ in the shift, p of the utility analysis):
        sensitivity_model: "paper" (Appendix A), "derived" or "staged" (each stage's own target range; fresh
            aggregation only; docs/derivations.md).
        accounting: "per-user" (each user pays for the releases that read it) or "naive" (4HK·ρ0).
        beta_hat_multiplier, beta_check_multiplier, beta_bar_multiplier: multipliers of the statistical terms
            √(d³H²ι₂²) (β̂, β̌) and √(d³H⁴ι₂²) (β̄) of Theorem 3.2's radii.
        privacy_radius_multiplier: multiplier of their privacy terms HL√(dλ̃_Λ) (β̂, β̌), H²L²√(dλ̃_Λ) (β̄).
        variance_floor_multiplier, disagreement_multiplier: c_σ and c_D, as in LSVI-UCB++.
        regularization: λ (None: LSVI-UCB++'s default, so that ε → ∞ recovers LSVI-UCB++).
        switching: rare switching (line 10); False updates Q̂, Q̌ every episode (an ablation).
        keep_history, keep_noise: keep the billboard's published values (and noise) for audits and tests.
        aggregation: "fresh" (the paper: 4HK releases), or the counters "tree" (binary tree), "honaker" (full
            dyadic tree, Honaker's estimator) and "factorised" (square-root Toeplitz factorisation).
    """

    sensitivity_model: str = "derived"
    accounting: str = "per-user"
    beta_hat_multiplier: float = DEFAULT_RADIUS_MULTIPLIER
    beta_check_multiplier: float = DEFAULT_RADIUS_MULTIPLIER
    beta_bar_multiplier: float = DEFAULT_RADIUS_MULTIPLIER
    privacy_radius_multiplier: float = DEFAULT_RADIUS_MULTIPLIER
    variance_floor_multiplier: float = 0.0
    disagreement_multiplier: float = 0.0
    regularization: float | None = None
    switching: bool = True
    keep_history: bool = False
    keep_noise: bool = False
    aggregation: str = "fresh"

    def __post_init__(self) -> None:
        super().__post_init__()
        _validate.one_of("sensitivity_model", self.sensitivity_model, SENSITIVITY_MODELS)
        _validate.one_of("aggregation", self.aggregation, AGGREGATIONS)
        if self.sensitivity_model == "staged" and self.aggregation != "fresh":
            raise InvalidParameterError("sensitivity_model", "staged applies to aggregation='fresh' (a counter's "
                                        "sums M_h carry no targets)", self.sensitivity_model)
        _validate.one_of("accounting", self.accounting, ("per-user", "naive"))
        for name in ("beta_hat_multiplier", "beta_check_multiplier", "beta_bar_multiplier",
                     "privacy_radius_multiplier", "variance_floor_multiplier", "disagreement_multiplier"):
            _validate.non_negative(name, getattr(self, name))
        if self.regularization is not None:
            _validate.positive("regularization", self.regularization)
        for name in ("switching", "keep_history", "keep_noise"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidParameterError(name, "must be True or False", getattr(self, name))


class FreshNoiseStatistics:
    """The paper's releases (lines 6–8 and 26): every statistic published with fresh noise, 4H per episode (4H − 3
    under the staged model, which releases no vector at stage H).

    The raw prefix sums Σ_i w_i φ_iφ_iᵀ and M_h = Σ_i w_i φ_i e_{s'_i}ᵀ (so that Σ_i w_i φ_i V(s'_i) = M_h V for any
    V, in O(dS)) are private state: nothing computed from them leaves this object except through the billboard
    (:class:`~dpverify.agents.core.statistics.PublishedStatistics`).
    """

    def __init__(self, features: np.ndarray, regularization: float, shift: float, calibration: Calibration,
                 billboard: Billboard, noise_rng: np.random.Generator, max_weight: float) -> None:
        self.features = np.ascontiguousarray(features)  # (its flat view is what every episode's bonuses project)
        self.horizon, self.num_states, _, self.dim = features.shape
        self.regularization, self.shift, self.max_weight = regularization, shift, max_weight
        self.billboard, self.noise_rng = billboard, noise_rng
        self.gram_mechanism = calibration.mechanism("gram")
        # The three vector releases of each stage (None where the schedule releases none: a stage whose targets
        # are all 0, the last one under the "staged" model, whose sums are exactly 0).
        released = set(calibration.released_stages("w_hat"))
        self.vector_labels = [[(family, h + 1, calibration.mechanism(family, h + 1)) for family in VECTOR_FAMILIES]
                              if h + 1 in released else None for h in range(self.horizon)]
        # The stages of a backward pass that release, in its order (H..1), and their labels (release_all_sums).
        self.pass_stages = [h for h in range(self.horizon - 1, -1, -1) if self.vector_labels[h] is not None]
        self.pass_labels = [label for h in self.pass_stages for label in self.vector_labels[h] or ()]
        self.raw_gram = np.zeros((self.horizon, self.dim, self.dim))
        self.next_state_sums = np.zeros((self.horizon, self.dim, self.num_states))
        self.users = 0

    @property
    def episode(self) -> int:
        return self.users + 1

    def release_grams(self) -> PublishedGrams:
        labels = stages("gram", self.gram_mechanism, self.horizon)
        published = self.billboard.publish_block(self.episode, labels, self.raw_gram, PREFIX, self.noise_rng)
        return post_process_grams(np.asarray(published), self.regularization, self.shift, self.features)

    def release_sums(self, h: int, v_hat: np.ndarray, v_check: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        labels = self.vector_labels[h]
        if labels is None:  # targets all 0 at this stage: the sums are 0, and nothing is released
            return np.zeros(self.dim), np.zeros(self.dim), np.zeros(self.dim)
        m = self.next_state_sums[h]
        raw = np.stack([m @ v_hat, m @ v_check, m @ v_hat**2])
        w_hat_sum, w_check_sum, w_bar_sum = self.billboard.publish_block(self.episode, labels, raw, PREFIX,
                                                                         self.noise_rng)
        return w_hat_sum, w_check_sum, w_bar_sum

    def release_all_sums(self, v_hat: np.ndarray, v_check: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`release_sums` of every stage at once, for a pass whose targets are known before it starts:
        ``v_hat[h]``, ``v_check[h]`` stage h's, shape (H, S). The same values (each M_h V by the same product) and
        releases, in the pass's order (stages H..1, each w_hat, w_check, w_bar), published as one block; three
        (H, d) stacks."""
        m = self.next_state_sums
        raw = np.stack([(m @ v[:, :, None])[:, :, 0] for v in (v_hat, v_check, v_hat**2)], axis=1)  # (H, 3, d)
        sums = np.zeros((self.horizon, len(VECTOR_FAMILIES), self.dim))  # 0 where a stage releases nothing
        if self.pass_stages:
            published = self.billboard.publish_block(self.episode, self.pass_labels,
                                                     raw[self.pass_stages].reshape(-1, self.dim), PREFIX,
                                                     self.noise_rng)
            sums[self.pass_stages] = np.reshape(published, (len(self.pass_stages), len(VECTOR_FAMILIES), self.dim))
        return sums[:, 0], sums[:, 1], sums[:, 2]

    def add_user(self, states: np.ndarray, actions: np.ndarray, weights: np.ndarray) -> None:
        w = checked_weights(weights, self.horizon, self.max_weight)
        h = np.arange(self.horizon)
        x = self.features[h, states[:-1], actions]
        weighted_x = w[:, None] * x
        self.raw_gram += weighted_x[:, :, None] * x[:, None, :]
        self.next_state_sums[h, :, states[1:]] += weighted_x
        self.users += 1

    def skip_user(self) -> None:
        self.users += 1


class DpLsviUcbPlusPlus(PrivateAgent):
    """DP-LSVI-UCB++ (Sahu 2025, Algorithm 1) on a finite linear MDP (module docstring).

    Args:
        mdp: the environment (its features must satisfy ‖φ‖ ≤ ``config.feature_norm_bound``).
        config: :class:`DpLsviUcbPlusPlusConfig`.
        rng: the agent's generator: tie-breaking draws from it, the privacy noise from a child spawned from it.
        billboard: where releases are published (default: a new :class:`~dpverify.agents.core.billboard.Billboard`
            with the config's relation and history flags); tests and audits may pass their own.
    """

    name = "dp-lsvi-ucb++"
    privacy_notion = "jdp"
    config_class = DpLsviUcbPlusPlusConfig

    def __init__(self, mdp: LinearMDP, config: DpLsviUcbPlusPlusConfig, rng: np.random.Generator,
                 billboard: Billboard | None = None) -> None:
        # Alg. 1 l.0–1: the budget ρ for (ε, δ) and every release's noise (calibrated, not the printed noise).
        self.set_up_privacy(mdp, config, rng, billboard, keep_history=config.keep_history,
                            keep_noise=config.keep_noise)
        self.rng = rng
        H, S, A, d, K = mdp.horizon, mdp.num_states, mdp.num_actions, mdp.dim, config.num_episodes
        self.features, self.rewards = mdp.features, mdp.rewards
        self.regularization = (LSVI_UCB_PP_REGULARIZATION if config.regularization is None
                               else config.regularization)
        # Alg. 1 l.1: λ̃_Λ, L and the radii of Theorem 3.2, evaluated for the noise actually added.
        counter = COUNTER_OF_AGGREGATION.get(config.aggregation)
        if counter is None:
            self.noise_values = noise_constants(self.calibration, d, H, K, config.failure_probability)
        else:
            self.noise_values = noise_constants_for_std(*tree_noise_stds(self.calibration, H, S, K, counter),
                                                        d, H, K, config.failure_probability)
        values, c_privacy = self.noise_values, config.privacy_radius_multiplier
        self.theory = {name: values[name] for name in ("beta_hat", "beta_check", "beta_bar")}
        self.beta_hat = c_privacy * values["beta_hat_privacy"] + config.beta_hat_multiplier * values[
            "beta_hat_statistical"]
        self.beta_check = c_privacy * values["beta_check_privacy"] + config.beta_check_multiplier * values[
            "beta_check_statistical"]
        self.beta_bar = c_privacy * values["beta_bar_privacy"] + config.beta_bar_multiplier * values[
            "beta_bar_statistical"]
        self.variance_floor_coefficient = config.variance_floor_multiplier * 2 * d**3 * H**2  # c_σ·2d³H² (l.25)
        self.disagreement_coefficient = config.disagreement_multiplier * 4 * d**3 * H**2  # c_D·4d³H² (D_{k,h})
        self.shift = 2.0 * config.shift_multiplier * values["lambda_tilde"]  # Λ̃_0 = 2λ̃_Λ I (l.1), plus λ
        max_weight = 1.0 if config.sensitivity_model == "paper" else 1.0 / H**2  # σ̄ ≥ H (l.25)
        noise_rng = rng.spawn(1)[0]
        self.statistics: PublishedStatistics
        if counter is None:
            self.statistics = FreshNoiseStatistics(mdp.features, self.regularization, self.shift, self.calibration,
                                                   self.billboard, noise_rng, max_weight)
        else:
            self.statistics = CounterStatistics(mdp.features, self.regularization, self.shift, self.calibration,
                                                self.billboard, noise_rng, max_weight, K, counter)
        # Targets of stage h's regressions clipped to [0, H] (the range the sensitivities assume) or, under the
        # "staged" model, to [0, H − h − 1] (0-based h: the value-to-go after stage h, whose own sensitivities
        # assume that range).
        self.target_caps = ((H - 1.0 - np.arange(H)) if config.sensitivity_model == "staged"
                            else np.full(H, float(H)))
        # Alg. 1 l.2: Q̂ = H (capped at the value-to-go H − h), Q̌ = 0.
        caps = (H - np.arange(H))[:, None, None].astype(np.float64)
        self.q_hat = np.broadcast_to(caps, (H, S, A)).copy()
        self.q_check = np.zeros((H, S, A))
        self.v_hat = np.zeros((H + 1, S))
        self.v_hat[:H] = caps[:, :, 0]
        self.v_check = np.zeros((H + 1, S))
        # Alg. 1 l.1: k_last = 0 with Λ̃_0 = (λ + shift)I, whose log-determinant the switching test compares with.
        self.last_switch_logdet = np.full(H, d * math.log(self.regularization + self.shift))
        self.num_switches = 0
        # This episode's regressions and published Gram matrices, read again for the variance weights after the rollout.
        self.w_hat, self.w_check, self.w_bar = np.zeros((H, d)), np.zeros((H, d)), np.zeros((H, d))
        self.grams = PublishedGrams(np.zeros((H, d, d)), np.zeros(H), np.zeros((H, S, A, d)))

    def release_schedule(self, mdp: LinearMDP, config: DpLsviUcbPlusPlusConfig) -> ReleaseSchedule:
        """The 4HK releases of Sahu 2025 §3 (one Gram matrix and three vectors per stage and episode), or with a
        counter the nodes of G_h and M_h (binary tree), every node of their dyadic trees (Honaker) or the rows
        of C·x (factorised)."""
        counter = COUNTER_OF_AGGREGATION.get(config.aggregation)
        if counter is not None:
            return dp_lsvi_ucbpp_tree_schedule(mdp.horizon, config.num_episodes, mdp.dim, mdp.num_states,
                                               config.sensitivity_model, config.relation,
                                               config.feature_norm_bound, counter)
        return dp_lsvi_ucbpp_schedule(mdp.horizon, config.num_episodes, mdp.dim, config.sensitivity_model,
                                      config.relation, config.feature_norm_bound)

    @property
    def accounting(self) -> str:
        """The config's accounting ("per-user" or "naive", which the calibration then also uses)."""
        return str(self.config.accounting)

    # ---- one episode: plan (lines 5–21), act (line 23), learn (lines 24–26) ------------------------------

    def begin_episode(self) -> np.ndarray:
        """Release, plan, and return the deployed greedy policy, shape (H, S)."""
        self.check_episode(self.statistics.episode)
        H = self.horizon
        grams = self.statistics.release_grams()  # Λ̃_{k,h} of every stage (l.26 of the last episode, published)
        # l.10: re-plan if det Λ̃_{k,h'} ≥ 2 det Λ̃_{k_last,h'} for some h' (once per episode, before the pass).
        switch = not self.config.switching or bool(
            np.any(grams.log_determinant >= self.last_switch_logdet + math.log(2.0)))
        self.grams = grams
        if not switch:  # l.15–16 at every stage: Q̂, Q̌ and V̂, V̌ kept, so l.6–8 of the whole pass are known now
            self.regress_whole_pass(grams)
            return sample_greedy_actions(self.q_hat, self.rng, TIE_TOLERANCE)  # l.20 (ties at random)
        bonus = np.sqrt(grams.bonus_squared)  # ‖φ_h(s, a)‖_{Λ̃⁻¹} of every (h, s, a)
        for h in range(H - 1, -1, -1):  # l.5
            v_hat = np.minimum(np.maximum(self.v_hat[h + 1], 0.0), self.target_caps[h])  # targets in range
            v_check = np.minimum(np.maximum(self.v_check[h + 1], 0.0), self.target_caps[h])
            w_hat_sum, w_check_sum, w_bar_sum = self.statistics.release_sums(h, v_hat, v_check)
            self.w_hat[h] = grams.inverse[h] @ w_hat_sum  # l.6
            self.w_check[h] = grams.inverse[h] @ w_check_sum  # l.7
            self.w_bar[h] = grams.inverse[h] @ w_bar_sum  # l.8
            # l.11–12 and 18–19
            self.q_hat[h], self.q_check[h], self.v_hat[h], self.v_check[h] = backup(
                self.q_hat[h], self.q_check[h], self.rewards[h], self.features[h], self.w_hat[h],
                self.w_check[h], bonus[h], self.beta_hat, self.beta_check, float(H - h))
        if self.config.switching:  # l.13 (the ablation without switching does not count)
            self.last_switch_logdet = grams.log_determinant.copy()
            self.num_switches += 1
        return sample_greedy_actions(self.q_hat, self.rng, TIE_TOLERANCE)  # l.20 (ties at random)

    def regress_whole_pass(self, grams: PublishedGrams) -> None:
        """l.5–8 of a pass that keeps Q̂ and Q̌ (l.15–16): the targets V̂_{k,h+1} = V̂_{k−1,h+1}, V̌_{k,h+1} of every
        stage are known before it, so its 3H vector releases are one block — the releases, values and noise of the
        stage-by-stage pass, in its order (:meth:`FreshNoiseStatistics.release_all_sums`)."""
        caps = self.target_caps[:, None]
        v_hat = np.minimum(np.maximum(self.v_hat[1:], 0.0), caps)  # targets in range
        v_check = np.minimum(np.maximum(self.v_check[1:], 0.0), caps)
        sums = self.statistics.release_all_sums(v_hat, v_check)
        for w, released in zip((self.w_hat, self.w_check, self.w_bar), sums, strict=True):  # l.6, 7, 8
            w[:] = (grams.inverse @ released[:, :, None])[:, :, 0]

    def variance_weights(self, trajectory: Trajectory) -> np.ndarray:
        """σ̄_{k,h}⁻² at the visited (s_h, a_h) of every stage (l.9, 24–25), shape (H,)."""
        h = np.arange(self.horizon)
        s, a = trajectory.states[:-1], trajectory.actions
        phi = self.features[h, s, a]
        hat = np.einsum("hd,hd->h", self.w_hat, phi)
        check = np.einsum("hd,hd->h", self.w_check, phi)
        bar = np.einsum("hd,hd->h", self.w_bar, phi)
        bonus = np.sqrt(self.grams.bonus_squared_at(h, s, a))  # ‖φ‖_{Λ̃⁻¹} at the visited pairs
        return variance_weights_from(hat, check, bar, bonus, self.horizon, self.dim, self.beta_hat,
                                     self.beta_bar, self.disagreement_coefficient,
                                     self.variance_floor_coefficient)

    def end_episode(self, trajectory: Trajectory | None) -> None:
        """l.22–28: user k's weights σ̄⁻² (from public values and the user's own data) and its terms join the
        sums; None is an empty slot (:mod:`dpverify.agents.core.base`)."""
        if trajectory is None:
            self.statistics.skip_user()
            return
        weights = self.variance_weights(trajectory)
        self.statistics.add_user(trajectory.states, trajectory.actions, weights)  # l.26

    def derived_settings(self) -> dict[str, Any]:
        values = self.noise_values
        return {
            **learning_rule_settings(self),
            "L": values["L"],
            "lambda_tilde": values["lambda_tilde"],
            "iota2": values["iota2"],
            **{f"theory_{name}_{part}": values[f"{name}_{part}"]
               for name in ("beta_hat", "beta_check", "beta_bar") for part in ("privacy", "statistical")},
            "gram_shift": self.shift,
            "num_switches": self.num_switches,
            "schedule_assumptions": list(self.schedule.assumptions),
        }


__all__ = [
    "DpLsviUcbPlusPlus",
    "DpLsviUcbPlusPlusConfig",
    "FreshNoiseStatistics",
    "noise_constants",
    "noise_constants_for_std",
]
