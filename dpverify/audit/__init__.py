"""Empirical privacy auditing: lower bounds on ε from distinguishing tests on neighbouring datasets.

An audit runs a batched mechanism many times on two neighbouring datasets, chooses distinguishing
tests on a selection split, and evaluates them on a fresh split with Clopper–Pearson bounds
(Jagielski, Ullman & Oprea 2020; Nasr et al. 2021; Clopper & Pearson 1934), plus a μ-GDP bound for
Gaussian claims (Dong, Roth & Su 2019). It can refute a privacy claim, never certify one.

Public API: :func:`run_audit`, :class:`AuditSpec`, :class:`NeighbourPair`, :class:`AuditResult`,
:class:`BoundReport`, the executors, and :func:`audit_mechanism` for dpverify's own mechanisms.
"""

from dpverify.audit.adapters import ReleaseOf, audit_mechanism, claimed_epsilon, worst_case_pair
from dpverify.audit.engine import run_audit
from dpverify.audit.executors import DaskExecutor, ProcessExecutor, SerialExecutor, make_executor
from dpverify.audit.result import NO_VIOLATION_FOUND, VIOLATION, AuditResult, BoundReport
from dpverify.audit.spec import AuditSpec, NeighbourPair

__all__ = [
    "AuditResult",
    "AuditSpec",
    "BoundReport",
    "DaskExecutor",
    "NO_VIOLATION_FOUND",
    "NeighbourPair",
    "ProcessExecutor",
    "ReleaseOf",
    "SerialExecutor",
    "VIOLATION",
    "audit_mechanism",
    "claimed_epsilon",
    "make_executor",
    "run_audit",
    "worst_case_pair",
]
