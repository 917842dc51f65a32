"""Everything ``dpverify calibrate`` reports, computed by one library call with named results.

:func:`calibration_report` calibrates a schedule (a :class:`~dpverify.calibration.NamedSchedule`, which
an agent's registry card offers) under every conversion (headline sensitivity model) and under every
sensitivity model (chosen conversion), and, where the agent's paper prints its noise (DP-LSVI-UCB++: Sahu
2025, Algorithm 1, line 1), accounts that noise under *each* sensitivity model and *each* conversion,
so that every statement about the printed noise says which model and which conversion it holds under:

- under the paper's own proof route (its stated per-user sensitivities and the Bun–Steinke
  conversion, Lemma 2.1) the printed noise falls short of its claim under replace-one neighbours,
  because the Gram-matrix release costs ‖ΔG‖_F²·ρ0 = 2ρ0, not ρ0;
- under other models or conversions it may meet the claim, by a margin the report gives;
- whatever the accounting, the printed algorithm reuses one noise draw for every release and does
  not clip its regression targets from below (Q is clipped at H only); the figures are for fresh
  noise per release and targets clipped to [0, H] (what :mod:`dpverify.agents` implements;
  docs/derivations.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

from dpverify import _validate
from dpverify.calibration import (
    CALIBRATION_ROUTES,
    PURE,
    CalibratedStatistic,
    Calibration,
    NamedSchedule,
    PrintedCalibrationCheck,
    ReleaseSchedule,
    calibrate,
    schedule_count,
)
from dpverify.conversions import CONVERSIONS, get_conversion
from dpverify.errors import InvalidParameterError
from dpverify.ledger import ACCOUNTING_MODES
from dpverify.mechanisms import mechanism_for_statistic
from dpverify.neighbouring import Neighbouring

#: Targets ε outside this range are refused: below it the calibrated noise cannot be resolved in
#: double precision (the exact ε of the nearest representable noise level is 0 or above the target),
#: above it the guarantee is vacuous (the exact conversion reports ε = ∞ beyond 10⁶).
EPSILON_RANGE = (1e-6, 1e6)

#: Known failures of the algorithm as printed in Sahu 2025 that no choice of noise level repairs.
PRINTED_ALGORITHM_FAILURES = (
    "the printed Algorithm 1 draws its noise once and reuses it in every release, which is not private "
    "at any noise level (docs/derivations.md, 'Reused noise is not private')",
    "the printed Algorithm 1 clips Q at H from above but not at 0 from below, so noisy weights can drive the "
    "regression targets negative and unbounded, which breaks every per-user sensitivity bound (the paper's "
    "and the derived)",
)


@dataclass(frozen=True)
class PrintedNoiseAccount:
    """Sahu 2025's printed noise accounted under one sensitivity model and one conversion.

    Attributes:
        sensitivity_model: "paper" (the paper's stated per-user bounds) or "derived".
        conversion: one of :data:`~dpverify.conversions.CONVERSIONS`.
        epsilon: the worst user's ε at the target δ (per-user accounting, the stated relation).
        meets_claim: ``epsilon <= claimed ε``.
        is_papers_route: True for the paper's own proof route (paper sensitivities, Bun–Steinke).
    """

    sensitivity_model: str
    conversion: str
    epsilon: float
    meets_claim: bool
    is_papers_route: bool


@dataclass(frozen=True)
class PrintedNoiseReport:
    """The printed noise, its claim, and its ε under every (sensitivity model, conversion)."""

    check: PrintedCalibrationCheck
    accounts: tuple[PrintedNoiseAccount, ...]
    algorithm_failures: tuple[str, ...] = PRINTED_ALGORITHM_FAILURES

    @property
    def papers_route(self) -> PrintedNoiseAccount:
        """The account under the paper's own proof route (paper sensitivities, Bun–Steinke)."""
        return next(a for a in self.accounts if a.is_papers_route)

    def account(self, sensitivity_model: str, conversion: str) -> PrintedNoiseAccount:
        for a in self.accounts:
            if a.sensitivity_model == sensitivity_model and a.conversion == conversion:
                return a
        raise InvalidParameterError("sensitivity_model, conversion", "has no account",
                                    (sensitivity_model, conversion))


@dataclass(frozen=True)
class CalibrationSettings:
    """The validated inputs of a report (:meth:`to_dict` for JSON, the schedule by its name)."""

    epsilon: float
    delta: float
    horizon: int
    episodes: int
    dim: int
    named_schedule: NamedSchedule = field(repr=False)
    sensitivity: str
    conversion: str | None  # None: the schedule's own (resolved by :func:`calibration_report`)
    accounting: str
    relation: Neighbouring

    @property
    def schedule(self) -> str:
        """The schedule's ``--schedule`` name."""
        return self.named_schedule.name

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "named_schedule":
                out["schedule"] = value.name
            else:
                out[f.name] = value.value if f.name == "relation" else value
        return out


@dataclass(frozen=True)
class CalibrationReport:
    """What ``dpverify calibrate`` prints.

    Attributes:
        settings: the inputs.
        headline_model: the sensitivity model of the headline, one of the schedule's models
            ("derived", "paper" or "staged" for DP-LSVI-UCB++; "standard" or "staged" for
            LDP-UCRL-VTR).
        by_conversion: the headline model calibrated under each conversion that applies to its releases (the
            exact one needs Gaussian releases).
        by_sensitivity_model: each sensitivity model calibrated under ``settings.conversion``.
        lead_family: the statistic whose noise the conversion table compares (the schedule's first).
        printed: the printed-noise accounts (DP-LSVI-UCB++ only), else None.
    """

    settings: CalibrationSettings
    headline_model: str
    by_conversion: dict[str, Calibration]
    by_sensitivity_model: dict[str, Calibration]
    lead_family: str
    printed: PrintedNoiseReport | None

    @property
    def headline(self) -> Calibration:
        """The headline model under the chosen conversion."""
        return self.by_sensitivity_model[self.headline_model]

    def statistic(self, calibration: Calibration, key: str) -> CalibratedStatistic:
        """The calibrated statistic named ``key`` (its family, or ``family@stage`` for one calibrated stage by
        stage; by name, not by position)."""
        for s in calibration.statistics:
            if s.spec.key == key:
                return s
        keys = [s.spec.key for s in calibration.statistics]
        raise InvalidParameterError("family", f"must be one of {keys}", key)


def validate_settings(
    epsilon: float, delta: float, horizon: int, episodes: int, dim: int, schedule: NamedSchedule,
    sensitivity: str | None = None, conversion: str | None = None, accounting: str = "per-user",
    relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
) -> CalibrationSettings:
    """The settings, each checked against its documented range (names as the parameters are named);
    ``sensitivity`` is one of the schedule's models (default: the one its agent uses)."""
    if not isinstance(schedule, NamedSchedule):
        raise InvalidParameterError("schedule", "must be a NamedSchedule (an agent's registry card offers it)",
                                    schedule)
    if sensitivity is not None and len(schedule.models) == 1:
        raise InvalidParameterError("sensitivity", f"does not apply to schedule {schedule.name} (it has one "
                                    "sensitivity model)", sensitivity)
    epsilon = _validate.positive("epsilon", epsilon)
    low, high = EPSILON_RANGE
    if not low <= epsilon <= high:
        raise InvalidParameterError(
            "epsilon", f"must be in [{low:g}, {high:g}] for calibration (outside it the noise level is not "
            "resolvable in double precision, or the guarantee is vacuous)", epsilon)
    # every model under every conversion, each at most one statistic per family (4) and stage
    horizon = schedule_count("horizon", horizon, 4 * len(schedule.models) * len(CONVERSIONS))
    return CalibrationSettings(
        epsilon=epsilon,
        delta=_validate.open_unit("delta", delta),
        horizon=horizon,
        episodes=schedule_count("episodes", episodes),
        dim=schedule_count("dim", dim),
        named_schedule=schedule,
        sensitivity=_validate.one_of("sensitivity", schedule.default_model if sensitivity is None else sensitivity,
                                     schedule.models),
        conversion=None if conversion is None else _validate.one_of("conversion", conversion, CALIBRATION_ROUTES),
        accounting=_validate.one_of("accounting", accounting, ACCOUNTING_MODES),
        relation=Neighbouring.parse(relation) if not isinstance(relation, str) else _relation(relation),
    )


def _relation(value: str) -> Neighbouring:
    try:
        return Neighbouring.parse(value)
    except InvalidParameterError as exc:
        raise InvalidParameterError("relation", exc.rule, value) from None


def printed_noise_report(settings: CalibrationSettings) -> PrintedNoiseReport | None:
    """The paper's printed noise accounted under every sensitivity model and conversion (None when the
    schedule's paper prints none)."""
    s, named = settings, settings.named_schedule
    if named.printed is None:
        return None
    check = named.printed(s.horizon, s.episodes, s.dim, s.epsilon, s.delta, s.relation)
    accounts = []
    for model in named.models:
        schedule = named.build(s.horizon, s.episodes, s.dim, model, s.relation)
        mechanisms = {
            spec.key: spec.mechanism_with_noise(check.printed_noise_std[spec.family], s.relation)
            for spec in schedule.statistics
        }
        ledger = schedule.ledger(mechanisms)
        for conversion in CONVERSIONS:
            eps = ledger.guarantee(s.delta, conversion).epsilon
            accounts.append(PrintedNoiseAccount(
                sensitivity_model=model, conversion=conversion, epsilon=eps, meets_claim=eps <= s.epsilon,
                is_papers_route=(model, conversion) == named.printed_route,
            ))
    return PrintedNoiseReport(check, tuple(accounts))


def calibration_report(settings: CalibrationSettings) -> CalibrationReport:
    """Every calibration ``dpverify calibrate`` shows (module docstring), with named results."""
    s, named = settings, settings.named_schedule
    schedules: dict[str, ReleaseSchedule] = {
        m: named.build(s.horizon, s.episodes, s.dim, m, s.relation) for m in named.models}
    headline = s.sensitivity
    gaussian = all(mechanism_for_statistic(spec.kind).noise_law == "normal" for spec in schedules[headline].statistics)
    laplace = all(mechanism_for_statistic(spec.kind).noise_law == "laplace" for spec in schedules[headline].statistics)
    routes = [c for c in CONVERSIONS if gaussian or not get_conversion(c).gaussian_only]  # no exact route for Laplace
    routes += [PURE] if laplace else []  # pure ε-DP for Laplace noise
    if s.conversion is None:  # the schedule's own: exact for Gaussian releases, pure for Laplace ones
        s = replace(s, conversion=routes[-1] if laplace else ("exact" if gaussian else "cks"))
    if s.conversion not in routes:
        raise InvalidParameterError("conversion", f"must be one of {', '.join(routes)} for schedule {named.name} "
                                    "(the exact conversion is for Gaussian releases only; pure for Laplace ones)",
                                    s.conversion)
    by_conversion = {c: calibrate(schedules[headline], s.epsilon, s.delta, c, s.accounting) for c in routes}
    by_model = {
        m: by_conversion[s.conversion] if m == headline
        else calibrate(sch, s.epsilon, s.delta, s.conversion, s.accounting)
        for m, sch in schedules.items()
    }
    return CalibrationReport(
        settings=s,
        headline_model=headline,
        by_conversion=by_conversion,
        by_sensitivity_model=by_model,
        lead_family=schedules[headline].statistics[0].key,
        printed=printed_noise_report(s),
    )


def ratio_text(epsilon: float, claimed: float) -> str:
    """"3.2× over the claim" / "meets the claim with 240× room" for one account."""
    if math.isinf(epsilon):
        return "no finite epsilon"
    if epsilon > claimed:
        return f"{epsilon / claimed:.3g}x over the claim"
    if epsilon == 0:
        return "meets the claim (epsilon 0)"
    return f"meets the claim ({claimed / epsilon:.3g}x below it)"
