"""pytest plugin (entry point ``pytest11``): the ``dp_rng`` fixture and the ``dp_statistical`` marker.

Mark statistical privacy tests (audits) with ``@pytest.mark.dp_statistical``; select them with
``pytest -m dp_statistical`` or leave them out of a quick run with ``pytest -m "not dp_statistical"``.

Imports nothing beyond numpy, so installing dpverify never breaks a test run that lacks hypothesis.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

#: The marker this plugin registers for statistical privacy tests.
STATISTICAL_MARKER = "dp_statistical"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{STATISTICAL_MARKER}: a statistical privacy test (an audit assertion); "
        f"deselect with -m 'not {STATISTICAL_MARKER}'",
    )


@pytest.fixture
def dp_rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A Generator seeded from the test's node id: reproducible, independent across tests."""
    digest = hashlib.sha256(request.node.nodeid.encode("utf-8")).digest()
    return np.random.default_rng(np.random.SeedSequence(int.from_bytes(digest[:16], "little")))
