"""The third-party zoo: every bug's white-box checks fail as listed, every twin passes, the unauditable two do
not run (at a size the suite affords; ``docs/make_third_party_zoo.py`` runs ``dpverify verify`` on them)."""

from __future__ import annotations

import pytest

from dpverify.audits.third_party_zoo import CASES, CONSISTENT, INCONCLUSIVE, REFUTED, case, whitebox_outcomes
from dpverify.errors import InvalidParameterError


def test_the_zoo_pairs_every_bug_with_cases_of_each_verdict() -> None:
    bugs = [c for c in CASES if c.bug]
    assert len(bugs) >= 12 and all(c.expected == REFUTED and c.caught_by for c in bugs)
    assert sum(c.expected == CONSISTENT for c in CASES) >= 6
    assert {c.name for c in CASES if c.expected == INCONCLUSIVE} == {
        "global-rng-noise", "own-rng-noise", "closed-loop-ucbvi-shared", "closed-loop-ucbvi-choice"}
    assert all(c.bug for c in CASES if c.expected == REFUTED)
    assert all(c.agent.endswith(c.target.split(":")[1]) and ".py:" in c.agent for c in CASES)
    with pytest.raises(InvalidParameterError, match="case"):
        case("nonesuch")


@pytest.mark.slow
@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_each_case_meets_its_expectation_from_behaviour(name: str) -> None:
    (outcome,) = whitebox_outcomes(only=[name])
    assert outcome.as_expected, (outcome.verdict, outcome.failed, outcome.not_run)


#: Each step-level case and the table-route case it is the twin of.
STEP_LEVEL_TWINS = {"step-level-lsvi": "noisy-lsvi", "step-level-mean-for-sum": "mean-for-sum",
                    "step-level-self-noised": "self-noised-lsvi", "step-level-half-noise": "half-noise"}


@pytest.mark.slow
def test_the_step_level_route_reaches_the_table_route_s_verdicts_by_the_same_checks() -> None:
    outcomes = {o.case.name: o for o in whitebox_outcomes(only=[*STEP_LEVEL_TWINS, *STEP_LEVEL_TWINS.values()])}
    for step, table in STEP_LEVEL_TWINS.items():
        assert outcomes[step].as_expected and outcomes[table].as_expected
        assert (outcomes[step].verdict, outcomes[step].failed) == (outcomes[table].verdict, outcomes[table].failed)


@pytest.mark.slow
def test_the_closed_loop_route_refutes_reused_noise_and_clears_its_fresh_noise_twin() -> None:
    outcomes = {o.case.name: o for o in whitebox_outcomes(only=["closed-loop-lsvi", "closed-loop-reused-noise"])}
    assert outcomes["closed-loop-lsvi"].verdict == CONSISTENT and outcomes["closed-loop-lsvi"].as_expected
    assert outcomes["closed-loop-reused-noise"].verdict == REFUTED
    assert outcomes["closed-loop-reused-noise"].failed == ("noise as recorded",)


def test_the_closed_loop_adapter_is_sixty_lines_or_fewer() -> None:
    from pathlib import Path

    import dpverify.audits.third_party.closed_loop_adapter as adapter

    lines = Path(adapter.__file__).read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 60, len(lines)


#: The cases planted for the verdict rules (docs/whitebox.md, "What a verdict rests on").
PLANTED = [c.name for c in CASES[CASES.index(case("published-average")):]]


@pytest.mark.slow
@pytest.mark.parametrize("name", PLANTED)
def test_verify_reaches_each_planted_case_s_verdict(name: str) -> None:
    """The whole of ``verify`` (a budget far below ``quick``, K = 16): each bug refuted, each twin CLAIM
    CONSISTENT, the code whose coins or noise do not follow the auditor's seeds INCONCLUSIVE."""
    import dataclasses

    from dpverify.verify import BUDGETS, verify

    budget = dataclasses.replace(BUDGETS["quick"], utility_seeds=1, two_world_trials=40, batched_trials=40,
                                 two_world_episodes=4, one_run_canaries=8, contract_episodes=16)
    c = case(name)
    report = verify(c.agent, "min2021", 1.0, 1e-5, episodes=16, budget=budget, workers=1,
                    env_options=dict(c.small or (("horizon", 3), ("num_actions", 4))))
    assert report.verdict.verdict == c.expected, report.verdict.reasons
    if name == "swapped-labels":
        assert report.verdict.reasons[0].startswith("the claim holds, but the agent's records are wrong")
