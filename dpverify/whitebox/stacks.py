"""A run's releases stacked per (family, mechanism): the checks work on arrays, not release by release.

A run of DP-LSVI-UCB++ at H = 20, K = 1000 publishes 80 000 releases; every check here reads them as a
few (n, *shape) arrays — one per statistic family and mechanism, every release of a mechanism having its
output shape (the billboard checks it) — with the releases' positions in the run and their labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpverify.agents.core.billboard import PublishedRelease
from dpverify.mechanisms import Mechanism


@dataclass(frozen=True, eq=False)
class Stack:
    """Every release of one family by one mechanism, in publication order."""

    family: str
    mechanism: Mechanism
    index: np.ndarray  # positions in the run
    episodes: np.ndarray
    stages: np.ndarray

    def values(self, releases: Sequence[PublishedRelease]) -> np.ndarray:
        """The values of these positions of ``releases`` (this run's, or a replay's) as one (n, *shape) array."""
        return np.stack([releases[i].value for i in self.index]).astype(float, copy=False)

    def noise(self, releases: Sequence[PublishedRelease]) -> np.ndarray | None:
        """The kept noise of these positions, or None when a release has none (noised by the agent itself)."""
        noises = [releases[i].noise for i in self.index]
        if any(n is None for n in noises):
            return None
        return np.stack([n for n in noises if n is not None]).astype(float, copy=False)

    def label(self, row: int) -> str:
        return f"{self.family} (episode {int(self.episodes[row])}, stage {int(self.stages[row])})"


def stacks(releases: Sequence[PublishedRelease]) -> tuple[list[Stack], list[int]]:
    """The releases grouped per (family, mechanism), and the positions of releases without a mechanism."""
    groups: dict[tuple[str, int], list[int]] = {}
    mechanisms: dict[int, Mechanism] = {}
    unrecorded = []
    for i, r in enumerate(releases):
        if r.mechanism is None:
            unrecorded.append(i)
            continue
        key = (r.family, id(r.mechanism))
        mechanisms[id(r.mechanism)] = r.mechanism
        groups.setdefault(key, []).append(i)
    out = []
    for (family, mid), positions in groups.items():
        index = np.array(positions, dtype=np.int64)
        out.append(Stack(family, mechanisms[mid], index,
                         np.array([releases[i].episode for i in positions], dtype=np.int64),
                         np.array([releases[i].stage for i in positions], dtype=np.int64)))
    return out, unrecorded
