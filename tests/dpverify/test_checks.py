"""CheckResult: the one check-result type of the white-box checks, the agent contract and verify."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dpverify.checks import FAIL, NOT_APPLICABLE, NOT_RUN, PASS, STATUSES, CheckResult, named, overall
from dpverify.errors import InvalidParameterError


def test_a_check_is_frozen_and_validated() -> None:
    check = CheckResult("ledger meets the claim", PASS, "ledger ε = 1 vs claimed ε = 1", {"ledger_epsilon": 1.0})
    assert set(STATUSES) == {PASS, FAIL, NOT_APPLICABLE, NOT_RUN}
    with pytest.raises(dataclasses.FrozenInstanceError):
        check.status = FAIL  # type: ignore[misc]
    with pytest.raises(InvalidParameterError, match="status"):
        CheckResult("x", "maybe", "seen")
    with pytest.raises(InvalidParameterError, match="name"):
        CheckResult("", PASS, "seen")
    for status in STATUSES:  # every status says why: a check that does not apply too
        with pytest.raises(InvalidParameterError, match="reason"):
            CheckResult("x", status, "")


def test_evidence_holds_figures_by_name() -> None:
    check = CheckResult("x", FAIL, "seen", {"epsilon": math.inf, "releases": np.int64(3), "route": "exact",
                                            "room": None, "gaussian": True})
    assert check.evidence["releases"] == 3
    with pytest.raises(InvalidParameterError, match="evidence"):
        CheckResult("x", PASS, "seen", {"values": [1.0, 2.0]})
    with pytest.raises(InvalidParameterError, match="evidence"):
        CheckResult("x", PASS, "seen", {1: 2.0})  # type: ignore[dict-item]


def test_overall_status_and_lookup() -> None:
    assert overall([PASS, PASS]) == PASS
    assert overall([PASS, NOT_RUN, FAIL]) == FAIL
    assert overall([PASS, NOT_RUN]) == NOT_RUN
    assert overall([PASS, NOT_APPLICABLE]) == PASS  # a check that does not apply counts for neither
    assert overall([NOT_APPLICABLE]) == overall([]) == NOT_RUN  # nothing that applies ran
    checks = (CheckResult("a", PASS, "seen"), CheckResult("b", FAIL, "seen"))
    assert named(checks, "b") is checks[1]
    with pytest.raises(KeyError):
        named(checks, "c")
