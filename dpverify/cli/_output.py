"""Helpers shared by the sub-commands: JSON printing and plain-text tables."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from dpverify.jsonable import to_jsonable


def print_json(payload: Any) -> None:
    """Print ``payload`` as indented JSON; infinities become the strings "inf"/"-inf"."""
    print(json.dumps(to_jsonable(payload), indent=2, sort_keys=False))


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table with columns padded to their widest cell."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value == 0 or 1e-3 <= abs(value) < 1e6:
            return f"{value:.6g}"
        return f"{value:.4e}"
    return str(value)
