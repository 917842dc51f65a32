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

Sensitivities and accounting (:func:`ldp_ucrl_vtr_schedule`, ``sensitivity_model``). Local DP
compares any two inputs of one user (replace-one). L is the environment's bound on
‖Σ_{s′}ψ(s′|s,a)V(s′)‖ for V ∈ [0, 1]^S.

* ``"standard"`` (the default) calibrates every stage for the largest range, V_{h+1} ∈ [0, H]:
  ‖φ_V‖ ≤ F = H·L, Δ_gram = √2·F² (Frobenius), Δ_target = 2·F·H (ℓ2). Each user sends 2H messages;
  :func:`dpverify.calibration.calibrate` gives each ρ0 = ρ/(2H).
* ``"staged"``: the agent caps its values at the value-to-go, so at 1-based stage h,
  V_{h+1} ∈ [0, H − h]. Stage h is calibrated for F_h = (H − h)·L and targets in [0, H − h]:
  Δ_gram(h) = √2·F_h², Δ_target(h) = 2·F_h·(H − h), each ((H − h)/H)² of the standard ones. At
  stage H, φ_V = Σψ·V_{H+1} = 0 and V_{H+1} = 0 make both messages exactly 0, and nothing is sent:
  2(H − 1) messages, ρ0 = ρ/(2(H − 1)) (docs/derivations.md, "LDP-UCRL-VTR stage by stage").

Either way the agent makes the assumptions true where the terms are formed: the targets are clipped
to each stage's range, and every ‖φ_V‖ is checked against its stage's bound before any message is
sent (a term above it raises: :func:`dpverify.agents.core.private.check_term_norms`). Every message
is released once with fresh noise, so every user's messages are (ε, δ)-DP in that user's data:
(ε, δ)-LDP. After any run the ledger accounts to exactly :meth:`LdpUcrlVtr.claimed_guarantee`.

Shift. After k messages the noise in Λ_{k,h} is a GOE matrix with entry std s_h√k, s_h the entry
std of stage h's Gram messages (one s for every stage under the standard model), so
r_{k,h} = shift_multiplier · s_h√k · (2√(2d) + 2√(log(2HK/p)))
(:func:`dpverify.agents.core.noise_bounds.goe_norm_bound`) bounds its operator norm w.p. ≥ 1 − p/(2HK);
a stage that sends nothing has no noise and no shift. Liao et al. 2021 uses a fixed r of the same
order (Shariff & Sheffet 2018) — we let it grow with k (a documented choice: tighter early on, same
order at k = K). If the shifted matrix ever has an eigenvalue below λ, its eigenvalues are floored
at λ (post-processing, counted).

Confidence radius:
β_{k,h} = beta_multiplier · β_{k,h}^{UCRL} + privacy_beta_multiplier · β^{L}_{k,h}, where
β_{k,h}^{UCRL} is the non-private UCRL-VTR radius of :func:`dpverify.agents.nonprivate.ucrl_vtr.theory_beta`
(targets in [0, H], ‖φ_V‖ ≤ H·L, ‖θ_h‖ ≤ √d) evaluated with stage h's shifted regulariser
λ + r_{k−1,h} (its √(λ + r)·‖θ‖ term covers the bias the shift introduces, as in Shariff & Sheffet
2018's radius for shifted regularisers; one value for every stage under the standard model), and
β^{L} is Liao et al. 2021's radius (§4, with our 0-indexed h the paper's h + 1)
β^{L}_{k,h} = d^{3/4} (H − h)^{3/2} k^{1/4} log(dT/p) (log((H − h)/δ))^{1/4} √(1/ε), T = KH, whose
absolute constant c is ``privacy_beta_multiplier`` (a formula in (ε, δ), the same under both
models). Liao et al. 2021 states only the privacy term (it dominates at small ε); without the
non-private term the bonus vanishes as ε → ∞ and the agent stops exploring, so we keep both (a
documented deviation). Defaults (0.1 as UCRL-VTR; c = 10⁻³) were chosen so the agent learns on small
instances at generous ε; report them with the results.

