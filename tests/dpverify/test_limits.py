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


@pytest.mark.parametrize("text", ["abc", "0", "-5", "nan", "inf", ""])
def test_call_timeout_is_validated_like_an_option(monkeypatch, text):
    monkeypatch.setenv("DPVERIFY_CALL_TIMEOUT", text)
    with pytest.raises(InvalidParameterError) as info:
        limits.check_environment()
    assert str(info.value) == f"DPVERIFY_CALL_TIMEOUT must be a number of seconds > 0 and finite (got {text!r})"


def test_call_timeout_default_meets_a_hang_within_a_minute(monkeypatch):
    monkeypatch.delenv("DPVERIFY_CALL_TIMEOUT", raising=False)
    assert limits.call_timeout() == limits.DEFAULT_CALL_TIMEOUT <= 60
    monkeypatch.setenv("DPVERIFY_CALL_TIMEOUT", "2.5")
    assert limits.call_timeout() == 2.5


def test_an_empty_variable_is_an_error_not_the_default(monkeypatch):
    monkeypatch.setenv("DPVERIFY_MEMORY_LIMIT", "")
    with pytest.raises(InvalidParameterError, match="DPVERIFY_MEMORY_LIMIT must be a number > 0"):
        limits.check_environment()


def test_workers_beyond_memory_are_refused(monkeypatch):
    monkeypatch.setenv("DPVERIFY_MEMORY_LIMIT", "1G")
    limits.require_workers("--workers", 2)
    with pytest.raises(InvalidParameterError, match="--workers is too large: 1000 worker processes"):
        limits.require_workers("--workers", 1000)


def test_an_error_shows_a_huge_integer_by_its_size():
    error = InvalidParameterError("episodes", "must be small", 10**400)
    assert str(error) == "episodes must be small (got an integer of about 401 digits)"
    assert str(InvalidParameterError("episodes", "must be small", 12)) == "episodes must be small (got 12)"
