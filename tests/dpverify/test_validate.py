"""The shared argument checks: what each accepts, and the parameter named in what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify import _validate
from dpverify.errors import InvalidParameterError


@pytest.mark.parametrize("value, expected", [(3, 3), (np.int64(7), 7), (np.uint8(2), 2), (1e5, 100_000), (4.0, 4)])
def test_integer_accepts_integers_and_integral_reals(value, expected):
    n = _validate.integer("episodes", value)
    assert n == expected and type(n) is int


@pytest.mark.parametrize("value", [True, False, 2.5, float("nan"), float("inf"), "3", None, np.bool_(True)])
def test_integer_refuses_everything_else(value):
    with pytest.raises(InvalidParameterError, match="episodes"):
        _validate.integer("episodes", value)


def test_integer_minimum():
    assert _validate.integer("k", 1, minimum=1) == 1
    with pytest.raises(InvalidParameterError, match="k.*>= 1"):
        _validate.integer("k", 0, minimum=1)
    with pytest.raises(InvalidParameterError, match=">= 2"):
        _validate.integer("k", np.int32(1), minimum=2)


@pytest.mark.parametrize("check, good, bad", [
    (_validate.real, [-1.5, 0, np.float32(2)], [float("nan"), float("inf"), "1", True, None]),
    (_validate.positive, [1e-300, 3], [0, -1, float("inf")]),
    (_validate.non_negative, [0, 2.5], [-1e-300, float("nan")]),
    (_validate.open_unit, [1e-12, 0.5], [0, 1, 1.5]),
])
def test_real_checks(check, good, bad):
    for value in good:
        assert check("delta", value) == float(value)
    for value in bad:
        with pytest.raises(InvalidParameterError, match="delta"):
            check("delta", value)


def test_one_of():
    assert _validate.one_of("relation", "replace-one", ("replace-one", "add-remove-one")) == "replace-one"
    with pytest.raises(InvalidParameterError, match="relation.*replace-one, add-remove-one"):
        _validate.one_of("relation", "swap", ("replace-one", "add-remove-one"))
