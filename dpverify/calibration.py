"""Noise calibration for a target (ε, δ): release schedules and the one-sided calibrator.

A :class:`ReleaseSchedule` lists the statistic families an algorithm releases (each with its
sensitivity, shape and which users each release touches) over K episodes and H stages.
:func:`calibrate` finds, for a target (ε, δ) and a conversion (``exact``, ``cks``, ``bun-steinke``):

1. the largest ρ whose conversion meets (ε, δ) (:func:`dpverify.conversions.rho_for_epsilon_delta`);
2. the per-release ρ0 = ρ / n, where n is the number of releases that touch the worst user
   (``accounting="per-user"``) or all releases (``"naive"``, the papers' 4HK);
3. the noise of every family: σ = Δ/√(2ρ0) for a Gaussian vector, s = Δ_F/(2√ρ0) for GOE;
4. a re-check: the calibrated mechanisms are entered in a :class:`~dpverify.ledger.PrivacyLedger`
   and accounted again; the result must give ε ≤ target (and within 1e-9 relative of it), or the
   calibrator fails loudly. Noise is rounded up, ρ0 down: the error is always on the safe side.

Built-in schedules: :func:`dp_lsvi_ucbpp_schedule` (Sahu 2025, Algorithm 1) with the "paper" or the
"derived" sensitivity model, and :func:`ldp_ucrl_vtr_schedule` (Liao et al. 2021, Algorithm 1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from dpverify import _validate
from dpverify.conversions import CONVERSION_REGISTRY, get_conversion, rho_for_epsilon_delta
from dpverify.errors import InvalidParameterError, NumericalError
from dpverify.ledger import ACCOUNTING_MODES, PrivacyLedger, ToeplitzFactor, UserPattern, user_pattern
from dpverify.mechanisms import GaussianMechanism, Mechanism, mechanism_for_statistic
from dpverify.neighbouring import Neighbouring
from dpverify.numerics import round_down, round_up
from dpverify.sensitivity import SumBound, gram_sum_sensitivity, vector_sum_sensitivity

SENSITIVITY_MODELS: tuple[str, ...] = ("paper", "derived")
SCHEDULES: tuple[str, ...] = ("dp-lsvi-ucb++", "ldp-ucrl-vtr")  #: the built-in schedules below



#: The calibrated ε must be within this relative distance below the target.
ROUND_TRIP_TOLERANCE = 1e-9


@dataclass(frozen=True)
class StatisticSpec:
    """One statistic family of a schedule: released at every (episode, stage) of the schedule.

    Attributes:
        family: short machine name (ledger family).
        description: what is summed, with the paper's line.
        kind: the ``statistic_kind`` of a registered mechanism (:data:`dpverify.mechanisms.MECHANISMS`): "vector"
            (Gaussian mechanism, ℓ2 sensitivity) or "symmetric-matrix" (GOE, Frobenius).
        dim: d (vector length or matrix side).
        sensitivity: ℓ2 or Frobenius sensitivity under the schedule's relation.
        users: which users each release touches: a :class:`~dpverify.ledger.UserPattern` or its name
            ("prefix", "current", "tree"), stored as the pattern.
    """

    family: str
    description: str
    kind: str
    dim: int
    sensitivity: float
    users: UserPattern | str

    def __post_init__(self) -> None:
        mechanism_for_statistic(self.kind)  # raises InvalidParameterError("kind", ...) if none is registered
        object.__setattr__(self, "dim", _validate.integer("dim", self.dim, minimum=1))
        object.__setattr__(self, "sensitivity", _validate.positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "users", user_pattern(self.users))

    def mechanism_with_noise(self, noise: float, relation: Neighbouring) -> Mechanism:
        """The registered mechanism of this statistic's kind with the given noise scale."""
        return mechanism_for_statistic(self.kind).build(self.sensitivity, noise, self.dim, relation)

    def mechanism_for_rho(self, rho0: float, relation: Neighbouring) -> Mechanism:
        """The mechanism of this statistic whose per-release cost is at most ρ0 (noise rounded up
        until the mechanism's own, rounded-up, ρ is ≤ ρ0)."""
        cls = mechanism_for_statistic(self.kind)
        std = cls.noise_for_rho(self.sensitivity, rho0)
        mechanism = self.mechanism_with_noise(round_up(std, 2), relation)
        for _ in range(64):
            if mechanism.rho <= rho0:
                return mechanism
            std = round_up(std, 4)
            mechanism = self.mechanism_with_noise(std, relation)
        raise NumericalError(  # pragma: no cover
            f"could not round the noise of {self.family!r} to meet rho0 = {rho0!r}"
        )


