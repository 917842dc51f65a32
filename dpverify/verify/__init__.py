"""``dpverify verify``: does an agent meet its privacy claim, and what does that cost in regret?

:func:`verify` runs the whole check and returns a frozen :class:`VerifyReport` — claim and accounting,
the private-agent contract checks, the empirical audits, utility — with a verdict CLAIM REFUTED,
CLAIM CONSISTENT (not a certificate) or INCONCLUSIVE; :func:`write_report` writes it as
report.html (self-contained), report.md, report.json and PNG figures.
"""

from dpverify.verify.budget import BUDGETS, Budget
from dpverify.verify.core import verify
from dpverify.verify.report import to_text, write_report
from dpverify.verify.result import CONSISTENT, INCONCLUSIVE, REFUTED, VerifyReport

__all__ = ["BUDGETS", "CONSISTENT", "INCONCLUSIVE", "REFUTED", "Budget", "VerifyReport", "to_text", "verify",
           "write_report"]
