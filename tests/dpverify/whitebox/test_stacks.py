"""Releases stacked per (family, mechanism), in publication order, with their labels."""

from __future__ import annotations

import numpy as np

from dpverify.agents.core.billboard import PublishedRelease
from dpverify.mechanisms import GaussianMechanism
from dpverify.whitebox.stacks import stacks


def test_stacks_group_by_family_and_mechanism_and_read_any_run_of_the_same_layout() -> None:
    a, b = GaussianMechanism(1.0, 1.0, 2), GaussianMechanism(1.0, 2.0, 2)
    releases = [PublishedRelease("v", 1, 1, "prefix", np.ones(2), np.zeros(2), a),
                PublishedRelease("w", 1, 1, "prefix", np.full(2, 2.0), None, a),
                PublishedRelease("v", 2, 1, "prefix", np.full(2, 3.0), np.ones(2), a),
                PublishedRelease("v", 3, 1, "prefix", np.full(2, 4.0), np.ones(2), b),
                PublishedRelease("x", 3, 2, "prefix", np.zeros(2), None, None)]
    groups, unrecorded = stacks(releases)
    assert [(g.family, list(g.index)) for g in groups] == [("v", [0, 2]), ("w", [1]), ("v", [3])]
    assert unrecorded == [4] and groups[0].label(1) == "v (episode 2, stage 1)"
    assert np.array_equal(groups[0].values(releases), [[1.0, 1.0], [3.0, 3.0]])
    assert groups[0].noise(releases) is not None and groups[1].noise(releases) is None