@dataclass(frozen=True)
class ReleaseSchedule:
    """What an algorithm releases over K episodes × H stages, under one neighbouring relation."""

    name: str
    source: str
    relation: Neighbouring
    episodes: int
    stages: int
    statistics: tuple[StatisticSpec, ...]
    assumptions: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "relation", Neighbouring.parse(self.relation))
        object.__setattr__(self, "episodes", _validate.integer("episodes", self.episodes, minimum=1))
        object.__setattr__(self, "stages", _validate.integer("stages", self.stages, minimum=1))
        if not self.statistics:
            raise InvalidParameterError("statistics", "must not be empty", self.statistics)
        families = [s.family for s in self.statistics]
        if len(set(families)) != len(families):
            raise InvalidParameterError("statistics", "must have distinct family names", families)

    def ledger(self, mechanisms: Mapping[str, Mechanism]) -> PrivacyLedger:
        """The ledger of the whole schedule with the given mechanism per family."""
        ledger = PrivacyLedger(self.relation)
        for spec in self.statistics:
            ledger.record_block(spec.family, (1, self.episodes), (1, self.stages), mechanisms[spec.family], spec.users)
        return ledger

    def release_counts(self) -> tuple[int | float, int]:
        """(releases touching the worst user, all releases), counted with a unit-cost ledger. A pattern that weighs
        users (:class:`~dpverify.ledger.ToeplitzFactor`) makes the first a weighted count, a float (never rounded
        down); otherwise it is an integer."""
        unit = {s.family: GaussianMechanism(1.0, math.sqrt(0.5), 1, self.relation) for s in self.statistics}  # ρ = 1
        ledger = self.ledger(unit)
        weighted = ledger.worst_user()[1]  # without a per-user array: any number of episodes
        if any(isinstance(s.users, ToeplitzFactor) for s in self.statistics):
            return weighted, ledger.n_releases
        return int(round(weighted)), ledger.n_releases


@dataclass(frozen=True)
class CalibratedStatistic:
    """A statistic family with its calibrated mechanism.

    ``noise_std`` is σ per coordinate for a vector, and the entry std s of Z (the GOE noise is
    (Z + Zᵀ)/√2) for a symmetric matrix.
    """

    spec: StatisticSpec
    mechanism: Mechanism
    noise_std: float


@dataclass(frozen=True)
class Calibration:
    """The answer of :func:`calibrate`, re-checked by accounting.

    Attributes:
        rho: the ρ-zCDP budget meeting (ε, δ) under ``conversion``.
        rho0: the per-release budget ρ / releases_counted.
        releases_counted: releases touching the worst user (per-user; weighted by c² for a Toeplitz factor) or all
            releases (naive).
        total_releases: all releases of the schedule.
        accounted_epsilon: ε obtained by accounting the calibrated mechanisms (≤ target_epsilon).
    """

    schedule: ReleaseSchedule
    target_epsilon: float
    delta: float
    conversion: str
    accounting: str
    rho: float
    rho0: float
    releases_counted: int | float
    total_releases: int
    statistics: tuple[CalibratedStatistic, ...]
    accounted_epsilon: float

    def mechanism(self, family: str) -> Mechanism:
        for s in self.statistics:
            if s.spec.family == family:
                return s.mechanism
        raise InvalidParameterError("family", f"must be one of {[s.spec.family for s in self.statistics]}", family)

    def ledger(self) -> PrivacyLedger:
        """The schedule's ledger with the calibrated mechanisms."""
        return self.schedule.ledger({s.spec.family: s.mechanism for s in self.statistics})


