"""The canaries of two-world agent audits (dpverify.agent_audit.canaries): every pair is measured before the
audit (realised fraction of each family's sensitivity, the pair's μ), and the worst-case design — the audit
linear MDP with its path canaries — realises more of DP-LSVI-UCB++'s sensitivity than the environment's own
canaries; for LDP-UCRL-VTR the audit linear mixture MDP does, clears the correct agent and
refutes noise for a quarter of the sensitivity."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from dpverify.agent_audit import AgentAuditSpec, audit_agent
from dpverify.agent_audit.canaries import WORST_CASE_PAIRS, FamilyFraction, MeasuredPair, family_reach
from dpverify.agent_audit.spec import CANARY_DESIGNS
from dpverify.audit.executors import SerialExecutor
from dpverify.audit.result import NO_VIOLATION_FOUND
from dpverify.errors import InvalidParameterError

SMALL = (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))


def _spec(**changes: object) -> AgentAuditSpec:
    spec = AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 3, "billboard", 1.0, 1e-5, trials=400,
                          env_options=SMALL, positions=("first",), window=3)
    return replace(spec, **changes)


@pytest.fixture(scope="module")
def both() -> dict[str, object]:
    return {design: audit_agent(_spec(canary_design=design), executor=SerialExecutor(), progress=False)
            for design in CANARY_DESIGNS}


def test_every_two_world_audit_reports_its_measured_pairs(both) -> None:
    result = both["environment"]
    assert result.verdict == NO_VIOLATION_FOUND and len(result.measured_pairs) == 1
    pair = result.measured_pairs[0]
    fractions = {f.family: f.fraction for f in pair.fractions}
    assert set(fractions) == {"gram", "w_hat", "w_check", "w_bar"}
    assert all(0.0 <= f <= 1.0 + 1e-9 for f in fractions.values())  # a correct agent stays within its record
    assert pair.mu is not None and pair.mu > 0
    data = result.to_dict()
    assert data["canary_design"] == "environment" and data["measured_pairs"][0]["mu"] == pair.mu
    assert "canaries (environment design)" in result.summary() and "realised fraction" in result.summary()


def test_worst_case_canaries_realise_more_of_the_sensitivity(both) -> None:
    own, worst = both["environment"].measured_pairs[0], both["worst-case"].measured_pairs
    assert len(worst) == WORST_CASE_PAIRS and all(p.environment == "audit environment" for p in worst)
    gram = {p.label: {f.family: f.fraction for f in p.fractions}["gram"] for p in (own, worst[0])}
    # measured: gram 0.236 -> 1.000, the pair's mu 0.031 -> 0.139 (claimed mu 0.268)
    assert gram[worst[0].label] >= 0.99 > 0.5 > gram[own.label]
    assert worst[0].mu is not None and own.mu is not None and worst[0].mu >= 3 * own.mu
    assert both["worst-case"].verdict == NO_VIOLATION_FOUND  # the correct agent is cleared at the larger signal


def test_the_design_is_validated() -> None:
    with pytest.raises(InvalidParameterError, match="^canary_design "):
        _spec(canary_design="best")
    assert _spec(canary_design="worst-case", route="one-run", trials=1).canary_design == "worst-case"  # both routes
    line = AgentAuditSpec("ldp-ucrl-vtr", "random-mixture", 3, "ldp", 1.0, 1e-5, trials=40,
                          env_options=(("dim", 1), ("horizon", 2), ("num_actions", 1)),
                          positions=("first",), canary_design="worst-case")
    with pytest.raises(InvalidParameterError, match="^canary_design .*d >= 2"):
        audit_agent(line, executor=SerialExecutor(), progress=False)


def test_the_command_line_offers_the_same_designs(capsys: pytest.CaptureFixture[str]) -> None:
    from dpverify.cli import main

    with pytest.raises(SystemExit):
        main(["audit", "agent", "--help"])
    assert "--canary-design {" + ",".join(CANARY_DESIGNS) + "}" in capsys.readouterr().out


def test_one_run_worst_case_slots_hold_the_measured_pair_of_largest_mu() -> None:
    from dpverify.agent_audit import AgentAuditSpec, audit_agent

    small = (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))
    common = dict(route="one-run", trials=1, canaries=6, env_options=small, gaussian_claim=True)
    worst = audit_agent(AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 12, "billboard", 1.0, 1e-5,
                                       canary_design="worst-case", **common), progress=False)
    plain = audit_agent(AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 12, "billboard", 1.0, 1e-5, **common),
                        progress=False)
    assert worst.verdict == plain.verdict == "NO VIOLATION FOUND" and worst.canaries == plain.canaries == 6
    (pair,) = worst.measured_pairs
    assert pair.environment == "audit environment" and pair.mu is not None and pair.mu > 0
    assert plain.measured_pairs == ()
    assert worst.to_dict()["measured_pairs"][0]["mu"] == pair.mu


def _ldp_spec(horizon: int, trials: int, dim: int = 3, model: str = "standard") -> AgentAuditSpec:
    env = (("dim", dim), ("horizon", horizon), ("num_actions", 1), ("num_states", 3), ("seed", 3))
    options = () if model == "standard" else (("sensitivity_model", model),)
    return AgentAuditSpec("ldp-ucrl-vtr", "random-mixture", 3, "ldp", 1.0, 1e-5, trials=trials,
                          env_options=env, positions=("first",), window=3,
                          canary_design="worst-case", gaussian_claim=True, agent_options=options)


def test_worst_case_ldp_audit_runs_in_the_audit_mixture_mdp_and_clears_the_correct_agent() -> None:
    from dpverify.whitebox.mixture_neighbours import mu_ceilings, stage_caps

    result = audit_agent(_ldp_spec(3, 400), executor=SerialExecutor(), progress=False)
    assert result.verdict == NO_VIOLATION_FOUND and result.batched
    # the two pairs of largest μ go to the engine, which puts the one its selection split chose
    # first
    labels = {p.label.split(": ")[1] for p in result.measured_pairs}
    assert labels == {"pivot -> balanced", "pivot -> opposed"}
    best = max(result.measured_pairs, key=lambda p: p.mu or 0.0)
    assert best.environment == "audit environment"
    assert best.label == "user 1 (first): pivot -> balanced"
    fractions = {f.family: f.fraction for f in best.fractions}
    cap = stage_caps(3)[0]  # 4/9: the values are capped at H − h − 1
    # measured: gram 0.430 and target 0.351 of the sensitivity, 0.968 and 0.791 of the caps; the
    # pair's μ 0.0627, 0.884 of the ceiling (the environment's own canaries: 0.01–0.02 of the
    # sensitivity, μ 0.002)
    assert fractions["gram"] >= 0.95 * cap and fractions["target"] >= 0.78 * cap
    assert best.mu is not None and best.mu >= 0.88 * mu_ceilings(3, result.claimed_mu)[1]
    assert dict(best.family_mu).keys() == {"gram", "target"}
    assert [p["family_mu"] for p in result.to_dict()["measured_pairs"]] == [
        dict(p.family_mu) for p in result.measured_pairs]


@pytest.mark.slow
def test_worst_case_ldp_audit_refutes_noise_for_a_quarter_of_the_sensitivity() -> None:
    # At H = 6 and d = 2 the best pair (orthogonal value features) carries 0.307 of the claimed μ,
    # so noise for Δ/4 gives a true μ of 4 × 0.0824 = 0.329 against the claimed 0.268: refuted at
    # 10⁵ trials per side (measured: μ ≥ 0.290 by the μ-GDP test, 26 s on one core; at d = 3,
    # μ ≥ 0.285 in 38 s). Noise for Δ/2 (μ 0.165) is within the claim: no audit can refute it.
    from dpverify.audit.result import VIOLATION
    from dpverify.audits.agent_zoo import BatchedVariant

    result = audit_agent(_ldp_spec(6, 100_000, dim=2), executor=SerialExecutor(), progress=False,
                         batch_factory=BatchedVariant("ldp-quarter-sensitivity"))
    assert result.verdict == VIOLATION
    assert result.mu_lower_bound is not None and result.mu_lower_bound > result.claimed_mu


def test_the_scope_note_names_the_canaries_of_the_design(both) -> None:
    assert "lowest- and highest-value states" in " ".join(both["environment"].notes)
    assert "audit environment's path canaries" in " ".join(both["worst-case"].notes)


def test_family_reach_is_the_largest_fraction_of_each_family_over_the_pairs() -> None:
    def pair(label: str, **fractions: tuple[float, float]) -> MeasuredPair:
        parts = tuple(FamilyFraction(f, realised, recorded) for f, (realised, recorded) in fractions.items())
        return MeasuredPair(label, "audit environment", 1, (), (), parts, 0.1)
    pairs = [pair("orthogonal", gram=(1.0, 1.0), w_hat=(0.7, 1.0)), pair("opposed", gram=(0.2, 1.0), w_hat=(0.9, 1.0)),
             pair("unmeasured")]
    assert family_reach(pairs) == {"gram": 1.0, "w_hat": 0.9}
    assert family_reach([]) == {}


@pytest.mark.slow
def test_worst_case_ldp_audit_refutes_noise_for_half_the_staged_sensitivity() -> None:
    # The staged model calibrates each stage for its own range (no slack): at H = 3 and d = 2 the
    # best pair (orthogonal value features: Gram 1, target 1/√2 of every sending stage's
    # sensitivity) carries √(3/4) = 0.866 of the claimed μ, so noise for half the sensitivity has a
    # true μ of 1.73 × 0.268 = 0.464 — a violation the audit alone refutes (measured at 2·10⁴ trials
    # per side: μ ≥ 0.405, ε ≥ 0.78, 2.1 s on one core; at 10⁴, μ ≥ 0.346).
    from dpverify.audit.result import VIOLATION
    from dpverify.audits.agent_zoo import BatchedVariant

    result = audit_agent(_ldp_spec(3, 20_000, dim=2, model="staged"), executor=SerialExecutor(),
                         progress=False, batch_factory=BatchedVariant("ldp-half-sensitivity"))
    best = max(result.measured_pairs, key=lambda p: p.mu or 0.0)
    assert best.mu == pytest.approx(math.sqrt(0.75) * result.claimed_mu, rel=1e-3)
    assert result.verdict == VIOLATION
    assert result.mu_lower_bound is not None and result.mu_lower_bound > result.claimed_mu
