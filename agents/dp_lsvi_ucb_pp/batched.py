"""DP-LSVI-UCB++ for many independent runs at once: a leading trial dimension through every step.

The same algorithm as :class:`dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp.DpLsviUcbPlusPlus` (Sahu 2025, Algorithm 1,
with that module's documented corrections): per episode k, H Gram releases Λ̃_{k,h} (GOE noise), the
rare-switching test on the released log-determinants, a backward pass with three fresh Gaussian releases
per stage (ŵ, w̌, w̄ sums; targets clipped to [0, H]), Q̂/Q̌ updates on switching episodes, greedy actions
with uniform tie-breaking, then the user's variance weights σ̄⁻² and raw terms. Every array carries a
leading axis of n independent runs ("trials"), so a privacy audit runs 10⁵ agents in one call of numpy
linear algebra (batched ``eigh``, ``matmul``) instead of 10⁵ Python loops.

Constants (calibrated noise, shift, radii, regulariser, weight bound) are read from one reference agent
constructed with the same config, so both paths use the same numbers by construction.

Randomness (:mod:`dpverify.agents.core.batching`). The reference agent draws its tie-breaking keys from its
generator ``rng`` and its noise from ``rng.spawn(1)[0]``; ``PerTrialRandomness`` reproduces that for n
generators, which is how the test proves that this is the same algorithm: identical policies and published
values, trial by trial. ``BatchRandomness`` draws the same distributions for all trials from one generator
(the audits' fast path). The registry card's twin is built by
:func:`dpverify.agents.dp_lsvi_ucb_pp.batched_tree.build_twin` (this class, or its tree subclass).

Hooks for planted-bug variants (``dpverify.audits.agent_zoo``): ``gram_noise``, ``vector_noise``,
``clip_targets``, ``user_features``, ``planning_statistics`` and the attribute ``value_floor``; the
correct agent never overrides them. Only fresh-noise releases (``aggregation="fresh"``) are batched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpverify.errors import InvalidParameterError

from ..core.batching import check_episode_cap, greedy_actions
from ..core.statistics import WEIGHT_CHECK_TOLERANCE, post_process_grams
from ..envs.linear_mdp import LinearMDP
from ..nonprivate.lsvi_ucb_pp import variance_weights_from
from .dp_lsvi_ucb_pp import DpLsviUcbPlusPlus, DpLsviUcbPlusPlusConfig

VECTOR_FAMILIES: tuple[str, ...] = ("w_hat", "w_check", "w_bar")


class BatchedDpLsviUcbPlusPlus:
    """n independent DP-LSVI-UCB++ runs (module docstring).

    Args:
        mdp: the linear MDP (‖φ‖ ≤ ``config.feature_norm``; checked by the reference constructor).
        config: :class:`~dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp.DpLsviUcbPlusPlusConfig`.
        randomness: ``PerTrialRandomness`` or ``BatchRandomness`` (:mod:`dpverify.agents.core.batching`; n = its ``n``).
        record: 1-based episodes whose releases are kept in :attr:`releases` (family, episode, stage,
            value (n, ...)); ``None`` keeps every release.
    """

    name = "dp-lsvi-ucb++ (batched)"
    privacy_notion = "jdp"
    #: The aggregation this twin implements (the tree twin subclasses it: ``batched_tree``).
    aggregation = "fresh"

    def __init__(self, mdp: LinearMDP, config: DpLsviUcbPlusPlusConfig, randomness: Any,
                 record: Sequence[int] | None = None) -> None:
        if getattr(config, "aggregation", "fresh") != self.aggregation:
            raise InvalidParameterError("aggregation", f"must be {self.aggregation!r} for this batched agent",
                                        config.aggregation)
        reference = DpLsviUcbPlusPlus(mdp, config, np.random.default_rng(0))
        self.reference = reference
        self.config = config
        self.mdp = mdp
        self.randomness = randomness
        self.n = n = int(randomness.n)
        H, S, A, d = mdp.horizon, mdp.num_states, mdp.num_actions, mdp.dim
        self.horizon, self.num_states, self.num_actions, self.dim = H, S, A, d
        self.features = np.asarray(mdp.features)
        self.rewards = np.asarray(mdp.rewards)
        stats: Any = reference.statistics
        self.gram_mechanism = reference.calibration.mechanism("gram")
        # Per family, the mechanism of each stage's release (None: the stage releases no vector, its sums are 0).
        released = set(reference.calibration.released_stages("w_hat")) if self.aggregation == "fresh" else set()
        self.vector_mechanisms = {f: [reference.calibration.mechanism(f, h + 1) if h + 1 in released else None
                                      for h in range(H)] for f in VECTOR_FAMILIES} if released else {}
        self.regularization = float(stats.regularization)
        self.shift = float(stats.shift)
        self.max_weight = float(stats.max_weight)
        self.beta_hat, self.beta_check, self.beta_bar = reference.beta_hat, reference.beta_check, reference.beta_bar
        self.variance_floor_coefficient = reference.variance_floor_coefficient
        self.disagreement_coefficient = reference.disagreement_coefficient
        self.target_caps = reference.target_caps  # stage h's targets are clipped to [0, target_caps[h]]
        self.switching = bool(config.switching)
        self.value_floor = 0.0  # V̂, V̌ ≥ 0 (a planted-bug variant may drop the floor)
        self.record = None if record is None else {int(k) for k in record}
        self.releases: list[tuple[str, int, int, np.ndarray]] = []
        # raw private state (never read by planning except through releases)
        self.raw_gram = np.zeros((n, H, d, d))
        self.next_state_sums = np.zeros((n, H, d, S))
        self.count = 0
        caps = (H - np.arange(H))[:, None, None].astype(np.float64)
        self.q_hat = np.broadcast_to(caps, (n, H, S, A)).copy()
        self.q_check = np.zeros((n, H, S, A))
        self.v_hat = np.zeros((n, H + 1, S))
        self.v_check = np.zeros((n, H + 1, S))
        self.v_hat[:, :H] = caps[None, :, :, 0]
        self.noisy_inverse = np.zeros((n, H, d, d))
        self.noisy_logdet = np.full((n, H), d * math.log(self.regularization + self.shift))
        self.noisy_bonus = np.zeros((n, H, S, A))
        self.last_switch_logdet = self.noisy_logdet.copy()
        self.num_switches = np.zeros(n, dtype=np.int64)
        self.switch = np.ones(n, dtype=bool)  # which trials re-planned Q̂, Q̌ this episode
        self.w_hat = np.zeros((n, H, d))
        self.w_check = np.zeros((n, H, d))
        self.w_bar = np.zeros((n, H, d))
        self.bonus_norm = np.zeros((n, H, S, A))

    @property
    def episode(self) -> int:
        """The 1-based episode whose releases read users 1..episode − 1."""
        return self.count + 1

    # ---- hooks (the correct agent; planted-bug variants override) --------------------------------------

    def gram_noise(self, h: int) -> np.ndarray:
        """Fresh Z with N(0, s²) entries for one Gram release of every trial: shape (n, d, d)."""
        return self.randomness.normal(self.gram_mechanism.noise_scale, (self.dim, self.dim))

    def vector_noise(self, family: str, h: int) -> np.ndarray:
        """Fresh N(0, σ²I) for one vector release of every trial: shape (n, d)."""
        mechanism = self.vector_mechanisms[family][h]
        if mechanism is None:
            raise InvalidParameterError("stage", f"releases no {family!r} (its sums are 0)", h + 1)
        return self.randomness.normal(mechanism.noise_scale, (self.dim,))

    def clip_targets(self, values: np.ndarray, h: int) -> np.ndarray:
        """Stage h's regression targets clipped to [0, H] (the range the sensitivities assume; [0, H − h − 1] under
        the staged model)."""
        return np.minimum(np.maximum(values, 0.0), self.target_caps[h])

    def user_features(self, h: np.ndarray, s: np.ndarray, a: np.ndarray) -> np.ndarray:
        """φ_h(s, a) of the visited pairs, as added to the raw sums: shape (n, H, d)."""
        return self.features[h, s, a]

    def planning_statistics(self, raw: np.ndarray, released: np.ndarray) -> np.ndarray:
        """The statistic the planner uses: the released one (a leak would use the raw one)."""
        return released

    # ---- releases ----------------------------------------------------------------------------------

    def _publish(self, family: str, h: int, value: np.ndarray) -> None:
        if self.record is None or self.episode in self.record:
            self.releases.append((family, self.episode, h + 1, value))

    def published_grams(self) -> np.ndarray:
        """The H Gram releases of this episode (fresh GOE noise on the prefix sums), published: (n, H, d, d)."""
        noisy = np.empty_like(self.raw_gram)
        # the GOE mechanism releases the symmetric part of the raw sums (exactly them where already symmetric)
        symmetric = 0.5 * (self.raw_gram + np.swapaxes(self.raw_gram, -1, -2))
        for h in range(self.horizon):
            z = self.gram_noise(h)
            noisy[:, h] = symmetric[:, h] + (z + np.swapaxes(z, -1, -2)) / math.sqrt(2.0)
            self._publish("gram", h, noisy[:, h])
        return self.planning_statistics(self.raw_gram, noisy)

    def release_grams(self) -> None:
        """Λ̃ = the published Grams, symmetrised, + (λ + shift)I, eigenvalues floored at λ: its inverse, log-dets
        and bonuses (:func:`~dpverify.agents.core.statistics.post_process_grams`, as the reference agent)."""
        grams = post_process_grams(self.published_grams(), self.regularization, self.shift, self.features)
        self.noisy_inverse, self.noisy_logdet = grams.inverse, grams.log_determinant
        self.noisy_bonus = grams.bonus_squared

    def release_sum(self, family: str, h: int, targets: np.ndarray) -> np.ndarray:
        if self.vector_mechanisms[family][h] is None:  # no release at this stage: the sums are exactly 0
            return np.zeros((self.n, self.dim))
        raw = (self.next_state_sums[:, h] @ targets[:, :, None])[:, :, 0]
        noisy = raw + self.vector_noise(family, h)
        self._publish(family, h, noisy)
        return self.planning_statistics(raw, noisy)

    # ---- planning ----------------------------------------------------------------------------------

    def regress(self, h: int) -> None:
        inverse = self.noisy_inverse[:, h]
        v_hat = self.clip_targets(self.v_hat[:, h + 1], h)
        v_check = self.clip_targets(self.v_check[:, h + 1], h)
        self.w_hat[:, h] = (inverse @ self.release_sum("w_hat", h, v_hat)[:, :, None])[:, :, 0]
        self.w_check[:, h] = (inverse @ self.release_sum("w_check", h, v_check)[:, :, None])[:, :, 0]
        self.w_bar[:, h] = (inverse @ self.release_sum("w_bar", h, v_hat**2)[:, :, None])[:, :, 0]
        self.bonus_norm[:, h] = np.sqrt(self.noisy_bonus[:, h])

    def switching_trials(self) -> np.ndarray:
        """Which trials re-plan Q̂, Q̌ this episode (line 10: a released log-det doubled; all without switching)."""
        if not self.switching:
            return np.ones(self.n, dtype=bool)
        return np.any(self.noisy_logdet >= self.last_switch_logdet + math.log(2.0), axis=1)

    def plan(self) -> np.ndarray:
        self.switch = switch = self.switching_trials()  # (the tree twin's regress reads it)
        mask = switch[:, None, None]
        for h in range(self.horizon - 1, -1, -1):
            self.regress(h)
            cap = float(self.horizon - h)
            phi = self.features[h]
            bonus = self.bonus_norm[:, h]
            optimistic = self.rewards[h] + (phi @ self.w_hat[:, h, None, :, None])[..., 0] + self.beta_hat * bonus
            pessimistic = self.rewards[h] + (phi @ self.w_check[:, h, None, :, None])[..., 0] - self.beta_check * bonus
            q_hat = np.minimum(np.minimum(optimistic, self.q_hat[:, h]), cap)
            q_check = np.minimum(np.maximum(np.maximum(pessimistic, self.q_check[:, h]), 0.0), cap)
            self.q_hat[:, h] = np.where(mask, q_hat, self.q_hat[:, h])
            self.q_check[:, h] = np.where(mask, q_check, self.q_check[:, h])
            floor = self.value_floor
            self.v_hat[:, h] = np.where(switch[:, None], np.clip(self.q_hat[:, h].max(axis=-1), floor, cap),
                                        self.v_hat[:, h])
            self.v_check[:, h] = np.where(switch[:, None], np.clip(self.q_check[:, h].max(axis=-1), floor, cap),
                                          self.v_check[:, h])
        if self.switching:
            self.last_switch_logdet = np.where(switch[:, None], self.noisy_logdet, self.last_switch_logdet)
            self.num_switches += switch
        return self.q_hat

    def begin_episode(self) -> np.ndarray:
        """Release, plan and return the deployed policies of every trial: shape (n, H, S)."""
        check_episode_cap(self.count, self.config.num_episodes)
        self.release_grams()
        return greedy_actions(self.plan(), self.randomness)

    # ---- learning ----------------------------------------------------------------------------------

    def variance_weights(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """σ̄⁻² of every trial and stage, shape (n, H) (as :meth:`LsviUcbPlusPlus.variance_weights`)."""
        H, d = self.horizon, self.dim
        h = np.arange(H)[None, :]
        trial = np.arange(self.n)[:, None]
        s, a = states[:, :-1], actions
        phi = self.features[h, s, a]
        n = self.bonus_norm[trial, h, s, a]
        hat = np.einsum("nhd,nhd->nh", self.w_hat, phi)
        check = np.einsum("nhd,nhd->nh", self.w_check, phi)
        bar = np.einsum("nhd,nhd->nh", self.w_bar, phi)
        return variance_weights_from(hat, check, bar, n, H, d, self.beta_hat, self.beta_bar,
                                     self.disagreement_coefficient, self.variance_floor_coefficient)

    def end_episode(self, states: np.ndarray, actions: np.ndarray) -> None:
        """Add every trial's user: states (n, H + 1), actions (n, H)."""
        w = self.variance_weights(states, actions)
        if np.any(w > self.max_weight * (1.0 + WEIGHT_CHECK_TOLERANCE)):
            raise InvalidParameterError("weights", f"must be <= {self.max_weight:g} (sensitivity assumption)",
                                        float(w.max()))
        H = self.horizon
        h = np.arange(H)[None, :]
        trial = np.arange(self.n)[:, None]
        s, a, s_next = states[:, :-1], actions, states[:, 1:]
        x = self.user_features(h, s, a)
        weighted_x = w[:, :, None] * x
        self.raw_gram += weighted_x[:, :, :, None] * x[:, :, None, :]
        self.next_state_sums[trial, h, :, s_next] += weighted_x
        self.count += 1

    def end_episode_empty(self) -> None:
        """An empty slot in every trial (add/remove-one): the episode passes, nothing is added to any sum."""
        self.count += 1
