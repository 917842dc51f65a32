"""A minimal progress bar for long audits: drawn on a terminal, silent otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Counts finished chunks and redraws one line on ``stream`` when it is a TTY.

    Use ``enabled=True``/``False`` to force it on or off; by default it is on only for a terminal, so
    logs, pipes and tests stay clean.
    """

    def __init__(self, total: int, label: str = "audit", stream: TextIO | None = None, enabled: bool | None = None):
        self.total = max(1, int(total))
        self.done = 0
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(isatty and isatty()) if enabled is None else bool(enabled)
        self._start = time.monotonic()
        self._last_draw = 0.0

    def advance(self, steps: int = 1) -> None:
        self.done = min(self.total, self.done + steps)
        now = time.monotonic()
        if self.enabled and (now - self._last_draw >= 0.1 or self.done == self.total):
            self._last_draw = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        width = 30
        filled = int(width * self.done / self.total)
        elapsed = now - self._start
        self.stream.write(
            f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} chunks {elapsed:6.1f}s"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
