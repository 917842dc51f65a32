"""``dpverify verify``: does an agent meet its privacy claim, and what does that cost in regret?

:func:`verify` runs the whole check and returns a frozen :class:`VerifyReport` — claim and accounting,
the private-agent contract checks, the empirical audits, utility — with a verdict CLAIM REFUTED,
CLAIM CONSISTENT (not a certificate) or INCONCLUSIVE; :func:`write_report` writes it as
report.html (self-contained), report.md, report.json and PNG figures.
"""

from dpverify.verify.budget import BUDGETS, Budget, budget_by_name
from dpverify.verify.core import verify
from dpverify.verify.report import to_text, write_report
from dpverify.verify.result import (
    CONSISTENT,
    EXIT_STATUS,
    INCONCLUSIVE,
    NOT_A_CERTIFICATE,
    REFUTED,
    Verdict,
    VerifyReport,
    decide,
)

__all__ = [
    "BUDGETS",
    "CONSISTENT",
    "EXIT_STATUS",
    "INCONCLUSIVE",
    "NOT_A_CERTIFICATE",
    "REFUTED",
    "Budget",
    "Verdict",
    "VerifyReport",
    "budget_by_name",
    "decide",
    "to_text",
    "verify",
    "write_report",
]
