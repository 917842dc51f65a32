"""Ledger: per-user counts against brute-force enumeration, merging, composition laws, JSON round trip."""

import dataclasses
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpverify.errors import InvalidParameterError
from dpverify.ledger import (
    BinaryTreeNode,
    CurrentUser,
    DyadicNode,
    NoUserTouchedWarning,
    PrefixUsers,
    PrivacyLedger,
    ReleaseBlock,
    user_pattern,
)
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism


def brute_force_users(kind: str, k: int) -> set[int]:
    """Users read by the release at episode k, enumerated from the definitions."""
    if kind == "prefix":
        return set(range(1, k))
    if kind == "current":
        return {k}
    lowbit = k & -k
    return set(range(k - lowbit + 1, k + 1))


mechanisms = st.sampled_from(
    [GaussianMechanism(1.0, 2.0, 3), GaussianMechanism(0.5, 1.0, 1), GOEMechanism(1.0, 3.0, 2)]
)
blocks = st.tuples(
    st.sampled_from(["a", "b", "c"]),
    st.integers(1, 40),
    st.integers(0, 25),
    st.integers(1, 3),
    st.integers(0, 2),
    mechanisms,
    st.sampled_from(["prefix", "current", "tree"]),
)


def exact_rho(mech) -> Fraction:
    """ρ of a Gaussian or GOE mechanism as an exact rational: Δ²/(2σ²) or Δ_F²/(4s²)."""
    if isinstance(mech, GOEMechanism):
        return Fraction(mech.frobenius_sensitivity) ** 2 / (4 * Fraction(mech.entry_std) ** 2)
    return Fraction(mech.sensitivity) ** 2 / (2 * Fraction(mech.sigma) ** 2)


@given(st.lists(blocks, min_size=1, max_size=6))
def test_per_user_rho_matches_brute_force(raw):
    """Per-user ρ against an enumeration of every release, summed in exact rational arithmetic:
    the ledger is never below the exact sum and within 1e-12 of it."""
    ledger = PrivacyLedger()
    expected: dict[int, Fraction] = {}
    for family, k0, span, h0, hspan, mech, users in raw:
        ledger.record_block(family, (k0, k0 + span), (h0, h0 + hspan), mech, users)
        for k in range(k0, k0 + span + 1):
            for _ in range(hspan + 1):
                for u in brute_force_users(users, k):
                    expected[u] = expected.get(u, Fraction(0)) + exact_rho(mech)
    per_user = ledger.per_user_rho()
    for u, rho in expected.items():
        assert per_user[u - 1] == pytest.approx(float(rho), rel=1e-12)
    worst = max(expected.values(), default=Fraction(0))
    assert Fraction(ledger.worst_user_rho()) >= worst
    assert ledger.worst_user_rho() == pytest.approx(float(worst), rel=1e-12)
    total = sum(
        (exact_rho(b.mechanism) * b.n_releases for b in ledger.blocks), Fraction(0)
    )
    assert Fraction(ledger.naive_rho()) >= total


@given(st.integers(1, 300))
def test_tree_touches_each_user_at_most_log_k_plus_one_times(K):
    counts = BinaryTreeNode().counts_at(1, K, np.arange(1, K + 1))
    assert counts.max() <= math.ceil(math.log2(K)) + 1
    assert counts.min() >= 1  # every user's data is released in some node


def test_record_merges_into_blocks_and_matches_record_block():
    m, g = GaussianMechanism(1.0, 10.0, 3), GOEMechanism(1.0, 5.0, 3)
    ledger = PrivacyLedger()
    for k in range(1, 51):
        for h in range(6, 0, -1):
            ledger.record("v", k, h, m, "prefix")
            ledger.record("G", k, h, g, "prefix")
    assert len(ledger.blocks) == 2 and ledger.n_releases == 600
    ref = PrivacyLedger()
    ref.record_block("v", (1, 50), (1, 6), m, "prefix")
    ref.record_block("G", (1, 50), (1, 6), g, "prefix")
    assert ledger == ref
    assert np.allclose(ledger.per_user_rho(), ref.per_user_rho())


