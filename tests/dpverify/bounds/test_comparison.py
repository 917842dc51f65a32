"""Ratios, crossovers (verified by substitution) and the improvement region."""

from __future__ import annotations

import math

import mpmath
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.bounds.comparison import compare, improvement_region
from dpverify.bounds.evaluation import evaluate
from dpverify.bounds.registry import get
from dpverify.bounds.symbols import VARIABLES, in_episodes
from dpverify.errors import InvalidParameterError

REF = {"d": 10, "H": 20, "epsilon": 1, "delta": 1e-5}


def _value(name: str, values: dict) -> mpmath.mpf:
    """The bound at 50 digits, independently of dpverify's evaluation path."""
    expr = in_episodes(get(name).expression)
    subs = {VARIABLES[k]: sympy.Float(repr(float(v)), 50) for k, v in values.items()}
    return mpmath.mpf(str(sympy.N(expr.subs(subs), 50)))


def _assert_crossing(a: str, b: str, values: dict) -> None:
    va, vb = _value(a, values), _value(b, values)
    assert abs(va - vb) / max(va, vb) < 1e-9


def test_conclusion_vs_theorem_crossover_symbolic_and_verified() -> None:
    c = compare("dp-lsvi-ucb++/conclusion", "dp-lsvi-ucb++/theorem-3.2", values=REF)
    assert c.symbolic_crossovers is not None and len(c.symbolic_crossovers) == 1
    assert [x.method for x in c.crossovers] == ["symbolic"]
    k_star = c.crossovers[0].value
    _assert_crossing(c.a, c.b, {**REF, "K": k_star})
    # K^{3/4} against K^{1/2}: the conclusion's bound is lower before the crossover, higher after.
    assert c.asymptotic_exponent == sympy.Rational(1, 4)
    assert [s.lower for s in c.segments] == ["dp-lsvi-ucb++/conclusion", "dp-lsvi-ucb++/theorem-3.2"]
    # Closed form by hand: y = K^{1/4} solves a·y = b with the terms grouped by power of K.
    d, H, eps, L = 10.0, 20.0, 1.0, math.log(1e5)
    b = d * H**1.5 + H**4.5 * d ** (7 / 6) * L / eps - H**1.5
    a = H ** (19 / 8) * d ** (15 / 8) / eps
    assert k_star == pytest.approx((b / a) ** 4, rel=1e-12)


def test_luyo_vs_theorem_3_2_crossover_is_beyond_1e36() -> None:
    c = compare("luyo-2021/linear-mdp", "dp-lsvi-ucb++/theorem-3.2", values=REF)
    assert len(c.crossovers) == 1
    k_star = c.crossovers[0].value
    assert 1e36 < k_star < 1e37
    _assert_crossing(c.a, c.b, {**REF, "K": k_star})
    assert c.lower_beyond_last_crossover == "dp-lsvi-ucb++/theorem-3.2"
    assert c.asymptotic_exponent == sympy.Rational(1, 10)


def test_numeric_path_when_there_is_a_log_of_k() -> None:
    c = compare("dp-lsvi-ucb++/lemma-c.5", "luyo-2021/linear-mdp", values=REF)
    assert c.symbolic_crossovers is None
    assert [x.method for x in c.crossovers] == ["numeric"]
    _assert_crossing(c.a, c.b, {**REF, "K": c.crossovers[0].value})


def test_numeric_crossover_in_epsilon_with_exponentials() -> None:
    values = {"d": 10, "H": 20, "K": 1e5, "delta": 1e-5}
    c = compare("ldp-ucrl-vtr/upper", "ldp-ucrl-vtr/lower-linear-mixture", over="epsilon", values=values)
    assert c.symbolic_crossovers is None and len(c.crossovers) == 1
    eps_star = c.crossovers[0].value
    _assert_crossing(c.a, c.b, {**values, "epsilon": eps_star})
    assert c.segments[0].lower == "ldp-ucrl-vtr/upper"  # the upper bound is below the lower one for tiny ε


def test_symbolic_and_numeric_agree() -> None:
    """The DP-LSVI-UCB++/Ngo boundary in ε: closed form against a hand-solved quadratic."""
    values = {"d": 10, "H": 20, "K": 1e5, "delta": 1e-5}
    c = compare("dp-lsvi-ucb++/theorem-3.2", "ngo-2022/linear-mdp", over="epsilon", values=values, search=(1e-3, 1e6))
    assert [x.method for x in c.crossovers] == ["symbolic"]
    d, H, L = 10.0, 20.0, math.log(1e5)
    # d H^{3/2} + a/ε = d^{3/2} H² + b/√ε, u = 1/√ε: a u² − b u − (d^{3/2}H² − d H^{3/2}) = 0.
    a, b, c0 = H**4.5 * d ** (7 / 6) * L, H**3 * d**1.25, d**1.5 * H**2 - d * H**1.5
    u = (b + math.sqrt(b * b + 4 * a * c0)) / (2 * a)
    assert c.crossovers[0].value == pytest.approx(1 / u**2, rel=1e-10)
    assert c.crossovers[0].value == pytest.approx(9130.27, rel=1e-5)


