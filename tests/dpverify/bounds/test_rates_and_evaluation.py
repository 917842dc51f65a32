"""Leading exponents, the term split, and numerical evaluation against hand-computed values."""

from __future__ import annotations

import math

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.bounds.evaluation import evaluate, resolve
from dpverify.bounds.rates import leading_exponent, rates, split
from dpverify.bounds.registry import REGISTRY, get
from dpverify.bounds.symbols import H, K, T, d, delta, epsilon
from dpverify.errors import InvalidParameterError

R = sympy.Rational


# ------------------------------------------------------------------------------------ rates


def test_leading_exponent_of_sums_and_maxima() -> None:
    assert leading_exponent(sympy.sqrt(K) + K ** R(3, 5), "K") == R(3, 5)
    assert leading_exponent(sympy.Max(K ** R(1, 2), K ** R(2, 3)), "K") == R(2, 3)
    assert leading_exponent(sympy.sqrt(K) * sympy.log(10 * K), "K") == R(1, 2)  # logs are exponent 0
    assert leading_exponent(d / epsilon + d / sympy.sqrt(epsilon), "epsilon") == -1
    # 1/(e^ε(e^ε−1)) ≍ 1/ε as ε → 0 (cancellation handled by sympy's limit)
    assert leading_exponent(1 / (sympy.exp(epsilon) * (sympy.exp(epsilon) - 1)), "epsilon") == -1
    assert leading_exponent(1 / sympy.Min(sympy.exp(epsilon) - 1, 1), "epsilon") == -1
    assert leading_exponent(H * (H + d), "H") == 2


@settings(max_examples=40)
@given(
    p=st.fractions(min_value=-3, max_value=3, max_denominator=12),
    q=st.fractions(min_value=-3, max_value=3, max_denominator=12),
)
def test_exponent_of_a_sum_of_powers_is_the_largest(p, q) -> None:
    expr = 3 * K ** R(p.numerator, p.denominator) + K ** R(q.numerator, q.denominator) / 7
    assert leading_exponent(expr, "K") == max(R(p.numerator, p.denominator), R(q.numerator, q.denominator))
    eps_expr = epsilon ** R(p.numerator, p.denominator) + epsilon ** R(q.numerator, q.denominator)
    assert leading_exponent(eps_expr, "epsilon") == min(R(p.numerator, p.denominator), R(q.numerator, q.denominator))


def test_rates_leave_out_unused_variables() -> None:
    assert rates(get("he-zhou-2026/general-fa").expression) == {"K": R(3, 5)}
    assert leading_exponent(get("lsvi-ucb/liao-2021").expression, "K") == 0


def test_split_of_every_entry_reassembles_the_bound() -> None:
    for entry in REGISTRY.values():
        parts = split(entry)
        assert not parts.non_private.has(epsilon)
        if entry.privacy == "none":
            assert parts.privacy == 0
        op = sympy.Max if parts.combine == "max" else sympy.Add
        pieces = [p for p in (parts.non_private, parts.privacy) if p != 0]
        assert sympy.simplify(op(*pieces) - entry.expression) == 0


def test_split_of_a_max() -> None:
    parts = split(get("garcelon-2020/upper"))
    assert parts.combine == "max"
    assert parts.privacy.has(epsilon) and not parts.non_private.has(epsilon)


# ------------------------------------------------------------------------------ evaluation

def test_ngo_2022_at_d10_h20_k1e5() -> None:
    r = evaluate("ngo-2022/linear-mdp", d=10, H=20, K=1e5, epsilon=1)
    non_private = math.sqrt(10**3 * 20**4 * 1e5)  # = 4e6
    privacy = 20**3 * 10**1.25 * math.sqrt(1e5) / math.sqrt(1)
    assert r.non_private == pytest.approx(non_private, rel=1e-14)
    assert r.privacy == pytest.approx(privacy, rel=1e-14)
    assert r.value == pytest.approx(non_private + privacy, rel=1e-14)
    assert r.non_private == pytest.approx(4e6, rel=1e-15)


def test_theorem_3_2_by_hand() -> None:
    r = evaluate("dp-lsvi-ucb++/theorem-3.2", d=10, H=20, K=1e5, epsilon=0.5, delta=1e-5)
    expected = 10 * math.sqrt(20**3 * 1e5) + 20**4.5 * 10 ** (7 / 6) * math.sqrt(1e5) * math.log(1e5) / 0.5
    assert r.value == pytest.approx(expected, rel=1e-13)


def test_ldp_lower_bound_by_hand_including_small_epsilon() -> None:
    for eps in (1e-9, 0.3, 5.0):
        r = evaluate("ldp-ucrl-vtr/lower-linear-mixture", d=5, H=6, K=1e4, epsilon=eps)
        expected = 5 * 6 * math.sqrt(6e4) / (math.exp(eps) * math.expm1(eps))
        assert r.value == pytest.approx(expected, rel=1e-12)