@given(st.lists(st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.booleans(), st.booleans()),
                max_size=25))
def test_record_releases_equals_recording_stage_by_stage(calls):
    """One run of stages per episode (episodes increasing, possibly with gaps), ascending or descending: a run
    recorded at once is recorded as stage by stage. (With several runs in one episode the two may cut the same
    releases into other blocks.)"""
    mechanisms = (GaussianMechanism(1.0, 10.0, 3), GaussianMechanism(1.0, 20.0, 3))
    batched, one_by_one = PrivacyLedger(), PrivacyLedger()
    episode = 0
    for step, first, length, other, descending in calls:
        episode += step
        m = mechanisms[int(other)]
        stages = range(first, first + length)
        stages = stages[::-1] if descending else stages
        batched.record_releases(episode, [("s", h, m) for h in stages], "prefix")
        for h in stages:
            one_by_one.record("s", episode, h, m, "prefix")
    assert batched.blocks == one_by_one.blocks


_releases = st.lists(st.tuples(st.integers(0, 1), st.integers(1, 4), st.integers(0, 2), st.sampled_from(("a", "b"))),
                     max_size=40)


def _cells(ledger: PrivacyLedger) -> list[tuple[str, int, int, float]]:
    """Every release the ledger's blocks hold, as (family, episode, stage, σ), sorted."""
    return sorted((b.family, k, h, b.mechanism.sigma) for b in ledger.blocks
                  for k in range(b.episodes[0], b.episodes[1] + 1) for h in range(b.stages[0], b.stages[1] + 1))


@given(_releases, st.booleans())
def test_stage_sweeps_are_recorded_as_without_the_fast_path(releases, read_between):
    """The record's fast path for stage-by-stage sweeps (:class:`dpverify.ledger._FamilyRecord`, ``sweep``) gives the
    blocks of recording without it, whatever the order (episodes that stay or advance, any stage, two mechanisms,
    two families; the blocks read between releases or only at the end), and the blocks hold exactly the releases
    recorded."""
    from dpverify import ledger as ledger_module

    mechanisms = (GaussianMechanism(1.0, 10.0, 2), GaussianMechanism(1.0, 20.0, 2))
    fast, reference = PrivacyLedger(), PrivacyLedger()
    recorded = []
    episode = 1
    opens = ledger_module._FamilyRecord._opens_sweep
    for advance, stage, which, family in releases:
        episode += advance
        m = mechanisms[min(which, 1)]
        fast.record(family, episode, stage, m, "prefix")
        ledger_module._FamilyRecord._opens_sweep = lambda *args: False  # the record without sweeps
        try:
            reference.record(family, episode, stage, m, "prefix")
            reference_blocks = reference.blocks if read_between else None
        finally:
            ledger_module._FamilyRecord._opens_sweep = opens
        recorded.append((family, episode, stage, m.sigma))
        if read_between:
            assert fast.blocks == reference_blocks
    assert fast.blocks == reference.blocks
    assert _cells(fast) == sorted(recorded)


def test_sweeps_of_an_agent_s_episodes_make_one_block_per_family():
    gram, target = GOEMechanism(1.0, 1.0, 2), GaussianMechanism(1.0, 2.0, 2)
    ledger = PrivacyLedger()
    for k in range(1, 51):  # the order of a least-squares agent: Gram matrices upwards, targets downwards
        for h in (1, 2, 3):
            ledger.record("gram", k, h, gram, "prefix")
        for h in (3, 2, 1):
            ledger.record("target", k, h, target, "prefix")
    assert [(b.family, b.episodes, b.stages) for b in ledger.blocks] == [("gram", (1, 50), (1, 3)),
                                                                         ("target", (1, 50), (1, 3))]
    ledger.record("gram", 51, 1, gram, "prefix")  # a sweep left unfinished
    assert {(b.episodes, b.stages) for b in ledger.blocks if b.family == "gram"} == {((1, 50), (1, 3)),
                                                                                     ((51, 51), (1, 1))}
    assert ledger.n_releases == 301


