"""Mechanisms: privacy parameters, the GOE derivation by simulation, Laplace by quadrature, sampling."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import (
    MECHANISMS,
    DominatingPair,
    GaussianMechanism,
    GOEMechanism,
    LaplaceMechanism,
    RandomizedResponse,
    mechanism_for_statistic,
    mechanism_from_dict,
    register_mechanism,
)
from dpverify.neighbouring import Neighbouring


def test_gaussian_parameters():
    m = GaussianMechanism(sensitivity=2.0, sigma=4.0, dim=3)
    assert m.mu == 0.5
    assert m.rho >= 0.125 and m.rho == pytest.approx(0.125, rel=1e-15)  # rounded up, never below
    assert m.renyi_epsilon(3.0) == pytest.approx(0.375)
    assert m.relation is Neighbouring.REPLACE_ONE


def test_goe_is_gaussian_with_frobenius_sensitivity_and_std_sqrt2_s():
    m = GOEMechanism(frobenius_sensitivity=1.0, entry_std=0.5, dim=4)
    assert m.equivalent_gaussian_std == pytest.approx(math.sqrt(2) * 0.5)
    assert m.rho == pytest.approx(1.0 / (4 * 0.25))
    # Sahu 2025: s² = 1/(4ρ0) gives ρ = ‖ΔG‖_F²·ρ0.
    rho0 = 0.01
    s = math.sqrt(1 / (4 * rho0))
    assert GOEMechanism(1.0, s, 3).rho == pytest.approx(rho0)
    assert GOEMechanism(math.sqrt(2), s, 3).rho == pytest.approx(2 * rho0)  # replacement


def _goe_log_likelihood_ratio(y, g, g_prime, s):
    """log p(Y|G)/p(Y|G′) from the GOE density entry by entry (diagonal var 2s², off-diagonal s²).

    Written from the definition of the noise, independently of the isometry used in the library.
    """
    n = g.shape[0]
    iu = np.triu_indices(n, 1)
    di = np.diag_indices(n)
    diag = (-(y[:, di[0], di[1]] - g[di]) ** 2 + (y[:, di[0], di[1]] - g_prime[di]) ** 2) / (4 * s * s)
    off = (-(y[:, iu[0], iu[1]] - g[iu]) ** 2 + (y[:, iu[0], iu[1]] - g_prime[iu]) ** 2) / (2 * s * s)
    return diag.sum(axis=1) + off.sum(axis=1)


def test_goe_privacy_loss_is_gaussian_by_simulation():
    """The privacy-loss variable of the GOE release is N(μ²/2, μ²) with μ = ‖ΔG‖_F/(√2 s).

    Confirms docs/accounting.md's derivation: 200 000 releases, a replacement pair x xᵀ vs y yᵀ with
    x ⊥ y (‖ΔG‖_F = √2). Tolerances are ~5 standard errors.
    """
    rng = np.random.default_rng(20261129)
    n, s = 4, 0.8
    x = np.array([1.0, 0, 0, 0])
    y = np.array([0, 1.0, 0, 0])
    g, g_prime = np.outer(x, x), np.outer(y, y)
    mech = GOEMechanism(np.linalg.norm(g - g_prime), s, n)
    releases = mech.release(g, rng, n=200_000)
    loss = _goe_log_likelihood_ratio(releases, g, g_prime, s)
    mu = mech.mu
    se_mean = mu / math.sqrt(loss.size)
    assert abs(loss.mean() - mu * mu / 2) < 5 * se_mean
    assert abs(loss.var() / (mu * mu) - 1) < 5 * math.sqrt(2 / loss.size)
    assert stats.kstest((loss - mu * mu / 2) / mu, "norm").pvalue > 1e-3
    # The exact profile of the library equals the simulated hockey-stick divergence.
    for eps in (0.0, 0.5, 1.0):
        sim = np.mean(np.maximum(0.0, 1.0 - np.exp(eps - loss)))
        se = np.std(np.maximum(0.0, 1.0 - np.exp(eps - loss))) / math.sqrt(loss.size)
        assert abs(sim - mech.delta_for_epsilon(eps)) < 5 * se + 1e-4


def test_goe_noise_covariance_under_the_isometry():
    """After M ↦ (M_ii, √2 M_ij), GOE noise is iid N(0, 2s²): check the sample covariance."""
    rng = np.random.default_rng(7)
    n, s = 3, 1.3
    mech = GOEMechanism(1.0, s, n)
    noise = mech.release(np.zeros((n, n)), rng, n=100_000)
    iu = np.triu_indices(n, 1)
    vec = np.concatenate([noise[:, range(n), range(n)], math.sqrt(2) * noise[:, iu[0], iu[1]]], axis=1)
    cov = np.cov(vec, rowvar=False)
    assert np.allclose(cov, 2 * s * s * np.eye(vec.shape[1]), atol=0.05 * 2 * s * s)


@given(st.floats(0.05, 5.0), st.floats(0.0, 6.0))
def test_laplace_profile_matches_quadrature(eps0, eps):
    m = LaplaceMechanism(sensitivity=1.0, scale=1.0 / eps0)
    b = m.scale

    def integrand(x):
        p = math.exp(-abs(x) / b) / (2 * b)
        q = math.exp(-abs(x - 1.0) / b) / (2 * b)
        return max(0.0, p - math.exp(eps) * q)

    # Break the integral at the kinks of the densities and where p = e^ε q, i.e. x* = (1 − εb)/2.
    kinks = sorted({0.0, 1.0, min(1.0, max(0.0, (1.0 - eps * b) / 2.0))})
    ref, _ = integrate.quad(integrand, -60 * b, 60 * b, points=kinks, limit=200, epsabs=1e-13)
    assert m.delta_for_epsilon(eps) == pytest.approx(ref, abs=1e-9)


@given(st.floats(0.05, 3.0), st.floats(1.01, 20.0))
def test_laplace_renyi_matches_quadrature(eps0, alpha):
    m = LaplaceMechanism(sensitivity=1.0, scale=1.0 / eps0)
    b = m.scale

    def integrand(x):
        return math.exp(alpha * (-abs(x) / b) + (1 - alpha) * (-abs(x - 1.0) / b)) / (2 * b)

    ref, _ = integrate.quad(integrand, -80 * b, 80 * b, points=[0.0, 1.0], limit=200)
    assert m.renyi_epsilon(alpha) == pytest.approx(math.log(ref) / (alpha - 1), rel=1e-6, abs=1e-9)
    assert m.renyi_epsilon(alpha) <= m.epsilon + 1e-12


def test_release_uses_fresh_noise_from_the_given_generator():
    m = GaussianMechanism(1.0, 1.0, dim=5)
    rng = np.random.default_rng(0)
    a, b = m.release(np.zeros(5), rng), m.release(np.zeros(5), rng)
    assert not np.allclose(a, b)
    again = m.release(np.zeros(5), np.random.default_rng(0))
    assert np.array_equal(a, again)  # reproducible from the seed, not from global state
    assert m.release(np.zeros(5), rng, n=7).shape == (7, 5)


@pytest.mark.parametrize(
    "make, parameter",
    [
        (lambda: GaussianMechanism(0.0, 1.0), "sensitivity"),
        (lambda: GaussianMechanism(1.0, float("nan")), "sigma"),
        (lambda: GaussianMechanism(1.0, 1.0, dim=0), "dim"),
        (lambda: GOEMechanism(1.0, -1.0, 3), "entry_std"),
        (lambda: LaplaceMechanism(1.0, 0.0), "scale"),
        (lambda: GaussianMechanism(1.0, 1.0, relation="neighbours"), "relation"),
    ],
)
def test_invalid_specs(make, parameter):
    with pytest.raises(InvalidParameterError) as info:
        make()
    assert info.value.parameter == parameter


def test_release_validation():
    m = GaussianMechanism(1.0, 1.0, dim=2)
    with pytest.raises(InvalidParameterError, match="rng"):
        m.release(np.zeros(2), rng=np.random.RandomState(0))
    with pytest.raises(InvalidParameterError, match="shape"):
        m.release(np.zeros(3), np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="finite"):
        m.release(np.array([0.0, np.nan]), np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="symmetric"):
        GOEMechanism(1.0, 1.0, 2).release(np.array([[0, 1.0], [0, 0]]), np.random.default_rng(0))


@pytest.mark.parametrize(
    "mech",
    [GaussianMechanism(1.5, 2.0, 3), GOEMechanism(0.3, 0.7, 4, "add-remove-one"), LaplaceMechanism(1.0, 0.25),
     RandomizedResponse(2, 0.3, 5, 7, "add-remove-one")],
)
def test_dict_round_trip(mech):
    assert mechanism_from_dict(mech.to_dict()) == mech


def test_dict_rejects_unknown_kind_and_fields():
    with pytest.raises(InvalidParameterError, match="kind"):
        mechanism_from_dict({"kind": "exponential"})
    with pytest.raises(InvalidParameterError, match="fields"):
        mechanism_from_dict({"kind": "gaussian", "sensitivity": 1.0})


# ---- the registry: a new mechanism is one registered class ------------------------------------------


def _toy_class():
    """A registered-looking Gaussian variant with its own kind and statistic kind (not registered)."""
    from dataclasses import dataclass
    from typing import ClassVar

    @dataclass(frozen=True)
    class ToyGaussian(GaussianMechanism):
        kind: ClassVar[str] = "toy-gaussian"
        statistic_kind: ClassVar[str | None] = "toy-vector"

    return ToyGaussian


def test_every_builtin_is_registered_under_its_kind():
    assert dict(MECHANISMS) == {"gaussian": GaussianMechanism, "goe": GOEMechanism, "laplace": LaplaceMechanism,
                                "randomized-response": RandomizedResponse}
    assert mechanism_for_statistic("vector") is GaussianMechanism
    assert mechanism_for_statistic("symmetric-matrix") is GOEMechanism
    with pytest.raises(InvalidParameterError, match="kind"):
        mechanism_for_statistic("tensor")


@pytest.mark.parametrize("cls", [GaussianMechanism, GOEMechanism, LaplaceMechanism])
def test_declared_fields_build_and_describe_the_mechanism(cls):
    m = cls.build(2.0, 3.0, 2, "add-remove-one")
    assert (m.sensitivity_value, m.noise_scale, m.dim, m.relation) == (2.0, 3.0, 2, Neighbouring.ADD_REMOVE_ONE)
    first, second, _ = m.worst_case_inputs()
    norm = np.abs(second - first).sum() if cls is LaplaceMechanism else np.linalg.norm(second - first)
    assert norm == pytest.approx(2.0)
    out = m.release(first, np.random.default_rng(0), n=4)
    assert m.audit_view(out).shape[0] == 4 and m.audit_view(out).ndim == 2


@pytest.mark.parametrize("cls", [GaussianMechanism, GOEMechanism, LaplaceMechanism])
def test_noise_for_rho_is_the_noise_at_that_rho(cls):
    noise = cls.noise_for_rho(1.5, 0.02)
    assert cls.build(1.5, noise, 1).rho == pytest.approx(0.02, rel=1e-12)


def test_a_registered_class_is_used_by_json_calibration_and_audits(monkeypatch):
    from dpverify import mechanisms as module
    from dpverify.audit.adapters import ReleaseOf, claimed_epsilon, worst_case_pair
    from dpverify.calibration import ReleaseSchedule, StatisticSpec, calibrate

    toy = _toy_class()
    monkeypatch.setitem(module._REGISTRY, toy.kind, toy)  # what @register_mechanism does, undone after the test
    m = toy(1.0, 2.0, 3)
    assert mechanism_from_dict(m.to_dict()) == m and type(mechanism_from_dict(m.to_dict())) is toy
    pair = worst_case_pair(m)
    assert np.linalg.norm(pair.second - pair.first) == pytest.approx(1.0)
    assert ReleaseOf(m)(pair.first, 5, np.random.default_rng(1)).shape == (5, 3)
    assert claimed_epsilon(m, 1e-5) == GaussianMechanism(1.0, 2.0, 3).claimed_epsilon(1e-5)
    spec = StatisticSpec("x", "toy statistic", "toy-vector", 3, 1.0, "current")
    schedule = ReleaseSchedule("toy", "test", "replace-one", 10, 2, (spec,), ())
    calibration = calibrate(schedule, 1.0, 1e-5)
    assert type(calibration.mechanism("x")) is toy and calibration.accounted_epsilon <= 1.0


def test_register_mechanism_checks_the_class(monkeypatch):
    from dpverify import mechanisms as module

    monkeypatch.setattr(module, "_REGISTRY", dict(module._REGISTRY))
    toy = register_mechanism(_toy_class())
    assert module._REGISTRY["toy-gaussian"] is toy and register_mechanism(toy) is toy  # idempotent
    with pytest.raises(InvalidParameterError, match="NoiseMechanism subclass"):
        register_mechanism(int)
    clash = _toy_class()
    with pytest.raises(InvalidParameterError, match="unique"):
        register_mechanism(clash)

    class NoFields(GaussianMechanism):
        kind = "no-fields"
        noise_field = "missing"

    with pytest.raises(InvalidParameterError, match="declared fields"):
        register_mechanism(NoFields)


def test_standardised_noise_of_each_mechanism_is_iid_unit_law() -> None:
    from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism

    rng = np.random.default_rng(0)
    goe = GOEMechanism(1.0, 0.7, 4)
    draws = goe.release(np.zeros((4, 4)), rng, 20_000)
    z = goe.standardised_noise(draws)
    assert z.shape == (20_000, 10) and np.allclose(z.var(axis=0), 1.0, atol=0.05)
    assert np.allclose(goe.standardised_noise(draws[0]), z[0])
    vec = GaussianMechanism(1.0, 3.0, 2)
    assert np.allclose(vec.standardised_noise(vec.release(np.zeros(2), rng, 20_000)).std(axis=0), 1.0, atol=0.03)
    lap = LaplaceMechanism(1.0, 2.0, 2)
    assert lap.noise_law == "laplace" and vec.noise_law == goe.noise_law == "normal"
    assert np.allclose(np.abs(lap.standardised_noise(lap.release(np.zeros(2), rng, 20_000))).mean(axis=0), 1.0,
                       atol=0.04)


def test_noise_is_what_release_adds_from_the_same_draws() -> None:
    # noise(rng, n) is the billboard's route (it releases blocks); release(value, rng[, n]) the mechanism's own:
    # the same draws, in the same order, whether one release at a time or n at once.
    for mechanism in (GaussianMechanism(1.0, 0.7, 3), GOEMechanism(1.0, 0.4, 3), LaplaceMechanism(1.0, 2.0, 3),
                      RandomizedResponse(2, 0.5, 3, 4)):
        value = np.eye(3) if isinstance(mechanism, GOEMechanism) else np.arange(3.0)
        if isinstance(mechanism, RandomizedResponse):
            # its noise is an offset mod k: published − raw is the offset or the offset − k
            one_by_one = np.stack([mechanism.release(value, rng) for rng in [np.random.default_rng(5)]
                                   for _ in range(4)])
            np.testing.assert_array_equal(np.mod(value + mechanism.noise(np.random.default_rng(5), 4), 4), one_by_one)
            continue
        one_by_one = np.stack([mechanism.release(value, rng) - value
                               for rng in [np.random.default_rng(5)] for _ in range(4)])
        at_once = mechanism.noise(np.random.default_rng(5), 4)
        np.testing.assert_allclose(at_once, one_by_one, rtol=0, atol=1e-14)
        np.testing.assert_allclose(mechanism.release(value, np.random.default_rng(5), 4) - value, at_once,
                                   rtol=0, atol=1e-14)


# ---- randomized response -------------------------------------------------------------------------------------


def _rr_laws(m: RandomizedResponse) -> tuple[list, list]:
    """P and Q of every output of m on the worst-case inputs, by enumeration of {0..k−1}^dim in 40-digit mpmath
    (independent of the library's formulas: per-coordinate keep probability e^ε/(e^ε + k − 1), else uniform on
    the other categories)."""
    k, eps = m.categories, mpmath.mpf(m.local_epsilon)
    keep, other = mpmath.exp(eps) / (mpmath.exp(eps) + k - 1), 1 / (mpmath.exp(eps) + k - 1)
    x, y = m.worst_case_inputs()[:2]
    outputs = np.array(np.meshgrid(*[np.arange(k)] * m.dim, indexing="ij")).reshape(m.dim, -1).T
    p = [mpmath.fprod(keep if o == xi else other for o, xi in zip(out, x, strict=True)) for out in outputs]
    q = [mpmath.fprod(keep if o == yi else other for o, yi in zip(out, y, strict=True)) for out in outputs]
    return p, q


@given(st.integers(1, 3).flatmap(lambda d: st.tuples(st.just(d), st.integers(1, d))), st.integers(2, 4),
       st.floats(0.05, 3.0), st.floats(0.0, 4.0))
def test_randomized_response_profile_matches_enumeration(dims, k, eps, eps_prime):
    dim, sensitivity = dims
    m = RandomizedResponse(sensitivity, eps, dim, k)
    with mpmath.workdps(40):
        p, q = _rr_laws(m)
        reference = float(mpmath.fsum(max(0, a - mpmath.exp(eps_prime) * b) for a, b in zip(p, q, strict=True)))
        largest_loss = float(max(mpmath.log(a / b) for a, b in zip(p, q, strict=True)))
    assert m.delta_for_epsilon(eps_prime) == pytest.approx(reference, rel=1e-9, abs=1e-15)
    assert m.delta_for_epsilon(eps_prime) >= reference * (1 - 1e-12) - 1e-30  # (40-digit noise at δ = 0)
    assert m.epsilon == pytest.approx(largest_loss, rel=1e-12) and m.epsilon >= largest_loss  # attained


@given(st.integers(1, 3), st.integers(2, 5), st.floats(0.05, 3.0), st.floats(1.01, 30.0))
def test_randomized_response_renyi_matches_enumeration(sensitivity, k, eps, alpha):
    m = RandomizedResponse(sensitivity, eps, 3, k)
    with mpmath.workdps(40):
        p, q = _rr_laws(m)
        reference = float(mpmath.log(mpmath.fsum(a**alpha * b ** (1 - alpha) for a, b in zip(p, q, strict=True)))
                          / (alpha - 1))
    assert m.renyi_epsilon(alpha) == pytest.approx(reference, rel=1e-9, abs=1e-12)
    assert m.renyi_epsilon(alpha) >= reference - 1e-15 and m.renyi_epsilon(alpha) <= m.epsilon
    assert m.rho >= max(m.renyi_epsilon(a) / a for a in (1.5, 2.0, 5.0))  # ρ bounds the curve


def test_randomized_response_claimed_epsilon_inverts_its_profile():
    m = RandomizedResponse(1, 1.0)
    eps = m.claimed_epsilon(1e-5)
    assert eps == pytest.approx(math.log(math.e - 1e-5 * (math.e + 1)), rel=1e-8)  # δ(ε') = (e^ε − e^ε')/(e^ε + 1)
    assert m.delta_for_epsilon(eps) <= 1e-5 and m.delta_for_epsilon(eps * (1 - 1e-6)) > 1e-5


def test_randomized_response_release_law():
    """Keep frequency: an exact binomial test; the other categories uniform (χ², fixed seed, level 1e-4)."""
    m = RandomizedResponse(1, 0.7, 4, 5)
    rng = np.random.default_rng(11)
    value = np.array([0.0, 1.0, 4.0, 2.0])
    out = m.release(value, rng, 50_000)
    assert out.shape == (50_000, 4) and set(np.unique(out)) <= {0.0, 1.0, 2.0, 3.0, 4.0}
    kept = int(np.count_nonzero(out == value))
    assert stats.binomtest(kept, out.size, math.exp(0.7) / (math.exp(0.7) + 4)).pvalue > 1e-4
    offsets = np.mod(out - value, 5)[out != value].astype(int)
    assert stats.chisquare(np.bincount(offsets, minlength=5)[1:]).pvalue > 1e-4
    assert m.keep_probability <= math.exp(0.7) / (math.exp(0.7) + 4)
    np.testing.assert_array_equal(m.standardised_noise(out - value), np.mod(out - value, 5))


def test_randomized_response_validation():
    with pytest.raises(InvalidParameterError, match="sensitivity must be <= dim"):
        RandomizedResponse(3, 1.0, 2)
    with pytest.raises(InvalidParameterError, match="categories"):
        RandomizedResponse(1, 1.0, 1, 1)
    with pytest.raises(InvalidParameterError, match="local_epsilon"):
        RandomizedResponse(1, 0.0)
    with pytest.raises(InvalidParameterError, match="sensitivity must be an integer"):
        RandomizedResponse(1.5, 1.0, 2)
    with pytest.raises(InvalidParameterError, match="categories 0..1"):
        RandomizedResponse(1, 1.0).release([2.0], np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="categories 0..2"):
        RandomizedResponse(1, 1.0, 1, 3).release([0.5], np.random.default_rng(0))


def test_dominating_pairs():
    assert GaussianMechanism(2.0, 4.0).dominating_pair == DominatingPair("gaussian", 0.5)
    assert LaplaceMechanism(1.0, 2.0).dominating_pair == DominatingPair("laplace", LaplaceMechanism(1.0, 2.0).epsilon)
    wide = LaplaceMechanism(1.0, 2.0, dim=3).dominating_pair  # bounded by binary RR at ε0, not attained
    assert wide.law == "randomized-response" and not wide.tight and wide.pure_epsilon == pytest.approx(0.5)
    rr = RandomizedResponse(2, 0.4, 3, 6).dominating_pair
    assert (rr.copies, rr.categories, rr.pure_epsilon) == (2, 6, pytest.approx(0.8))
    assert GaussianMechanism(1.0, 1.0).dominating_pair.pure_epsilon == math.inf
    with pytest.raises(InvalidParameterError, match="law"):
        DominatingPair("exponential", 1.0)
