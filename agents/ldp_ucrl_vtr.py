"""LDP-UCRL-VTR — UCRL-VTR under (ε, δ) local differential privacy (Liao et al. 2021, Algorithm 1).

Liao, He & Gu 2021, "Locally differentially private reinforcement learning for linear mixture Markov
decision processes" (§4). The protocol has two explicit parties:

* The **server** keeps, per stage h, only the sums of the privatised messages it received,
  Λ_{k,h} = Σ_{i≤k} (ΔΛ̃_{i,h}) and u_{k,h} = Σ_{i≤k} Δũ_{i,h} (Algorithm 1, line 20), shifts the matrix
  by rI to keep it positive definite (line 21; the shifted regulariser of Shariff & Sheffet 2018) and
  sends Σ_{k+1,h} = λI + rI + Λ_{k,h} and θ̂_{k+1,h} = Σ_{k+1,h}⁻¹ u_{k,h} to user k + 1
  (:meth:`LdpServer.broadcast`). It never sees a raw statistic.
* **User** k plans with the broadcast only (:func:`user_plan`: the optimistic value iteration of line 7
  with bonus β_h‖φ_V‖_{Σ⁻¹}), runs its episode, and computes its raw statistics
  ΔΛ_h = φ_Vφ_Vᵀ and Δu_h = φ_V·V_{h+1}(s_{h+1}), φ_V = Σ_{s′} ψ_h(s′|s_h, a_h) V_{h+1}(s′)
  (:func:`user_statistics`), then privatises them *before sending* (lines 13–14): a symmetric Gaussian
  matrix through :class:`dpverify.mechanisms.GOEMechanism` and a Gaussian vector through
  :class:`dpverify.mechanisms.GaussianMechanism`, published through the billboard with
  ``users="current"`` and ``episode=k``, so ``billboard.messages_of(k)`` is exactly what user k sent.

Sensitivities and accounting (:func:`ldp_ucrl_vtr_schedule`). Local DP compares any
two inputs of one user (replace-one). With V_{h+1} ∈ [0, H − h − 1] ⊂ [0, H] (values capped, targets
clipped) and the environment's bound L on ‖Σ_{s′}ψ(s′|s,a)V(s′)‖ for V ∈ [0, 1]^S, ‖φ_V‖ ≤ F = H·L
(checked at run time before every message): Δ_gram = √2·F² (Frobenius), Δ_target = 2·F·H (ℓ2). Each user
sends 2H messages, each released once with fresh noise; :func:`dpverify.calibration.calibrate` gives each
ρ0 = ρ/(2H) (exact conversion), so every user's messages are (ε, δ)-DP in that user's data: (ε, δ)-LDP.
After any run the ledger accounts to exactly :meth:`LdpUcrlVtr.claimed_guarantee`.

Shift. After k messages the noise in Λ_{k,h} is a GOE matrix with entry std s√k, so
r_k = shift_multiplier · s√k · (2√(2d) + 2√(log(2HK/p))) (:func:`dpverify.agents.noise_bounds.goe_norm_bound`)
bounds its operator norm w.p. ≥ 1 − p/(2HK); Liao et al. 2021 uses a fixed r of the same order (Shariff & Sheffet 2018)
— we let it grow with k (a documented choice: tighter early on, same order at k = K). If the shifted
matrix ever has an eigenvalue below λ, its eigenvalues are floored at λ (post-processing, counted).

Confidence radius: β_{k,h} = beta_multiplier · β_k + privacy_beta_multiplier · β^{L}_{k,h}, where β_k is
the non-private UCRL-VTR radius of :func:`dpverify.agents.ucrl_vtr.theory_beta` (targets in [0, H], ‖φ_V‖ ≤ H·L,
‖θ_h‖ ≤ √d) evaluated with the shifted regulariser λ + r_{k−1} (its √(λ + r)·‖θ‖ term covers the bias
the shift introduces, as in Shariff & Sheffet 2018's radius for shifted regularisers) and β^{L} is Liao et al.
2021's radius (§4, with our 0-indexed h the paper's h + 1)
β^{L}_{k,h} = d^{3/4} (H − h)^{3/2} k^{1/4} log(dT/p) (log((H − h)/δ))^{1/4} √(1/ε), T = KH, whose
absolute constant c is ``privacy_beta_multiplier``. Liao et al. 2021 states only the privacy term (it dominates
at small ε); without the non-private term the bonus vanishes as ε → ∞ and the agent stops exploring,
so we keep both (a documented deviation). Defaults (0.1 as UCRL-VTR; c = 10⁻³) were chosen so the agent
learns on small instances at generous ε; report them with the results.

Ties broken at random (a generator spawned from the agent's; noise from a second one). Per-episode
cost O(H(S²Ad + SAd² + d³)), independent of k.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.agents.base import Trajectory
from dpverify.agents.billboard import Billboard
from dpverify.agents.envs.linear_mdp import LinearMixtureMDP
from dpverify.agents.noise_bounds import floored_inverse, goe_norm_bound
from dpverify.agents.planning import TIE_TOLERANCE, sample_greedy_actions
from dpverify.agents.private import PrivateAgent, PrivateRegressionConfig, check_term_norms
from dpverify.agents.ucrl_vtr import theory_beta as ucrl_vtr_beta
from dpverify.calibration import NamedSchedule, ReleaseSchedule, StatisticSpec
from dpverify.errors import InvalidParameterError
from dpverify.ledger import user_pattern
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, Mechanism
from dpverify.neighbouring import Neighbouring
from dpverify.sensitivity import SumBound, gram_sum_sensitivity, vector_sum_sensitivity

DEFAULT_BETA_MULTIPLIER = 0.1
DEFAULT_PRIVACY_BETA_MULTIPLIER = 1e-3


@dataclass(frozen=True)
class LdpUcrlVtrConfig(PrivateRegressionConfig):
    """Hyper-parameters of LDP-UCRL-VTR (module docstring).

    Attributes (besides :class:`~dpverify.agents.private.PrivateAgentConfig`'s; K enters T = KH in β and the
    shift's union bound; (ε, δ) is the per-user LDP target; p is the "α" of Liao et al. 2021's β):
        feature_norm_bound: L, the bound on ‖Σψ(s′|s,a)V(s′)‖ for V ∈ [0, 1]^S that the sensitivities
            assume (F = H·L); the environment's ``feature_norm_bound`` must not exceed it.
        beta_multiplier: multiplier of the non-private UCRL-VTR radius (default 0.1, as UCRL-VTR).
        privacy_beta_multiplier: c of Liao et al. 2021's β (default 1e-3).
        regularization: λ (Liao et al. 2021: Λ_1 = λI).
    """

    beta_multiplier: float = DEFAULT_BETA_MULTIPLIER
    privacy_beta_multiplier: float = DEFAULT_PRIVACY_BETA_MULTIPLIER


def paper_beta(episode: int, dim: int, horizon: int, num_episodes: int, epsilon: float, delta: float,
               failure_probability: float) -> np.ndarray:
    """Liao et al. 2021's β for every 0-indexed stage h (module docstring), without the constant c: shape (H,)."""
    leading, log_steps = _paper_beta_factors(dim, horizon, delta)
    T = num_episodes * horizon
    return leading * max(episode, 1) ** 0.25 * math.log(dim * T / failure_probability) * log_steps / math.sqrt(epsilon)


