"""Testing helpers dpverify ships for *your* CI: assertions, audits, calibration, an agent contract.

- :mod:`dpverify.testing.assertions` — a ledger meets a claimed (ε, δ) (with an explicit relative
  tolerance, default 0); an agent's claim equals its ledger; every release used fresh noise; a
  reported ε is never below a reference.
- :mod:`dpverify.testing.audits` — :func:`assert_audit_passes` and :func:`assert_audit_refutes`: one
  empirical privacy audit (:func:`dpverify.audit.run_audit`, or for a whole agent with ``notion=``,
  :func:`dpverify.agent_audit.audit_agent`) per assertion, deterministic under a seed, with a
  stated false-alarm level.
- :func:`calibrate_gaussian`, :func:`calibrate_goe`, :func:`calibrate_laplace`,
  :func:`calibrate_randomized_response` (from :mod:`dpverify.calibrate_mechanism`) — one-line calibration
  whose own accounting meets the target.
- :mod:`dpverify.testing.agent_contract` — :func:`check_private_agent`: the properties every private
  agent must have, one named pass / fail / not applicable each.
- :mod:`dpverify.testing.strategies` — hypothesis strategies for privacy parameters, mechanisms,
  ledgers and neighbouring datasets (needs ``hypothesis``, in the ``test`` extra; not imported here).
- :mod:`dpverify.testing.pytest_plugin` — registered through the ``pytest11`` entry point: the
  ``dp_rng`` fixture (a ``numpy.random.Generator`` seeded from the test's node id) and the
  ``dp_statistical`` marker for statistical tests.

The user's walk-through is docs/testing.md.
"""

from typing import TYPE_CHECKING

from dpverify._lazy import lazy_exports

#: Public name → its module. Resolved on first access, so that the pytest plugin (loaded in every
#: pytest session of a project that installs dpverify) imports neither the audit engine nor the agents.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        ("calibrate_gaussian", "calibrate_goe", "calibrate_laplace", "calibrate_randomized_response",
         "composed_epsilon", "composition_ledger"),
        "dpverify.calibrate_mechanism",
    ),
    **dict.fromkeys(
        ("CONTRACT_PROPERTIES", "AgentContractResult", "assert_private_agent", "check_private_agent"),
        "dpverify.testing.agent_contract",
    ),
    **dict.fromkeys(
        ("assert_claim_matches_ledger", "assert_fresh_noise", "assert_ledger_meets", "assert_not_below"),
        "dpverify.testing.assertions",
    ),
    **dict.fromkeys(
        ("DEFAULT_AGENT_TRIALS", "DEFAULT_CONFIDENCE", "DEFAULT_TRIALS", "assert_audit_passes",
         "assert_audit_refutes"),
        "dpverify.testing.audits",
    ),
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static checkers see the real names
    from dpverify.calibrate_mechanism import (  # noqa: F401
        calibrate_gaussian,
        calibrate_goe,
        calibrate_laplace,
        calibrate_randomized_response,
        composed_epsilon,
        composition_ledger,
    )
    from dpverify.testing.agent_contract import (  # noqa: F401
        CONTRACT_PROPERTIES,
        AgentContractResult,
        assert_private_agent,
        check_private_agent,
    )
    from dpverify.testing.assertions import (  # noqa: F401
        assert_claim_matches_ledger,
        assert_fresh_noise,
        assert_ledger_meets,
        assert_not_below,
    )
    from dpverify.testing.audits import (  # noqa: F401
        DEFAULT_AGENT_TRIALS,
        DEFAULT_CONFIDENCE,
        DEFAULT_TRIALS,
        assert_audit_passes,
        assert_audit_refutes,
    )
