"""One result type for every named check dpverify reports: :class:`CheckResult`.

The white-box release checks (:mod:`dpverify.whitebox`), the private-agent contract
(:func:`dpverify.testing.check_private_agent`) and the sections of ``dpverify verify`` each report
named checks, and each check is one :class:`CheckResult`: its status — pass, fail, not applicable (the
property does not apply to the subject: neither passed nor failed) or not run (it could not be checked:
never a pass) — a one-line reason (why it passed, failed, could not run or does not apply) and its
evidence (the figures behind the reason, by name). :func:`overall` is the status of several.

A failed check also says what its failure shows of the privacy claim (:attr:`CheckResult.claim`): that the claim
is false (None, the default: a witnessed ε above it, a ledger above it, a behaviour the claim rules out), or —
for a check of the agent's *records* — that the records are wrong while the corrected accounting still meets
the claim (:data:`HOLDS`), or that whether it does could not be decided (:data:`UNDECIDED`).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from dpverify import _validate
from dpverify.errors import InvalidParameterError

PASS = "pass"
FAIL = "fail"
NOT_APPLICABLE = "not applicable"
NOT_RUN = "not run"
STATUSES: tuple[str, ...] = (PASS, FAIL, NOT_APPLICABLE, NOT_RUN)

#: What a failed check of the agent's records shows of the claim, when not that it is false (module docstring).
HOLDS = "holds"
UNDECIDED = "undecided"

#: One figure of a check's evidence (a number may be a numpy scalar).
Figure = str | float | bool | None


@dataclass(frozen=True)
class CheckResult:
    """One named check: its status, the one-line reason for it, the evidence behind it and, for a failure of the
    agent's records, what it shows of the claim (``claim``: None — it is false —, :data:`HOLDS` or
    :data:`UNDECIDED`; module docstring)."""

    name: str
    status: str
    reason: str
    evidence: Mapping[str, Figure] = field(default_factory=dict)
    claim: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidParameterError("name", "must be a non-empty string", self.name)
        _validate.one_of("status", self.status, STATUSES)
        if not isinstance(self.reason, str) or not self.reason:
            raise InvalidParameterError("reason", f"must say why the check is {self.status}", self.reason)
        for key, value in self.evidence.items():
            if not isinstance(key, str) or not (value is None or isinstance(value, (str, bool, numbers.Real))):
                raise InvalidParameterError("evidence", "must map names to numbers, strings, booleans or None",
                                            {key: value})
        object.__setattr__(self, "evidence", dict(self.evidence))
        if self.claim is not None:
            _validate.one_of("claim", self.claim, (HOLDS, UNDECIDED))
            if self.status != FAIL:
                raise InvalidParameterError("claim", "may be given for a failed check only", self.claim)

    @property
    def refutes(self) -> bool:
        """Whether this check failed in a way that shows the claim false."""
        return self.status == FAIL and self.claim is None


def overall(statuses: Iterable[str]) -> str:
    """The status of several checks: fail if any failed, else not run if any did not run or none applies,
    else pass (a check that does not apply counts for neither)."""
    applicable = [s for s in statuses if s != NOT_APPLICABLE]
    if FAIL in applicable:
        return FAIL
    return NOT_RUN if not applicable or NOT_RUN in applicable else PASS


def named(checks: Iterable[CheckResult], name: str) -> CheckResult:
    """The check called ``name`` (KeyError when there is none)."""
    for check in checks:
        if check.name == name:
            return check
    raise KeyError(name)