def test_equal_statements_have_ratio_one_and_no_crossover() -> None:
    c = compare("lsvi-ucb/sahu-2025", "lsvi-ucb/liao-2021", values={"d": 3, "H": 7})
    assert c.ratio == 1 and c.crossovers == () and c.symbolic_crossovers == ()
    assert [s.lower for s in c.segments] == ["equal"]


def test_without_numbers_only_symbolic_results() -> None:
    c = compare("luyo-2021/linear-mdp", "dp-lsvi-ucb++/theorem-3.2")
    assert c.missing == ("d", "H", "epsilon", "delta")
    assert c.crossovers == () and c.symbolic_crossovers
    assert c.as_dict()["lower_beyond_last_crossover"] is None


def test_compare_accepts_t_and_h_instead_of_k() -> None:
    a = compare(
        "ldp-ucrl-vtr/upper",
        "ldp-ucrl-vtr/lower-linear-mixture",
        over="epsilon",
        values={"d": 10, "H": 20, "T": 2e6, "delta": 1e-5},
    )
    b = compare(
        "ldp-ucrl-vtr/upper",
        "ldp-ucrl-vtr/lower-linear-mixture",
        over="epsilon",
        values={"d": 10, "H": 20, "K": 1e5, "delta": 1e-5},
    )
    assert a.crossovers[0].value == pytest.approx(b.crossovers[0].value, rel=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"over": "T"}, "over must be one of"),
        ({"search": (10, 1)}, "search must be an interval"),
        ({"values": {"epsilon": 0}}, "epsilon must be > 0"),
        ({"over": "H", "values": {"T": 100}}, "T cannot be fixed"),
    ],
)
def test_compare_rejects_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        compare("ngo-2022/linear-mdp", "luyo-2021/linear-mdp", **kwargs)


@settings(max_examples=25)
@given(
    pair=st.sampled_from(
        [
            ("luyo-2021/linear-mdp", "dp-lsvi-ucb++/arxiv-v2"),
            ("dp-lsvi-ucb++/conclusion", "dp-lsvi-ucb++/theorem-3.2"),
            ("ngo-2022/linear-mdp", "luyo-2021/linear-mdp"),
            ("jdp-ucrl-vtr/luyo-2021", "private-linopt-vi/zhou-2022"),
        ]
    ),
    d=st.floats(1, 100),
    H=st.floats(1, 100),
    eps=st.floats(1e-3, 1e2),
    t=st.floats(0.0, 1.0),
)
def test_ratio_crossovers_and_segments_agree(pair, d, H, eps, t) -> None:
    """At any K, the sign of ratio − 1 says which bound the segment containing K calls lower."""
    values = {"d": d, "H": H, "epsilon": eps, "delta": 1e-5}
    c = compare(*pair, values=values, search=(1.0, 1e40))
    for x in c.crossovers:
        _assert_crossing(c.a, c.b, {**values, "K": x.value})
    k = 10 ** (40 * t)
    seg = next(s for s in c.segments if s.low <= k <= s.high)
    if any(abs(math.log(k / x.value)) < 1e-6 for x in c.crossovers):
        return
    ratio = float(c.ratio.subs({VARIABLES[n]: v for n, v in {**values, "K": k}.items()}))
    a, b = evaluate(c.a, K=k, **values).value, evaluate(c.b, K=k, **values).value
    assert ratio == pytest.approx(a / b, rel=1e-9)
    if abs(ratio - 1) < 1e-12:
        assert seg.lower == "equal"  # e.g. d = H = 1 can make two bounds coincide
    else:
        assert seg.lower == (c.a if ratio < 1 else c.b)


def test_improvement_region_boundary_matches_the_closed_form() -> None:
    r = improvement_region(
        "dp-lsvi-ucb++/theorem-3.2",
        "ngo-2022/linear-mdp",
        values={"d": 10, "H": 20, "delta": 1e-5},
        epsilon_range=(1e-2, 1e5),
        points=9,
    )
    # Both bounds are ∝ √K, so the boundary is the same ε* ≈ 9130 at every K.
    assert len(r.boundary) == 9
    assert all(e == pytest.approx(9130.27, rel=1e-5) for _, e in r.boundary)
    for row in r.holds:
        assert [e > 9130.27 for e in r.epsilon_values] == list(row)
    assert 0 < r.fraction < 1
    assert "boundary ε from 9.13e+03" in r.summary()


def test_improvement_region_everywhere_and_nowhere() -> None:
    yes = improvement_region(
        "luyo-2021/linear-mdp", "dp-lsvi-ucb++/theorem-3.2", values={"d": 10, "H": 20, "delta": 1e-5}, points=5
    )
    assert yes.fraction == 1.0 and yes.summary().startswith("holds on the whole grid")
    no = improvement_region(
        "private-linopt-vi/zhou-2022", "jdp-ucrl-vtr/luyo-2021", values={"d": 10, "H": 20}, points=5
    )
    assert no.fraction == 0.0 and no.summary().startswith("fails on the whole grid")


def test_improvement_region_needs_the_other_variables() -> None:
    with pytest.raises(InvalidParameterError, match="delta is required"):
        improvement_region("dp-lsvi-ucb++/theorem-3.2", "ngo-2022/linear-mdp", values={"d": 10, "H": 20})
