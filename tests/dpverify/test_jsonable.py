"""to_jsonable: infinities stay visible, numpy values become plain JSON."""

import json
import math

import numpy as np

from dpverify.jsonable import to_jsonable


def test_to_jsonable():
    value = {1: (math.inf, -math.inf, math.nan), "a": np.arange(3), "b": np.float64(0.5), "c": [np.int64(2)]}
    out = to_jsonable(value)
    assert out == {"1": ["inf", "-inf", "nan"], "a": [0, 1, 2], "b": 0.5, "c": [2]}
    json.dumps(out, allow_nan=False)  # strictly valid JSON
