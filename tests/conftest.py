"""Shared test configuration: a deterministic hypothesis profile (used in CI and by default)."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, deadline=None, max_examples=60, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=100)
# A long randomized search for the numeric laws: HYPOTHESIS_PROFILE=stress pytest tests/dpverify
settings.register_profile("stress", deadline=None, max_examples=2000, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(items: list) -> None:
    """Run the tests marked ``slow`` first (a stable sort: every other order is kept).

    Under pytest-xdist a long test collected late would finish alone on one worker while the other
    idles; started first, the long tests overlap with the many short ones.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