def test_record_in_any_order_is_exact():
    m = GaussianMechanism(1.0, 3.0)
    rng = np.random.default_rng(1)
    cells = [(k, h) for k in range(1, 9) for h in range(1, 4)]
    ordered, shuffled = PrivacyLedger(), PrivacyLedger()
    for k, h in cells:
        ordered.record("s", k, h, m, "current")
    for i in rng.permutation(len(cells)):
        k, h = cells[i]
        shuffled.record("s", k, h, m, "current")
    assert shuffled.n_releases == ordered.n_releases == len(cells)
    assert np.allclose(shuffled.per_user_rho(), ordered.per_user_rho())


@given(st.lists(st.floats(1e-3, 10.0), min_size=1, max_size=8), st.floats(1e-3, 10.0))
def test_composition_is_additive(sigmas, extra):
    """Adding a release to every user adds its ρ to every user (zCDP composition, Sahu 2025 Lemma 2.2)."""
    ledger = PrivacyLedger()
    for i, s in enumerate(sigmas):
        ledger.record_block(f"f{i}", (1, 1), (1, 1), GaussianMechanism(1.0, s), "current")
    before = ledger.worst_user_rho()
    ledger.record_block("extra", (1, 1), (1, 1), GaussianMechanism(1.0, extra), "current")
    assert ledger.worst_user_rho() == pytest.approx(before + 1 / (2 * extra * extra), rel=1e-12)
    assert ledger.worst_user_rho() >= before
    eps = [ledger.guarantee(1e-5, c).epsilon for c in ("exact", "cks", "bun-steinke")]
    assert eps == sorted(eps)


@given(st.lists(blocks, min_size=0, max_size=5))
def test_json_round_trip_is_exact(raw):
    ledger = PrivacyLedger()
    for family, k0, span, h0, hspan, mech, users in raw:
        ledger.record_block(family, (k0, k0 + span), (h0, h0 + hspan), mech, users)
    again = PrivacyLedger.from_json(ledger.to_json())
    assert again == ledger
    assert again.to_json() == ledger.to_json()


def test_exact_conversion_requires_gaussian_releases():
    ledger = PrivacyLedger()
    ledger.record_block("lap", (1, 3), (1, 1), LaplaceMechanism(1.0, 2.0), "current")
    assert not ledger.all_gaussian
    with pytest.raises(InvalidParameterError, match="conversion"):
        ledger.guarantee(1e-5, "exact")
    assert "exact" not in ledger.account(1e-5).epsilon
    assert ledger.guarantee(1e-5, "cks").epsilon > 0


def test_one_relation_per_ledger():
    ledger = PrivacyLedger("add-remove-one")
    with pytest.raises(InvalidParameterError, match="relation"):
        ledger.record("s", 1, 1, GaussianMechanism(1.0, 1.0), "prefix")


def test_dp_lsvi_ucbpp_scale_is_four_blocks():
    """H = 20, K = 10⁵: 8×10⁶ releases in four blocks; user 1 is read by 4·H·(K−1) of them."""
    H, K = 20, 100_000
    ledger = PrivacyLedger()
    m = GaussianMechanism(1.0, math.sqrt(0.5))  # ρ = 1 per release: ρ counts releases
    for f in ("w_hat", "w_check", "w_bar", "gram"):
        ledger.record_block(f, (1, K), (1, H), m, "prefix")
    assert ledger.n_releases == 8_000_000 and len(ledger.blocks) == 4
    assert ledger.worst_user() == (1, pytest.approx(4 * H * (K - 1)))
    assert ledger.naive_rho() == pytest.approx(4 * H * K)


