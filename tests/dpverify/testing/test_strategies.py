"""The shipped strategies draw what they document: log-uniform δ, neighbouring datasets of a given shape."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dpverify.audit import NeighbourPair
from dpverify.errors import InvalidParameterError
from dpverify.testing.strategies import deltas, ledgers, neighbouring_datasets


def draws(strategy, n: int = 1000) -> list:
    out: list = []

    @settings(max_examples=n, phases=[Phase.generate], derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))  # (a loaded machine's slow generation is no failure here)
    @given(strategy)
    def collect(value) -> None:
        out.append(value)

    collect()
    return out


def test_deltas_are_log_uniform() -> None:
    values = np.array(draws(deltas(1e-12, 0.1), 600))
    assert np.all((values >= 1e-12) & (values <= 0.1))
    counts, _ = np.histogram(np.log10(values), bins=11, range=(-12.0, -1.0))
    shares = counts / len(values)
    # every decade is drawn about 1/11 ≈ 0.09 of the time (hypothesis also favours the smallest value a bit)
    assert np.all(shares >= 0.05), shares
    assert np.all(shares[1:] <= 0.14), shares
    # a plain floats(1e-12, 0.1) puts almost everything in the top decade
    plain = np.array(draws(st.floats(1e-12, 0.1), 200))
    assert np.mean(plain >= 1e-2) > 0.5


def test_deltas_reach_both_ends_and_check_their_bounds() -> None:
    values = draws(deltas(1e-9, 1e-3), 300)
    assert min(values) == 1e-9 and max(values) > 1e-4
    with pytest.raises(InvalidParameterError, match="min_value"):
        deltas(0.1, 0.01)
    with pytest.raises(InvalidParameterError, match="max_value"):
        deltas(1e-5, 1.0)


@given(neighbouring_datasets((5, 3)))
def test_replace_one_changes_at_most_one_row(pair: NeighbourPair) -> None:
    assert pair.first.shape == pair.second.shape == (5, 3)
    differing = np.flatnonzero(np.any(pair.first != pair.second, axis=1))
    assert differing.size <= 1
    user = int(pair.label.split()[1])
    assert set(differing.tolist()) <= {user} and np.all(np.abs(pair.first) <= 1)


@given(neighbouring_datasets((4,), "add-remove-one", elements=st.integers(0, 1).map(float)))
def test_add_remove_drops_one_row(pair: NeighbourPair) -> None:
    user = int(pair.label.split()[1])
    assert pair.second.shape == (3,) and pair.label.endswith("removed")
    np.testing.assert_array_equal(np.delete(pair.first, user), pair.second)
    assert set(np.unique(pair.first)) <= {0.0, 1.0}


def test_neighbouring_datasets_checks_the_shape() -> None:
    with pytest.raises(InvalidParameterError, match="shape"):
        draws(neighbouring_datasets(()), 1)
    with pytest.raises(InvalidParameterError, match="shape"):
        draws(neighbouring_datasets((0, 2)), 1)


@given(ledgers(max_blocks=4))
def test_ledger_strategy_blocks_read_some_user(ledger) -> None:
    for block in ledger.blocks:
        assert block.users.max_user(block.episodes[1]) >= 1
    if ledger.n_releases:
        assert math.isfinite(ledger.worst_user_rho())
