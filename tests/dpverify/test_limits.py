"""Resource limits: estimates refused above the documented caps, naming the option."""

from __future__ import annotations

import pytest

from dpverify import limits
from dpverify.errors import InvalidParameterError


def test_memory_limit_from_the_environment(monkeypatch):
    monkeypatch.setenv("DPVERIFY_MEMORY_LIMIT", "2G")
    assert limits.memory_limit() == 2 << 30
    limits.require_memory("--dim", 10, 1 << 30, "a thing")
    with pytest.raises(InvalidParameterError, match="needs about 3 GiB, above the memory limit of 2 GiB") as info:
        limits.require_memory("--dim", 10, 3 << 30, "a thing")
    assert info.value.parameter == "--dim"


def test_default_memory_limit_is_half_the_machine(monkeypatch):
    monkeypatch.delenv("DPVERIFY_MEMORY_LIMIT", raising=False)
    assert 0 < limits.memory_limit() <= limits._physical_memory()


@pytest.mark.parametrize("text", ["x", "-1G", "0", "inf"])
def test_bad_limit_settings_are_named(monkeypatch, text):
    monkeypatch.setenv("DPVERIFY_WORK_LIMIT", text)
    with pytest.raises(InvalidParameterError, match="DPVERIFY_WORK_LIMIT"):
        limits.work_limit()


def test_work_limit(monkeypatch):
    monkeypatch.delenv("DPVERIFY_WORK_LIMIT", raising=False)
    limits.require_work("--trials", 5, 1e9, "an audit")
    with pytest.raises(InvalidParameterError, match="work limit"):
        limits.require_work("--trials", 5, float("nan"), "an audit")
    with pytest.raises(InvalidParameterError, match="work limit"):
        limits.require_work("--trials", 5, 1e30, "an audit")
