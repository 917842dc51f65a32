"""The plugin registers the dp_statistical marker (select or deselect statistical tests) and the dp_rng fixture."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_marker_is_registered(request: pytest.FixtureRequest) -> None:
    assert any(line.startswith("dp_statistical:") for line in request.config.getini("markers"))


def test_marker_selects_and_deselects(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.dp_statistical
        def test_audit(dp_rng):
            assert dp_rng.random() < 1

        def test_plain():
            pass
        """
    )
    quick = pytester.runpytest("-p", "no:cacheprovider", "--strict-markers", "-m", "not dp_statistical")
    quick.assert_outcomes(passed=1, deselected=1)
    statistical = pytester.runpytest("-p", "no:cacheprovider", "--strict-markers", "-m", "dp_statistical")
    statistical.assert_outcomes(passed=1, deselected=1)