def calibrate(
    schedule: ReleaseSchedule,
    epsilon: float,
    delta: float,
    conversion: str = "exact",
    accounting: str = "per-user",
) -> Calibration:
    """Noise for every statistic of ``schedule`` so that the whole run is (ε, δ)-DP.

    Every release gets the same ρ0 (as in Sahu 2025 §3). One-sided: the returned mechanisms account to
    ε ≤ target, within :data:`ROUND_TRIP_TOLERANCE` relative; otherwise NumericalError.
    """
    epsilon = _validate.positive("epsilon", epsilon)
    delta = _validate.open_unit("delta", delta)
    conversion = get_conversion(conversion).name
    accounting = _validate.one_of("accounting", accounting, ACCOUNTING_MODES)
    rho = rho_for_epsilon_delta(epsilon, delta, conversion)
    worst, total = schedule.release_counts()
    counted = worst if accounting == "per-user" else total
    if counted == 0:
        raise InvalidParameterError(
            "schedule", "must release at least one statistic that touches a user", schedule.name
        )
    rho0 = round_down(rho / counted, 2)
    for _ in range(64):
        stats = tuple(
            CalibratedStatistic(spec, m, m.noise_scale)
            for spec in schedule.statistics
            for m in [spec.mechanism_for_rho(rho0, schedule.relation)]
        )
        ledger = schedule.ledger({s.spec.family: s.mechanism for s in stats})
        accounted = ledger.guarantee(delta, conversion, accounting).epsilon
        if accounted <= epsilon:
            break
        rho0 = round_down(rho0, 8)  # rounding in the per-user sum pushed ε a hair over: step down
    else:  # pragma: no cover
        raise NumericalError("calibration could not meet the target epsilon")
    if accounted < epsilon * (1.0 - ROUND_TRIP_TOLERANCE):
        raise NumericalError(
            f"calibration is looser than it should be: accounted epsilon {accounted!r} < target {epsilon!r}"
        )
    return Calibration(schedule, epsilon, delta, conversion, accounting, rho, rho0, counted, total, stats, accounted)


# --------------------------------------------------------------------------------------------
# Built-in schedules


@dataclass(frozen=True)
class DpLsviUcbPlusPlusSetting:
    """The validated arguments of the DP-LSVI-UCB++ schedules (:func:`dp_lsvi_ucbpp_schedule` and the
    tree-aggregated :func:`dpverify.agents.dp_lsvi_ucb_pp_tree.dp_lsvi_ucbpp_tree_schedule`) and the per-user
    weight bound they imply (Sahu 2025, Algorithm 1 line 25 and Appendix A). Build it with
    :func:`dp_lsvi_ucbpp_setting`."""

    horizon: int
    episodes: int
    dim: int
    num_states: int | None
    model: str
    relation: Neighbouring
    feature_norm: float

    @property
    def weight(self) -> float:
        """W ≥ σ̄⁻²: 1 under ``"paper"`` (Appendix A), 1/H² under ``"derived"`` (σ̄ ≥ H, line 25)."""
        H = float(self.horizon)
        return 1.0 if self.model == "paper" else 1.0 / (H * H)

    @property
    def weight_rule(self) -> str:
        """Why the weight bound holds, for the schedule's assumptions."""
        return "σ̄⁻² ≤ 1 (paper, Appendix A)" if self.model == "paper" else "σ̄⁻² ≤ 1/H² because σ̄ ≥ H (Alg. 1 line 25)"


