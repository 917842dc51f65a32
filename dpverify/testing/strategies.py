"""Hypothesis strategies for privacy parameters, mechanisms and ledgers.

>>> from hypothesis import given
>>> from dpverify.testing.strategies import gaussian_mechanisms, deltas
>>> @given(gaussian_mechanisms(), deltas())
... def test_profile_is_a_probability(mech, delta):
...     assert 0 <= mech.delta_for_epsilon(1.0) <= 1

:func:`neighbouring_datasets` draws pairs of datasets of a given shape that differ in one user's record
(replaced, or removed), as :class:`~dpverify.audit.NeighbourPair` objects ready for an audit.
"""

from __future__ import annotations

import math
from typing import TypeVar

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("dpverify.testing.strategies needs hypothesis: pip install 'dpverify[test]'") from exc

import numpy as np

from dpverify import _validate
from dpverify.audit.spec import NeighbourPair
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import (
    MECHANISMS,
    GaussianMechanism,
    GOEMechanism,
    LaplaceMechanism,
    NoiseMechanism,
    RandomizedResponse,
)
from dpverify.neighbouring import Neighbouring

_M = TypeVar("_M", bound=NoiseMechanism)


def epsilons(min_value: float = 1e-3, max_value: float = 20.0) -> st.SearchStrategy[float]:
    """Target ε values in a range where every conversion is well defined."""
    return st.floats(min_value=min_value, max_value=max_value, allow_nan=False, allow_infinity=False)


def deltas(min_value: float = 1e-12, max_value: float = 0.1) -> st.SearchStrategy[float]:
    """δ values in [min_value, max_value], log-uniform: every decade is drawn about equally often.

    δ = exp(log a + u·(log b − log a)) for u drawn in [0, 1] (so both ends are reachable; like any
    hypothesis strategy it also tries the simplest value, u = 0, i.e. the smallest δ, more often).
    A plain ``floats(a, b)`` would put nearly every draw in the top decade.
    """
    lo = math.log(_validate.positive("min_value", min_value))
    hi = math.log(_validate.open_unit("max_value", max_value))
    if not lo < hi:
        raise InvalidParameterError("min_value", "must be < max_value", min_value)

    def scale(u: float) -> float:
        if u <= 0.0 or u >= 1.0:  # the ends exactly, not exp(log(·)) of them
            return min_value if u <= 0.0 else max_value
        return min(max_value, max(min_value, math.exp(lo + (hi - lo) * u)))

    return st.floats(0.0, 1.0).map(scale)


def rhos(min_value: float = 1e-6, max_value: float = 50.0) -> st.SearchStrategy[float]:
    return st.floats(min_value=min_value, max_value=max_value, allow_nan=False)


def relations() -> st.SearchStrategy[Neighbouring]:
    return st.sampled_from(list(Neighbouring))


def mechanisms_of(
    cls: type[_M], relation: Neighbouring | None = None, max_dim: int = 8
) -> st.SearchStrategy[_M]:
    """Instances of a registered mechanism class, built from its declared fields
    (:meth:`~dpverify.mechanisms.NoiseMechanism.build`): sensitivity in [1e-3, 1e3], noise scale in
    [1e-2, 1e4], dim in 1..max_dim (at most the class's ``max_profile_dim``). A mechanism with a Hamming
    sensitivity (randomized response) is drawn by :func:`randomized_responses`."""
    if cls.sensitivity_norm == "hamming":
        return randomized_responses(relation, max_dim)  # type: ignore[return-value]
    top = max_dim if cls.max_profile_dim is None else min(max_dim, cls.max_profile_dim)
    return st.builds(
        cls.build,
        st.floats(1e-3, 1e3),
        st.floats(1e-2, 1e4),
        st.integers(1, top),
        st.just(relation) if relation else relations(),
    )


def gaussian_mechanisms(relation: Neighbouring | None = None, max_dim: int = 8) -> st.SearchStrategy[GaussianMechanism]:
    return mechanisms_of(GaussianMechanism, relation, max_dim)


