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

An algorithm's schedules live with the algorithm (e.g. :mod:`dpverify.agents.dp_lsvi_ucb_pp.schedule`, Sahu
2025, Algorithm 1; :mod:`dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr`, Liao et al. 2021); a :class:`NamedSchedule`
is how an agent's registry card offers its schedule to ``dpverify calibrate``. This module imports no agent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dpverify import _validate
from dpverify.accounting import pure_epsilon
from dpverify.conversions import CONVERSIONS, get_conversion, rho_for_epsilon_delta
from dpverify.errors import InvalidParameterError, NumericalError
from dpverify.ledger import ACCOUNTING_MODES, PrivacyLedger, ToeplitzFactor, UserPattern, user_pattern
from dpverify.limits import MAX_COUNT, require_work
from dpverify.mechanisms import GaussianMechanism, Mechanism, mechanism_for_statistic
from dpverify.neighbouring import Neighbouring
from dpverify.numerics import round_down, round_up

#: The calibration route that meets a pure ε target (basic composition of Laplace releases) beside the
#: zCDP → (ε, δ) conversions (:data:`CALIBRATION_ROUTES`).
PURE = "pure"
#: Every route :func:`calibrate` accepts.
CALIBRATION_ROUTES: tuple[str, ...] = (*CONVERSIONS, PURE)
#: The calibrated ε must be within this relative distance below the target.
ROUND_TRIP_TOLERANCE = 1e-9
#: Elementary operations (:mod:`dpverify.limits`) one statistic of a schedule costs in one calibration: its
#: mechanism calibrated and recorded, its block accounted (about a millisecond of Python, measured on one core).
SPEC_OPERATIONS = 2e5


def schedule_count(name: str, value: object, statistics_per_stage: int = 0) -> int:
    """A schedule's H, K or d: an integer in [1, 2⁵³]; for H, ``statistics_per_stage`` > 0 (a schedule with that
    many statistics at each stage) must also fit the work limit of calibrating them (:data:`SPEC_OPERATIONS`)."""
    n = _validate.integer(name, value, minimum=1)
    if n > MAX_COUNT:
        raise InvalidParameterError(name, f"must be <= 2^53 = {MAX_COUNT} (larger counts are not exact in floating "
                                    "point)", n)
    if statistics_per_stage:
        require_work(name, n, SPEC_OPERATIONS * statistics_per_stage * n,
                     f"a schedule of {statistics_per_stage} statistics at each of {n} stages")
    return n


