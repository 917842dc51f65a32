"""The registry: every entry validated, verified against the paper text, and with the stated rates."""

from __future__ import annotations

import dataclasses

import pytest
import sympy

from dpverify.bounds import registry
from dpverify.bounds.rates import split, term_rates
from dpverify.bounds.registry import CLAIMS, REGISTRY, BoundEntry, Source, entries, get
from dpverify.bounds.symbols import H, K, T, d, epsilon, in_episodes
from dpverify.errors import InvalidParameterError

R = sympy.Rational

#: The rates of each term as printed, typed by hand from the papers (ε exponent as ε → 0).
#: One dict per term: non-private term first, then the privacy term.
STATED_TERM_RATES = {
    "lsvi-ucb/sahu-2025": [{"d": R(3, 2), "H": 2, "K": R(1, 2)}],
    "lsvi-ucb/liao-2021": [{"d": R(3, 2), "H": R(3, 2), "T": R(1, 2)}],
    "lsvi-ucb++/sahu-2025": [{"d": 1, "H": 1, "T": R(1, 2)}],
    "luyo-2021/linear-mdp": [
        {"d": R(3, 2), "H": 2, "K": R(1, 2)},
        {"d": R(8, 5), "H": R(11, 5), "K": R(3, 5), "epsilon": R(-2, 5)},
    ],
    "ngo-2022/linear-mdp": [
        {"d": R(3, 2), "H": 2, "K": R(1, 2)},
        {"d": R(5, 4), "H": 3, "K": R(1, 2), "epsilon": R(-1, 2)},
    ],
    "dp-lsvi-ucb++/abstract": [
        {"d": 1, "H": R(3, 2), "K": R(1, 2)},
        {"d": R(7, 6), "H": R(18, 4), "K": R(1, 2), "epsilon": -1},
    ],
    "dp-lsvi-ucb++/theorem-3.2": [
        {"d": 1, "H": R(3, 2), "K": R(1, 2)},
        {"d": R(7, 6), "H": R(18, 4), "K": R(1, 2), "epsilon": -1},
    ],
    "dp-lsvi-ucb++/lemma-c.5": [
        {"d": 1, "H": R(3, 2), "K": R(1, 2)},
        {"d": R(7, 6), "H": R(18, 4), "K": R(1, 2), "epsilon": -1},
    ],
    "dp-lsvi-ucb++/conclusion": [
        {"H": R(3, 2), "K": R(1, 2)},
        {"d": R(15, 8), "H": R(19, 8), "K": R(3, 4), "epsilon": -1},
    ],
    "dp-lsvi-ucb++/arxiv-v2": [
        {"d": 1, "H": R(3, 2), "K": R(1, 2)},
        {"d": R(7, 6), "H": R(15, 4), "K": R(1, 2), "epsilon": -1},
    ],
    "ucrl-vtr/liao-2021": [{"d": 1, "H": R(3, 2), "T": R(1, 2)}],
    "jdp-ucrl-vtr/luyo-2021": [
        {"d": 1, "H": 2, "K": R(1, 2)},
        {"d": R(3, 4), "H": R(9, 4), "K": R(1, 2), "epsilon": R(-1, 2)},
    ],
    "private-linopt-vi/zhou-2022": [
        {"d": 1, "H": 2, "K": R(1, 2)},
        {"d": R(7, 4), "H": R(5, 2), "K": R(1, 2), "epsilon": R(-1, 2)},
    ],
    "ldp-ucrl-vtr/upper": [{"d": R(5, 4), "H": R(7, 4), "T": R(3, 4), "epsilon": R(-1, 2)}],
    "ldp-ucrl-vtr/lower-linear-mixture": [{"d": 1, "H": 1, "T": R(1, 2), "epsilon": -1}],
    "ldp-ucrl-vtr/lower-contextual-bandit": [{"d": 1, "T": R(1, 2), "epsilon": -1}],
    # √(H⁴SAT) + SAH³(S+H)/ε: the privacy term's leading rates are S², H⁴ (from S·H³·(S+H)).
    "pucb/vietri-2020": [
        {"H": 2, "S": R(1, 2), "A": R(1, 2), "T": R(1, 2)},
        {"H": 4, "S": 2, "A": 1, "epsilon": -1},
    ],
    # max{H^{3/2}S²A√T/ε, HS√(AT)}: sympy orders the arguments of Max canonically.
    "garcelon-2020/upper": [
        {"H": 1, "S": 1, "A": R(1, 2), "T": R(1, 2)},
        {"H": R(3, 2), "S": 2, "A": 1, "T": R(1, 2), "epsilon": -1},
    ],
    "garcelon-2020/lower": [{"H": R(1, 2), "S": R(1, 2), "A": R(1, 2), "T": R(1, 2), "epsilon": -1}],
    "he-zhou-2026/general-fa": [{"K": R(3, 5)}],
    "linucb/abbasi-yadkori-2011": [{"d": 1, "T": R(1, 2)}],
    "jdp-linucb/shariff-sheffet-2018": [{"d": 1, "T": R(1, 2)}, {"d": R(3, 4), "T": R(1, 2), "epsilon": R(-1, 2)}],
    "ldp-linucb/zheng-2020": [{"T": R(3, 4), "epsilon": -1}],
    "ucb/auer-2002": [{"A": R(1, 2), "T": R(1, 2)}],
    "dp-ucb/mishra-thakurta-2015": [{"A": R(1, 2), "T": R(1, 2)}, {"A": 1, "epsilon": -1}],
}


