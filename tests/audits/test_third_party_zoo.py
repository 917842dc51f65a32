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
    assert {c.name for c in CASES if c.expected == INCONCLUSIVE} == {"global-rng-noise", "own-rng-noise"}
    assert all(c.agent.endswith(c.target.split(":")[1]) and ".py:" in c.agent for c in CASES)
    with pytest.raises(InvalidParameterError, match="case"):
        case("nonesuch")


@pytest.mark.slow
@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_each_case_meets_its_expectation_from_behaviour(name: str) -> None:
    (outcome,) = whitebox_outcomes(only=[name])
    assert outcome.as_expected, (outcome.verdict, outcome.failed, outcome.not_run)