@dataclass(frozen=True)
class StatisticSpec:
    """One statistic family of a schedule: released at every (episode, stage) of the schedule, or at every episode
    and the stages ``stages`` only (a family whose sensitivity depends on the stage is one spec per stage range).

    Attributes:
        family: short machine name (ledger family).
        description: what is summed, with the paper's line.
        kind: the ``statistic_kind`` of a registered mechanism (:data:`dpverify.mechanisms.MECHANISMS`): "vector"
            (Gaussian mechanism, ℓ2 sensitivity), "symmetric-matrix" (GOE, Frobenius) or "l1-vector" (Laplace, ℓ1).
        dim: d (vector length or matrix side).
        sensitivity: ℓ2 or Frobenius sensitivity under the schedule's relation.
        users: which users each release touches: a :class:`~dpverify.ledger.UserPattern` or its name
            ("prefix", "current", "tree"), stored as the pattern.
        stages: (first, last), the stages this spec covers; None: every stage of the schedule.
    """

    family: str
    description: str
    kind: str
    dim: int
    sensitivity: float
    users: UserPattern | str
    stages: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        mechanism_for_statistic(self.kind)  # raises InvalidParameterError("kind", ...) if none is registered
        object.__setattr__(self, "dim", _validate.integer("dim", self.dim, minimum=1))
        object.__setattr__(self, "sensitivity", _validate.positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "users", user_pattern(self.users))
        if self.stages is not None:
            if not isinstance(self.stages, tuple) or len(self.stages) != 2:
                raise InvalidParameterError("stages", "must be a (first, last) pair of stages", self.stages)
            first = _validate.integer("stages", self.stages[0], minimum=1)
            last = _validate.integer("stages", self.stages[1], minimum=first)
            object.__setattr__(self, "stages", (first, last))

    @property
    def key(self) -> str:
        """The name of this statistic in a calibration: its family, with its stages when it covers some only
        (``"w_hat@3"``, ``"w_hat@1-4"``)."""
        if self.stages is None:
            return self.family
        first, last = self.stages
        return f"{self.family}@{first}" if first == last else f"{self.family}@{first}-{last}"

    def stage_range(self, stages: int) -> tuple[int, int]:
        """The (first, last) stages this statistic is released at in a schedule of ``stages`` stages."""
        return (1, stages) if self.stages is None else self.stages

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
        keys = [s.key for s in self.statistics]
        if len(set(keys)) != len(keys):
            raise InvalidParameterError("statistics", "must have distinct family names (and stage ranges)", keys)
        ranges: dict[str, list[tuple[int, int, str]]] = {}
        for spec in self.statistics:
            first, last = spec.stage_range(self.stages)
            if last > self.stages:
                raise InvalidParameterError("stages", f"must lie within the schedule's 1..{self.stages}", spec.stages)
            ranges.setdefault(spec.family, []).append((first, last, spec.key))
        for family_ranges in ranges.values():  # sorted stage ranges of one family must not overlap
            family_ranges.sort()
            for (_, end, _), (start, _, key) in zip(family_ranges, family_ranges[1:], strict=False):
                if start <= end:
                    raise InvalidParameterError("statistics", "must not release one family twice at a stage", key)

    def ledger(self, mechanisms: Mapping[str, Mechanism]) -> PrivacyLedger:
        """The ledger of the whole schedule with the given mechanism per statistic (keyed by :attr:`StatisticSpec.key`:
        the family name for a statistic of every stage)."""
        ledger = PrivacyLedger(self.relation)
        for spec in self.statistics:
            ledger.record_block(spec.family, (1, self.episodes), spec.stage_range(self.stages), mechanisms[spec.key],
                                spec.users)
        return ledger

    def release_counts(self) -> tuple[int | float, int]:
        """(releases touching the worst user, all releases), counted with a unit-cost ledger. A pattern that weighs
        users (:class:`~dpverify.ledger.ToeplitzFactor`) makes the first a weighted count, a float (never rounded
        down); otherwise it is an integer."""
        unit = {s.key: GaussianMechanism(1.0, math.sqrt(0.5), 1, self.relation) for s in self.statistics}  # ρ = 1
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
        rho: the ρ-zCDP budget meeting (ε, δ) under ``conversion`` (the :data:`PURE` route: n·ε0²/2, the zCDP
            the worst user's n releases of ε0 = ε/n imply).
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

    def mechanism(self, family: str, stage: int | None = None) -> Mechanism:
        """The calibrated mechanism of ``family`` (at ``stage``, 1-based, for a family calibrated stage by stage)."""
        matches = [s for s in self.statistics if s.spec.family == family]
        if not matches:
            raise InvalidParameterError("family", f"must be one of {sorted({s.spec.family for s in self.statistics})}",
                                        family)
        if stage is None:
            if len(matches) > 1:
                raise InvalidParameterError("stage", f"must be given: {family!r} is calibrated stage by stage", None)
            return matches[0].mechanism
        for s in matches:
            first, last = s.spec.stage_range(self.schedule.stages)
            if first <= stage <= last:
                return s.mechanism
        raise InvalidParameterError("stage", f"must be a stage at which {family!r} is released", stage)

    def released_stages(self, family: str) -> tuple[int, ...]:
        """The 1-based stages at which ``family`` is released."""
        ranges = [s.spec.stage_range(self.schedule.stages) for s in self.statistics if s.spec.family == family]
        return tuple(h for first, last in ranges for h in range(first, last + 1))

    def ledger(self) -> PrivacyLedger:
        """The schedule's ledger with the calibrated mechanisms."""
        return self.schedule.ledger({s.spec.key: s.mechanism for s in self.statistics})


def calibrate(
    schedule: ReleaseSchedule,
    epsilon: float,
    delta: float,
    conversion: str = "exact",
    accounting: str = "per-user",
) -> Calibration:
    """Noise for every statistic of ``schedule`` so that the whole run is (ε, δ)-DP — or, with ``conversion``
    :data:`PURE` (every statistic Laplace), pure ε-DP by basic composition (Dwork & Roth 2014, Theorem 3.16; exact
    for pure releases), δ then unused.

    Every release gets the same ρ0 (as in Sahu 2025 §3; for the pure route ε0 = ε/n, ρ0 = ε0²/2). One-sided: the
    returned mechanisms account to ε ≤ target, within :data:`ROUND_TRIP_TOLERANCE` relative; otherwise
    NumericalError.
    """
    if not isinstance(schedule, ReleaseSchedule):
        raise InvalidParameterError("schedule", "must be a ReleaseSchedule", type(schedule).__name__)
    epsilon = _validate.positive("epsilon", epsilon)
    delta = _validate.open_unit("delta", delta)
    pure = conversion == PURE
    if pure:
        impure = [spec.family for spec in schedule.statistics
                  if mechanism_for_statistic(spec.kind).noise_law != "laplace"]
        if impure:
            raise InvalidParameterError("conversion", "'pure' needs every statistic released with Laplace noise "
                                        f"(pure ε-DP); {', '.join(impure)} are not", conversion)
    else:
        conversion = get_conversion(conversion).name
    accounting = _validate.one_of("accounting", accounting, ACCOUNTING_MODES)
    worst, total = schedule.release_counts()
    counted = worst if accounting == "per-user" else total
    if counted == 0:
        raise InvalidParameterError(
            "schedule", "must release at least one statistic that touches a user", schedule.name
        )
    require_work("schedule", schedule.name, 2.0 * SPEC_OPERATIONS * len(schedule.statistics),
                 f"calibrating {len(schedule.statistics)} statistics")
    if pure:  # each release ε0 = ε/n by basic composition (exact for pure releases); a Laplace release of ε0 is
        # ε0²/2-zCDP (Bun & Steinke 2016, Proposition 1.4), so ρ0 = ε0²/2 gives it scale Δ₁/ε0
        rho = counted * (epsilon / counted) ** 2 / 2.0
        rho0 = round_down((epsilon / counted) ** 2 / 2.0, 2)
    else:
        rho = rho_for_epsilon_delta(epsilon, delta, conversion)
        rho0 = round_down(rho / counted, 2)
    for attempt in range(64):
        stats = tuple(
            CalibratedStatistic(spec, m, m.noise_scale)
            for spec in schedule.statistics
            for m in [spec.mechanism_for_rho(rho0, schedule.relation)]
        )
        ledger = schedule.ledger({s.spec.key: s.mechanism for s in stats})
        accounted = (pure_epsilon(ledger, accounting)[0] if pure
                     else ledger.guarantee(delta, conversion, accounting).epsilon)
        if accounted is not None and accounted <= epsilon:
            break
        # rounding in the per-user sum (a few ulps a statistic) pushed ε a hair over: step down, 8 ulps first and
        # twice as far each time, so that a schedule of many statistics needs few steps
        rho0 = round_down(rho0 * (1.0 - 2.0 ** (attempt - 49)))
    else:  # pragma: no cover
        raise NumericalError("calibration could not meet the target epsilon")
    if accounted is None or accounted < epsilon * (1.0 - ROUND_TRIP_TOLERANCE):
        raise NumericalError(
            f"calibration is looser than it should be: accounted epsilon {accounted!r} < target {epsilon!r}"
        )
    return Calibration(schedule, epsilon, delta, conversion, accounting, rho, rho0, counted, total, stats, accounted)


@dataclass(frozen=True)
class PrintedCalibrationCheck:
    """A paper's printed noise accounted by dpverify under a stated relation (the paper's own route and every
    conversion): e.g. Sahu 2025, Algorithm 1 line 1 (:func:`dpverify.agents.dp_lsvi_ucb_pp.schedule.
    check_printed_calibration`).

    Attributes:
        relation: the neighbouring relation of the accounting.
        rho0: the paper's per-release ρ.
        printed_noise_std: the printed noise standard deviation per statistic family.
        claimed_rho: ρ the paper claims.
        true_rho: the worst user's ρ under the paper's assumptions and ``relation``.
        claimed_epsilon: the target ε.
        true_epsilon: ε of the printed noise by each conversion (per-user accounting).
        falls_short: True when the printed noise is not (target ε, δ)-DP by the paper's own route.
    """

    relation: Neighbouring
    rho0: float
    printed_noise_std: dict[str, float]
    claimed_rho: float
    true_rho: float
    claimed_epsilon: float
    true_epsilon: dict[str, float]
    falls_short: bool


@dataclass(frozen=True)
class NamedSchedule:
    """An algorithm's release schedule as ``dpverify calibrate`` offers it (an agent's registry card holds one).

    Attributes:
        name: the ``--schedule`` name (the agent's registered name).
        build: ``build(horizon, episodes, dim, model, relation) -> ReleaseSchedule``.
        models: the sensitivity models ``build`` accepts; ``default_model`` is the one the agent uses.
        printed: where the algorithm's paper prints a noise scale, ``printed(horizon, episodes, dim, epsilon,
            delta, relation) -> PrintedCalibrationCheck``; ``printed_source`` and ``printed_note`` say where
            it is printed and under which sensitivities it is accounted; ``printed_route`` is the (model,
            conversion) of the paper's own proof.
    """

    name: str
    build: Callable[[int, int, int, str, Neighbouring], ReleaseSchedule]
    models: tuple[str, ...]
    default_model: str
    printed: Callable[..., PrintedCalibrationCheck] | None = None
    printed_source: str = ""
    printed_note: str = ""
    printed_route: tuple[str, str] = ("", "")

    def __post_init__(self) -> None:
        if not self.models or self.default_model not in self.models:
            raise InvalidParameterError("default_model", f"must be one of the models {self.models}",
                                        self.default_model)
