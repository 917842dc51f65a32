"""Convert results to JSON-ready values: the one place that decides how numbers are written.

Non-finite floats become the strings "inf", "-inf", "nan" (JSON has no literal for them, and a privacy
result must never turn an infinite ε into something that reads as a number); numpy arrays and scalars
become lists and Python scalars; tuples become lists; mapping keys become strings.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def to_jsonable(value: Any) -> Any:
    """``value`` with every nested container and number made JSON-serialisable (module docstring)."""
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value
