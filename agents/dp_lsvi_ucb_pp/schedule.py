"""DP-LSVI-UCB++'s release schedule (Sahu 2025, Algorithm 1 and Appendix A) and the check of the noise the
paper prints (Algorithm 1 line 1), accounted by :mod:`dpverify.calibration`.

:func:`dp_lsvi_ucbpp_schedule` lists the 4HK releases — three d-vectors and one GOE-perturbed Gram matrix per
(episode, stage) — under the paper's or the derived sensitivity model; :func:`check_printed_calibration`
accounts the printed noise; :data:`NAMED_SCHEDULE` is what the agent's registry card offers to ``dpverify
calibrate``. The tree-aggregated variant's schedule is in :mod:`dpverify.agents.dp_lsvi_ucb_pp.tree`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpverify import _validate
from dpverify.calibration import NamedSchedule, PrintedCalibrationCheck, ReleaseSchedule, StatisticSpec, schedule_count
from dpverify.conversions import CONVERSION_REGISTRY, rho_for_epsilon_delta
from dpverify.errors import InvalidParameterError
from dpverify.ledger import user_pattern
from dpverify.neighbouring import Neighbouring
from dpverify.sensitivity import SumBound, gram_sum_sensitivity, vector_sum_sensitivity

#: The sensitivity models: the paper's per-user bounds (Appendix A), those derived from σ̄ ≥ H (line 25), and
#: those derived stage by stage (σ̄ ≥ H and the targets' range at each stage: values are capped at H − h + 1).
SENSITIVITY_MODELS: tuple[str, ...] = ("paper", "derived", "staged")


@dataclass(frozen=True)
class DpLsviUcbPlusPlusSetting:
    """The validated arguments of the DP-LSVI-UCB++ schedules (:func:`dp_lsvi_ucbpp_schedule` and the
    tree-aggregated :func:`dpverify.agents.dp_lsvi_ucb_pp.tree.dp_lsvi_ucbpp_tree_schedule`) and the per-user
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
        """W ≥ σ̄⁻²: 1 under ``"paper"`` (Appendix A), 1/H² under ``"derived"`` and ``"staged"`` (σ̄ ≥ H, line 25)."""
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
    model = _validate.one_of("sensitivity_model", sensitivity_model, SENSITIVITY_MODELS)
    horizon = schedule_count("horizon", horizon, 3 if model == "staged" else 0)  # staged: three vectors a stage
    episodes = schedule_count("episodes", episodes)
    dim = schedule_count("dim", dim)
    if num_states is not None:
        num_states = _validate.integer("num_states", num_states, minimum=1)
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
    ``staged``: as ``derived``, with each stage's own target range: the regression of stage h reads
        V_{h+1} ≤ H − h (values are capped at the value-to-go, and the agent clips each stage's targets to
        [0, H − h]), so the vector statistics of stage h have sensitivities 2(H − h)/H², 2(H − h)/H² and
        2(H − h)²/H² (one statistic per stage, ``w_hat@h``), and stage H, whose targets are V_{H+1} = 0, releases
        no vector at all (its sums are exactly 0). The Gram release is the same as ``derived``. Every release
        still gets the same ρ0: the noise of stage h is (H − h)/H (w̄: ((H − h)/H)²) of ``derived``'s, and no
        input realises less than the sensitivity a release is calibrated for (docs/derivations.md).

    ``feature_norm`` scales every bound (F for vectors, F² for the Gram matrix) for agents whose
    features are not normalised.
    """
    setting = dp_lsvi_ucbpp_setting(horizon, episodes, dim, sensitivity_model, relation, feature_norm)
    horizon, episodes, dim, model = setting.horizon, setting.episodes, setting.dim, setting.model
    relation, feature_norm, weight = setting.relation, setting.feature_norm, setting.weight
    H = float(horizon)
    prefix = user_pattern("prefix")
    gram = gram_sum_sensitivity(SumBound(weight, feature_norm, H), relation)
    gram_spec = StatisticSpec("gram", "Σ σ̄⁻² φφᵀ (Alg. 1 line 26, GOE)", "symmetric-matrix", dim, gram, prefix)
    if model == "staged":
        if horizon < 2:
            raise InvalidParameterError(
                "horizon", "must be >= 2 under the staged sensitivity model (at H = 1 every vector sum is exactly "
                "0 and only the Gram matrices are released)", horizon)
        stats: tuple[StatisticSpec, ...] = tuple(
            spec for h in range(1, horizon) for spec in _vector_specs(weight, feature_norm, H - h, dim, relation,
                                                                      (h, h))) + (gram_spec,)
        targets = "regression targets of stage h clipped to [0, H − h] (so V̂² ∈ [0, (H − h)²]); none at stage H"
    else:
        stats = (*_vector_specs(weight, feature_norm, H, dim, relation, None), gram_spec)
        targets = "regression targets V̂, V̌ clipped to [0, H] (so V̂² ∈ [0, H²])"
    assumptions = (
        f"per-user weight {setting.weight_rule}",
        f"‖φ(s,a)‖₂ ≤ {feature_norm:g}, checked at run time",
        targets,
        f"neighbouring relation: {relation.value}",
        "fresh noise at every release (4HK independent draws)" if model != "staged" else
        "fresh noise at every release (4HK − 3K independent draws: stage H releases its Gram matrix only)",
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


def _vector_specs(weight: float, feature_norm: float, target: float, dim: int, relation: Neighbouring,
                  stages: tuple[int, int] | None) -> tuple[StatisticSpec, ...]:
    """The three vector statistics (lines 6–8) for targets in [0, ``target``] at ``stages`` (None: every stage)."""
    prefix = user_pattern("prefix")
    value = vector_sum_sensitivity(SumBound(weight, feature_norm, target), relation)
    square = vector_sum_sensitivity(SumBound(weight, feature_norm, target * target), relation)
    return (
        StatisticSpec("w_hat", "Σ σ̄⁻² φ·V̂ (Alg. 1 line 6)", "vector", dim, value, prefix, stages),
        StatisticSpec("w_check", "Σ σ̄⁻² φ·V̌ (Alg. 1 line 7)", "vector", dim, value, prefix, stages),
        StatisticSpec("w_bar", "Σ σ̄⁻² φ·V̂² (Alg. 1 line 8)", "vector", dim, square, prefix, stages),
    )


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
    mechanisms = {s.key: s.mechanism_with_noise(printed[s.family], relation) for s in schedule.statistics}
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


def _named_build(horizon: int, episodes: int, dim: int, model: str, relation: Neighbouring) -> ReleaseSchedule:
    return dp_lsvi_ucbpp_schedule(horizon, episodes, dim, model, relation)


#: The schedule the registry card of ``dp-lsvi-ucb++`` offers to ``dpverify calibrate``.
NAMED_SCHEDULE = NamedSchedule(
    name="dp-lsvi-ucb++",
    build=_named_build,
    models=SENSITIVITY_MODELS,
    default_model="derived",
    printed=check_printed_calibration,
    printed_source="Sahu 2025, Algorithm 1 line 1 (ρ by Lemma 2.1, ρ0 = ρ/(4HK))",
    printed_note=("The printed noise is accounted under the paper's own sensitivities (weight ≤ 1, ‖φ‖ ≤ 1, "
                  "V ∈ [0, H]); the Gram release costs ‖ΔG‖_F²·ρ0 = 2ρ0 under replace-one"),
    printed_route=("paper", "bun-steinke"),
)
