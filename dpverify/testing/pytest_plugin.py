"""pytest plugin (entry point ``pytest11``): the ``dp_rng`` fixture.

Imports nothing beyond numpy, so installing dpverify never breaks a test run that lacks hypothesis.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest


@pytest.fixture
def dp_rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A Generator seeded from the test's node id: reproducible, independent across tests."""
    digest = hashlib.sha256(request.node.nodeid.encode("utf-8")).digest()
    return np.random.default_rng(np.random.SeedSequence(int.from_bytes(digest[:16], "little")))
