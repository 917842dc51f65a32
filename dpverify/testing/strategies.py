"""Hypothesis strategies for privacy parameters, mechanisms and ledgers.

>>> from hypothesis import given
>>> from dpverify.testing.strategies import gaussian_mechanisms, deltas
>>> @given(gaussian_mechanisms(), deltas())
... def test_profile_is_a_probability(mech, delta):
...     assert 0 <= mech.delta_for_epsilon(1.0) <= 1
"""

from __future__ import annotations

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("dpverify.testing.strategies needs hypothesis: pip install 'dpverify[test]'") from exc

from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism
from dpverify.neighbouring import Neighbouring


def epsilons(min_value: float = 1e-3, max_value: float = 20.0) -> st.SearchStrategy[float]:
    """Target ε values in a range where every conversion is well defined."""
    return st.floats(min_value=min_value, max_value=max_value, allow_nan=False, allow_infinity=False)


def deltas(min_value: float = 1e-12, max_value: float = 0.1) -> st.SearchStrategy[float]:
    """δ values, drawn log-uniformly enough to reach the tails."""
    return st.floats(min_value=min_value, max_value=max_value, allow_nan=False)


def rhos(min_value: float = 1e-6, max_value: float = 50.0) -> st.SearchStrategy[float]:
    return st.floats(min_value=min_value, max_value=max_value, allow_nan=False)


def relations() -> st.SearchStrategy[Neighbouring]:
    return st.sampled_from(list(Neighbouring))


def gaussian_mechanisms(relation: Neighbouring | None = None, max_dim: int = 8) -> st.SearchStrategy[GaussianMechanism]:
    return st.builds(
        GaussianMechanism,
        sensitivity=st.floats(1e-3, 1e3),
        sigma=st.floats(1e-2, 1e4),
        dim=st.integers(1, max_dim),
        relation=st.just(relation) if relation else relations(),
    )


def goe_mechanisms(relation: Neighbouring | None = None, max_dim: int = 8) -> st.SearchStrategy[GOEMechanism]:
    return st.builds(
        GOEMechanism,
        frobenius_sensitivity=st.floats(1e-3, 1e3),
        entry_std=st.floats(1e-2, 1e4),
        dim=st.integers(1, max_dim),
        relation=st.just(relation) if relation else relations(),
    )


def laplace_mechanisms(relation: Neighbouring | None = None) -> st.SearchStrategy[LaplaceMechanism]:
    return st.builds(
        LaplaceMechanism,
        sensitivity=st.floats(1e-3, 1e3),
        scale=st.floats(1e-2, 1e4),
        dim=st.just(1),
        relation=st.just(relation) if relation else relations(),
    )


def mechanisms(relation: Neighbouring | None = None) -> st.SearchStrategy:
    return st.one_of(gaussian_mechanisms(relation), goe_mechanisms(relation), laplace_mechanisms(relation))


@st.composite
def ledgers(draw, relation: Neighbouring = Neighbouring.REPLACE_ONE, gaussian_only: bool = True, max_blocks: int = 5):
    """Ledgers of random blocks (families, episode and stage ranges, user patterns)."""
    mech = gaussian_mechanisms(relation) | goe_mechanisms(relation)
    if not gaussian_only:
        mech = mech | laplace_mechanisms(relation)
    ledger = PrivacyLedger(relation)
    for i in range(draw(st.integers(0, max_blocks))):
        k0 = draw(st.integers(1, 50))
        h0 = draw(st.integers(1, 5))
        ledger.record_block(
            draw(st.sampled_from(["a", "b", "c", f"f{i}"])),
            (k0, k0 + draw(st.integers(0, 50))),
            (h0, h0 + draw(st.integers(0, 3))),
            draw(mech),
            draw(st.sampled_from(["prefix", "current", "tree"])),
        )
    return ledger
