"""The structure check: finite values of the recorded shape, and exactly symmetric GOE releases."""

from __future__ import annotations

import numpy as np

from dpverify.agents.core.billboard import PublishedRelease
from dpverify.mechanisms import GaussianMechanism, GOEMechanism
from dpverify.whitebox.structure_check import check_structure

GOE = GOEMechanism(1.0, 1.0, 3)


def test_symmetric_releases_pass_and_an_antisymmetric_part_fails() -> None:
    rng = np.random.default_rng(0)
    z = rng.normal(size=(3, 3))
    good = PublishedRelease("G", 1, 1, "prefix", (z + z.T) / np.sqrt(2), None, GOE)
    assert check_structure([good]).status == "pass"
    bad = PublishedRelease("G", 2, 1, "prefix", z, None, GOE)
    result = check_structure([good, bad])
    assert result.status == "fail" and "differ from their transposes" in result.reason and "3 pairs" in result.reason


def test_nothing_published_has_not_run_and_missing_mechanisms_fail() -> None:
    assert check_structure([]).status == "not run"
    vec = GaussianMechanism(1.0, 1.0, 2)
    unrecorded = PublishedRelease("v", 1, 1, "prefix", np.zeros(2), None, None)
    result = check_structure([PublishedRelease("v", 1, 1, "prefix", np.zeros(2), None, vec), unrecorded])
    assert result.status == "fail" and "without a recorded mechanism" in result.reason