def dp_lsvi_ucbpp_setting(
    horizon: int,
    episodes: int,
    dim: int,
    sensitivity_model: str,
    relation: Neighbouring | str,
    feature_norm: float,
    num_states: int | None = None,
) -> DpLsviUcbPlusPlusSetting:
    """Validate the arguments of a DP-LSVI-UCB++ schedule (``num_states`` only where the schedule needs it)."""
    horizon = _validate.integer("horizon", horizon, minimum=1)
    episodes = _validate.integer("episodes", episodes, minimum=1)
    dim = _validate.integer("dim", dim, minimum=1)
    if num_states is not None:
        num_states = _validate.integer("num_states", num_states, minimum=1)
    model = _validate.one_of("sensitivity_model", sensitivity_model, SENSITIVITY_MODELS)
    relation = Neighbouring.parse(relation)
    feature_norm = _validate.positive("feature_norm", feature_norm)
    return DpLsviUcbPlusPlusSetting(horizon, episodes, dim, num_states, model, relation, feature_norm)


def dp_lsvi_ucbpp_schedule(
    horizon: int,
    episodes: int,
    dim: int,
    sensitivity_model: str = "derived",
    relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
    feature_norm: float = 1.0,
) -> ReleaseSchedule:
    """DP-LSVI-UCB++ (Sahu 2025, Algorithm 1): per (k, h) three d-vectors and one d×d Gram matrix.

    Each release at episode k sums over users i = 1..k−1 (lines 6–8; the Gram matrix Λ̃_{k,h},
    line 26), with fresh noise at every release (the printed algorithm reuses one draw, which is not
    private: docs/derivations.md, "Reused noise is not private"). Per-user term bounds
    (docs/derivations.md, "Sensitivities of the released sums"):

    ``paper`` (Appendix A, proof of Theorem A.1): weight σ̄⁻² ≤ 1, ‖φ‖ ≤ 1, V ∈ [0, H] ⇒ under
        replacement 2H, 2H, 2H² for the vectors (as the paper states) and √2 for the Gram matrix in
        Frobenius norm (the paper's GOE noise s² = 1/(4ρ0) corresponds to 1: an add/remove bound).
    ``derived``: σ̄ ≥ H (line 25) so σ̄⁻² ≤ 1/H², ‖φ‖ ≤ 1, V clipped to [0, H] ⇒ under replacement
        2/H, 2/H, 2 and √2/H² — H² smaller.

    ``feature_norm`` scales every bound (F for vectors, F² for the Gram matrix) for agents whose
    features are not normalised.
    """
    setting = dp_lsvi_ucbpp_setting(horizon, episodes, dim, sensitivity_model, relation, feature_norm)
    horizon, episodes, dim, model = setting.horizon, setting.episodes, setting.dim, setting.model
    relation, feature_norm, weight = setting.relation, setting.feature_norm, setting.weight
    H = float(horizon)
    value = SumBound(weight, feature_norm, H)
    square = SumBound(weight, feature_norm, H * H)
    prefix = user_pattern("prefix")
    vector, square_vector = vector_sum_sensitivity(value, relation), vector_sum_sensitivity(square, relation)
    gram = gram_sum_sensitivity(value, relation)
    stats = (
        StatisticSpec("w_hat", "Σ σ̄⁻² φ·V̂ (Alg. 1 line 6)", "vector", dim, vector, prefix),
        StatisticSpec("w_check", "Σ σ̄⁻² φ·V̌ (Alg. 1 line 7)", "vector", dim, vector, prefix),
        StatisticSpec("w_bar", "Σ σ̄⁻² φ·V̂² (Alg. 1 line 8)", "vector", dim, square_vector, prefix),
        StatisticSpec("gram", "Σ σ̄⁻² φφᵀ (Alg. 1 line 26, GOE)", "symmetric-matrix", dim, gram, prefix),
    )
    assumptions = (
        f"per-user weight {setting.weight_rule}",
        f"‖φ(s,a)‖₂ ≤ {feature_norm:g}, checked at run time",
        "regression targets V̂, V̌ clipped to [0, H] (so V̂² ∈ [0, H²])",
        f"neighbouring relation: {relation.value}",
        "fresh noise at every release (4HK independent draws)",
        "release at episode k reads users 1..k−1 only",
    )
    return ReleaseSchedule(
        name=f"dp-lsvi-ucb++ ({model} sensitivities)",
        source="Sahu 2025, Algorithm 1 and Appendix A (Theorem A.1)",
        relation=relation,
        episodes=episodes,
        stages=horizon,
        statistics=stats,
        assumptions=assumptions,
    )


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