Ties broken at random (a generator spawned from the agent's; noise from a second one). Per-episode
cost O(H(S²Ad + SAd² + d³)), independent of k.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from dpverify import _validate
from dpverify.calibration import NamedSchedule, ReleaseSchedule, StatisticSpec, schedule_count
from dpverify.errors import InvalidParameterError
from dpverify.ledger import user_pattern
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, Mechanism
from dpverify.neighbouring import Neighbouring
from dpverify.sensitivity import SumBound, gram_sum_sensitivity, vector_sum_sensitivity

from ..core.base import Trajectory
from ..core.billboard import Billboard
from ..core.noise_bounds import floored_inverse, goe_norm_bound
from ..core.planning import TIE_TOLERANCE, sample_greedy_actions
from ..core.private import (
    PrivateAgent,
    PrivateRegressionConfig,
    check_term_norms,
    require_mechanism,
)
from ..envs.linear_mdp import LinearMixtureMDP
from ..nonprivate.ucrl_vtr import theory_beta as ucrl_vtr_beta

_M = TypeVar("_M", bound=Mechanism)

DEFAULT_BETA_MULTIPLIER = 0.1
DEFAULT_PRIVACY_BETA_MULTIPLIER = 1e-3
#: The sensitivity models of the messages (module docstring): every stage calibrated for the largest
#: range (F = H·L, targets in [0, H]), or each stage for its own (F_h = (H − h)·L, targets in
#: [0, H − h]; nothing sent at stage H).
SENSITIVITY_MODELS: tuple[str, ...] = ("standard", "staged")


@dataclass(frozen=True)
class LdpUcrlVtrConfig(PrivateRegressionConfig):
    """Hyper-parameters of LDP-UCRL-VTR (module docstring).

    Attributes (besides :class:`~dpverify.agents.core.private.PrivateAgentConfig`'s; K enters T = KH in β and the
    shift's union bound; (ε, δ) is the per-user LDP target; p is the "α" of Liao et al. 2021's β):
        feature_norm_bound: L, the bound on ‖Σψ(s′|s,a)V(s′)‖ for V ∈ [0, 1]^S that the sensitivities
            assume (F = H·L); the environment's ``feature_norm_bound`` must not exceed it.
        beta_multiplier: multiplier of the non-private UCRL-VTR radius (default 0.1, as UCRL-VTR).
        privacy_beta_multiplier: c of Liao et al. 2021's β (default 1e-3).
        regularization: λ (Liao et al. 2021: Λ_1 = λI).
        sensitivity_model: "standard" (every stage at F = H·L, targets in [0, H]) or "staged"
            (stage h at F_h = (H − h)·L, targets in [0, H − h], no message at stage H; H ≥ 2):
            module docstring.
    """

    beta_multiplier: float = DEFAULT_BETA_MULTIPLIER
    privacy_beta_multiplier: float = DEFAULT_PRIVACY_BETA_MULTIPLIER
    sensitivity_model: str = "standard"

    def __post_init__(self) -> None:
        super().__post_init__()
        _validate.one_of("sensitivity_model", self.sensitivity_model, SENSITIVITY_MODELS)


def stage_bounds(horizon: int, feature_norm: float,
                 sensitivity_model: str) -> tuple[np.ndarray, np.ndarray]:
    """(F_h, B_h) for the 0-based stages h = 0 … H − 1: the bounds on ‖φ_V‖ and on the targets
    V_{h+1} that stage h's messages are calibrated for, ``feature_norm`` being F = H·L (module
    docstring).

    ``"standard"``: (F, H) at every stage. ``"staged"``: V_{h+1} ∈ [0, H − h − 1] (the values are
    capped at the value-to-go), so (F·(H − h − 1)/H, H − h − 1) = ((H − h − 1)·L, H − h − 1), and
    (0, 0) at the last stage, which sends nothing.
    """
    H = float(horizon)
    if sensitivity_model == "standard":
        return np.full(horizon, float(feature_norm)), np.full(horizon, H)
    to_go = H - 1.0 - np.arange(horizon, dtype=float)  # V_{h+1} ≤ H − h − 1
    return feature_norm * to_go / H, to_go


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


def user_statistics(values: np.ndarray, value_features: np.ndarray, trajectory: Trajectory,
                    target_caps: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """User k's raw statistics (Liao et al. 2021 ΔΛ̃_h = φ_Vφ_Vᵀ, Δũ_h = φ_V·V_{h+1}(s_{h+1})): shapes (H, d, d), (H, d).

    Stage h's targets are clipped to [0, ``target_caps[h]``] (default [0, H]; the staged model's
    [0, H − h − 1], 0-based h). They already lie in [0, H − h − 1]; the clip makes the sensitivity
    assumption hold by construction.
    """
    horizon = value_features.shape[0]
    h = np.arange(horizon)
    s, a, s_next = trajectory.states[:-1], trajectory.actions, trajectory.states[1:]
    x = value_features[h, s, a]
    y = np.clip(values[h + 1, s_next], 0.0, float(horizon) if target_caps is None else target_caps)
    return x[:, :, None] * x[:, None, :], x * y[:, None]


def stage_inverses(gram: np.ndarray, regularization: float,
                   sending: Sequence[int]) -> tuple[np.ndarray, int]:
    """(Σ⁻¹, corrections) for the shifted Gram matrices Σ of every stage, shape (..., H, d, d), with
    eigenvalues floored at λ (:func:`dpverify.agents.core.noise_bounds.floored_inverse`). A stage outside
    ``sending`` (0-based) receives no messages and has no shift, so Σ = λI and Σ⁻¹ = I/λ exactly: it
    is set apart, and the others keep their Cholesky path (a floored inverse does not depend on the
    stack it is computed in)."""
    horizon = gram.shape[-3]
    if len(sending) == horizon:
        inverse, _, corrections = floored_inverse(gram, regularization)
        return inverse, corrections
    inverse = np.broadcast_to(np.eye(gram.shape[-1]) / regularization, gram.shape).copy()
    stages = list(sending)
    part, _, corrections = floored_inverse(gram[..., stages, :, :], regularization)
    inverse[..., stages, :, :] = part
    return inverse, corrections


class LdpServer:
    """The server of LDP-UCRL-VTR: sums privatised messages, shifts stage h by r_hI, broadcasts
    (module docstring).

    ``gram_entry_stds`` holds the GOE entry std of each stage's Gram messages (H values; 0 for a
    stage whose users send nothing, whose sums stay 0 and which gets no shift: Σ = λI there)."""

    def __init__(self, horizon: int, dim: int, regularization: float,
                 gram_entry_stds: Sequence[float], shift_multiplier: float,
                 failure_probability: float, num_episodes: int) -> None:
        self.horizon, self.dim = horizon, dim
        self.regularization = regularization
        self.gram_entry_stds = tuple(float(s) for s in gram_entry_stds)
        if len(self.gram_entry_stds) != horizon:
            raise InvalidParameterError("gram_entry_stds",
                                        f"must hold one std per stage ({horizon})",
                                        len(self.gram_entry_stds))
        self.sending = tuple(h for h, s in enumerate(self.gram_entry_stds) if s > 0)
        self.shift_multiplier = shift_multiplier
        self._p = failure_probability / (2.0 * horizon * num_episodes)
        self.gram_sums = np.zeros((horizon, dim, dim))
        self.target_sums = np.zeros((horizon, dim))
        self.messages = 0
        self.psd_corrections = 0
        self.shift = np.zeros(horizon)

    def receive(self, gram_messages: np.ndarray, target_messages: np.ndarray) -> None:
        """Add one user's privatised messages (line 20)."""
        self.gram_sums += gram_messages
        self.target_sums += target_messages
        self.messages += 1

    def shift_for(self, messages: int) -> np.ndarray:
        """r_h after ``messages`` messages, per stage (H,): the GOE noise-norm bound for entry std
        s_h·√messages (× multiplier); 0 for a stage without noise."""
        if messages == 0:
            return np.zeros(self.horizon)
        root = math.sqrt(messages)
        return np.array([self.shift_multiplier * goe_norm_bound(s * root, self.dim, self._p)
                         for s in self.gram_entry_stds])

    def broadcast(self, episode: int, beta: np.ndarray) -> Broadcast:
        """Σ_{k,h} = (λ + r_h)I + Λ_{k−1,h}, θ̂ = Σ⁻¹ u (line 21), for user ``episode``."""
        self.shift = self.shift_for(self.messages)
        gram = self.gram_sums + (self.regularization + self.shift)[:, None, None] * np.eye(self.dim)
        inverse, corrections = stage_inverses(gram, self.regularization, self.sending)
        self.psd_corrections += corrections
        theta = np.einsum("hij,hj->hi", inverse, self.target_sums)
        return Broadcast(episode, inverse, theta, beta)


class LdpUcrlVtr(PrivateAgent):
    """LDP-UCRL-VTR on a finite :class:`~dpverify.agents.envs.linear_mdp.LinearMixtureMDP` (module docstring).

    Args:
        mdp: the linear mixture MDP (basis ψ and rewards known to users).
        config: :class:`LdpUcrlVtrConfig`.
        rng: the agent's generator; two generators are spawned from it (noise, tie-breaking).
        billboard: optionally a :class:`~dpverify.agents.core.billboard.Billboard` (e.g. ``keep_history=True`` so audits
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
        # Stage h's bounds on ‖φ_V‖ and on its targets (0-based h; module docstring), enforced
        # where the terms are formed: targets clipped to [0, target_caps[h]], norms checked before
        # anything is sent.
        self.value_feature_bounds, self.target_caps = stage_bounds(H, H * config.feature_norm_bound,
                                                                   config.sensitivity_model)
        self.noise_rng, self.tie_rng = rng.spawn(2)
        # Each stage's two mechanisms (None where the schedule releases nothing: the staged model's
        # stage H, whose messages are exactly 0); one for every stage under the standard model.
        released = set(self.calibration.released_stages("gram"))
        self.released_stages = tuple(h for h in range(H) if h + 1 in released)
        self.gram_mechanisms: tuple[GOEMechanism | None, ...] = tuple(
            self._stage_mechanism("gram", h, GOEMechanism) if h in self.released_stages else None
            for h in range(H))
        self.target_mechanisms: tuple[GaussianMechanism | None, ...] = tuple(
            self._stage_mechanism("target", h, GaussianMechanism)
            if h in self.released_stages else None
            for h in range(H))
        stds = [0.0 if m is None else m.entry_std for m in self.gram_mechanisms]
        self.server = LdpServer(H, d, config.regularization, stds, config.shift_multiplier,
                                config.failure_probability, config.num_episodes)
        self.episode = 0
        self.broadcast: Broadcast | None = None
        self.values = np.zeros((H + 1, S))
        self.value_features = np.zeros((H, S, A, d))
        self.q = np.zeros((H, S, A))

    def _stage_mechanism(self, family: str, h: int, kind: type[_M]) -> _M:
        """The calibrated mechanism of ``family`` at 0-based stage h, checked to be a ``kind``."""
        return require_mechanism(self.calibration.mechanism(family, h + 1), kind, family)

    def release_schedule(self, mdp: LinearMixtureMDP, config: LdpUcrlVtrConfig) -> ReleaseSchedule:
        """Each user's messages (Liao et al. 2021 lines 13–14) under the config's sensitivity model:
        2H at the value-feature bound F = H·L, or 2(H − 1) at each stage's own bound (module
        docstring)."""
        return ldp_ucrl_vtr_schedule(mdp.horizon, config.num_episodes, mdp.dim, config.relation,
                                     feature_norm=mdp.horizon * config.feature_norm_bound,
                                     sensitivity_model=config.sensitivity_model)

    def message_labels(self) -> list[tuple[str, int, Mechanism]]:
        """User k's messages in the order they are sent: per released stage a Gram message, then a
        target message, each with that stage's mechanism."""
        labels: list[tuple[str, int, Mechanism]] = []
        for h in self.released_stages:
            gram, target = self.gram_mechanisms[h], self.target_mechanisms[h]
            if gram is None or target is None:
                raise InvalidParameterError("stage", "must have both mechanisms where it sends",
                                            h + 1)
            labels += [("gram", h + 1, gram), ("target", h + 1, target)]
        return labels

    def nonprivate_beta(self, episode: int) -> np.ndarray:
        """UCRL-VTR's β_k (:func:`dpverify.agents.nonprivate.ucrl_vtr.theory_beta`, θ bound √d) after
        ``episode`` − 1 messages, with each stage's shifted regulariser λ + r_{k−1,h} in place of λ
        (module docstring): shape (H,), one value for every stage under the standard model."""
        c = self.config
        messages = max(episode - 1, 0)
        shifts = self.server.shift_for(messages).tolist()
        by_shift = {shift: ucrl_vtr_beta(messages, self.dim, self.horizon,
                                         self.mdp.feature_norm_bound, c.regularization + shift,
                                         c.failure_probability, math.sqrt(self.dim))
                    for shift in set(shifts)}
        return np.array([by_shift[shift] for shift in shifts])

    def beta(self, episode: int) -> np.ndarray:
        """β_{k,h} for every stage (module docstring)."""
        c = self.config
        private = paper_beta(episode, self.dim, self.horizon, c.num_episodes, c.epsilon, c.delta, c.failure_probability)
        return c.beta_multiplier * self.nonprivate_beta(episode) + c.privacy_beta_multiplier * private

    def _per_stage(self, values: np.ndarray) -> float | list[float]:
        """A per-stage setting as reported: one number under the standard model (every stage's), one
        per stage under the staged one."""
        if self.config.sensitivity_model == "standard":
            return float(values[0])
        return [float(v) for v in values]

    def derived_settings(self) -> dict[str, Any]:
        final = max(self.episode, 1)
        return {
            "value_feature_bound": self._per_stage(self.value_feature_bounds),
            "shift_final": self._per_stage(self.server.shift_for(self.server.messages)),
            "beta_final": self.beta(final).tolist(),
            "nonprivate_theory_beta_final": self._per_stage(self.nonprivate_beta(final)),
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
        gram_raw, target_raw = user_statistics(self.values, self.value_features, trajectory,
                                               self.target_caps)
        h = np.arange(self.horizon)
        x = self.value_features[h, trajectory.states[:-1], trajectory.actions]
        check_term_norms(np.linalg.norm(x, axis=1), self.value_feature_bounds,
                               "value features φ_V")
        self._send(gram_raw, target_raw)

    def end_episode_without_data(self) -> None:
        """The no-data control's episode (:mod:`dpverify.agents.core.learning`): user k sends the messages of zero
        statistics — the randomizer's noise alone, drawn and recorded exactly as a user's — so the server's
        schedule, noise and shift are those of a run with users, and nothing of any user is in them."""
        self._send(np.zeros((self.horizon, self.dim, self.dim)), np.zeros((self.horizon, self.dim)))

    def _send(self, gram_raw: np.ndarray, target_raw: np.ndarray) -> None:
        """Publish the messages of the released stages; the server adds them (a stage that sends
        nothing adds 0)."""
        k = self.episode + 1
        stages = list(self.released_stages)
        raw = [value for h in stages for value in (gram_raw[h], target_raw[h])]
        messages = list(self.billboard.publish_block(k, self.message_labels(), raw, "current", self.noise_rng))
        gram, target = np.zeros_like(gram_raw), np.zeros_like(target_raw)
        gram[stages], target[stages] = np.stack(messages[0::2]), np.stack(messages[1::2])
        self.server.receive(gram, target)
        self.episode += 1


def ldp_ucrl_vtr_schedule(
    horizon: int,
    episodes: int,
    dim: int,
    relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
    feature_norm: float | None = None,
    sensitivity_model: str = "standard",
) -> ReleaseSchedule:
    """LDP-UCRL-VTR (Liao et al. 2021, Algorithm 1, lines 13–14): each user privatises its own statistics.

    User k sends, for each stage h, ΔΛ = φ_V φ_Vᵀ with a symmetric Gaussian matrix and Δu = φ_V·V(s′)
    with a Gaussian vector, where φ_V = Σ_{s′} φ(s′|s,a) V(s′). Local DP compares any two inputs of
    one user (replacement; add/remove: one term): for ‖φ_V‖₂ ≤ F and V ∈ [0, B] the sensitivities
    are √2·F² (Frobenius) and 2·F·B (ℓ2) (:func:`dpverify.sensitivity.gram_sum_sensitivity`,
    :func:`~dpverify.sensitivity.vector_sum_sensitivity`). Each user's releases compose; users do
    not compose with each other (each release touches its own user only).

    ``"standard"``: F (``feature_norm``; H by default, the standard linear-mixture bound for
        V ∈ [0, H]) and B = H at every stage: 2H releases per user, √2·F² and 2·F·H.
    ``"staged"``: at 1-based stage h the values V_{h+1} lie in [0, H − h] (the agent caps them at
        the value-to-go), so F_h = (H − h)·F/H and B_h = H − h: sensitivities √2·F_h² and
        2·F_h·(H − h), each ((H − h)/H)² of the standard ones, one statistic per stage (``gram@h``,
        ``target@h``); stage H, whose φ_V and target are exactly 0, releases nothing: 2(H − 1)
        releases per user (H ≥ 2). With one ρ0 for every release, stage h's noise is
        ((H − h)/H)²·√((H − 1)/H) of the standard model's (docs/derivations.md, "LDP-UCRL-VTR stage
        by stage").
    """
    model = _validate.one_of("sensitivity_model", sensitivity_model, SENSITIVITY_MODELS)
    horizon = schedule_count("horizon", horizon, 2 if model == "staged" else 0)  # staged: two messages a stage
    episodes = schedule_count("episodes", episodes)
    dim = schedule_count("dim", dim)
    relation = Neighbouring.parse(relation)
    H = float(horizon)
    F = H if feature_norm is None else _validate.positive("feature_norm", feature_norm)
    stats: tuple[StatisticSpec, ...]
    if model == "standard":
        stats = _message_specs(dim, F, H, relation, None)
        assumptions = (
            f"‖φ_V(s,a)‖₂ ≤ {F:g} (φ_V = Σ φ(s′|s,a)V(s′), V ∈ [0, H])",
            "targets V(s′) clipped to [0, H]",
        )
    else:
        if horizon < 2:
            raise InvalidParameterError(
                "horizon", "must be >= 2 under the staged sensitivity model (at H = 1 every "
                "message is exactly 0 and nothing is released)", horizon)
        bounds, caps = stage_bounds(horizon, F, model)
        stats = tuple(spec for h in range(1, horizon)
                      for spec in _message_specs(dim, float(bounds[h - 1]), float(caps[h - 1]),
                                                 relation, (h, h)))
        assumptions = (
            f"‖φ_V(s,a)‖₂ ≤ {F:g}·(H − h)/H at stage h (φ_V = Σ φ(s′|s,a)V_{{h+1}}(s′), "
            "V_{h+1} ∈ [0, H − h]), checked at run time",
            "targets V_{h+1}(s′) of stage h clipped to [0, H − h]; stage H sends nothing "
            "(V_{H+1} = 0: both messages are 0)",
        )
    return ReleaseSchedule(
        name="ldp-ucrl-vtr" if model == "standard" else "ldp-ucrl-vtr (staged sensitivities)",
        source="Liao et al. 2021, Algorithm 1 (lines 13–14) and Section 5",
        relation=relation,
        episodes=episodes,
        stages=horizon,
        statistics=stats,
        assumptions=(
            *assumptions,
            f"neighbouring relation: {relation.value} (local DP: any two inputs of one user)",
            "each user's releases touch only that user; fresh noise per release"
            + ("" if model == "standard" else " (2(H − 1) per user)"),
        ),
    )


def _message_specs(dim: int, feature_norm: float, target: float, relation: Neighbouring,
                   stages: tuple[int, int] | None) -> tuple[StatisticSpec, StatisticSpec]:
    """The Gram and target messages for ‖φ_V‖ ≤ ``feature_norm`` and targets in [0, ``target``],
    at ``stages`` (None: every stage)."""
    bound = SumBound(1.0, feature_norm, target)
    own = user_pattern("current")
    return (
        StatisticSpec("gram", "φ_V φ_Vᵀ of user k (Alg. 1 line 13)", "symmetric-matrix", dim,
                      gram_sum_sensitivity(bound, relation), own, stages),
        StatisticSpec("target", "φ_V·V(s′) of user k (Alg. 1 line 14)", "vector", dim,
                      vector_sum_sensitivity(bound, relation), own, stages),
    )


def _named_build(horizon: int, episodes: int, dim: int, model: str, relation: Neighbouring) -> ReleaseSchedule:
    return ldp_ucrl_vtr_schedule(horizon, episodes, dim, relation, sensitivity_model=model)


#: The schedule the registry card of ``ldp-ucrl-vtr`` offers to ``dpverify calibrate``: local DP,
#: F = H, under either sensitivity model (``--sensitivity standard|staged``; Liao et al. 2021 prints
#: no noise scale).
NAMED_SCHEDULE = NamedSchedule(name="ldp-ucrl-vtr", build=_named_build, models=SENSITIVITY_MODELS,
                               default_model="standard")
