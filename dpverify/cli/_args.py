"""Argument types shared by the sub-commands; a bad value becomes one line naming the option."""

from __future__ import annotations

import argparse
import math


def number(text: str) -> float:
    """A real number in any float syntax ("1e5", "0.5"). NaN/inf pass here and are rejected by the
    command's own validation, which names the rule."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {text!r})") from None


def count(text: str) -> int:
    """An integer written as "1000" or "1e5" (an integral float); "2.5" is rejected, not truncated."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer (got {text!r})") from None
    if not math.isfinite(value) or not value.is_integer():
        raise argparse.ArgumentTypeError(f"must be an integer (got {text!r})")
    return int(value)
