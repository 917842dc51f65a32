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

import dataclasses
import time

from dpverify.checks import NOT_RUN, overall
from dpverify.errors import InvalidParameterError
from dpverify.testing import check_private_agent
from dpverify.verify.result import StructureSection
from dpverify.verify.target import VerifyRun

SOURCE = "dpverify.testing.check_private_agent"


def structure_section(run: VerifyRun) -> StructureSection:
    """Run the contract check on the run's factory and environment at the budget's episode cap; one check per
    property (named with spaces). The white-box properties are left out: ``verify`` runs them as a section of
    their own, at the claim's K."""
    start = time.perf_counter()
    episodes = min(run.budget.contract_episodes, run.episodes)
    try:
        result = check_private_agent(run.target.factory, run.mdp, num_episodes=episodes, options=run.options,
                                     seed=run.budget.audit_seed, whitebox=False, name=run.target.name)
    except (InvalidParameterError, TypeError, AttributeError) as exc:
        why = " ".join(f"{type(exc).__name__}: {exc}".split())
        return StructureSection(NOT_RUN, f"checks could not run: the factory does not follow the private-agent "
                                         f"protocol ({why})", SOURCE, seconds=time.perf_counter() - start)
    checks = tuple(dataclasses.replace(p, name=p.name.replace("_", " ")) for p in result.properties)
    status = overall(c.status for c in checks)
    unrun = [c.reason for c in checks if c.status == NOT_RUN]
    reason = "" if status != NOT_RUN else (unrun or ["the contract check reported no applicable property"])[0]
    return StructureSection(status, reason, SOURCE, checks, seconds=time.perf_counter() - start)