def goe_mechanisms(relation: Neighbouring | None = None, max_dim: int = 8) -> st.SearchStrategy[GOEMechanism]:
    return mechanisms_of(GOEMechanism, relation, max_dim)


def laplace_mechanisms(relation: Neighbouring | None = None) -> st.SearchStrategy[LaplaceMechanism]:
    return mechanisms_of(LaplaceMechanism, relation)


@st.composite
def randomized_responses(draw, relation: Neighbouring | None = None, max_dim: int = 8,
                         max_categories: int = 8) -> RandomizedResponse:
    """Randomized responses: dim in 1..max_dim, Hamming sensitivity in 1..dim, ε per coordinate in
    [1e-3, 5], k in 2..max_categories."""
    dim = draw(st.integers(1, max_dim))
    return RandomizedResponse(draw(st.integers(1, dim)), draw(st.floats(1e-3, 5.0)), dim,
                              draw(st.integers(2, max_categories)), relation or draw(relations()))


def mechanisms(relation: Neighbouring | None = None) -> st.SearchStrategy[NoiseMechanism]:
    """Any registered mechanism (:data:`dpverify.mechanisms.MECHANISMS`), each kind equally often."""
    return st.one_of(*(mechanisms_of(cls, relation) for cls in MECHANISMS.values()))


@st.composite
def ledgers(draw, relation: Neighbouring = Neighbouring.REPLACE_ONE, gaussian_only: bool = True, max_blocks: int = 5):
    """Ledgers of random blocks (families, episode and stage ranges, user patterns); every block reads
    at least one user's data. ``gaussian_only=False`` mixes in Laplace and randomized-response releases."""
    mech: st.SearchStrategy = st.one_of(gaussian_mechanisms(relation), goe_mechanisms(relation))
    if not gaussian_only:
        mech = st.one_of(mech, laplace_mechanisms(relation), randomized_responses(relation))
    ledger = PrivacyLedger(relation)
    for i in range(draw(st.integers(0, max_blocks))):
        users = draw(st.sampled_from(["prefix", "current", "tree"]))
        k0 = draw(st.integers(2 if users == "prefix" else 1, 50))  # a prefix release at episode 1 reads no user
        h0 = draw(st.integers(1, 5))
        ledger.record_block(
            draw(st.sampled_from(["a", "b", "c", f"f{i}"])),
            (k0, k0 + draw(st.integers(0, 50))),
            (h0, h0 + draw(st.integers(0, 3))),
            draw(mech),
            users,
        )
    return ledger


@st.composite
def neighbouring_datasets(
    draw,
    shape: tuple[int, ...],
    relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
    elements: st.SearchStrategy[float] | None = None,
) -> NeighbourPair:
    """A pair (D, D′) of float arrays, D of ``shape`` = (users, *record shape), neighbouring under ``relation``.

    ``replace-one``: D′ is D with one user's record (row) replaced by another drawn record;
    ``add-remove-one``: D′ is D without one user's row. Entries come from ``elements`` (default: finite
    floats in [−1, 1]; bound them by what your mechanism's sensitivity assumes). The pair's label names
    the user, so an audit report says which one it evaluated.
    """
    shape = tuple(_validate.integer("shape", n, minimum=1) for n in shape)
    if not shape:
        raise InvalidParameterError("shape", "must have at least one axis (the users)", shape)
    relation = Neighbouring.parse(relation)
    elements = elements if elements is not None else st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)
    first = draw(hnp.arrays(np.float64, shape, elements=elements))
    user = draw(st.integers(0, shape[0] - 1))
    if relation is Neighbouring.REPLACE_ONE:
        second = first.copy()
        second[user] = draw(hnp.arrays(np.float64, shape[1:], elements=elements))
        label = f"user {user} replaced"
    else:
        second = np.delete(first, user, axis=0)
        label = f"user {user} removed"
    return NeighbourPair(first, second, label)
