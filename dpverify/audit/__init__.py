"""Empirical privacy auditing: lower bounds on ε from distinguishing tests on neighbouring datasets.

An audit runs a batched mechanism many times on two neighbouring datasets, chooses distinguishing
tests on a selection split, and evaluates them on a fresh split with Clopper–Pearson bounds
(Jagielski, Ullman & Oprea 2020; Nasr et al. 2021; Clopper & Pearson 1934), plus a μ-GDP bound for
Gaussian claims (Dong, Roth & Su 2019). It can refute a privacy claim, never certify one.

Public API: :func:`run_audit`, :class:`AuditSpec`, :class:`NeighbourPair`, :class:`AuditResult`,
:class:`BoundReport`, the executors, and :func:`audit_mechanism` for dpverify's own mechanisms;
one-run audits (Steinke, Nasr & Jagielski 2023): :func:`run_one_run_audit`,
:func:`one_run_epsilon_lower_bound`, :func:`one_run_p_value`, :class:`OneRunResult`.
"""

from dpverify.audit.adapters import ReleaseOf, audit_mechanism, claimed_epsilon, worst_case_pair
from dpverify.audit.engine import run_audit
from dpverify.audit.executors import DaskExecutor, ProcessExecutor, SerialExecutor, make_executor
from dpverify.audit.one_run import OneRunResult, one_run_epsilon_lower_bound, one_run_p_value, run_one_run_audit
from dpverify.audit.result import NO_VIOLATION_FOUND, VIOLATION, AuditResult, BoundReport
from dpverify.audit.spec import AuditSpec, NeighbourPair

__all__ = [
    "AuditResult",
    "AuditSpec",
    "BoundReport",
    "DaskExecutor",
    "NO_VIOLATION_FOUND",
    "NeighbourPair",
    "OneRunResult",
    "ProcessExecutor",
    "ReleaseOf",
    "SerialExecutor",
    "VIOLATION",
    "audit_mechanism",
    "claimed_epsilon",
    "make_executor",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
    "run_audit",
    "run_one_run_audit",
    "worst_case_pair",
]
