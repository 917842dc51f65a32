"""verify() end to end at a tiny budget, and its sections on real agents."""

from __future__ import annotations

import dataclasses
import io
import types

import numpy as np
import pytest
from verify_fixtures import TINY

from dpverify.bounds import evaluate
from dpverify.checks import FAIL, NOT_RUN, PASS
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError
from dpverify.verify import CONSISTENT, INCONCLUSIVE, REFUTED, verify
from dpverify.verify.budget import Budget
from dpverify.verify.claim import claim_section
from dpverify.verify.core import Stages
from dpverify.verify.result import AUDIT_NO_VIOLATION
from dpverify.verify.structure import structure_section
from dpverify.verify.target import IMPORT_PATH, REGISTERED, VerifyRun, counterpart_for, prepare, resolve_agent
from dpverify.verify.utility import curve


def _run(agent: str, env: str, episodes: int, budget: Budget = TINY, **changes: object) -> VerifyRun:
    """The run verify() would make (without making it), with ``changes``."""
    run, _ = prepare(agent, env, 1.0, 1e-5, episodes, budget, workers=1, env_options=changes.pop("env_options", None))
    return dataclasses.replace(run, **changes)


def _agent_after_run(name: str, env: str, episodes: int, **options: object):
    from dpverify.agents.core.base import run_episodes
    from dpverify.agents.registry import AGENTS, ENVIRONMENTS

    mdp = ENVIRONMENTS[env].factory(episodes)
    agent = AGENTS[name].factory(mdp, episodes, np.random.default_rng(0), epsilon=1.0, delta=1e-5, **options)
    run_episodes(mdp, agent, episodes, np.random.default_rng(1))
    return agent, mdp


@pytest.mark.slow
def test_reference_agent_is_consistent_at_a_tiny_budget() -> None:
    report = verify("dp-lsvi-ucb++", "min2021", 1.0, 1e-5, episodes=10, budget=TINY, workers=1)
    assert report.verdict.verdict == CONSISTENT and report.verdict.exit_status == 0
    claim = report.claim
    assert claim.status == PASS and claim.notion == "jdp"
    assert claim.ledger_epsilon["exact"] == pytest.approx(claim.claimed_epsilon, rel=1e-9)
    assert claim.n_releases == 4 * 20 * 10 and claim.paper is not None and claim.paper.falls_short
    assert {f.family for f in claim.families} == {"gram", "w_hat", "w_check", "w_bar"}
    assert all(f.paper_noise_std is not None and f.noise_std is not None for f in claim.families)
    assert report.structure.status == PASS and len(report.structure.checks) == 8
    assert report.whitebox.status == PASS and [c.status for c in report.whitebox.checks] == [PASS] * 6
    assert report.whitebox.epsilon_lower is not None and 0 < report.whitebox.epsilon_lower <= 1.0
    routes = [(r.notion, r.route) for r in report.audits.runs]
    assert routes == [("billboard", "two-world"), ("jdp", "two-world"), ("billboard", "two-world, worst-case"),
                      ("billboard", "one-run")]
    assert all(r.verdict == AUDIT_NO_VIOLATION for r in report.audits.runs)
    # the four audits share α = 0.05 (Bonferroni), and the worst-case one says what its canaries realised
    assert [r.raw["spec"]["confidence"] for r in report.audits.runs] == pytest.approx([1 - 0.05 / 4] * 4)
    assert "share the error level 0.05" in report.audits.reason
    worst = [r for r in report.audits.runs if r.route.endswith("worst-case")]
    assert len(worst) == 1 and all("(audit environment): realised fraction gram" in r.detail for r in worst)
    utility = report.utility
    assert utility.counterpart_name == "lsvi-ucb++" and utility.agent is not None
    expected = evaluate("dp-lsvi-ucb++/theorem-3.2", d=10, H=20, K=10, epsilon=1.0, delta=1e-5)
    assert utility.bound is not None and utility.bound.value == pytest.approx(expected.value)
    assert utility.bound.privacy_term == pytest.approx(expected.privacy)
    assert utility.bound.non_private_term == pytest.approx(expected.non_private)
    # the no-data control: one seed at TINY cannot tell, and says so in every form
    assert utility.learning is not None and utility.learning["seeds"] == 1 and utility.learning["learned"] is None
    assert utility.learning["known_reward_greedy_per_episode"] == pytest.approx(2.45)
    assert utility.learning_line.startswith("learned from users: cannot tell")
    from dpverify.verify.document import render_markdown
    from dpverify.verify.report import describe, to_text, utility_line

    assert "learned from users: cannot tell" in utility_line(report)
    assert "no-data control: learned from users" in to_text(report)
    assert "No-data control" in render_markdown(describe(report), {})