@functools.cache
def _paper_beta_factors(dim: int, horizon: int, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """d^{3/4}(H − h + 1)^{3/2} and log((H − h + 1)/δ)^{1/4} of :func:`paper_beta` (read-only arrays)."""
    steps = horizon - np.arange(horizon, dtype=float)  # the paper's H − h + 1 with 1-indexed h
    leading, log_steps = dim**0.75 * steps**1.5, np.log(steps / delta) ** 0.25
    leading.flags.writeable = log_steps.flags.writeable = False
    return leading, log_steps


@dataclass(frozen=True, eq=False)
class Broadcast:
    """What the server sends to user k: Σ_{k,h}⁻¹ (H, d, d), θ̂_{k,h} (H, d) and the radii β_{k,h} (H,)."""

    episode: int
    gram_inverse: np.ndarray
    theta: np.ndarray
    beta: np.ndarray


def user_plan(mdp: LinearMixtureMDP, broadcast: Broadcast) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """User k's optimistic planning from the broadcast only (Liao et al. 2021 Algorithm 1, line 7).

    Returns (Q (H, S, A), V (H + 1, S) with V_H = 0 and V_h ∈ [0, H − h], φ_V (H, S, A, d) where
    φ_V[h] = Σ_{s′} ψ_h(s′|·,·) V_{h+1}(s′)).
    """
    H, S, A, d = mdp.horizon, mdp.num_states, mdp.num_actions, mdp.dim
    q = np.zeros((H, S, A))
    values = np.zeros((H + 1, S))
    value_features = np.zeros((H, S, A, d))
    for h in range(H - 1, -1, -1):
        x = mdp.value_features(h, values[h + 1])
        inverse = broadcast.gram_inverse[h]
        norms = np.sqrt(np.maximum(np.einsum("sad,de,sae->sa", x, inverse, x), 0.0))
        cap = float(H - h)
        q[h] = np.minimum(mdp.rewards[h] + x @ broadcast.theta[h] + broadcast.beta[h] * norms, cap)
        values[h] = np.clip(q[h].max(axis=-1), 0.0, cap)
        value_features[h] = x
    return q, values, value_features


def user_statistics(values: np.ndarray, value_features: np.ndarray,
                    trajectory: Trajectory) -> tuple[np.ndarray, np.ndarray]:
    """User k's raw statistics (Liao et al. 2021 ΔΛ̃_h = φ_Vφ_Vᵀ, Δũ_h = φ_V·V_{h+1}(s_{h+1})): shapes (H, d, d), (H, d).

    Targets are clipped to [0, H] (they already lie in [0, H − h − 1]; the clip makes the sensitivity
    assumption hold by construction).
    """
    horizon = value_features.shape[0]
    h = np.arange(horizon)
    s, a, s_next = trajectory.states[:-1], trajectory.actions, trajectory.states[1:]
    x = value_features[h, s, a]
    y = np.clip(values[h + 1, s_next], 0.0, float(horizon))
    return x[:, :, None] * x[:, None, :], x * y[:, None]


class LdpServer:
    """The server of LDP-UCRL-VTR: sums privatised messages, shifts by rI, broadcasts (module docstring)."""

    def __init__(self, horizon: int, dim: int, regularization: float, gram_entry_std: float,
                 shift_multiplier: float, failure_probability: float, num_episodes: int) -> None:
        self.horizon, self.dim = horizon, dim
        self.regularization = regularization
        self.gram_entry_std = gram_entry_std
        self.shift_multiplier = shift_multiplier
        self._p = failure_probability / (2.0 * horizon * num_episodes)
        self.gram_sums = np.zeros((horizon, dim, dim))
        self.target_sums = np.zeros((horizon, dim))
        self.messages = 0
        self.psd_corrections = 0
        self.shift = 0.0

    def receive(self, gram_messages: np.ndarray, target_messages: np.ndarray) -> None:
        """Add one user's privatised messages (line 20)."""
        self.gram_sums += gram_messages
        self.target_sums += target_messages
        self.messages += 1

    def shift_for(self, messages: int) -> float:
        """r after ``messages`` messages: the GOE noise-norm bound for entry std s·√messages (× multiplier)."""
        if messages == 0:
            return 0.0
        return self.shift_multiplier * goe_norm_bound(self.gram_entry_std * math.sqrt(messages), self.dim, self._p)

    def broadcast(self, episode: int, beta: np.ndarray) -> Broadcast:
        """Σ_{k,h} = (λ + r)I + Λ_{k−1,h}, θ̂ = Σ⁻¹ u (line 21), for user ``episode``."""
        self.shift = self.shift_for(self.messages)
        gram = self.gram_sums + (self.regularization + self.shift) * np.eye(self.dim)
        inverse, _, corrections = floored_inverse(gram, self.regularization)
        self.psd_corrections += corrections
        theta = np.einsum("hij,hj->hi", inverse, self.target_sums)
        return Broadcast(episode, inverse, theta, beta)


class LdpUcrlVtr(PrivateAgent):
    """LDP-UCRL-VTR on a finite :class:`~dpverify.agents.envs.linear_mdp.LinearMixtureMDP` (module docstring).

    Args:
        mdp: the linear mixture MDP (basis ψ and rewards known to users).
        config: :class:`LdpUcrlVtrConfig`.
        rng: the agent's generator; two generators are spawned from it (noise, tie-breaking).
        billboard: optionally a :class:`~dpverify.agents.billboard.Billboard` (e.g. ``keep_history=True`` so audits
            read every user's messages with ``messages_of``); its relation must equal the config's.
    """

    name = "ldp-ucrl-vtr"
    privacy_notion = "ldp"
    config_class = LdpUcrlVtrConfig
    mdp_type = LinearMixtureMDP
    config: LdpUcrlVtrConfig

    def __init__(self, mdp: LinearMixtureMDP, config: LdpUcrlVtrConfig, rng: np.random.Generator,
                 billboard: Billboard | None = None) -> None:
        self.set_up_privacy(mdp, config, rng, billboard)
        H, S, A, d = self.horizon, self.num_states, self.num_actions, self.dim
        self.value_feature_bound = H * config.feature_norm_bound
        self.noise_rng, self.tie_rng = rng.spawn(2)
        gram_mech, target_mech = self.mechanism("gram", GOEMechanism), self.mechanism("target", GaussianMechanism)
        self.gram_mechanism, self.target_mechanism = gram_mech, target_mech
        self.server = LdpServer(H, d, config.regularization, gram_mech.entry_std, config.shift_multiplier,
                                config.failure_probability, config.num_episodes)
        self.episode = 0
        self.broadcast: Broadcast | None = None
        self.values = np.zeros((H + 1, S))
        self.value_features = np.zeros((H, S, A, d))
        self.q = np.zeros((H, S, A))

    def release_schedule(self, mdp: LinearMixtureMDP, config: LdpUcrlVtrConfig) -> ReleaseSchedule:
        """Each user's 2H messages (Liao et al. 2021 lines 13–14), at the value-feature bound F = H·L."""
        return ldp_ucrl_vtr_schedule(mdp.horizon, config.num_episodes, mdp.dim, config.relation,
                                     feature_norm=mdp.horizon * config.feature_norm_bound)

    def message_labels(self) -> list[tuple[str, int, Mechanism]]:
        """User k's 2H messages in the order they are sent: per stage a Gram message, then a target message, each
        with the agent's mechanism."""
        return [(family, stage + 1, mechanism) for stage in range(self.horizon)
                for family, mechanism in (("gram", self.gram_mechanism), ("target", self.target_mechanism))]

    def nonprivate_beta(self, episode: int) -> float:
        """UCRL-VTR's β_k (:func:`dpverify.agents.ucrl_vtr.theory_beta`, θ bound √d) after ``episode`` − 1 messages,
        with the shifted regulariser λ + r_{k−1} in place of λ (module docstring)."""
        c = self.config
        messages = max(episode - 1, 0)
        regularization = c.regularization + self.server.shift_for(messages)
        return ucrl_vtr_beta(messages, self.dim, self.horizon, self.mdp.feature_norm_bound,
                             regularization, c.failure_probability, math.sqrt(self.dim))

    def beta(self, episode: int) -> np.ndarray:
        """β_{k,h} for every stage (module docstring)."""
        c = self.config
        private = paper_beta(episode, self.dim, self.horizon, c.num_episodes, c.epsilon, c.delta, c.failure_probability)
        return c.beta_multiplier * self.nonprivate_beta(episode) + c.privacy_beta_multiplier * private

    def derived_settings(self) -> dict[str, Any]:
        final = max(self.episode, 1)
        return {
            "value_feature_bound": self.value_feature_bound,
            "shift_final": self.server.shift_for(self.server.messages),
            "beta_final": self.beta(final).tolist(),
            "nonprivate_theory_beta_final": self.nonprivate_beta(final),
            "privacy_theory_beta_final": paper_beta(final, self.dim, self.horizon, self.config.num_episodes,
                                            self.config.epsilon, self.config.delta,
                                            self.config.failure_probability).tolist(),
            "psd_corrections": self.server.psd_corrections,
        }

    # ---- protocol ------------------------------------------------------------------------------------------

    def begin_episode(self) -> np.ndarray:
        """The server broadcasts to user k; user k plans from the broadcast alone."""
        k = self.episode + 1
        self.check_episode(k)
        self.broadcast = self.server.broadcast(k, self.beta(k))
        self.q, self.values, self.value_features = user_plan(self.mdp, self.broadcast)
        return sample_greedy_actions(self.q, self.tie_rng, TIE_TOLERANCE)

    def end_episode(self, trajectory: Trajectory | None) -> None:
        """User k privatises its statistics and sends them (lines 13–16); the server adds them (line 20)."""
        if trajectory is None:
            raise InvalidParameterError(
                "trajectory", "must be a Trajectory: a local-DP agent's claim is about one user's messages, so it has "
                "no empty slot (add/remove is not audited for local DP)", None)
        gram_raw, target_raw = user_statistics(self.values, self.value_features, trajectory)
        h = np.arange(self.horizon)
        x = self.value_features[h, trajectory.states[:-1], trajectory.actions]
        check_term_norms(np.linalg.norm(x, axis=1), self.value_feature_bound, "value features φ_V")
        self._send(gram_raw, target_raw)

    def end_episode_without_data(self) -> None:
        """The no-data control's episode (:mod:`dpverify.agents.learning`): user k sends the messages of zero
        statistics — the randomizer's noise alone, drawn and recorded exactly as a user's — so the server's
        schedule, noise and shift are those of a run with users, and nothing of any user is in them."""
        self._send(np.zeros((self.horizon, self.dim, self.dim)), np.zeros((self.horizon, self.dim)))

    def _send(self, gram_raw: np.ndarray, target_raw: np.ndarray) -> None:
        k = self.episode + 1
        raw = [value for h in range(self.horizon) for value in (gram_raw[h], target_raw[h])]
        messages = list(self.billboard.publish_block(k, self.message_labels(), raw, "current", self.noise_rng))
        self.server.receive(np.stack(messages[0::2]), np.stack(messages[1::2]))
        self.episode += 1


def ldp_ucrl_vtr_schedule(
    horizon: int,
    episodes: int,
    dim: int,
    relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
    feature_norm: float | None = None,
) -> ReleaseSchedule:
    """LDP-UCRL-VTR (Liao et al. 2021, Algorithm 1, lines 13–14): each user privatises its own statistics.

    User k sends, for each stage h, ΔΛ = φ_V φ_Vᵀ with a symmetric Gaussian matrix and Δu = φ_V·V(s′)
    with a Gaussian vector, where φ_V = Σ_{s′} φ(s′|s,a) V(s′). With ‖φ_V‖₂ ≤ F (F = H by default: the
    standard linear-mixture bound for V ∈ [0, H]) and V ∈ [0, H], local DP compares any two inputs of
    one user (replacement): sensitivities √2·F² (Frobenius) and 2·F·H (ℓ2). Each user's 2H releases
    compose; users do not compose with each other (each release touches its own user only).
    """
    horizon = _validate.integer("horizon", horizon, minimum=1)
    episodes = _validate.integer("episodes", episodes, minimum=1)
    dim = _validate.integer("dim", dim, minimum=1)
    relation = Neighbouring.parse(relation)
    H = float(horizon)
    F = H if feature_norm is None else _validate.positive("feature_norm", feature_norm)
    bound = SumBound(1.0, F, H)
    own = user_pattern("current")
    stats = (
        StatisticSpec(
            "gram", "φ_V φ_Vᵀ of user k (Alg. 1 line 13)", "symmetric-matrix", dim,
            gram_sum_sensitivity(bound, relation), own,
        ),
        StatisticSpec(
            "target", "φ_V·V(s′) of user k (Alg. 1 line 14)", "vector", dim,
            vector_sum_sensitivity(bound, relation), own,
        ),
    )
    return ReleaseSchedule(
        name="ldp-ucrl-vtr",
        source="Liao et al. 2021, Algorithm 1 (lines 13–14) and Section 5",
        relation=relation,
        episodes=episodes,
        stages=horizon,
        statistics=stats,
        assumptions=(
            f"‖φ_V(s,a)‖₂ ≤ {F:g} (φ_V = Σ φ(s′|s,a)V(s′), V ∈ [0, H])",
            "targets V(s′) clipped to [0, H]",
            f"neighbouring relation: {relation.value} (local DP: any two inputs of one user)",
            "each user's releases touch only that user; fresh noise per release",
        ),
    )


def _named_build(horizon: int, episodes: int, dim: int, model: str, relation: Neighbouring) -> ReleaseSchedule:
    return ldp_ucrl_vtr_schedule(horizon, episodes, dim, relation)


#: The schedule the registry card of ``ldp-ucrl-vtr`` offers to ``dpverify calibrate`` (one model: local DP,
#: F = H; Liao et al. 2021 prints no noise scale).
NAMED_SCHEDULE = NamedSchedule(name="ldp-ucrl-vtr", build=_named_build, models=("ldp",), default_model="ldp")
