"""Whole-agent audits under add/remove-one: empty slots (``end_episode(None)``), the ledger, the verdicts, the CLI."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dpverify.agent_audit import AgentAuditSpec, audit_agent, neighbour_pairs
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.core.tapes import ordinary_tapes, run_on_tapes
from dpverify.agents.registry import AGENTS, ENVIRONMENTS
from dpverify.audit.executors import SerialExecutor
from dpverify.audit.result import NO_VIOLATION_FOUND, VIOLATION
from dpverify.cli import main
from dpverify.errors import InvalidParameterError

AGENT_MODULE = Path(__file__).resolve().parent / "add_remove_agents.py"
SMALL = (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))
MIN = (("horizon", 2), ("num_actions", 2))
ADD_REMOVE = (("relation", "add-remove-one"),)


@pytest.mark.parametrize(("agent", "options"), [
    ("dp-lsvi-ucb++", {}), ("dp-lsvi-ucb++", {"aggregation": "tree"}), ("luyo", {}), ("ngo", {})])
def test_an_empty_slot_adds_no_data_and_accounts_as_the_ledger_says(agent: str, options: dict) -> None:
    """Episode 2 is an empty slot: every release still happens on schedule (the same ledger as a full run, and it
    accounts to the add/remove claim), and nothing of slot 2 enters any statistic: the raw Gram sum (published
    value minus its recorded noise) after slot 2 equals the one before it."""
    mdp = ENVIRONMENTS["random-linear"].factory(5, **dict(SMALL))
    tapes = ordinary_tapes(mdp, 5, 0)
    runs = []
    for absent in (False, True):
        board = Billboard("add-remove-one", keep_history=True, keep_noise=True)
        agent_ = AGENTS[agent].factory(mdp, 5, np.random.default_rng(7), billboard=board, epsilon=1.0,
                                       relation="add-remove-one", **options)
        policies = run_on_tapes(agent_, mdp, tuple(None if absent and k == 1 else t for k, t in enumerate(tapes)))
        assert len(policies) == 5
        raw = {(r.episode, r.stage): r.value - r.noise for r in board.history("gram")}
        tree = board.history("gram")[0].users == "tree"
        # tree: node (k - lowbit k, k] = users 1..2 at k = 2 vs user 1 at k = 1; prefix: users 1..k-1 at k = 3 vs 2
        before, after = ((1, 1), (2, 1)) if tree else ((2, 1), (3, 1))
        runs.append((agent_, np.allclose(raw[before], raw[after], rtol=0.0, atol=1e-9)))  # up to (x + z) - z rounding
    (full, full_unchanged), (empty, empty_unchanged) = runs
    assert empty_unchanged and not full_unchanged
    assert full.ledger.n_releases == empty.ledger.n_releases
    assert [b.to_dict() for b in full.ledger.blocks] == [b.to_dict() for b in empty.ledger.blocks]
    claim = empty.claimed_guarantee()
    accounted = empty.ledger.guarantee(1e-5, "exact")
    assert accounted.epsilon == full.ledger.guarantee(1e-5, "exact").epsilon
    assert claim.epsilon <= 1.0 + 1e-9 and accounted.epsilon <= claim.epsilon * (1 + 1e-12)
    if agent != "ngo":  # fixed schedules publish the whole calibrated plan (Ngo et al. release at policy updates)
        assert accounted.epsilon == pytest.approx(claim.epsilon, rel=1e-12)
    assert empty.config.relation == "add-remove-one"


def test_the_local_agent_has_no_empty_slot_and_ldp_add_remove_is_refused() -> None:
    mdp = ENVIRONMENTS["random-mixture"].factory(3, **dict(SMALL))
    agent = AGENTS["ldp-ucrl-vtr"].factory(mdp, 3, np.random.default_rng(0), epsilon=1.0)
    agent.begin_episode()
    with pytest.raises(InvalidParameterError, match="no empty slot"):
        agent.end_episode(None)
    with pytest.raises(InvalidParameterError) as info:
        AgentAuditSpec("ldp-ucrl-vtr", "random-mixture", 3, "ldp", 1.0, trials=20, agent_options=ADD_REMOVE)
    assert info.value.parameter == "relation"


def test_pairs_are_an_empty_slot_versus_a_canary_at_the_same_time_slot() -> None:
    spec = AgentAuditSpec("luyo", "random-linear", 4, "billboard", 1.0, trials=20, env_options=SMALL,
                          agent_options=ADD_REMOVE, positions=("middle",))
    mdp = ENVIRONMENTS["random-linear"].factory(4, **dict(SMALL))
    (pair,) = neighbour_pairs(spec, mdp)
    assert len(pair.first) == len(pair.second) == 4
    assert pair.first[1] is None and pair.second[1] is not None and "empty slot" in pair.label
    assert all(a is b for k, (a, b) in enumerate(zip(pair.first, pair.second, strict=True)) if k != 1)


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["luyo", "dp-lsvi-ucb++"])
def test_correct_registered_agents_pass_under_add_remove(agent: str) -> None:
    spec = AgentAuditSpec(agent, "random-linear", 3, "billboard", 1.0, trials=200, env_options=SMALL,
                          positions=("first",), window=2, agent_options=ADD_REMOVE)
    result = audit_agent(spec, executor=SerialExecutor(), progress=False)
    assert result.verdict == NO_VIOLATION_FOUND and result.batched  # the twins run empty slots too
    assert "empty slot" in result.audit.pair_label and "add/remove-one" in result.notes[-1]


def _count_spec(factory: str, **changes: object) -> AgentAuditSpec:
    base = AgentAuditSpec(f"{AGENT_MODULE}:{factory}", "min2021", 6, "billboard", 1.0, trials=500, env_options=MIN,
                          positions=("first",), window=5, gaussian_claim=True, agent_options=ADD_REMOVE)
    return replace(base, **changes)


@pytest.mark.slow
def test_noise_for_a_quarter_of_the_removal_scale_is_a_violation() -> None:
    broken = audit_agent(_count_spec("make_scaled_down_agent"), executor=SerialExecutor(), progress=False)
    # Refuted by the μ-GDP test against the Gaussian claim; its μ is reported as a μ bound, and the (ε, δ) lower
    # bound (Clopper–Pearson, valid for any mechanism) stays its own, smaller figure.
    assert broken.verdict == VIOLATION and broken.verdict_by == ("gaussian-dp",)
    assert broken.mu_lower_bound > broken.claimed_mu and broken.gdp_epsilon > 1.0
    assert broken.epsilon_lower_bound == broken.audit.clopper_pearson.epsilon_lower < broken.gdp_epsilon
    correct = audit_agent(_count_spec("make_agent"), executor=SerialExecutor(), progress=False)
    assert correct.verdict == NO_VIOLATION_FOUND and correct.verdict_by == ()


def test_one_run_coins_choose_a_canary_or_an_empty_slot() -> None:
    result = audit_agent(_count_spec("make_agent", route="one-run", trials=3), progress=False)
    assert result.verdict == NO_VIOLATION_FOUND and result.canaries == 3


def test_add_remove_audits_run_through_the_batched_twin_with_empty_slots() -> None:
    spec = AgentAuditSpec("luyo", "random-linear", 3, "billboard", 1.0, 1e-5, trials=400, env_options=SMALL,
                          positions=("first",), agent_options=(("relation", "add-remove-one"),))
    batched = audit_agent(spec, progress=False)
    reference = audit_agent(dataclasses.replace(spec, batched=False), progress=False)
    assert batched.batched and not reference.batched
    assert batched.verdict == reference.verdict == NO_VIOLATION_FOUND
    assert "empty slot" in batched.measured_pairs[0].label or "absent" in batched.measured_pairs[0].label


@pytest.mark.slow
def test_cli_audits_an_add_remove_claim(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["audit", "agent", "--agent", "luyo", "--env", "random-linear", "--episodes", "3", "--notion", "billboard",
            "--epsilon", "1", "--trials", "100", "--position", "first", "--agent-option", "relation=add-remove-one"]
    for key, value in SMALL:
        argv += ["--env-option", f"{key}={value}"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0 and "NO VIOLATION FOUND" in out and "empty slot" in out
    assert main(argv[:-1] + ["relation=add-remove"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