# --------------------------------------------------------------------------------------------
# The paper's own calibration, checked


@dataclass(frozen=True)
class PrintedCalibrationCheck:
    """Sahu 2025's printed noise (Algorithm 1 line 1) accounted under a stated relation.

    The paper sets ρ from (ε, δ) by Lemma 2.1 (Bun–Steinke), ρ0 = ρ/(4HK), and draws
    φ1, φ2 ~ N(0, 2H²/ρ0), φ3 ~ N(0, 2H⁴/ρ0), Z_ij ~ N(0, 1/(4ρ0)). Under its own per-user bounds
    (weight ≤ 1, ‖φ‖ ≤ 1, V ∈ [0, H]) the vectors cost ρ0 each, but the Gram release costs
    ‖ΔG‖_F²·ρ0 = 2ρ0 under replacement (1·ρ0 under add/remove).

    Attributes:
        claimed_rho: ρ the paper claims (4HK·ρ0).
        true_rho: the worst user's ρ under the paper's assumptions and ``relation``.
        claimed_epsilon: the target ε.
        true_epsilon: ε of the printed noise by each conversion (per-user accounting).
        falls_short: True when the printed noise is not (target ε, δ)-DP by the paper's own route
            (Bun–Steinke), i.e. the paper's claim fails under ``relation``.
    """

    relation: Neighbouring
    rho0: float
    printed_noise_std: dict[str, float]
    claimed_rho: float
    true_rho: float
    claimed_epsilon: float
    true_epsilon: dict[str, float]
    falls_short: bool


def check_printed_calibration(
    horizon: int, episodes: int, dim: int, epsilon: float, delta: float,
    relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
) -> PrintedCalibrationCheck:
    """Account Sahu 2025's printed noise under its own sensitivity assumptions and ``relation``."""
    epsilon = _validate.positive("epsilon", epsilon)
    delta = _validate.open_unit("delta", delta)
    relation = Neighbouring.parse(relation)
    schedule = dp_lsvi_ucbpp_schedule(horizon, episodes, dim, "paper", relation)
    H, K = float(schedule.stages), float(schedule.episodes)
    rho = rho_for_epsilon_delta(epsilon, delta, "bun-steinke")
    rho0 = rho / (4.0 * H * K)
    printed = {
        "w_hat": math.sqrt(2.0 * H * H / rho0),
        "w_check": math.sqrt(2.0 * H * H / rho0),
        "w_bar": math.sqrt(2.0 * H**4 / rho0),
        "gram": math.sqrt(1.0 / (4.0 * rho0)),
    }
    mechanisms = {s.family: s.mechanism_with_noise(printed[s.family], relation) for s in schedule.statistics}
    ledger = schedule.ledger(mechanisms)
    true_eps = {c: ledger.guarantee(delta, c).epsilon for c in CONVERSION_REGISTRY}
    return PrintedCalibrationCheck(
        relation=relation,
        rho0=rho0,
        printed_noise_std=printed,
        claimed_rho=rho,
        true_rho=ledger.worst_user_rho(),
        claimed_epsilon=epsilon,
        true_epsilon=true_eps,
        falls_short=true_eps["bun-steinke"] > epsilon,
    )

