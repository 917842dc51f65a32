"""Cross-check of the exact Gaussian composition against Google's dp-accounting PLD accountant.

An independent implementation (privacy-loss distributions, Meiser & Mohammadi 2018; Doroshenko et al.
2022). Skipped cleanly when dp-accounting cannot be imported.
"""

import math

import pytest

dp_accounting = pytest.importorskip("dp_accounting")

from dpverify.ledger import PrivacyLedger  # noqa: E402
from dpverify.mechanisms import GaussianMechanism, GOEMechanism  # noqa: E402


@pytest.mark.parametrize(
    "sigmas, delta",
    [([3.73], 1e-5), ([10.0] * 50, 1e-5), ([2.0, 5.0, 9.0, 30.0], 1e-6), ([50.0] * 400, 1e-5)],
)
def test_exact_composition_matches_pld(sigmas, delta):
    ledger = PrivacyLedger()
    for i, s in enumerate(sigmas):
        ledger.record_block(f"g{i}", (1, 1), (1, 1), GaussianMechanism(1.0, s), "current")
    ours = ledger.guarantee(delta, "exact").epsilon

    # PLD composes the releases one by one (numerically, by FFT): an independent route to the
    # closed-form μ-GDP composition the ledger uses.
    pld = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    for s in sorted(set(sigmas)):
        event = dp_accounting.GaussianDpEvent(noise_multiplier=s)
        pld.compose(dp_accounting.SelfComposedDpEvent(event, sigmas.count(s)))
    theirs = pld.get_epsilon(delta)
    assert ours == pytest.approx(theirs, abs=1e-6)


def test_goe_release_matches_pld_gaussian():
    """A GOE release equals a Gaussian with noise multiplier √2·s/Δ_F in PLD terms."""
    mech = GOEMechanism(math.sqrt(2.0), 1.7, 5)
    ledger = PrivacyLedger()
    ledger.record_block("gram", (1, 1), (1, 1), mech, "current")
    pld = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    pld.compose(
        dp_accounting.GaussianDpEvent(noise_multiplier=mech.equivalent_gaussian_std / mech.frobenius_sensitivity)
    )
    assert ledger.guarantee(1e-5, "exact").epsilon == pytest.approx(pld.get_epsilon(1e-5), abs=1e-6)
