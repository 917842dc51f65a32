"""White-box release checks: an agent's releases checked against its own records, from its behaviour.

An agent's ledger says which mechanism noised each release, which users each release reads and how
much one user can change it; the claim rests on those records. The checks here do not trust them: the
auditor seeds the agent's noise and chooses its users (:mod:`.runs`), then

* reruns it with the transcript held fixed and independent noise — every published difference must be
  distributed as the recorded mechanism says (:mod:`.noise_check`);
* reruns it with the same noise and one user's data replaced — every release must change by at most its
  recorded sensitivity, and only if it is recorded as reading that user (:mod:`.sensitivity_replay`), on
  users and environments built to realise the sensitivity (:mod:`.neighbours`);
* reads every published value for structure no noise covers (:mod:`.structure_check`).

:func:`check_releases` runs them all (:mod:`.check`) and returns a frozen
:class:`~dpverify.whitebox.result.WhiteBoxResult` (one :class:`~dpverify.checks.CheckResult` per check).
``dpverify verify``, ``dpverify audit agent`` and :func:`dpverify.testing.check_private_agent` run them first.
"""

from dpverify.whitebox.check import WhiteBoxPlan, check_releases
from dpverify.whitebox.result import CHECK_NAMES, WhiteBoxResult
from dpverify.whitebox.runs import Subject

__all__ = ["CHECK_NAMES", "Subject", "WhiteBoxPlan", "WhiteBoxResult", "check_releases"]