def _nonzero(rates: dict) -> dict:
    return {k: sympy.Rational(v) for k, v in rates.items() if v != 0}


def test_every_entry_has_stated_rates() -> None:
    assert set(STATED_TERM_RATES) == set(REGISTRY)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_term_exponents_equal_the_stated_rates(name: str) -> None:
    entry = REGISTRY[name]
    parts = split(entry)
    ordered = [t for t in (parts.non_private, parts.privacy) if t != 0]
    if parts.combine == "max":
        ordered = [parts.non_private, parts.privacy]
    got = [_nonzero(term_rates(t)[0]) for t in ordered]
    assert got == [_nonzero(r) for r in STATED_TERM_RATES[name]]


_QUOTED = {
    **{f"entry {n}": e.source for n, e in REGISTRY.items()},
    **{f"claim {n}": c.source for n, c in CLAIMS.items()},
}


@pytest.mark.parametrize("name", [n for n, source in _QUOTED.items() if source.text])
def test_quote_is_on_the_cited_lines_of_the_paper(name: str, paper_text) -> None:
    source = _QUOTED[name]
    assert source.text is not None
    lines = paper_text(source.text)
    for n in source.lines:
        assert source.quote in lines[n - 1], f"{name}: quote not on line {n}"


def test_registry_is_immutable() -> None:
    with pytest.raises(TypeError):
        REGISTRY["new/entry"] = REGISTRY["lsvi-ucb/sahu-2025"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        REGISTRY["lsvi-ucb/sahu-2025"].note = "changed"  # type: ignore[misc]


def test_names_are_stable() -> None:
    for name in ("dp-lsvi-ucb++/theorem-3.2", "dp-lsvi-ucb++/conclusion", "dp-lsvi-ucb++/arxiv-v2",
                 "ngo-2022/linear-mdp", "luyo-2021/linear-mdp", "ldp-ucrl-vtr/upper"):
        assert get(name).name == name


def test_unknown_name_is_an_invalid_parameter() -> None:
    with pytest.raises(InvalidParameterError, match="name must be a registered bound"):
        get("dp-lsvi-ucb/typo")


def test_expressions_as_stated() -> None:
    assert get("dp-lsvi-ucb++/theorem-3.2").expression == (
        d * sympy.sqrt(H**3 * K) + H ** R(9, 2) * d ** R(7, 6) * sympy.sqrt(K) * sympy.log(1 / registry.delta) / epsilon
    )
    assert get("lsvi-ucb++/sahu-2025").expression == H * d * sympy.sqrt(T)
    assert in_episodes(get("lsvi-ucb++/sahu-2025").expression) == d * sympy.sqrt(H**3 * K)


def test_filters() -> None:
    ldp = entries(privacy="LDP")
    assert {e.name for e in ldp} >= {"ldp-ucrl-vtr/upper", "garcelon-2020/upper", "garcelon-2020/lower"}
    assert all(e.kind == "lower" for e in entries(kind="lower"))
    with pytest.raises(InvalidParameterError, match="setting must be one of"):
        entries(setting="linear")


def _entry(**overrides) -> BoundEntry:
    base = dataclasses.asdict(get("ngo-2022/linear-mdp"))
    base["source"] = get("ngo-2022/linear-mdp").source
    base.update(overrides)
    return BoundEntry(**base)


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"name": "No Slash"}, "name must look like"),
        ({"setting": "tabularish"}, "setting must be one of"),
        ({"privacy": "CDP"}, "privacy must be one of"),
        ({"kind": "tight"}, "kind must be one of"),
        ({"expression": sympy.Symbol("x", positive=True)}, "expression may only use"),
        ({"privacy": "none"}, "must not depend on epsilon"),
        ({"notation": "Ω"}, "notation must be Õ"),
    ],
)
def test_invalid_entries_are_rejected(overrides: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        _entry(**overrides)


def test_source_rules() -> None:
    with pytest.raises(InvalidParameterError, match="source.lines"):
        Source("x", "y", None, (3,), "q")
    with pytest.raises(InvalidParameterError, match="source.lines"):
        Source("x", "y", "sahu-2025", (), "q")
    with pytest.raises(InvalidParameterError, match="source.text"):
        Source("x", "y", "no-such-paper", (1,), "q")
