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