def test_garcelon_max_and_min_by_hand() -> None:
    up = evaluate("garcelon-2020/upper", H=10, S=5, A=4, T=1e6, epsilon=2)
    assert up.value == pytest.approx(max(10**1.5 * 25 * 4 * 1e3 / 2, 10 * 5 * math.sqrt(4e6)), rel=1e-14)
    low = evaluate("garcelon-2020/lower", H=10, S=5, A=4, T=1e6, epsilon=2)
    assert low.value == pytest.approx(math.sqrt(10 * 5 * 4 * 1e6) / min(math.expm1(2), 1), rel=1e-14)


def test_t_is_derived_from_k_and_h() -> None:
    a = evaluate("ldp-ucrl-vtr/upper", d=5, H=6, K=1e4, epsilon=1, delta=1e-3)
    b = evaluate("ldp-ucrl-vtr/upper", d=5, H=6, T=6e4, epsilon=1, delta=1e-3)
    c = evaluate("ldp-ucrl-vtr/upper", d=5, H=6, K=1e4, T=6e4, epsilon=1, delta=1e-3)
    assert a.value == b.value == c.value
    assert a.values["T"] == 6e4


def test_k_is_derived_from_t_and_h() -> None:
    a = evaluate("lsvi-ucb/sahu-2025", d=3, H=4, T=400)
    assert a.values["K"] == 100
    assert a.value == pytest.approx(math.sqrt(27 * 256 * 100))


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ({"d": 10, "H": 20, "K": 1e5}, "epsilon is required by bound ngo-2022/linear-mdp"),
        ({"d": 10, "H": 20, "K": 1e5, "epsilon": 0}, "epsilon must be > 0"),
        ({"d": 10, "H": 20, "K": 1e5, "epsilon": -1}, "epsilon must be > 0"),
        ({"d": 0.5, "H": 20, "K": 1e5, "epsilon": 1}, "d must be >= 1"),
        ({"d": 10, "H": 20, "K": float("nan"), "epsilon": 1}, "K must not be NaN"),
        ({"d": 10, "H": 20, "K": 1e5, "T": 7, "epsilon": 1}, "T must equal K\\*H"),
        ({"d": 10, "H": 20, "K": 1e5, "epsilon": 1, "delta": 1.5}, "delta must be in the open interval"),
        ({"d": 10, "H": 20, "K": 1e5, "epsilon": 1, "rho": 1}, "rho is not a bound variable"),
        ({"d": 10, "H": 20, "K": "many", "epsilon": 1}, "K must be a real number"),
    ],
)
def test_invalid_values_raise_with_the_parameter_named(values: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        evaluate("ngo-2022/linear-mdp", **values)


def test_missing_t_names_the_alternative() -> None:
    with pytest.raises(InvalidParameterError, match=r"T is required .* \(or K and H"):
        resolve(("T",), {"K": 10})


# ------------------------------------------------------------------ properties (hypothesis)

_UPPER = [n for n, e in REGISTRY.items() if e.kind == "upper"]
_values = st.fixed_dictionaries(
    {
        "d": st.floats(1, 1e3),
        "H": st.floats(1, 1e3),
        "epsilon": st.floats(1e-4, 1e2),
        "delta": st.floats(1e-12, 0.5),
        "S": st.floats(1, 1e3),
        "A": st.floats(1, 1e3),
    }
)


@settings(max_examples=40)
@given(name=st.sampled_from(_UPPER), values=_values, k=st.floats(1, 1e12), factor=st.floats(1.01, 1e6))
def test_every_upper_bound_is_increasing_in_k(name, values, k, factor) -> None:
    low = evaluate(name, K=k, **values).value
    high = evaluate(name, K=k * factor, **values).value
    assert high > low


@settings(max_examples=40)
@given(name=st.sampled_from(list(REGISTRY)), values=_values, k=st.floats(1, 1e12))
def test_bound_is_at_least_each_of_its_terms(name, values, k) -> None:
    r = evaluate(name, K=k, **values)
    assert r.value >= r.non_private * (1 - 1e-12)
    assert r.value >= r.privacy * (1 - 1e-12)
    if r.combine == "sum":
        assert r.value == pytest.approx(r.non_private + r.privacy, rel=1e-12)
    else:
        assert r.value == pytest.approx(max(r.non_private, r.privacy), rel=1e-12)


@settings(max_examples=30)
@given(name=st.sampled_from([n for n, e in REGISTRY.items() if e.expression.has(epsilon)]), values=_values,
       k=st.floats(1, 1e12), factor=st.floats(1.01, 1e3))
def test_every_private_bound_is_non_increasing_in_epsilon(name, values, k, factor) -> None:
    strict = evaluate(name, K=k, **values).value
    loose = evaluate(name, K=k, **{**values, "epsilon": values["epsilon"] * factor}).value
    assert loose <= strict * (1 + 1e-12)


def test_symbols_are_positive() -> None:
    for s in (d, H, K, T, epsilon, delta):
        assert s.is_positive
