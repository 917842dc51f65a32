"""Whole-agent audits: validation, the claim check, one view on both execution paths, validity."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dpverify.agent_audit import (
    AgentAuditSpec,
    AgentSetup,
    agent_setup,
    audit_agent,
    observe,
    observe_batch,
    output_view,
)
from dpverify.agents.registry import agent_factory
from dpverify.audit.executors import SerialExecutor
from dpverify.audit.result import NO_VIOLATION_FOUND, VIOLATION
from dpverify.errors import InvalidParameterError

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "docs" / "examples" / "visit_count_agent.py"
SMALL = (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))


def _spec(**changes: object) -> AgentAuditSpec:
    base = AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 3, "billboard", 1.0, trials=400, env_options=SMALL,
                          positions=("first",), window=3)
    return replace(base, **changes)


@pytest.mark.parametrize(("changes", "parameter"), [
    ({"notion": "everything"}, "notion"),
    ({"route": "three-world"}, "route"),
    ({"trials": 5}, "trials"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"delta": 1.0}, "delta"),
    ({"canaries": 10}, "canaries"),
    ({"positions": ("end",)}, "positions"),
    ({"positions": (7,)}, "positions"),
    ({"episodes": 1}, "episodes"),
    ({"window": 0}, "window"),
    ({"confidence": 1.5}, "confidence"),
    ({"agent_options": (("relation", "add-remove"),)}, "relation"),
])
def test_spec_validation(changes: dict, parameter: str) -> None:
    with pytest.raises(InvalidParameterError) as info:
        _spec(**changes)
    assert info.value.parameter == parameter


def test_notion_the_agent_does_not_support_and_claims_it_does_not_make() -> None:
    with pytest.raises(InvalidParameterError, match="ldp agent") as info:
        audit_agent(AgentAuditSpec("ldp-ucrl-vtr", "random-mixture", 3, "billboard", 1.0, trials=20,
                                   env_options=SMALL), executor=SerialExecutor())
    assert info.value.parameter == "notion"
    with pytest.raises(InvalidParameterError, match="claim the agent makes"):
        audit_agent(_spec(agent_options=(("epsilon", 2.0),)), executor=SerialExecutor())
    with pytest.raises(InvalidParameterError, match="claim the agent makes"):
        audit_agent(_spec(delta=1e-7, agent_options=(("delta", 1e-5),)), executor=SerialExecutor())


def test_factory_paths() -> None:
    for bad in ("no.such.module:factory", "dpverify.audit:no_such_factory", "/no/such/file.py:f", "not-an-agent"):
        with pytest.raises(InvalidParameterError) as info:
            agent_factory(bad)
        assert info.value.parameter == "agent"
    assert callable(agent_factory(f"{EXAMPLE}:make_agent"))
    assert callable(agent_factory("dp-lsvi-ucb++"))


@pytest.mark.parametrize("notion", ["billboard", "jdp"])
def test_views_agree_on_the_reference_and_batched_paths(notion: str) -> None:
    """The batched path's audit output equals the reference agent's, trial by trial (same generators)."""
    from dpverify.agent_audit import _batched_agent, probe_agent, run_agent_once
    from dpverify.agents.core.batching import PerTrialRandomness, run_batch
    from dpverify.agents.core.tapes import canary_tape, ordinary_tapes, tape_arrays
    from dpverify.agents.core.tapes import replace as replace_tape

    spec = _spec(notion=notion, episodes=5, window=2)
    setup: AgentSetup = agent_setup(spec)
    _, width, mdp = probe_agent(spec, setup)
    view = output_view(notion, 2, 2, 5, width)
    tapes = replace_tape(ordinary_tapes(mdp, 5, 0), 2, canary_tape(mdp, "high"))
    seeds = [3, 4, 5]
    agent = _batched_agent(setup, mdp, PerTrialRandomness([np.random.default_rng(s) for s in seeds]), view.episodes)
    initial, table = tape_arrays(tapes)
    policies = run_batch(agent, initial, table, keep_policies=view.episodes)
    batched = observe_batch(view, agent, policies, mdp.num_actions)
    for i, s in enumerate(seeds):
        history, plist = run_agent_once(setup, mdp, tapes, np.random.default_rng(s))
        assert np.array_equal(observe(view, history, plist, mdp.num_actions), batched[i])


def test_small_two_world_audit_is_reproducible_and_finds_nothing_in_the_reference_agent() -> None:
    a = audit_agent(_spec(), executor=SerialExecutor(), progress=False)
    b = audit_agent(_spec(), executor=SerialExecutor(), progress=False)
    assert a.verdict == NO_VIOLATION_FOUND and a.batched
    assert a.audit == b.audit and a.epsilon_lower_bound == b.epsilon_lower_bound
    data = a.to_dict()
    assert data["verdict"] == NO_VIOLATION_FOUND and data["audit"]["trials"] == 400
    assert "not a certificate" in a.summary() or "never certify" in a.summary()


@pytest.mark.slow
def test_one_run_false_alarm_rate_of_a_correct_agent_stays_within_the_level() -> None:
    """60 one-run audits of a correct agent whose canaries reach its sensitivity exactly (the claim is
    tight): at confidence 0.95 at most 5% may raise a false alarm; P[Binomial(60, 0.05) >= 9] < 0.01."""
    spec = AgentAuditSpec(f"{EXAMPLE}:make_fixed_agent", "min2021", 40, "billboard", 1.0, route="one-run",
                          trials=1, canaries=20, env_options=(("horizon", 2), ("num_actions", 2)),
                          gaussian_claim=True)
    alarms = sum(audit_agent(replace(spec, seed=s)).verdict == VIOLATION for s in range(60))
    assert alarms <= 8


def test_one_run_audit_of_a_third_party_agent_at_scale() -> None:
    """m = 200 canary slots among K = 400 users: the one-run route runs through the protocol and reports
    its counts (this mild bug — 1/sqrt(K - 1) of the noise missing per release — needs the two-world route)."""
    spec = AgentAuditSpec(f"{EXAMPLE}:make_agent", "min2021", 400, "billboard", 1.0, route="one-run", trials=1,
                          canaries=200, env_options=(("horizon", 2), ("num_actions", 2)), window=1)
    result = audit_agent(spec)
    assert result.one_run is not None and result.canaries == 200
    assert result.epsilon_lower_bound >= 0.0


def test_one_run_audit_of_a_gaussian_claim_reports_the_f_dp_analysis() -> None:
    """A Gaussian claim's one-run audit also tests its μ-GDP curve on the same counts (Mahloujifar et al. 2025),
    each analysis at half the error budget; the correct agent (canaries at its sensitivity) is cleared."""
    spec = AgentAuditSpec(f"{EXAMPLE}:make_fixed_agent", "min2021", 40, "billboard", 1.0, route="one-run",
                          trials=1, canaries=20, env_options=(("horizon", 2), ("num_actions", 2)),
                          gaussian_claim=True)
    result = audit_agent(spec)
    fdp = result.one_run_fdp
    assert fdp is not None and result.mu_lower_bound == fdp.mu_lower_bound
    assert result.claimed_mu == pytest.approx(0.268, abs=1e-3) and fdp.claimed_mu == result.claimed_mu
    assert fdp.confidence == pytest.approx(1 - 0.05 / 2) and result.one_run.confidence == pytest.approx(1 - 0.05 / 2)
    assert fdp.guess_rules == result.one_run.guess_rules == 3  # the three pre-registered guess sizes
    assert result.verdict == NO_VIOLATION_FOUND and result.verdict_by == ()
    assert "f-DP one-run" in result.summary() and result.to_dict()["one_run_fdp"]["claimed_mu"] == result.claimed_mu
    # a claim not declared Gaussian keeps the whole budget for Theorem 3 and has no f-DP reading
    plain = audit_agent(replace(spec, gaussian_claim=False))
    assert plain.one_run_fdp is None and plain.mu_lower_bound is None
    assert plain.one_run.confidence == pytest.approx(0.95)
