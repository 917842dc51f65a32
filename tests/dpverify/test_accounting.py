"""Accounting of mixed ledgers: user profiles against every user's, the routes and their reasons, and every route
against dp-accounting's PLDs on random mixed ledgers (never below their optimistic ε, the PLD route within 1% of
their pessimistic one)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpverify import pld
from dpverify.accounting import (
    UserProfile,
    _columns,
    _matrix,
    dp_event,
    epsilon_routes,
    mu_bounds,
    pure_epsilon,
    rho_bounds,
    tightest,
    user_profiles,
)
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism, RandomizedResponse
from dpverify.testing.strategies import ledgers

PATTERNS = ["prefix", "current", "tree", "dyadic-1"]


def _routes(ledger: PrivacyLedger, delta: float = 1e-5, **kw) -> dict:
    return {r.route: r for r in epsilon_routes(ledger, delta, **kw)}


def test_an_all_gaussian_ledger_keeps_the_exact_route_and_skips_the_others():
    ledger = PrivacyLedger()
    ledger.record_block("sum", (1, 100), (1, 3), GaussianMechanism(1.0, 20.0, 4), "prefix")
    ledger.record_block("gram", (1, 100), (1, 3), GOEMechanism(1.0, 9.0, 3), "prefix")
    routes = _routes(ledger)
    assert routes["exact"].epsilon == ledger.guarantee(1e-5, "exact").epsilon and routes["exact"].exact
    assert tightest(epsilon_routes(ledger, 1e-5)).route == "exact"
    for name in ("gdp", "pure", "kov", "kov-heterogeneous", "pld"):
        assert routes[name].epsilon is None and "every release is Gaussian" in routes[name].note
    assert routes["cks"].epsilon == ledger.guarantee(1e-5, "cks").epsilon


def test_a_laplace_ledger_is_accounted_and_the_exact_route_says_why_not():
    """The binary-mechanism counters of a private UCB bandit (Chan, Shi & Song 2011): Laplace, pure ε."""
    ledger = PrivacyLedger()
    ledger.record_block("count", (1, 1024), (1, 4), LaplaceMechanism(1.0, 50.0), "tree")
    routes = _routes(ledger, lower=True)
    assert routes["exact"].epsilon is None and "needs every release to be Gaussian" in routes["exact"].note
    worst = 4 * 11  # 4 arms × ⌈log₂ 1024⌉ + 1 nodes
    assert routes["pure"].epsilon == pytest.approx(worst / 50.0)
    assert pure_epsilon(ledger)[0] == pytest.approx(worst / 50.0)
    assert routes["pld"].lower <= routes["pld"].epsilon <= routes["kov"].epsilon <= routes["pure"].epsilon
    assert routes["pld"].epsilon <= routes["cks"].epsilon
    assert tightest(epsilon_routes(ledger, 1e-5)).route == "pld"
    assert "homogeneous theorem" in routes["kov"].note and not routes["kov"].exact


def test_randomized_response_of_one_epsilon_is_accounted_exactly():
    ledger = PrivacyLedger()
    ledger.record_block("report", (1, 500), (1, 2), RandomizedResponse(2, 0.1, 3), "current")
    routes = _routes(ledger, lower=True)
    assert routes["kov"].exact and routes["kov"].lower <= routes["kov"].epsilon
    assert routes["kov"].epsilon == pytest.approx(routes["pld"].epsilon, rel=1e-6)  # 4 binary RRs per user


def test_toeplitz_weighted_pure_releases_are_accounted_by_rho_only():
    ledger = PrivacyLedger()
    ledger.record_block("blt", (1, 50), (1, 1), LaplaceMechanism(1.0, 30.0), "toeplitz:0.5/0.5")
    routes = _routes(ledger)
    assert routes["cks"].epsilon is not None
    for name in ("gdp", "pure", "kov", "pld"):
        assert routes[name].epsilon is None and "Toeplitz" in routes[name].note
    assert pure_epsilon(ledger)[0] is None and mu_bounds(ledger)[0] is None
    with pytest.raises(InvalidParameterError, match="Toeplitz"):
        dp_event(ledger)


def test_naive_accounting_counts_every_release_against_one_user():
    ledger = PrivacyLedger()
    ledger.record_block("count", (1, 64), (1, 1), LaplaceMechanism(1.0, 100.0), "current")
    (profile,) = user_profiles(ledger, "naive")
    assert profile.pure[0][1] == 64
    assert _routes(ledger, accounting="naive")["pure"].epsilon == pytest.approx(0.64)
    assert _routes(ledger)["pure"].epsilon == pytest.approx(0.01)


def test_a_gaussian_release_has_no_pure_epsilon():
    ledger = PrivacyLedger()
    ledger.record_block("count", (1, 8), (1, 1), LaplaceMechanism(1.0, 10.0), "current")
    ledger.record_block("sum", (1, 8), (1, 1), GaussianMechanism(1.0, 10.0), "prefix")
    assert pure_epsilon(ledger) == (math.inf, "a Gaussian release is ε-DP for no finite ε")
    assert "no finite ε" in _routes(ledger)["kov"].note


def _every_profile(ledger: PrivacyLedger) -> np.ndarray:
    users = np.arange(1, ledger.n_users + 1, dtype=np.int64)
    return _matrix(ledger.blocks, users, _columns(ledger.blocks))


def _as_row(profile: UserProfile, ledger: PrivacyLedger) -> np.ndarray:
    counts = dict(profile.pure)
    return np.array([profile.gaussian_rho, profile.weighted_rho] + [counts.get(c, 0) for c in _columns(ledger.blocks)])


@given(ledgers(gaussian_only=False, max_blocks=4))
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
def test_the_profiles_dominate_every_user_and_belong_to_users(ledger):
    profiles = user_profiles(ledger)
    if ledger.n_users == 0:
        assert profiles == ()
        return
    every = _every_profile(ledger)
    rows = np.array([_as_row(p, ledger) for p in profiles])
    # every user's profile is dominated by one returned (ρ rounded up by a few ulps)
    dominated = np.all(rows[None, :, :] >= every[:, None, :] * (1 - 1e-12), axis=2).any(axis=1)
    assert dominated.all()
    for p in profiles:  # each is a user's own profile (no envelope at this size)
        assert not p.envelope and p.user >= 1
        np.testing.assert_allclose(_as_row(p, ledger), every[p.user - 1], rtol=1e-12)


# ---- against dp-accounting ---------------------------------------------------------------------------------


@st.composite
def mixed_ledgers(draw):
    """Small mixed ledgers whose dp-accounting PLDs stay cheap: Gaussian σ/Δ in [1, 60], Laplace ε0 ≤ 0.5,
    randomized response ε ≤ 0.5 (k ≤ 4, Δ₀ ≤ 2), a few episodes and stages of each."""
    mechanisms = st.one_of(
        st.builds(GaussianMechanism, st.just(1.0), st.floats(1.0, 60.0), st.integers(1, 3)),
        st.builds(LaplaceMechanism, st.just(1.0), st.floats(2.0, 100.0)),
        st.builds(lambda e, k, s: RandomizedResponse(s, e, 2, k), st.floats(0.01, 0.5), st.integers(2, 4),
                  st.integers(1, 2)),
    )
    ledger = PrivacyLedger()
    for i in range(draw(st.integers(1, 4))):
        users = draw(st.sampled_from(PATTERNS))
        first = draw(st.integers(1, 6)) * 2
        ledger.record_block(f"f{i}", (first, first + 2 * draw(st.integers(0, 12))), (1, draw(st.integers(1, 3))),
                            draw(mechanisms), users)
    return ledger


def _against_dp_accounting(ledger: PrivacyLedger, delta: float) -> None:
    """Every route ≥ dp-accounting's optimistic PLD ε of the worst user's events (never below the truth), and the
    PLD route within 1% (and its grid) of their pessimistic one, on the profiles they compose."""
    profiles = user_profiles(ledger)
    if not profiles:
        return
    theirs = []
    for profile in profiles:
        event = pld.dp_events(profile.gaussian_mu, profile.pure)
        theirs.append((pld.dp_accounting_epsilon(event, delta, pessimistic=False),
                       pld.dp_accounting_epsilon(event, delta)))
    optimistic = max(low for low, _ in theirs)
    pessimistic = max(up for _, up in theirs)
    routes = epsilon_routes(ledger, delta)
    for route in routes:
        if route.epsilon is not None:
            assert route.epsilon >= optimistic * (1 - 1e-9), route
    ours = {r.route: r for r in routes}
    if ours["pld"].epsilon is not None:  # (at δ below its FFTs' error bound the route says so and stands aside)
        assert ours["pld"].epsilon <= pessimistic * 1.01 + 2e-4
        assert tightest(routes).epsilon <= pessimistic * 1.01 + 2e-4


@pytest.mark.slow
@given(mixed_ledgers(), st.sampled_from([1e-3, 1e-5, 1e-7, 1e-10]))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_route_against_dp_accounting(ledger, delta):
    _against_dp_accounting(ledger, delta)  # (the default run holds one fixed mixed ledger to it, below)


def test_a_fixed_mixed_ledger_against_dp_accounting():
    ledger = PrivacyLedger()
    ledger.record_block("sum", (2, 20), (1, 2), GaussianMechanism(1.0, 12.0, 2), "prefix")
    ledger.record_block("count", (2, 20), (1, 3), LaplaceMechanism(1.0, 40.0), "dyadic-1")
    ledger.record_block("report", (1, 20), (1, 1), RandomizedResponse(2, 0.2, 2, 3), "current")
    _against_dp_accounting(ledger, 1e-6)


def test_the_worst_users_events_reach_dp_accounting():
    ledger = PrivacyLedger()
    ledger.record_block("sum", (1, 200), (1, 2), GaussianMechanism(1.0, 30.0), "prefix")
    ledger.record_block("count", (1, 200), (1, 2), LaplaceMechanism(1.0, 200.0), "tree")
    ledger.record_block("report", (1, 200), (1, 1), RandomizedResponse(1, 0.3, 1, 3), "current")
    event = dp_event(ledger, 1e-6)
    ours = tightest(epsilon_routes(ledger, 1e-6)).epsilon
    theirs_low = pld.dp_accounting_epsilon(event, 1e-6, pessimistic=False)
    theirs_up = pld.dp_accounting_epsilon(event, 1e-6)
    assert theirs_low <= ours <= theirs_up * 1.01


def test_rho_and_mu_bounds():
    gaussian = PrivacyLedger()
    gaussian.record_block("sum", (1, 10), (1, 1), GaussianMechanism(1.0, 5.0), "current")
    upper, lower, exact = rho_bounds(gaussian)
    assert exact and upper == gaussian.worst_user_rho() and lower <= 0.02 <= upper
    upper, lower, exact, _ = mu_bounds(gaussian)
    assert exact and lower <= 0.2 <= upper and upper == pytest.approx(0.2)
    laplace = PrivacyLedger()
    laplace.record_block("count", (1, 10), (1, 5), LaplaceMechanism(1.0, 4.0), "current")
    upper, lower, exact = rho_bounds(laplace)
    assert not exact and 0 < lower < upper == pytest.approx(5 * 0.25**2 / 2)
    # the lower bound is the composed pairs' sup_α D_α/α, never above any valid upper bound
    assert lower <= 5 * LaplaceMechanism(1.0, 4.0).renyi_epsilon(50.0)


def test_many_distinct_profiles_fall_back_to_their_envelope(monkeypatch):
    import dpverify.accounting as accounting

    ledger = PrivacyLedger()  # users 1..32 and 33..64 read different releases: two maximal profiles
    ledger.record_block("a", (1, 32), (1, 1), LaplaceMechanism(1.0, 10.0), "tree")
    ledger.record_block("b", (33, 64), (1, 1), RandomizedResponse(1, 0.2), "current")
    assert len(user_profiles(ledger)) == 2
    monkeypatch.setattr(accounting, "MAX_PROFILES", 1)
    (profile,) = user_profiles(ledger)
    assert profile.envelope and profile.user == 0
    every = _every_profile(ledger)
    assert np.all(_as_row(profile, ledger) >= every.max(axis=0) * (1 - 1e-12))
    assert "envelope" in _routes(ledger)["pld"].note


def test_every_route_of_a_ledger_and_the_least_epsilon():
    """A Laplace ledger: the exact route stands aside with its reason; the ledger's ε is the least route's."""
    ledger = PrivacyLedger()
    ledger.record_block("lap", (1, 30), (1, 2), LaplaceMechanism(1.0, 20.0), "prefix")
    every = epsilon_routes(ledger, 1e-5)
    routes = {r.route: r for r in every}
    assert routes["exact"].epsilon is None and "Gaussian" in routes["exact"].note
    assert tightest(every).epsilon == min(r.epsilon for r in every if r.epsilon is not None)
    assert tightest(every).epsilon < ledger.account(1e-5).epsilon["cks"]
    gaussian = PrivacyLedger()
    gaussian.record_block("g", (1, 30), (1, 2), GaussianMechanism(1.0, 20.0), "prefix")
    assert tightest(epsilon_routes(gaussian, 1e-5)).route == "exact"
    assert tightest(epsilon_routes(gaussian, 1e-5)).epsilon == gaussian.account(1e-5).epsilon["exact"]
