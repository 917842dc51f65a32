"""Explicit user sets in the ledger: normalised ranges, per-user counts against brute-force enumeration (difference
arrays, any mix with the episode-indexed patterns), the rule that a release reads no later user, the JSON round
trip, and the billboard's recording calls."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpverify.accounting import epsilon_routes, pure_epsilon, tightest
from dpverify.agents.core.billboard import Billboard, stages
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger, ReleaseBlock, UserSet, user_pattern
from dpverify.mechanisms import GaussianMechanism, LaplaceMechanism

LAPLACE = LaplaceMechanism(1.0, 4.0)
GAUSS = GaussianMechanism(1.0, 3.0, 2)


def test_a_set_is_normalised_from_indices_ranges_and_pairs() -> None:
    same = [UserSet([7, (1, 3), 4, range(9, 13)]), UserSet(np.array([1, 2, 3, 4, 7, 9, 10, 11, 12])),
            UserSet(np.array([[9, 12], [1, 4], [7, 7], [2, 3]])), UserSet.parse("set:1-4,7,9-12"),
            user_pattern("set:9-12,7,1-3,4")]
    assert all(s == same[0] and hash(s) == hash(same[0]) for s in same)
    assert same[0].kind == "set:1-4,7,9-12" and same[0].size == 9 and same[0].max_user(100) == 12
    assert same[0].ranges.tolist() == [[1, 4], [7, 7], [9, 12]] and not same[0].ranges.flags.writeable
    assert 4 in same[0] and 5 not in same[0] and 13 not in same[0]
    assert UserSet([np.int64(3), (np.int32(5), 6)]).kind == "set:3,5-6"
    assert UserSet(range(1, 10**12)).size == 10**12 - 1  # a range costs what one user does


@pytest.mark.parametrize("bad", [[], [0], [(3, 2)], ["a"], [True], "1,2", np.array([1.5]), [2**60], [-1]])
def test_a_bad_set_is_refused_naming_users(bad: object) -> None:
    with pytest.raises(InvalidParameterError, match="users"):
        UserSet(bad)


@pytest.mark.parametrize("kind", ["set:", "set:1,", "set:a", "set:3-1", "set:0", "set:1-2-3", "set: 1"])
def test_a_bad_set_name_is_refused(kind: str) -> None:
    with pytest.raises(InvalidParameterError, match="users"):
        user_pattern(kind)


def test_a_release_reads_no_user_after_its_episode() -> None:
    ledger = PrivacyLedger()
    ledger.record("node", 5, 1, LAPLACE, UserSet([1, 5]))  # its own episode's user: allowed
    for record in (lambda: ledger.record("node", 5, 2, LAPLACE, UserSet([6])),
                   lambda: ledger.record_block("node", (3, 9), (1, 1), LAPLACE, UserSet([4])),
                   lambda: ReleaseBlock("node", (2, 2), (1, 1), LAPLACE, UserSet([3]))):
        with pytest.raises(InvalidParameterError, match="users.*after the release's episode"):
            record()


def brute_force(records: list[tuple[str, int, int, object, UserSet]], n: int) -> np.ndarray:
    """ρ of each user 1..n, release by release."""
    rho = np.zeros(n)
    for _, _, _, mechanism, users in records:
        for u in range(1, n + 1):
            rho[u - 1] += mechanism.rho * (u in users)  # type: ignore[attr-defined]
    return rho


sets = st.lists(st.tuples(st.integers(1, 40), st.integers(0, 5)), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), sets, st.sampled_from([LAPLACE, GAUSS])), min_size=1,
                max_size=30), st.booleans())
def test_per_user_counts_of_set_releases_equal_brute_force(releases: list, with_tree: bool) -> None:
    ledger, records = PrivacyLedger(), []
    for k, (family, pairs, mechanism) in enumerate(releases, start=50):
        users = UserSet([(lo, lo + width) for lo, width in pairs])
        ledger.record(family, k, 1, mechanism, users)
        records.append((family, k, 1, mechanism, users))
    if with_tree:  # the user-by-user route (a binary-tree block has no breakpoints)
        ledger.record_block("t", (1, 8), (1, 1), GAUSS, "tree")
    expected = brute_force(records, ledger.n_users)
    if with_tree:
        expected[:8] += GAUSS.rho * np.array([4, 3, 3, 2, 3, 2, 2, 1])  # nodes of (k − lowbit(k), k] ∋ u
    assert np.allclose(ledger.per_user_rho(), expected, rtol=1e-12, atol=0)
    user, rho = ledger.worst_user()
    assert rho >= expected.max() and rho == pytest.approx(expected.max(), rel=1e-12)
    assert expected[user - 1] == pytest.approx(expected.max(), rel=1e-12)
    again = PrivacyLedger.from_json(ledger.to_json())
    assert again == ledger and again.to_json() == ledger.to_json()


def test_a_set_of_the_tree_node_s_range_accounts_as_the_tree() -> None:
    as_sets, as_tree = PrivacyLedger(), PrivacyLedger()
    for k in range(1, 65):
        as_sets.record("node", k, 1, LAPLACE, UserSet(range(k - (k & -k) + 1, k + 1)))
        as_tree.record("node", k, 1, LAPLACE, "tree")
    assert pure_epsilon(as_sets) == pure_epsilon(as_tree)
    assert pure_epsilon(as_sets)[0] == pytest.approx(7 * 0.25)  # user 1 lies in 7 nodes, each ε = 1/4
    assert np.array_equal(as_sets.per_user_rho(), as_tree.per_user_rho())
    assert tightest(epsilon_routes(as_sets, 1e-5)) == tightest(epsilon_routes(as_tree, 1e-5))


def test_consecutive_releases_of_one_set_merge_into_a_block() -> None:
    ledger = PrivacyLedger()
    for k in (5, 6, 7):
        ledger.record("s", k, 1, LAPLACE, UserSet([1, 3]))
    ledger.record("s", 8, 1, LAPLACE, UserSet([2]))
    assert [(b.episodes, b.users.kind) for b in ledger.blocks] == [((5, 7), "set:1,3"), ((8, 8), "set:2")]
    assert ledger.per_user_rho().tolist() == pytest.approx([3 * LAPLACE.rho, LAPLACE.rho, 3 * LAPLACE.rho])


def test_the_billboard_records_sets_from_each_recording_call() -> None:
    board = Billboard(keep_history=True, noise_rng=np.random.default_rng(1))
    rng = np.random.default_rng(0)
    board.publish("a", 3, 1, LAPLACE, np.zeros(1), UserSet([1, 3]), rng)
    board.publish_block(4, stages("b", LAPLACE, 2), np.zeros((2, 1)), UserSet(range(2, 5)), rng)
    board.publish_noised("c", 5, 1, LAPLACE, np.zeros(1), UserSet([5]))
    assert [r.users for r in board.history()] == ["set:1,3", "set:2-4", "set:2-4", "set:5"]
    assert board.ledger.per_user_rho().tolist() == pytest.approx([1, 2, 3, 2, 1] * np.array(LAPLACE.rho))
    with pytest.raises(InvalidParameterError, match="users"):
        board.publish("a", 6, 1, LAPLACE, np.zeros(1), UserSet([7]), rng)
