"""Testing helpers dpverify ships for *your* CI: assertions, audits, calibration, an agent contract.

- :mod:`dpverify.testing.assertions` — a ledger meets a claimed (ε, δ) (with an explicit relative
  tolerance, default 0); an agent's claim equals its ledger; every release used fresh noise; a
  reported ε is never below a reference.
- :mod:`dpverify.testing.audits` — :func:`assert_audit_passes` and :func:`assert_audit_refutes`: one
  empirical privacy audit (:func:`dpverify.audit.run_audit`, or for a whole agent with ``notion=``,
  :func:`dpverify.audit.agent_audit.audit_agent`) per assertion, deterministic under a seed, with a
  stated false-alarm level.
- :func:`calibrate_gaussian`, :func:`calibrate_goe`, :func:`calibrate_laplace` (from
  :mod:`dpverify.calibrate_mechanism`) — one-line calibration whose own accounting meets the target.
- :mod:`dpverify.testing.agent_contract` — :func:`check_private_agent`: the properties every private
  agent must have, one named pass / fail / not applicable each.
- :mod:`dpverify.testing.strategies` — hypothesis strategies for privacy parameters, mechanisms,
  ledgers and neighbouring datasets (needs ``hypothesis``, in the ``test`` extra; not imported here).
- :mod:`dpverify.testing.pytest_plugin` — registered through the ``pytest11`` entry point: the
  ``dp_rng`` fixture (a ``numpy.random.Generator`` seeded from the test's node id) and the
  ``dp_statistical`` marker for statistical tests.

The user's walk-through is docs/testing.md.
"""

from dpverify.calibrate_mechanism import (
    calibrate_gaussian,
    calibrate_goe,
    calibrate_laplace,
    composed_epsilon,
    composition_ledger,
)
from dpverify.testing.agent_contract import (
    CONTRACT_PROPERTIES,
    AgentContractResult,
    PropertyResult,
    assert_private_agent,
    check_private_agent,
)
from dpverify.testing.assertions import (
    assert_claim_matches_ledger,
    assert_fresh_noise,
    assert_ledger_meets,
    assert_not_below,
)
from dpverify.testing.audits import (
    DEFAULT_AGENT_TRIALS,
    DEFAULT_CONFIDENCE,
    DEFAULT_TRIALS,
    assert_audit_passes,
    assert_audit_refutes,
)

__all__ = [
    "CONTRACT_PROPERTIES",
    "DEFAULT_AGENT_TRIALS",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_TRIALS",
    "AgentContractResult",
    "PropertyResult",
    "assert_audit_passes",
    "assert_audit_refutes",
    "assert_claim_matches_ledger",
    "assert_fresh_noise",
    "assert_ledger_meets",
    "assert_not_below",
    "assert_private_agent",
    "calibrate_gaussian",
    "calibrate_goe",
    "calibrate_laplace",
    "check_private_agent",
    "composed_epsilon",
    "composition_ledger",
]
