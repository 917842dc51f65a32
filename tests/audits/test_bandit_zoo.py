"""The planted bandit bugs: each refuted (by the two-world audits where they can see it, by the contract's
white-box checks always) while the correct agent is not; and ``dpverify verify`` end to end."""

from __future__ import annotations

import pytest

from dpverify.audits.agent_zoo import cases, run_agent_zoo
from dpverify.audits.bandit_zoo import BATCHED, PLANTED, contract_outcomes, factory_path
from dpverify.testing import assert_audit_passes, assert_audit_refutes
from dpverify.verify import CONSISTENT, REFUTED, verify

BANDIT_CASES = [c.name for c in cases() if c.name.split(" ")[0] in {f"{a}-{b}" for a, b in PLANTED}]


def _check(outcomes: list) -> None:
    bad = [o.row() for o in outcomes if not o.as_expected]
    assert not bad, bad


def test_every_planted_agent_has_its_twin_and_every_audited_bug_its_correct_agent() -> None:
    assert set(PLANTED) == set(BATCHED)
    for (agent, bug), cls in PLANTED.items():
        assert cls.name == agent and BATCHED[(agent, bug)].agent_class is cls
        assert factory_path(agent, bug).endswith(f":{cls.__name__}.from_options")
    bugs = [name for name in BANDIT_CASES if not name.endswith("(twin)")]
    assert len(bugs) == 8 and all(f"{bug} (twin)" in BANDIT_CASES for bug in bugs)


def test_quick_bandit_zoo() -> None:
    _check(run_agent_zoo(only=("dp-ucb-raw-count", "dp-ucb-raw-count (twin)")))


@pytest.mark.slow
def test_the_pytest_helpers_audit_bandit_agents() -> None:
    assert_audit_passes("dp-ucb", notion="billboard", epsilon=1.0, trials=300)  # the small linear bandit
    assert_audit_refutes(factory_path("dp-ucb", "tree-noise-reused"), notion="billboard", epsilon=1.0, trials=100,
                         env="bernoulli-bandit", env_options={"num_arms": 2})


@pytest.mark.slow
def test_every_audited_bandit_bug_is_refuted_and_no_twin() -> None:
    outcomes = run_agent_zoo(only=tuple(BANDIT_CASES))
    assert len(outcomes) == 16
    _check(outcomes)


@pytest.mark.slow
def test_the_contract_refutes_every_planted_bandit_bug_and_no_correct_agent() -> None:
    outcomes = contract_outcomes()
    assert len(outcomes) == len(PLANTED) + 3
    assert all(o.as_expected for o in outcomes), [o for o in outcomes if not o.as_expected]


@pytest.mark.slow
@pytest.mark.parametrize(("agent", "env"), [("jdp-linucb", "linear-bandit"), ("ldp-linucb", "linear-bandit"),
                                            ("dp-ucb", "bernoulli-bandit")])
def test_verify_finds_the_bandit_agents_consistent(agent: str, env: str) -> None:
    report = verify(agent, env, 1.0, 1e-5, budget="quick")
    assert report.verdict.verdict == CONSISTENT, report.verdict.reasons


@pytest.mark.slow
def test_verify_refutes_a_planted_bandit_bug() -> None:
    report = verify(factory_path("dp-ucb", "wrong-node-sets"), "bernoulli-bandit", 1.0, 1e-5, episodes=200,
                    budget="quick")
    assert report.verdict.verdict == REFUTED
