"""Structure: the private-agent contract checks of :func:`dpverify.testing.check_private_agent`.

The contract is what every private agent must satisfy for its claim to mean anything: the ledger
accounts to the claim at the episode cap, every release draws fresh noise, the billboard structure
holds (replaying the billboard with one user's data replaced leaves every other user's actions
unchanged), features above the assumed norm and episodes past the cap are refused, and the ledger's
neighbouring relation is the claim's. ``dpverify verify`` runs that check as it is, at the budget's
episode cap, and reports each named property; it re-implements none of them.

A check that cannot start (the helper is not installed, or the factory does not follow the private
agent protocol, e.g. it ignores ``billboard=``) leaves the section "not run": the verdict is then
INCONCLUSIVE, never CONSISTENT. A property the contract reports as not applicable (the feature-norm
refusal of an agent that declares no feature-norm bound) is shown as "not applicable" with its reason:
neither passed nor failed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from dpverify.errors import InvalidParameterError
from dpverify.testing import check_private_agent
from dpverify.verify.result import FAIL, NOT_APPLICABLE, NOT_RUN, PASS, Check, StructureSection

SOURCE = "dpverify.testing.check_private_agent"


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def structure_section(factory: Callable[..., Any], env: Any, *, episodes: int, options: dict[str, Any],
                      seed: int = 0, name: str | None = None) -> StructureSection:
    """Run the contract check on ``factory`` and ``env`` for ``episodes`` episodes; one Check per property.

    ``options`` are the factory's options including the claim (``epsilon``, ``delta``). The white-box
    properties are left out: ``verify`` runs them as a section of their own, at the claim's K.
    """
    start = time.perf_counter()
    try:
        result = check_private_agent(factory, env, num_episodes=episodes, options=options, seed=seed,
                                     whitebox=False, name=name)
    except (InvalidParameterError, TypeError, AttributeError) as exc:
        return StructureSection(NOT_RUN, "checks could not run: the factory does not follow the private-agent "
                                         f"protocol ({_one_line(exc)})", SOURCE, seconds=time.perf_counter() - start)
    statuses = {"pass": PASS, "fail": FAIL, "not applicable": NOT_APPLICABLE, "not run": NOT_RUN}
    checks = tuple(Check(p.name.replace("_", " "), statuses[p.status], p.detail) for p in result.properties)
    status = FAIL if any(c.status == FAIL for c in checks) else PASS
    unrun = [c for c in checks if c.status == NOT_RUN]
    if status == PASS and (unrun or all(c.status == NOT_APPLICABLE for c in checks)):  # also when there are none
        status = NOT_RUN
    reason = ""
    if status == NOT_RUN:
        reason = unrun[0].detail if unrun else "the contract check reported no applicable property"
    return StructureSection(status, reason, SOURCE, checks, seconds=time.perf_counter() - start)