@pytest.mark.parametrize(
    "text, parameter",
    [
        ("not json", "ledger"),
        ("[]", "ledger"),
        ('{"schema": "other"}', "ledger.schema"),
        ('{"schema": "dpverify.ledger", "schema_version": 99, "blocks": []}', "ledger.schema_version"),
        ('{"schema": "dpverify.ledger", "schema_version": 1, "relation": "replace-one", "blocks": [{"family": "a"}]}',
         "block"),
    ],
)
def test_invalid_json(text, parameter):
    with pytest.raises(InvalidParameterError) as info:
        PrivacyLedger.from_json(text)
    assert info.value.parameter == parameter


def test_block_validation():
    with pytest.raises(InvalidParameterError, match="episodes"):
        ReleaseBlock("a", (5, 2), (1, 1), GaussianMechanism(1.0, 1.0), PrefixUsers())
    with pytest.raises(InvalidParameterError, match="users"):
        ReleaseBlock("a", (1, 2), (1, 1), GaussianMechanism(1.0, 1.0), "everyone")  # type: ignore[arg-type]
    assert CurrentUser().counts_at(2, 3, np.arange(1, 5)).tolist() == [0, 1, 1, 0]


@given(st.floats(0.05, 50.0), st.floats(0.05, 50.0), st.integers(2, 30), st.floats(1e-10, 0.1))
def test_epsilon_non_increasing_in_sigma(s1, s2, releases, delta):
    """More noise never costs more privacy, by every conversion."""
    small, large = sorted((s1, s2))
    eps = {}
    for sigma in (small, large):
        ledger = PrivacyLedger()
        ledger.record_block("g", (1, releases), (1, 1), GaussianMechanism(1.0, sigma, 2), "prefix")
        ledger.record_block("G", (1, releases), (1, 1), GOEMechanism(1.0, sigma, 2), "prefix")
        eps[sigma] = {c: ledger.guarantee(delta, c).epsilon for c in ("exact", "cks", "bun-steinke")}
    for c in ("exact", "cks", "bun-steinke"):
        assert eps[large][c] <= eps[small][c] * (1 + 1e-12)  # up to root-finding resolution


# ---- worst user without a per-user array; unknown fields; releases touching nobody ----------------

@st.composite
def _blocks(draw, patterns=("prefix", "current")):
    out = []
    for i in range(draw(st.integers(1, 4))):
        first = draw(st.integers(1, 40))
        last = draw(st.integers(first, 60))
        h0 = draw(st.integers(1, 3))
        sigma = draw(st.sampled_from([1.0, 2.5, 7.0]))
        out.append((f"f{i % 2}", (first, last), (h0, h0 + draw(st.integers(0, 2))), sigma,
                    draw(st.sampled_from(patterns))))
    return out


def _ledger_of(blocks):
    ledger = PrivacyLedger("replace-one")
    for family, episodes, stages, sigma, users in blocks:
        ledger.record_block(family, episodes, stages, GaussianMechanism(1.0, sigma, 1), users)
    return ledger


@given(_blocks(patterns=("prefix", "current", "tree")))
def test_worst_user_equals_the_maximum_over_every_user(blocks):
    ledger = _ledger_of(blocks)
    every = ledger.per_user_rho()
    u, rho = ledger.worst_user()
    if every.size == 0:
        assert (u, rho) == (0, 0.0)
        return
    assert rho >= every.max()  # never below the truth
    assert rho <= every.max() * (1 + 1e-12)
    assert every[u - 1] == every.max()


def test_worst_user_of_a_huge_prefix_ledger_needs_no_per_user_array(monkeypatch):
    monkeypatch.setenv("DPVERIFY_MEMORY_LIMIT", "1M")
    ledger = PrivacyLedger()
    m = GaussianMechanism(1.0, 10.0, 1)
    ledger.record_block("sum", (1, 10**12), (1, 20), m, "prefix")
    ledger.record_block("local", (1, 10**12), (1, 20), m, "current")
    u, rho = ledger.worst_user()
    assert u == 1
    assert rho >= (10**12 - 1) * 20 * m.rho + 20 * m.rho
    with pytest.raises(InvalidParameterError, match="memory limit"):
        ledger.per_user_rho()


