"""Testing helpers dpverify ships for *your* CI: hypothesis strategies and pytest assertions.

- :mod:`dpverify.testing.strategies` — hypothesis strategies for privacy parameters, mechanisms and
  ledgers (needs ``hypothesis``, in the ``test`` extra).
- :mod:`dpverify.testing.assertions` — assertions for privacy claims: a ledger meets a claimed
  (ε, δ); an agent's claim equals its ledger; every release used fresh noise; a reported ε is never
  below a reference.
- :mod:`dpverify.testing.pytest_plugin` — registered through the ``pytest11`` entry point: a
  ``dp_rng`` fixture (a ``numpy.random.Generator`` seeded from the test's node id, so every test is
  reproducible and independent of the others and of global state).
"""

from dpverify.testing.assertions import (
    assert_claim_matches_ledger,
    assert_fresh_noise,
    assert_ledger_meets,
    assert_not_below,
)

__all__ = ["assert_claim_matches_ledger", "assert_fresh_noise", "assert_ledger_meets", "assert_not_below"]
