"""Tests of :mod:`dpverify.agents.dp_lsvi_ucb_pp` (a package, so that test module names may repeat across
families: pytest imports them as <family>.test_<module>)."""