def test_huge_tree_ledger_is_refused_by_the_work_limit():
    ledger = PrivacyLedger()
    ledger.record_block("tree", (1, 10**12), (1, 2), GaussianMechanism(1.0, 10.0, 1), "tree")
    with pytest.raises(InvalidParameterError, match="work limit"):
        ledger.worst_user()


@pytest.mark.parametrize("where", ["block", "ledger"])
def test_unknown_fields_are_rejected_by_name(where):
    ledger = PrivacyLedger()
    ledger.record_block("s", (1, 3), (1, 1), GaussianMechanism(1.0, 2.0, 1), "prefix")
    data = ledger.to_dict()
    (data["blocks"][0] if where == "block" else data)["colour"] = "blue"
    with pytest.raises(InvalidParameterError, match="'colour' is not a ledger field"):
        PrivacyLedger.from_dict(data)


def test_a_ledger_touching_no_user_warns_instead_of_a_silent_zero():
    ledger = PrivacyLedger()
    ledger.record("sum", episode=1, stage=1, mechanism=GaussianMechanism(1.0, 1.0, 1), users="prefix")
    with pytest.warns(NoUserTouchedWarning, match="touches any user"):
        assert ledger.guarantee(1e-5, "exact").epsilon == 0.0
    ledger.record("sum", episode=2, stage=1, mechanism=GaussianMechanism(1.0, 1.0, 1), users="prefix")
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoUserTouchedWarning)
        assert ledger.guarantee(1e-5, "exact").epsilon > 0


def test_relation_mismatch_names_the_relation_not_an_enum_repr():
    ledger = PrivacyLedger("add-remove-one")
    with pytest.raises(InvalidParameterError) as info:
        ledger.record("s", 1, 1, GaussianMechanism(1.0, 1.0, 1), "prefix")
    assert "Neighbouring" not in str(info.value) and "'replace-one'" in str(info.value)


# ---- the full dyadic tree (DyadicNode): Honaker's tree ------------------------------------------------


def dyadic_users(level: int, k: int) -> set[int]:
    """Users read by the level-``level`` node released at episode k (k divisible by 2^level), by definition."""
    return set(range(k - (1 << level) + 1, k + 1))