@pytest.mark.slow
def test_planted_bug_from_the_agent_zoo_is_refuted() -> None:
    budget = dataclasses.replace(TINY, two_world_trials=200)
    report = verify("dpverify.audits.agent_zoo:luyo_vector_noise_never_added", "min2021", 1.0, 1e-5,
                    episodes=8, budget=budget, workers=1)
    assert report.settings.agent_source == IMPORT_PATH
    assert report.verdict.verdict == REFUTED and report.verdict.exit_status == 1
    assert any("billboard two-world audit found a VIOLATION" in r for r in report.verdict.reasons)
    # the bug swaps in a noiseless mechanism, which the ledger records: it accounts to ε = ∞ > the claim
    assert report.claim.status == FAIL and report.claim.ledger_epsilon["exact"] > 1e6
    assert any("ledger meets the claim failed" in r for r in report.verdict.reasons)


class OverClaiming:
    """Wraps an agent and claims half the ε its ledger accounts to."""

    def __init__(self, agent: object) -> None:
        self.inner = agent

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def claimed_guarantee(self) -> DPGuarantee:
        g = self.inner.claimed_guarantee()  # type: ignore[attr-defined]
        return DPGuarantee(g.epsilon / 2, g.delta, g.conversion, g.rho / 4)


def test_ledger_above_the_claim_fails_the_claim_section() -> None:
    agent, mdp = _agent_after_run("luyo", "min2021", 8)
    section = claim_section(OverClaiming(agent), _run("luyo", "min2021", 8, mdp=mdp))
    assert section.status == FAIL
    failed = [c for c in section.checks if c.status == FAIL]
    assert [c.name for c in failed] == ["ledger meets the claim"]
    assert "cost more than the agent claims" in failed[0].reason
    assert failed[0].evidence["ledger_epsilon"] > failed[0].evidence["claimed_epsilon"]


class UnderClaiming(OverClaiming):
    """Wraps an agent and claims twice the ε its ledger accounts to (a true claim, weaker than it could be)."""

    def claimed_guarantee(self) -> DPGuarantee:
        g = self.inner.claimed_guarantee()  # type: ignore[attr-defined]
        return DPGuarantee(g.epsilon * 2, g.delta, g.conversion, g.rho * 4)


def test_a_claim_weaker_than_the_ledger_is_met_and_the_room_is_said() -> None:
    agent, mdp = _agent_after_run("luyo", "min2021", 8)
    section = claim_section(UnderClaiming(agent), _run("luyo", "min2021", 8, mdp=mdp, epsilon=2.0))
    assert section.status == PASS
    ledger = section.checks[0]
    assert ledger.status == PASS and "met with room" in ledger.reason and "smaller and still meet it" in ledger.reason


def test_claim_section_reports_what_it_cannot_read() -> None:
    section = claim_section(object(), _run("luyo", "min2021", 3, notion="unknown", known=None))
    assert section.status == NOT_RUN and "claimed_guarantee" in section.reason


def test_adaptive_agent_spends_at_most_its_claim() -> None:
    agent, mdp = _agent_after_run("ngo", "min2021", 12)
    section = claim_section(agent, _run("ngo", "min2021", 12, mdp=mdp))
    assert section.status == PASS and section.paper is None
    assert section.ledger_epsilon["exact"] <= section.claimed_epsilon


def test_structure_section_without_the_protocol_is_not_run() -> None:
    def no_billboard(mdp: object, num_episodes: int, rng: object, **options: object) -> object:
        raise TypeError("unexpected keyword argument 'billboard'")

    run = _run("luyo", "min2021", 5)
    section = structure_section(dataclasses.replace(run, target=dataclasses.replace(run.target, factory=no_billboard)))
    assert section.status == NOT_RUN and "checks could not run" in section.reason


