"""The calibrate report: named results, and every printed-noise statement under its model and conversion."""

from __future__ import annotations

import pytest

from dpverify.agents.dp_lsvi_ucb_pp.schedule import NAMED_SCHEDULE, SENSITIVITY_MODELS
from dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr import NAMED_SCHEDULE as LDP_SCHEDULE
from dpverify.agents.registry import named_schedule, schedule_names, schedules
from dpverify.calibration import NamedSchedule
from dpverify.calibration_report import EPSILON_RANGE, calibration_report, ratio_text, validate_settings
from dpverify.conversions import CONVERSIONS
from dpverify.errors import InvalidParameterError


@pytest.fixture(scope="module")
def report():
    return calibration_report(validate_settings(1.0, 1e-5, 20, 1000, 10, NAMED_SCHEDULE))


def test_named_results(report):
    assert set(report.by_conversion) == set(CONVERSIONS)
    assert set(report.by_sensitivity_model) == set(SENSITIVITY_MODELS)
    assert report.headline is report.by_sensitivity_model["derived"]
    assert report.lead_family == "w_hat"
    gram = report.statistic(report.by_sensitivity_model["paper"], "gram")
    assert gram.spec.kind != "vector" and gram.spec.sensitivity == pytest.approx(2**0.5)
    for cal in report.by_conversion.values():
        assert cal.accounted_epsilon <= 1.0


def test_printed_noise_is_accounted_under_every_model_and_conversion(report):
    printed = report.printed
    assert {(a.sensitivity_model, a.conversion) for a in printed.accounts} == {
        (m, c) for m in SENSITIVITY_MODELS for c in CONVERSIONS}
    route = printed.papers_route
    assert (route.sensitivity_model, route.conversion) == ("paper", "bun-steinke")
    assert not route.meets_claim and route.epsilon == printed.check.true_epsilon["bun-steinke"]
    assert printed.account("paper", "exact").meets_claim  # the exact conversion rescues the paper's model
    derived = printed.account("derived", "bun-steinke")
    assert derived.meets_claim and derived.epsilon * 100 < 1.0  # hundreds of times below the claim
    assert any("reuses" in f for f in printed.algorithm_failures)
    assert any("from below" in f for f in printed.algorithm_failures)


def test_ldp_schedule_has_no_printed_noise():
    r = calibration_report(validate_settings(1.0, 1e-5, 6, 50, 5, LDP_SCHEDULE))
    assert r.printed is None and r.headline_model == "standard"
    assert set(r.by_sensitivity_model) == {"standard", "staged"} and r.lead_family == "gram"
    staged = calibration_report(validate_settings(1.0, 1e-5, 6, 50, 5, LDP_SCHEDULE, "staged"))
    assert staged.headline_model == "staged" and staged.lead_family == "gram@1"
    assert staged.headline.releases_counted == 10
    assert staged.headline.released_stages("target") == (1, 2, 3, 4, 5)


@pytest.mark.parametrize("epsilon", [EPSILON_RANGE[0] / 2, EPSILON_RANGE[1] * 2, 1e308, 1e-300])
def test_targets_outside_the_documented_range_are_refused(epsilon):
    with pytest.raises(InvalidParameterError, match=r"must be in \[1e-06, 1e\+06\]") as info:
        validate_settings(epsilon, 1e-5, 20, 1000, 10, NAMED_SCHEDULE)
    assert info.value.parameter == "epsilon"


@pytest.mark.parametrize("epsilon", EPSILON_RANGE)
def test_the_ends_of_the_range_calibrate(epsilon):
    r = calibration_report(validate_settings(epsilon, 1e-5, 5, 20, 3, NAMED_SCHEDULE))
    assert all(c.accounted_epsilon <= epsilon for c in r.by_conversion.values())


def test_counts_above_2_to_the_53_are_refused():
    with pytest.raises(InvalidParameterError, match="2\\^53") as info:
        validate_settings(1.0, 1e-5, 20, 2**53 + 1, 10, NAMED_SCHEDULE)
    assert info.value.parameter == "episodes"


def test_ratio_text():
    assert ratio_text(2.0, 1.0) == "2x over the claim"
    assert ratio_text(0.01, 1.0) == "meets the claim (100x below it)"
    assert ratio_text(float("inf"), 1.0) == "no finite epsilon"


def test_the_schedules_are_the_agents_cards_and_the_cli_lists_them():
    from dpverify.agents.bandits import dp_ucb, jdp_linucb, ldp_linucb
    from dpverify.cli import calibrate_command

    assert schedules() == {"dp-lsvi-ucb++": NAMED_SCHEDULE, "ldp-ucrl-vtr": LDP_SCHEDULE,
                           "jdp-linucb": jdp_linucb.NAMED_SCHEDULE, "ldp-linucb": ldp_linucb.NAMED_SCHEDULE,
                           "dp-ucb": dp_ucb.NAMED_SCHEDULE}
    assert calibrate_command._SCHEDULES == schedule_names()  # --help lists them without importing the agents
    with pytest.raises(InvalidParameterError, match="must be one of dp-lsvi-ucb\\+\\+, ldp-ucrl-vtr, jdp") as info:
        named_schedule("luyo", parameter="--schedule")
    assert info.value.parameter == "--schedule"


def test_a_sensitivity_model_for_a_schedule_with_one_is_refused():
    single = NamedSchedule("single", LDP_SCHEDULE.build, ("standard",), "standard")
    with pytest.raises(InvalidParameterError, match="one sensitivity model") as info:
        validate_settings(1.0, 1e-5, 6, 50, 5, single, "standard")
    assert info.value.parameter == "sensitivity"
    with pytest.raises(InvalidParameterError, match="NamedSchedule"):
        validate_settings(1.0, 1e-5, 6, 50, 5, "dp-lsvi-ucb++")
