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
        ("CONTRACT_PROPERTIES", "AgentContractResult", "PropertyResult", "assert_private_agent",
         "check_private_agent"),
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

if TYPE_CHECKING:  # static checkers see the real names (``X as X`` marks a re-export)
    from dpverify.calibrate_mechanism import (
        calibrate_gaussian as calibrate_gaussian,
    )
    from dpverify.calibrate_mechanism import (
        calibrate_goe as calibrate_goe,
    )
    from dpverify.calibrate_mechanism import (
        calibrate_laplace as calibrate_laplace,
    )
    from dpverify.calibrate_mechanism import (
        calibrate_randomized_response as calibrate_randomized_response,
    )
    from dpverify.calibrate_mechanism import (
        composed_epsilon as composed_epsilon,
    )
    from dpverify.calibrate_mechanism import (
        composition_ledger as composition_ledger,
    )
    from dpverify.testing.agent_contract import (
        CONTRACT_PROPERTIES as CONTRACT_PROPERTIES,
    )
    from dpverify.testing.agent_contract import (
        AgentContractResult as AgentContractResult,
    )
    from dpverify.testing.agent_contract import (
        PropertyResult as PropertyResult,
    )
    from dpverify.testing.agent_contract import (
        assert_private_agent as assert_private_agent,
    )
    from dpverify.testing.agent_contract import (
        check_private_agent as check_private_agent,
    )
    from dpverify.testing.assertions import (
        assert_claim_matches_ledger as assert_claim_matches_ledger,
    )
    from dpverify.testing.assertions import (
        assert_fresh_noise as assert_fresh_noise,
    )
    from dpverify.testing.assertions import (
        assert_ledger_meets as assert_ledger_meets,
    )
    from dpverify.testing.assertions import (
        assert_not_below as assert_not_below,
    )
    from dpverify.testing.audits import (
        DEFAULT_AGENT_TRIALS as DEFAULT_AGENT_TRIALS,
    )
    from dpverify.testing.audits import (
        DEFAULT_CONFIDENCE as DEFAULT_CONFIDENCE,
    )
    from dpverify.testing.audits import (
        DEFAULT_TRIALS as DEFAULT_TRIALS,
    )
    from dpverify.testing.audits import (
        assert_audit_passes as assert_audit_passes,
    )
    from dpverify.testing.audits import (
        assert_audit_refutes as assert_audit_refutes,
    )