def test_agent_resolution_and_bad_input() -> None:
    target = resolve_agent("ldp-ucrl-vtr")
    assert target.source == REGISTERED and target.env_kind == "mixture"
    assert resolve_agent("dpverify.audits.agent_zoo:luyo_vector_noise_never_added").source == IMPORT_PATH
    for bad in ("no-such-agent", "no.such.module:factory", "dpverify.audits.agent_zoo:missing", ""):
        with pytest.raises(InvalidParameterError, match="--agent"):
            resolve_agent(bad)
    with pytest.raises(InvalidParameterError, match="--epsilon"):
        verify("dp-lsvi-ucb++", "min2021", 0.0, 1e-5, episodes=5, budget=TINY)
    with pytest.raises(InvalidParameterError, match="--env"):
        verify("dp-lsvi-ucb++", "nowhere", 1.0, 1e-5, episodes=5, budget=TINY)
    with pytest.raises(InvalidParameterError, match="--agent-option"):
        verify("dp-lsvi-ucb++", "min2021", 1.0, 1e-5, episodes=5, budget=TINY, agent_options={"epsilon": 2})
    with pytest.raises(InvalidParameterError, match="feature_norm_bound"):  # the agent refuses ‖φ‖ = 3
        verify("dp-lsvi-ucb++", "min2021-raw", 1.0, 1e-5, episodes=5, budget=TINY)


def test_counterparts() -> None:
    agent, mdp = _agent_after_run("ldp-ucrl-vtr", "zhou2021", 3)
    assert counterpart_for(resolve_agent("ldp-ucrl-vtr"), agent, mdp) == "ucrl-vtr"
    assert counterpart_for(resolve_agent("dp-lsvi-ucb++"), None, None) == "lsvi-ucb++"


def test_utility_helpers() -> None:
    from dpverify.agents.core.learning import uniform_policy_regret
    from dpverify.agents.registry import ENVIRONMENTS

    regret = np.arange(1.0, 1001.0).reshape(1, -1)
    c = curve("x", regret)
    assert c.episodes[0] == 1 and c.episodes[-1] == 1000 and len(c.episodes) <= 400
    assert c.final_mean == pytest.approx(regret.sum())
    mdp = ENVIRONMENTS["min2021"].factory(10)
    per_episode = uniform_policy_regret(mdp)
    assert 0 < per_episode <= mdp.horizon


def test_progress_lines_only_on_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet, loud = io.StringIO(), Terminal()
    outcome = types.SimpleNamespace(status="pass")
    for stream in (quiet, loud):
        stages = Stages(("part",), stream)
        assert stages.run(0, lambda: outcome) is outcome and stages.timings["part"] >= 0.0
    assert quiet.getvalue() == "" and loud.getvalue().startswith("[1/1] part ...\n[1/1] part: pass")


def self_noising_agent(mdp, num_episodes, rng, /, *, billboard=None, **options):
    """DP-LSVI-UCB++ that also draws from its billboard's noise generator (a self-noising agent's source)."""
    from dpverify.agents.registry import AGENTS

    agent = AGENTS["dp-lsvi-ucb++"].factory(mdp, num_episodes, rng, billboard=billboard, **options)
    billboard.noise_source().normal()
    return agent


@pytest.mark.parametrize(("name", "env"), [("dp-lsvi-ucb++", "min2021"), ("luyo", "min2021"), ("ngo", "min2021"),
                                           ("ldp-ucrl-vtr", "zhou2021")])
def test_the_claim_s_run_is_the_utility_s_seed_zero(name: str, env: str) -> None:
    from dpverify.agents.core import runner
    from dpverify.verify.core import _run_and_account

    run, instance = prepare(name, env, 1.0, 1e-5, 6, TINY, workers=1)
    claim, seed_zero = _run_and_account(instance, run)
    spec = runner.RunSpec(name, env, 6, TINY.utility_seeds, run.seed, agent_options=sorted(run.options.items()))
    assert claim.status == PASS and np.array_equal(seed_zero, runner.run_seed(spec, 0).regret)


def test_an_agent_that_draws_from_its_billboard_s_noise_gets_its_own_seed_zero() -> None:
    from pathlib import Path

    from dpverify.verify.core import _run_and_account

    run, instance = prepare(f"{Path(__file__)}:self_noising_agent", "min2021", 1.0, 1e-5, 6, TINY, workers=1)
    assert _run_and_account(instance, run)[1] is None


