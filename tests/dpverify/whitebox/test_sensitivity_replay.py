"""The sensitivity replay on synthetic runs: exact differences judged against the recorded pattern and sensitivity."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.billboard import PublishedRelease
from dpverify.checks import PASS
from dpverify.conversions import epsilon_exact_gaussian, epsilon_exact_gaussian_lower
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism
from dpverify.whitebox.noise_check import check_noise
from dpverify.whitebox.result import FamilyNoise, NoiseCheck
from dpverify.whitebox.sensitivity_replay import compare_replay, reads_user, rounding_tolerance

VEC = GaussianMechanism(2.0, 10.0, 3)


def run(values, users="prefix", mechanism=VEC, family="v"):
    return [PublishedRelease(family, k, 1, users, np.asarray(v, dtype=float), None, mechanism)
            for k, v in enumerate(values, start=1)]


def test_patterns_read_the_ledgers_users() -> None:
    episodes = np.arange(1, 9)
    assert list(reads_user("prefix", episodes, 3)) == [k > 3 for k in range(1, 9)]
    assert list(reads_user("current", episodes, 3)) == [k == 3 for k in range(1, 9)]
    # tree node k covers (k - lowbit(k), k]: user 3 is in nodes 3, 4 and 8
    assert [int(k) for k in episodes[reads_user("tree", episodes, 3)]] == [3, 4, 8]


def test_a_change_within_the_record_passes_and_gives_the_witnessed_mu() -> None:
    noise = np.random.default_rng(0).normal(0, 10.0, (6, 3))
    recorded = run(noise)
    shifted = noise.copy()
    shifted[3:] += np.array([1.2, 1.6, 0.0])  # user 3's term, norm 2.0 = the recorded sensitivity, in k = 4..6
    comparison = compare_replay(recorded, run(shifted), user=3, environment="env", canaries="a -> b", episodes=6)
    assert comparison.findings == ()
    assert list(comparison.changed) == [False] * 3 + [True] * 3
    summary = comparison.summary()
    assert summary.best[0].ratio == pytest.approx(1.0) and summary.best[0].releases_read == 3
    unscaled = summary.witness(None, 1e-5)  # no noise check: no family's σ is known, nothing is witnessed
    assert unscaled.mu == 0.0 and not unscaled.noise_verified
    measured = NoiseCheck(PASS, "measured", 1e-3, (FamilyNoise("v", "gaussian", 6, 18, PASS, "ok", 1.0, 0.8, 1.0),))
    witness = summary.witness(measured, 1e-5)
    assert witness.mu == pytest.approx(np.sqrt(3) * 2.0 / 10.0) and witness.noise_verified
    assert witness.epsilon_lower == epsilon_exact_gaussian_lower(witness.mu, 1e-5)
    assert witness.epsilon_lower <= epsilon_exact_gaussian(witness.mu, 1e-5)


def test_a_release_that_reads_a_user_its_record_omits_is_a_pattern_finding() -> None:
    noise = np.zeros((5, 3))
    changed = noise.copy()
    changed[2:] += 0.5  # users="current": release k reads user k only, yet releases 3..5 move with user 2
    comparison = compare_replay(run(noise, "current"), run(changed, "current"), user=2, environment="env",
                                canaries="x", episodes=5)
    kinds = [(f.kind, f.episode) for f in comparison.findings]
    assert kinds == [("pattern", 3), ("pattern", 4), ("pattern", 5)]
    assert "does not read user 2" in comparison.findings[0].detail


def test_explicit_sets_are_judged_by_membership() -> None:
    """A release recorded with an explicit set (``set:…``) reads its members only: a release that moved with user 2
    is a pattern finding when 2 is not in its set, and its change is held against the sensitivity when it is."""
    assert list(reads_user("set:1,3-4", np.arange(4, 8), 3)) == [True] * 4
    assert not reads_user("set:1,3-4", np.arange(4, 8), 2).any()
    noise = np.zeros((5, 1))
    changed = noise.copy()
    changed[[2, 4]] += 0.5  # releases 3 and 5 move with user 2
    sets = ["set:1", "set:1-2", "set:1,3", "set:2-4", "set:3-5"]
    laplace = LaplaceMechanism(1.0, 1.0)

    def labelled(values):
        return [PublishedRelease("v", k, 1, users, np.asarray(v), None, laplace)
                for k, (v, users) in enumerate(zip(values, sets, strict=True), start=1)]

    comparison = compare_replay(labelled(noise), labelled(changed), user=2, environment="env", canaries="x",
                                episodes=5)
    assert [(f.kind, f.episode) for f in comparison.findings] == [("pattern", 3), ("pattern", 5)]
    assert "users='set:1,3'" in comparison.findings[0].detail
    assert list(comparison.reads) == [False, True, False, True, False]
    changed[3] += 1.5  # release 4 reads user 2 and moves by 1.5 > its recorded 1.0: a sensitivity finding
    comparison = compare_replay(labelled(noise), labelled(changed), user=2, environment="env", canaries="x",
                                episodes=5)
    assert [(f.kind, f.episode) for f in comparison.findings] == [("pattern", 3), ("sensitivity", 4), ("pattern", 5)]


def test_a_change_beyond_the_recorded_sensitivity_is_a_sensitivity_finding() -> None:
    noise = np.zeros((4, 3))
    changed = noise.copy()
    changed[2:] += np.array([3.0, 0.0, 0.0])  # 1.5 × the recorded 2.0
    comparison = compare_replay(run(noise), run(changed), user=1, environment="env", canaries="x", episodes=4)
    assert [(f.kind, f.episode) for f in comparison.findings] == [("sensitivity", 3), ("sensitivity", 4)]
    assert comparison.findings[0].ratio == pytest.approx(1.5)


def test_norms_follow_the_mechanism_l1_for_laplace_frobenius_for_goe() -> None:
    lap = LaplaceMechanism(2.0, 1.0, 2)
    comparison = compare_replay(run(np.zeros((2, 2)), mechanism=lap), run([[0, 0], [1.5, 1.5]], mechanism=lap),
                                user=1, environment="e", canaries="x", episodes=2)
    assert comparison.norms[1] == pytest.approx(3.0) and comparison.findings[0].kind == "sensitivity"
    goe = GOEMechanism(1.0, 1.0, 2)
    g = np.array([[0.0, 0.5], [0.5, 0.0]])
    comparison = compare_replay(run(np.zeros((2, 2, 2)), mechanism=goe), run([np.zeros((2, 2)), g], mechanism=goe),
                                user=1, environment="e", canaries="x", episodes=2)
    assert comparison.norms[1] == pytest.approx(np.sqrt(0.5)) and comparison.findings == ()


def test_rounding_is_tolerated_and_nothing_more() -> None:
    big = np.full((2, 3), 1e6)
    assert rounding_tolerance(big, big)[0] == pytest.approx(16 * np.finfo(float).eps * 1e6)
    recorded = run(big + np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]))
    same = run(big + np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]) * (1 + 1e-16))
    comparison = compare_replay(recorded, same, user=5, environment="e", canaries="x", episodes=2)
    assert not comparison.changed.any() and comparison.findings == ()


def test_the_witness_uses_the_verified_noise_limit() -> None:
    rng = np.random.default_rng(1)
    drawn = [PublishedRelease("v", k, 1, "prefix", n, n, VEC) for k, n in enumerate(rng.normal(0, 5.0, (500, 3)))]
    noise = check_noise(drawn)  # half the recorded noise: the upper limit of its scale is about 0.53
    assert noise.status == "fail"
    factor = noise.scale_upper("v")
    recorded, changed = np.zeros((3, 3)), np.zeros((3, 3))
    changed[1:] += np.array([2.0, 0.0, 0.0])
    summary = compare_replay(run(recorded), run(changed), user=1, environment="e", canaries="x",
                             episodes=3).summary()
    assert summary.witness(noise, 1e-5).mu == pytest.approx(np.sqrt(2) * 0.2 / factor)
