"""PLD composition: against closed forms (exact RR, exact Gaussian, exact Gaussian ⊗ RR mixture, scalar Laplace),
against dp-accounting's own PLDs, and the float-error bound of its FFTs against exact binomial masses."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from dpverify import pld
from dpverify.composition import rr_epsilon
from dpverify.conversions import epsilon_exact_gaussian
from dpverify.mechanisms import DominatingPair

RR = DominatingPair("randomized-response", 0.05)
LAP = DominatingPair("laplace", 0.02)


@pytest.mark.parametrize("eps, n, delta", [(0.05, 1000, 1e-5), (0.3, 40, 1e-3), (1.0, 3, 1e-6)])
def test_randomized_response_alone_is_exact(eps, n, delta):
    pair = DominatingPair("randomized-response", eps)
    exact = rr_epsilon(eps, n, delta)
    upper = pld.composed_epsilon(0.0, [(pair, n)], delta, estimate=n * eps)
    lower = pld.composed_epsilon(0.0, [(pair, n)], delta, estimate=n * eps, pessimistic=False)
    assert lower <= exact * (1 + 1e-9) and upper >= rr_epsilon(eps, n, delta, lower=True)
    assert upper == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("delta", [1e-6, 1e-3, 0.05])
def test_one_laplace_release_is_exact(delta):
    # δ(ε) = 1 − e^{(ε − ε0)/2}, so ε = ε0 + 2 log(1 − δ)
    eps0 = 0.7
    exact = eps0 + 2.0 * math.log1p(-delta)
    pair = DominatingPair("laplace", eps0)
    upper = pld.composed_epsilon(0.0, [(pair, 1)], delta, estimate=eps0)
    lower = pld.composed_epsilon(0.0, [(pair, 1)], delta, estimate=eps0, pessimistic=False)
    assert lower <= exact <= upper and upper - lower <= 2 * eps0 / 2**pld.MAX_LAPLACE_LEVEL


def test_gaussian_with_randomized_response_against_the_exact_mixture():
    """One Gaussian (μ) composed with n binary RRs: δ(ε) = Σ_b Bin(b; n, q)·δ_μ(ε − ε(n − 2b)) exactly (the RR
    losses are a lattice), with δ_μ the Gaussian profile at any real argument."""
    mu, eps, n, delta = 0.8, 0.1, 60, 1e-5
    q = 1.0 / (1.0 + math.exp(eps))
    b = np.arange(n + 1)
    weights, losses = stats.binom.pmf(b, n, q), eps * (n - 2 * b)

    def profile(x: float) -> float:
        t = x - losses
        return float(np.sum(weights * (special.ndtr(-t / mu + mu / 2) - np.exp(t) * special.ndtr(-t / mu - mu / 2))))

    lo, hi = 0.0, 20.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if profile(mid) <= delta else (mid, hi)
    groups = [(DominatingPair("randomized-response", eps), n)]
    upper = pld.composed_epsilon(mu, groups, delta, estimate=10.0)
    lower = pld.composed_epsilon(mu, groups, delta, estimate=10.0, pessimistic=False)
    assert lower <= hi * (1 + 1e-9) and upper >= lo * (1 - 1e-9)
    assert upper == pytest.approx(hi, rel=1e-3)


def test_gaussian_alone_matches_the_exact_profile():
    upper = pld.composed_epsilon(1.3, [], 1e-5, estimate=10.0)
    exact = epsilon_exact_gaussian(1.3, 1e-5)
    assert exact <= upper <= exact * (1 + 1e-3)


@pytest.mark.parametrize("groups, mu", [
    ([(LAP, 300), (RR, 200)], 0.0),
    ([(LAP, 50), (DominatingPair("randomized-response", 0.2, categories=4), 30)], 0.5),
    ([(DominatingPair("laplace", 0.3), 3)], 0.6),
])
def test_against_dp_accounting(groups, mu):
    """dp-accounting's pessimistic and optimistic PLDs of the same events (on its fixed grid) bracket ours."""
    event = pld.dp_events(mu, groups)
    theirs_up = pld.dp_accounting_epsilon(event, 1e-5)
    theirs_low = pld.dp_accounting_epsilon(event, 1e-5, pessimistic=False)
    ours = pld.composed_epsilon(mu, groups, 1e-5, estimate=2 * theirs_up)
    ours_low = pld.composed_epsilon(mu, groups, 1e-5, estimate=2 * theirs_up, pessimistic=False)
    assert theirs_low <= ours <= theirs_up * 1.01
    assert ours_low <= theirs_up and ours_low <= ours


def test_the_fft_error_bound_holds_against_exact_binomial_masses():
    eps, n = 0.05, 20_000
    q = 1.0 / (1.0 + math.exp(eps))
    part = pld._self_compose(np.array([q, 0.0, 1.0 - q]), -1, eps, n, True, 1e-15)
    index = part.lower + np.arange(part.probs.size)  # the loss in units of ε: n − 2b
    exact = np.where((n - index) % 2 == 0, stats.binom.pmf((n - index) // 2, n, q), 0.0)
    error = float(np.abs(part.probs - exact).sum())
    assert error <= part.error and part.error < 1e-8


@pytest.mark.parametrize("n, eps", [(50, 0.3), (2_000, 0.05), (100_000, 0.01)])
def test_binomial_masses_are_as_accurate_as_the_pmf_claims(n, eps):
    """The binary-RR PMF's masses (scipy's binomial) against 40-digit mpmath at a few cells: within its 64 ulps."""
    import mpmath

    part = pld._randomized_response(DominatingPair("randomized-response", eps), n, True, 1e-15)
    q = 1.0 / (1.0 + math.exp(eps))
    total = 0.0
    with mpmath.workdps(40):
        for i in np.linspace(0, part.probs.size - 1, 9).astype(int) // 2 * 2:
            b = (n - (part.lower + i)) // 2
            exact = mpmath.binomial(n, b) * mpmath.mpf(q) ** b * (1 - mpmath.mpf(q)) ** (n - b)
            total += abs(float(part.probs[i] - exact))
    assert total <= part.error


def test_rounding_to_a_coarser_grid_moves_every_loss_the_safe_way():
    part = pld._laplace(DominatingPair("laplace", 0.3), 7, True, 1e-15)
    step = 2.0**-9
    up = pld._on_grid(part, step, True)
    down = pld._on_grid(part, step, False)
    mass_loss = lambda p: (p.lower + np.arange(p.probs.size)) * p.step  # noqa: E731
    mean = float(part.probs @ mass_loss(part))
    assert float(up.probs @ mass_loss(up)) >= mean >= float(down.probs @ mass_loss(down))
    assert up.probs.sum() == pytest.approx(part.probs.sum(), rel=1e-12)


def test_below_the_resolution_the_route_reports_infinity():
    assert pld._epsilon_of(pld._Pmf(0.1, 0, np.array([1.0]), 1e-3, 0.0), 1e-5, True) == math.inf


def test_events_name_the_pairs_for_dp_accounting():
    import dp_accounting

    event = pld.dp_events(0.5, [(DominatingPair("randomized-response", 1.0, 3, copies=2), 4), (LAP, 1)])
    gaussian, rr, laplace = event.events
    assert gaussian.noise_multiplier == pytest.approx(2.0)
    assert isinstance(rr, dp_accounting.SelfComposedDpEvent) and rr.count == 8
    assert rr.event.noise_parameter == pytest.approx(3 / (math.e + 2)) and rr.event.num_buckets == 3
    assert laplace.noise_multiplier == pytest.approx(50.0)