def test_inconclusive_when_no_audit_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dpverify.verify.audits.notions_for", lambda notion: ())
    report = verify("ngo", "min2021", 1.0, 1e-5, episodes=6, budget=TINY, workers=1)
    assert report.verdict.verdict == INCONCLUSIVE and report.verdict.exit_status == 2
    assert any("audits could not run" in r for r in report.verdict.reasons)


def test_the_third_party_example_and_its_fixed_twin() -> None:
    from pathlib import Path

    example = Path(__file__).resolve().parents[3] / "docs" / "examples" / "visit_count_agent.py"
    small = {"dim": 3, "horizon": 2, "num_actions": 2, "num_states": 3, "seed": 3}
    fixed = verify(f"{example}:make_fixed_agent", "random-linear", 1.0, 1e-5, episodes=8, budget=TINY,
                   env_options=small, workers=1)
    assert fixed.verdict.verdict == CONSISTENT, fixed.verdict.reasons
    statuses = {c.name: c.status for c in fixed.structure.checks}
    assert statuses.pop("refuses oversized features") == "not applicable"
    assert set(statuses.values()) == {PASS} and fixed.structure.status == PASS
    assert any("not applicable" in r for r in fixed.verdict.reasons)
    buggy = verify(f"{example}:make_agent", "random-linear", 1.0, 1e-5, episodes=8, budget=TINY,
                   env_options=small, workers=1)
    assert buggy.verdict.verdict == REFUTED
    assert {c.name for c in buggy.structure.checks if c.status == FAIL} == {"ledger within claim"}
    # the white-box checks see it from behaviour too: the replayed pair implies an ε above the claim
    assert buggy.whitebox["witnessed pairs within the claim"].status == FAIL
    assert buggy.claim.status == FAIL


@pytest.mark.slow
def test_gaussian_claim_makes_the_audits_test_the_mu_gdp_curve_of_a_third_party_agent() -> None:
    from dpverify.audits.third_party_zoo import case
    from dpverify.verify.audits import audit_section

    run = _run(case("noisy-lsvi").agent, "min2021", 4, dataclasses.replace(TINY, one_run_audits="none"),
               env_options={"num_actions": 3})
    assert run.notion == "jdp" and not run.target.batched(run.agent_options)
    undeclared = audit_section(run)
    declared = audit_section(dataclasses.replace(run, gaussian_claim=True))
    assert undeclared.runs and all(r.gdp_epsilon_lower is None for r in undeclared.runs)
    assert declared.runs and all(r.gdp_epsilon_lower is not None for r in declared.runs), declared.runs
    assert [r.raw["gaussian_claim"] for r in declared.runs] == [True] * len(declared.runs)


def test_the_audits_run_batched_where_the_card_has_a_twin_for_the_options() -> None:
    target = resolve_agent("dp-lsvi-ucb++")
    assert target.batched({}) and target.batched({"relation": "add-remove-one"})
    assert target.batched({"aggregation": "tree"}) and not target.batched({"aggregation": "factorised"})
    assert resolve_agent("luyo").batched({}) and resolve_agent("ldp-ucrl-vtr").batched({})
    assert not resolve_agent("dpverify.audits.agent_zoo:luyo_vector_noise_never_added").batched({})


def test_an_ldp_agent_gets_a_worst_case_audit_of_its_messages_in_the_audit_mixture_mdp() -> None:
    from dpverify.verify.audits import audit_section

    section = audit_section(_run("ldp-ucrl-vtr", "zhou2021", 4, dataclasses.replace(TINY, one_run_audits="none")))
    assert [(r.notion, r.route) for r in section.runs] == [
        ("ldp", "two-world"), ("ldp", "two-world, worst-case")]
    assert all(r.verdict == AUDIT_NO_VIOLATION for r in section.runs)
    worst = section.runs[1]
    assert worst.configuration.startswith("audit linear mixture MDP of zhou2021 (horizon=2), K = 4")
    assert "(audit environment): realised fraction gram" in worst.detail
    assert "pivot -> " in worst.detail
    assert [r.raw["spec"]["confidence"] for r in section.runs] == pytest.approx([1 - 0.05 / 2] * 2)
