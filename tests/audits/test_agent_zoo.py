"""The agent zoo as a regression suite: every planted bug flagged by the routes that can see it, no twin.

The default suite runs the batched quick cases at reduced size; the sensitivity bugs and the agents run
one at a time (Luyo et al., LDP-UCRL-VTR) run under ``slow``; the per-episode budget bug (K = 65,
1.2·10⁴ trials per side) runs in ``dpverify audit agent-zoo`` and ``benchmarks/bench_agent_audit.py zoo``
only.
"""

from __future__ import annotations

import pytest

from dpverify.audit.result import NO_VIOLATION_FOUND, VIOLATION
from dpverify.audits.agent_zoo import cases, run_agent_zoo

QUICK = ("noise-reused", "noise-reused (twin)", "jdp-leak", "jdp-leak (twin)")
SLOW = ("targets-clipped-above", "targets-clipped-above (twin)", "feature-norm-3", "feature-norm-3 (twin)",
        "luyo-vector-noise", "luyo-vector-noise (twin)", "ldp-unnoised-message", "ldp-unnoised-message (twin)")


def _check(outcomes: list) -> None:
    bad = [o.row() for o in outcomes if not o.as_expected]
    assert not bad, bad


def test_every_bug_has_a_twin_and_a_route_that_flags_it() -> None:
    all_cases = cases()
    bugs = {c.name for c in all_cases if c.bug}
    twins = {c.name for c in all_cases if not c.bug}
    assert {"noise-reused", "targets-clipped-above", "feature-norm-3", "jdp-leak", "budget-per-episode",
            "luyo-vector-noise", "ldp-unnoised-message"} <= bugs
    for bug in bugs:
        assert any(c.expected == VIOLATION for c in all_cases if c.name == bug)
        assert f"{bug} (twin)" in twins
    assert all(c.expected == NO_VIOLATION_FOUND for c in all_cases if not c.bug)
    # the JDP leak is invisible to the billboard route and must be caught by the JDP route
    leak = {c.spec.notion: c.expected for c in all_cases if c.name == "jdp-leak"}
    assert leak == {"billboard": NO_VIOLATION_FOUND, "jdp": VIOLATION}


def test_quick_zoo() -> None:
    _check(run_agent_zoo(scale=0.2, only=QUICK))


@pytest.mark.slow
def test_sensitivity_bugs_and_the_other_agents() -> None:
    _check(run_agent_zoo(scale=0.5, only=SLOW))
