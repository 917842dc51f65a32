"""Tests of :mod:`dpverify.agents.nonprivate` (a package, so that test module names may repeat across
families: pytest imports them as <family>.test_<module>)."""
