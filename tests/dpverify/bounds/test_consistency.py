"""The consistency checks find the papers' own inconsistencies and pass what is consistent."""

from __future__ import annotations

import pytest

from dpverify.bounds.consistency import (
    DEFAULT_REGION,
    CheckRegion,
    Finding,
    check_non_private_terms,
    check_statements,
    check_upper_vs_lower,
    run_all,
)
from dpverify.errors import InvalidParameterError


def _find(findings, a: str, b: str) -> Finding:
    return next(f for f in findings if set(f.subjects) == {a, b})


@pytest.fixture(scope="module")
def findings() -> tuple[Finding, ...]:
    return run_all()


def test_the_two_lsvi_ucb_statements_are_equal_under_t_eq_kh(findings) -> None:
    f = _find(findings, "lsvi-ucb/sahu-2025", "lsvi-ucb/liao-2021")
    assert f.status == "ok" and "identical under T = KH" in f.message


def test_sahu_2025_disagrees_with_itself(findings) -> None:
    f = _find(findings, "dp-lsvi-ucb++/theorem-3.2", "dp-lsvi-ucb++/conclusion")
    assert f.status == "inconsistent" and f.is_problem
    assert "non-private term d H^{3/2} K^{1/2} vs H^{3/2} K^{1/2}" in f.message
    assert "d^{7/6} H^{9/2} K^{1/2} ε^{-1} vs d^{15/8} H^{19/8} K^{3/4} ε^{-1}" in f.message
    v2 = _find(findings, "dp-lsvi-ucb++/abstract", "dp-lsvi-ucb++/arxiv-v2")
    assert v2.status == "inconsistent" and "H^{9/2}" in v2.message and "H^{15/4}" in v2.message


def test_abstract_theorem_and_appendix_agree_up_to_logs(findings) -> None:
    for a, b in [("dp-lsvi-ucb++/abstract", "dp-lsvi-ucb++/theorem-3.2"),
                 ("dp-lsvi-ucb++/theorem-3.2", "dp-lsvi-ucb++/lemma-c.5")]:
        assert _find(findings, a, b).status == "ok under Õ"


def test_every_pair_of_dp_lsvi_ucbpp_variants_is_checked() -> None:
    pairs = {frozenset(f.subjects) for f in check_statements() if f.subjects[0].startswith("dp-lsvi-ucb++/")}
    assert len(pairs) == 10  # 5 statements, all pairs


def test_conclusion_drops_the_d_of_lsvi_ucbpp() -> None:
    f = _find(check_non_private_terms(), "dp-lsvi-ucb++/conclusion", "lsvi-ucb++/sahu-2025")
    assert f.status == "inconsistent"
    ok = _find(check_non_private_terms(), "dp-lsvi-ucb++/theorem-3.2", "lsvi-ucb++/sahu-2025")
    assert ok.status == "ok"
    for name in ("luyo-2021/linear-mdp", "ngo-2022/linear-mdp"):
        assert _find(check_non_private_terms(), name, "lsvi-ucb/sahu-2025").status == "ok"


def test_ldp_upper_bound_below_the_lower_bound_is_flagged(findings) -> None:
    f = _find(findings, "ldp-ucrl-vtr/upper", "ldp-ucrl-vtr/lower-linear-mixture")
    assert f.status == "flagged"
    assert f.details["rates"]["epsilon_upper"] == "-1/2" and f.details["rates"]["epsilon_lower"] == "-1"
    assert f.details["fraction_of_grid_below"] > 0
    assert "ε-LDP" in f.message and "(ε, δ)-LDP" in f.message
    assert _find(findings, "garcelon-2020/upper", "garcelon-2020/lower").status == "ok"


def test_flag_disappears_when_the_region_excludes_small_epsilon() -> None:
    region = CheckRegion(epsilon_range=(1e-2, 1e2), points=7)
    f = _find(check_upper_vs_lower(region), "ldp-ucrl-vtr/upper", "ldp-ucrl-vtr/lower-linear-mixture")
    # Not below anywhere on this grid, but the rate argument still flags it.
    assert f.details["fraction_of_grid_below"] == 0
    assert f.status == "flagged" and "slower than the lower bound" in f.message


def test_improvement_claims(findings) -> None:
    claims = {f.details["claim"]: f for f in findings if f.check == "claim"}
    ngo = claims["claim/dp-lsvi-ucb++-over-ngo-2022"]
    assert ngo.status == "flagged" and ngo.details["fraction"] == 0
    assert ngo.details["epsilon_crossovers"][0] == pytest.approx(9130.27, rel=1e-5)
    luyo = claims["claim/dp-lsvi-ucb++-over-luyo-2021"]
    assert 1e36 < luyo.details["k_crossovers"][0] < 1e37
    assert claims["claim/zhou-2022-over-luyo-2021"].details["fraction"] == 0


def test_findings_are_deterministic_and_serialisable(findings) -> None:
    again = run_all(CheckRegion())
    assert [f.as_dict() for f in again] == [f.as_dict() for f in findings]
    assert all(isinstance(f.as_dict()["subjects"], list) for f in findings)
    assert DEFAULT_REGION.describe().startswith("d=10, H=20")


def test_finding_status_is_validated() -> None:
    with pytest.raises(InvalidParameterError, match="status must be one of"):
        Finding("x", ("a",), "fine", "m")
