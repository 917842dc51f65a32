"""Calibration: one-sided round trips, the two sensitivity models, the paper's printed noise."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.agents.dp_lsvi_ucb_pp.schedule import check_printed_calibration, dp_lsvi_ucbpp_schedule
from dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr import ldp_ucrl_vtr_schedule
from dpverify.calibration import calibrate
from dpverify.conversions import CONVERSIONS
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism


@settings(max_examples=25)
@given(
    eps=st.floats(0.05, 10.0),
    delta=st.floats(1e-10, 1e-2),
    H=st.integers(1, 25),
    K=st.integers(1, 3000),
    conversion=st.sampled_from(CONVERSIONS),
    model=st.sampled_from(["paper", "derived"]),
    accounting=st.sampled_from(["per-user", "naive"]),
)
def test_round_trip_is_one_sided_and_tight(eps, delta, H, K, conversion, model, accounting):
    schedule = dp_lsvi_ucbpp_schedule(H, K + 1, 4, model)
    cal = calibrate(schedule, eps, delta, conversion, accounting)
    # Re-account from scratch through the ledger: never above the target, within 1e-9 of it.
    ledger = cal.ledger()
    again = ledger.guarantee(delta, conversion, accounting).epsilon
    assert again <= eps
    assert again >= eps * (1 - 1e-9)
    assert cal.accounted_epsilon == again


def test_per_user_accounting_counts_the_worst_user():
    schedule = dp_lsvi_ucbpp_schedule(20, 1000, 10)
    cal = calibrate(schedule, 1.0, 1e-5)
    assert cal.total_releases == 4 * 20 * 1000
    assert cal.releases_counted == 4 * 20 * 999  # user 1 is read from episode 2 on
    naive = calibrate(schedule, 1.0, 1e-5, accounting="naive")
    assert naive.rho0 < cal.rho0


def test_noise_formulas():
    """σ = Δ/√(2ρ0) for vectors (Sahu 2025 Lemma 2.3) and s = Δ_F/(2√ρ0) for GOE."""
    cal = calibrate(dp_lsvi_ucbpp_schedule(5, 50, 3, "paper"), 1.0, 1e-5)
    for s in cal.statistics:
        if isinstance(s.mechanism, GaussianMechanism):
            assert s.noise_std == pytest.approx(s.spec.sensitivity / math.sqrt(2 * cal.rho0), rel=1e-12)
        else:
            assert isinstance(s.mechanism, GOEMechanism)
            assert s.noise_std == pytest.approx(s.spec.sensitivity / (2 * math.sqrt(cal.rho0)), rel=1e-12)
        assert s.mechanism.rho <= cal.rho0


def test_paper_and_derived_sensitivities():
    H = 20
    paper = {s.family: s.sensitivity for s in dp_lsvi_ucbpp_schedule(H, 10, 10, "paper").statistics}
    derived = {s.family: s.sensitivity for s in dp_lsvi_ucbpp_schedule(H, 10, 10, "derived").statistics}
    assert paper == pytest.approx({"w_hat": 2 * H, "w_check": 2 * H, "w_bar": 2 * H * H, "gram": math.sqrt(2)})
    assert derived == pytest.approx({"w_hat": 2 / H, "w_check": 2 / H, "w_bar": 2.0, "gram": math.sqrt(2) / H**2})
    for f in paper:
        assert paper[f] / derived[f] == pytest.approx(H * H)  # 400× the noise std at H = 20
    add_remove = {
        s.family: s.sensitivity for s in dp_lsvi_ucbpp_schedule(H, 10, 10, "paper", "add-remove-one").statistics
    }
    assert add_remove == pytest.approx({"w_hat": H, "w_check": H, "w_bar": H * H, "gram": 1.0})


def test_printed_calibration_falls_short_under_replacement_only():
    """Sahu 2025's GOE noise s² = 1/(4ρ0) is calibrated for ‖ΔG‖_F = 1 (add/remove); under replacement
    the Gram release costs 2ρ0, the schedule 1.25ρ, and Lemma 2.1 then gives ε above the claim."""
    rep = check_printed_calibration(20, 1000, 10, 1.0, 1e-5, "replace-one")
    assert rep.falls_short
    assert rep.true_rho == pytest.approx(1.25 * rep.claimed_rho * 999 / 1000, rel=1e-9)
    assert rep.true_epsilon["bun-steinke"] > 1.0
    rem = check_printed_calibration(20, 1000, 10, 1.0, 1e-5, "add-remove-one")
    assert not rem.falls_short


def test_ldp_schedule_users_do_not_compose():
    sched = ldp_ucrl_vtr_schedule(6, 10_000, 5)
    cal = calibrate(sched, 1.0, 1e-5)
    assert cal.releases_counted == 2 * 6  # one matrix and one vector per stage, own user only
    # The number of users does not change the noise (local DP).
    other = calibrate(ldp_ucrl_vtr_schedule(6, 10, 5), 1.0, 1e-5)
    assert [s.noise_std for s in other.statistics] == [s.noise_std for s in cal.statistics]


def test_exact_calibration_needs_less_noise():
    sched = dp_lsvi_ucbpp_schedule(20, 1000, 10)
    stds = {c: calibrate(sched, 1.0, 1e-5, c).statistics[0].noise_std for c in CONVERSIONS}
    assert stds["exact"] < stds["cks"] < stds["bun-steinke"]
    cal = calibrate(sched, 1.0, 1e-5, "exact")
    epsilon_of = {c: cal.ledger().guarantee(cal.delta, c, cal.accounting).epsilon for c in ("cks", "exact")}
    assert epsilon_of["cks"] > 1.0 > epsilon_of["exact"] * (1 - 1e-9)


@pytest.mark.parametrize(
    "call, parameter",
    [
        (lambda: dp_lsvi_ucbpp_schedule(2.5, 10, 3), "horizon"),
        (lambda: dp_lsvi_ucbpp_schedule(2, 0, 3), "episodes"),
        (lambda: dp_lsvi_ucbpp_schedule(2, 10, 3, "tight"), "sensitivity_model"),
        (lambda: calibrate(dp_lsvi_ucbpp_schedule(2, 10, 3), -1.0, 1e-5), "epsilon"),
        (lambda: calibrate(dp_lsvi_ucbpp_schedule(2, 10, 3), 1.0, 2.0), "delta"),
        (lambda: calibrate(dp_lsvi_ucbpp_schedule(2, 1, 3), 1.0, 1e-5), "schedule"),
    ],
)
def test_bad_input(call, parameter):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert info.value.parameter == parameter


@pytest.mark.parametrize("model", ["staged", "derived"])
def test_a_schedule_of_many_stages_calibrates_at_once(model):
    # 100 stages staged: 298 statistics, whose per-user sum rounds a few ulps each (the step-down grows)
    cal = calibrate(dp_lsvi_ucbpp_schedule(100, 10**6, 1000, model), 1.0, 1e-5)
    assert 1.0 * (1 - 1e-9) <= cal.accounted_epsilon <= 1.0


def test_a_family_released_twice_at_a_stage_is_refused():
    from dpverify.calibration import ReleaseSchedule, StatisticSpec

    specs = (StatisticSpec("w", "x", "vector", 2, 1.0, "prefix", (1, 3)),
             StatisticSpec("w", "x", "vector", 2, 1.0, "prefix", (3, 4)))
    with pytest.raises(InvalidParameterError, match="must not release one family twice at a stage"):
        ReleaseSchedule("s", "src", "replace-one", 5, 4, specs, ())
    ReleaseSchedule("s", "src", "replace-one", 5, 4, (specs[0], StatisticSpec("w", "x", "vector", 2, 1.0, "prefix",
                                                                              (4, 4))), ())


@settings(max_examples=30, deadline=None)
@given(st.floats(min_value=0.01, max_value=50.0), st.integers(min_value=1, max_value=5000),
       st.integers(min_value=1, max_value=8), st.sampled_from(["per-user", "naive"]))
def test_the_pure_route_is_one_sided_tight_and_exact_by_basic_composition(eps, K, arms, accounting):
    """ε0 = ε/n per release; the re-accounted pure ε (Σε0 of the worst user) never above the target and within the
    round-trip tolerance of it; the Laplace scale is Δ₁/ε0, rounded up."""
    from dpverify.accounting import pure_epsilon
    from dpverify.agents.bandits.dp_ucb import dp_ucb_schedule

    schedule = dp_ucb_schedule(K, arms)
    cal = calibrate(schedule, eps, 1e-5, "pure", accounting)
    accounted = pure_epsilon(cal.ledger(), accounting)[0]
    assert cal.accounted_epsilon == accounted <= eps
    assert accounted >= eps * (1 - 1e-9)
    scale = cal.mechanism("rewards").scale
    assert scale >= cal.releases_counted / eps and scale == pytest.approx(cal.releases_counted / eps, rel=1e-9)
    if accounting == "per-user":
        assert cal.releases_counted == math.floor(math.log2(K)) + 1  # the tree levels a user enters


def test_the_pure_route_needs_laplace_releases():
    with pytest.raises(InvalidParameterError, match="Laplace") as info:
        calibrate(dp_lsvi_ucbpp_schedule(2, 10, 4), 1.0, 1e-5, "pure")
    assert info.value.parameter == "conversion"