@given(st.integers(0, 6), st.integers(1, 300), st.integers(0, 300))
def test_dyadic_counts_match_enumerating_the_released_nodes(level, first, extra):
    step = 1 << level
    first = -(-first // step) * step
    last = first + (extra // step) * step
    pattern = DyadicNode(level)
    expected = np.zeros(last + 1, dtype=np.int64)
    for k in range(first, last + 1, step):
        for u in dyadic_users(level, k):
            expected[u] += 1
    assert np.array_equal(pattern.counts_at(first, last, np.arange(1, last + 1)), expected[1:])


@pytest.mark.parametrize("K", [1, 2, 7, 8, 100, 1024, 1025])
def test_a_full_dyadic_tree_reads_each_user_once_per_level(K):
    ledger = PrivacyLedger()
    mechanism = GaussianMechanism(1.0, math.sqrt(0.5), 1)  # ρ = 1 per release
    for level in range(K.bit_length()):
        ledger.record_block(f"gram_l{level}", (1, K), (1, 1), mechanism, f"dyadic-{level}")
    per_user = ledger.per_user_rho()
    levels_holding = np.array([sum((((u - 1) >> lv) + 1) << lv <= K for lv in range(K.bit_length()))
                               for u in range(1, K + 1)])
    assert np.allclose(per_user, levels_holding, rtol=1e-12) and np.all(per_user >= levels_holding)
    assert ledger.worst_user() == (1, pytest.approx(K.bit_length(), rel=1e-12))
    assert ledger.n_releases == sum(K >> level for level in range(K.bit_length()))


def test_recording_dyadic_nodes_one_by_one_merges_into_one_block_and_round_trips():
    ledger = PrivacyLedger()
    mechanism = GaussianMechanism(1.0, 2.0, 3)
    for k in range(4, 41, 4):
        ledger.record_releases(k, billboard_stages("m_l2", mechanism, 3), "dyadic-2")
    (block,) = ledger.blocks
    assert block.episodes == (4, 40) and block.n_releases == 30 and block.users == DyadicNode(2)
    reference = PrivacyLedger()
    reference.record_block("m_l2", (1, 42), (1, 3), mechanism, DyadicNode(2))
    assert reference.blocks == ledger.blocks
    assert PrivacyLedger.from_json(ledger.to_json()) == ledger


def test_dyadic_patterns_refuse_what_they_cannot_release():
    mechanism = GaussianMechanism(1.0, 2.0, 3)
    with pytest.raises(InvalidParameterError, match="episode.*multiple of 4"):
        PrivacyLedger().record("m", 6, 1, mechanism, "dyadic-2")
    with pytest.raises(InvalidParameterError, match="episodes.*multiple of 8"):
        PrivacyLedger().record_block("m", (1, 7), (1, 1), mechanism, "dyadic-3")
    with pytest.raises(InvalidParameterError, match="episodes"):
        ReleaseBlock("m", (2, 8), (1, 1), mechanism, DyadicNode(2))
    for bad in ("dyadic-x", "dyadic--1", "dyadic-03", "dyadic-63"):
        with pytest.raises(InvalidParameterError):
            user_pattern(bad)
    assert user_pattern("dyadic-5") == DyadicNode(5) and DyadicNode(5).kind == "dyadic-5"
    for name in ("prefix", "current", "tree"):  # the names agents give at every release: one pattern each
        assert user_pattern(name) is user_pattern(name) and user_pattern(name).kind == name
    with pytest.raises(InvalidParameterError, match="users"):
        user_pattern(["prefix"])


def test_one_mechanism_per_stage_records_one_block_per_stage():
    # A family calibrated stage by stage (a staged schedule) is recorded episode by episode, its stages
    # interleaved: the ledger keeps one block per stage, the same blocks as the schedule's own ledger.
    mechanisms = [GaussianMechanism(1.0, 2.0 * (h + 1), 3) for h in range(4)]
    recorded, planned = PrivacyLedger(), PrivacyLedger()
    for k in range(1, 51):
        for h in (4, 3, 2, 1):
            recorded.record("w", k, h, mechanisms[h - 1], "prefix")
    for h in range(1, 5):
        planned.record_block("w", (1, 50), (h, h), mechanisms[h - 1], "prefix")
    assert recorded.blocks == planned.blocks and len(recorded.blocks) == 4
    assert recorded.worst_user_rho() == planned.worst_user_rho()


# ---- recording as agents do: the blocks they rely on --------------------------------------------------------


def billboard_stages(family, mechanism, n, first=1):
    """The labels of one family's releases at stages first..first+n−1 (a billboard block)."""
    return [(family, h, mechanism) for h in range(first, first + n)]


@given(st.integers(1, 6), st.integers(1, 12), st.booleans(), st.booleans(),
       st.sampled_from(["release", "stage", "pass"]), st.sampled_from(["prefix", "current", "dyadic-1"]))
def test_agent_schedules_record_one_block_per_stage_range_and_mechanism(horizon, episodes, descending, staged,
                                                                         grouping, users):
    """An agent's per-episode releases — a Gram-like family at all stages at once, then three vector families
    stage by stage in a sweep (one mechanism, or one per stage) — recorded release by release, stage by stage or a
    whole pass at once, give the blocks of the schedule: one per (stages, mechanism)."""
    step = 2 if users == "dyadic-1" else 1
    gram = GOEMechanism(1.0, 3.0, 2)
    vectors = {f: [GaussianMechanism(1.0, 2.0 + (h if staged else 0) + i, 2) for h in range(horizon)]
               for i, f in enumerate(("w_hat", "w_check", "w_bar"))}
    recorded, planned = PrivacyLedger(), PrivacyLedger()
    sweep = range(horizon, 0, -1) if descending else range(1, horizon + 1)
    for k in range(step, step * episodes + 1, step):
        stage_blocks = [[(f, h, vectors[f][h - 1]) for f in vectors] for h in sweep]
        blocks = [billboard_stages("gram", gram, horizon)] + (
            [[label for block in stage_blocks for label in block]] if grouping == "pass" else stage_blocks)
        for block in blocks:
            if grouping == "release":
                for family, h, m in block:
                    recorded.record(family, k, h, m, users)
            else:
                recorded.record_releases(k, block, users)
    planned.record_block("gram", (1, step * episodes), (1, horizon), gram, users)
    for f, per_stage in vectors.items():
        if staged:
            for h in range(1, horizon + 1):
                planned.record_block(f, (1, step * episodes), (h, h), per_stage[h - 1], users)
        else:
            planned.record_block(f, (1, step * episodes), (1, horizon), per_stage[0], users)
    assert recorded.blocks == planned.blocks
    assert recorded.to_json() == planned.to_json()


_calls = st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 2), st.integers(1, 4), st.integers(1, 3),
                            st.integers(0, 2), st.booleans()), max_size=30)
_SHARED = (GaussianMechanism(1.0, 2.0, 3), GaussianMechanism(1.0, 3.0, 3), GOEMechanism(1.0, 2.0, 3))


def _record_calls(ledger, calls, mechanism_of, family_kept=None):
    """Record (family, episode step, first stage, stages, mechanism index, at once) calls, the episode advancing
    by each call's step (from 1); only ``family_kept``'s calls when given."""
    episode = 1
    for family, step, first, length, which, at_once in calls:
        episode += step
        if family_kept not in (None, family):
            continue
        if at_once:
            ledger.record_releases(episode, billboard_stages(family, mechanism_of(which), length, first), "prefix")
        else:
            for h in range(first, first + length):
                ledger.record(family, episode, h, mechanism_of(which), "prefix")


@given(_calls)
def test_the_ledger_reads_mechanisms_by_value(calls):
    """A fresh but equal mechanism object at every call records what one shared object does."""
    one_object, copies = PrivacyLedger(), PrivacyLedger()
    _record_calls(one_object, calls, lambda i: _SHARED[i])
    _record_calls(copies, calls, lambda i: type(_SHARED[i])(*dataclasses.astuple(_SHARED[i])))
    assert copies.blocks == one_object.blocks


@given(_calls)
def test_families_are_recorded_independently(calls):
    """A family's blocks do not depend on the releases of other families recorded in between."""
    together = PrivacyLedger()
    _record_calls(together, calls, lambda i: _SHARED[i])
    for family in together.families():
        alone = PrivacyLedger()
        _record_calls(alone, calls, lambda i: _SHARED[i], family_kept=family)
        assert [b for b in together.blocks if b.family == family] == list(alone.blocks)


def test_a_block_of_several_families_is_recorded_family_by_family():
    """record_releases of one episode's mixed block: each family's runs of consecutive stages by one mechanism."""
    m, g = GaussianMechanism(1.0, 2.0, 3), GOEMechanism(1.0, 2.0, 3)
    mixed, split = PrivacyLedger(), PrivacyLedger()
    for k in range(1, 6):
        mixed.record_releases(k, [("a", 1, m), ("b", 1, g), ("a", 2, m), ("b", 2, g), ("a", 3, g)], "prefix")
        split.record_releases(k, [("a", 1, m), ("a", 2, m)], "prefix")
        split.record_releases(k, [("a", 3, g)], "prefix")
        split.record_releases(k, [("b", 1, g), ("b", 2, g)], "prefix")
    assert mixed.blocks == split.blocks and len(mixed.blocks) == 3
    assert mixed.families() == ("a", "b")
