"""The billboard: every publication is noised by a dpverify mechanism and recorded in the ledger."""

import numpy as np
import pytest

from dpverify.agents.billboard import Billboard, ReleasePlan, ReplayBillboard, draw_noise
from dpverify.agents.private import billboard_for, check_feature_norm
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism
from dpverify.testing import assert_fresh_noise


def publish_some(board: Billboard, rng: np.random.Generator) -> None:
    vec, mat = GaussianMechanism(1.0, 2.0, 3), GOEMechanism(1.0, 2.0, 3)
    for k in (1, 2, 3):
        for h in (2, 1):
            board.publish("v", k, h, vec, np.ones(3), "prefix", rng)
            board.publish("G", k, h, mat, np.eye(3), "prefix", rng)
            board.publish("msg", k, h, vec, np.zeros(3), "current", rng)


def test_publications_are_recorded_and_freshly_noised():
    board = Billboard(keep_history=True, keep_noise=True)
    publish_some(board, np.random.default_rng(0))
    assert board.n_published == board.ledger.n_releases == 18
    assert len(board.ledger.blocks) == 3
    assert_fresh_noise(r.noise for r in board.history())
    values = [r.value for r in board.history("v")]
    assert all(not v.flags.writeable for v in values)  # the public record cannot be edited afterwards
    assert [r.episode for r in board.messages_of(2)] == [2, 2]


def test_history_needs_keep_history_and_rng_must_be_a_generator():
    board = Billboard()
    publish_some(board, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="keep_history"):
        board.history()
    with pytest.raises(InvalidParameterError, match="rng"):
        board.publish("v", 1, 1, GaussianMechanism(1.0, 1.0), np.zeros(1), "prefix", rng=0)


def test_replay_returns_the_recorded_values_and_checks_labels():
    original = Billboard(keep_history=True)
    publish_some(original, np.random.default_rng(1))
    replay = ReplayBillboard(original.history())
    publish_some(replay, np.random.default_rng(99))  # different noise and data: same published values
    assert replay.ledger == original.ledger
    mismatch = ReplayBillboard(original.history())
    with pytest.raises(InvalidParameterError, match="recorded label"):
        mismatch.publish("G", 1, 2, GOEMechanism(1.0, 2.0, 3), np.eye(3), "prefix", np.random.default_rng(0))


def test_private_checks():
    with pytest.raises(InvalidParameterError, match="feature_norm_bound = 3"):
        check_feature_norm(3.0, 1.0)
    check_feature_norm(1.0, 1.0)
    board = Billboard("add-remove-one")
    assert billboard_for(board, "add-remove-one") is board
    with pytest.raises(InvalidParameterError, match="relation"):
        billboard_for(board, "replace-one")
    assert billboard_for(None, "replace-one", keep_history=True).keep_history


def batched_and_one_by_one(keep_noise: bool):
    vec, mat = GaussianMechanism(1.0, 2.0, 3), GOEMechanism(1.0, 0.5, 3)
    rng = np.random.default_rng(4)
    grams = rng.normal(size=(4, 3, 3))
    grams = grams + np.swapaxes(grams, 1, 2)
    vectors = rng.normal(size=(4, 3))
    batched, single = (Billboard(keep_history=True, keep_noise=keep_noise) for _ in range(2))
    rb, rs = np.random.default_rng(9), np.random.default_rng(9)
    out_b, out_s = [], []
    for k in (1, 2):
        out_b.append(batched.publish_stages("G", k, mat, grams, "tree", rb))
        out_s.append(np.stack([single.publish("G", k, h + 1, mat, grams[h], "tree", rs) for h in range(4)]))
        reserved = batched.reserve(k, [(family, h + 1, m) for h in range(4) for family, m in (("v", vec), ("M", mat))],
                                   "prefix", rb)
        for h in range(4):
            out_b.append(reserved.publish("v", h + 1, vectors[h]))
            out_b.append(reserved.publish("M", h + 1, grams[h]))
            out_s.append(single.publish("v", k, h + 1, vec, vectors[h], "prefix", rs))
            out_s.append(single.publish("M", k, h + 1, mat, grams[h], "prefix", rs))
    return batched, single, out_b, out_s


@pytest.mark.parametrize("keep_noise", [False, True])
def test_batched_releases_equal_one_by_one_releases(keep_noise: bool) -> None:
    batched, single, out_b, out_s = batched_and_one_by_one(keep_noise)
    for b, s in zip(out_b, out_s, strict=True):
        np.testing.assert_array_equal(b, s)  # the same draws, bit for bit
    assert batched.ledger == single.ledger and batched.n_published == single.n_published == 2 * 12
    for b, s in zip(batched.history(), single.history(), strict=True):
        assert (b.family, b.episode, b.stage, b.users) == (s.family, s.episode, s.stage, s.users)
        np.testing.assert_array_equal(b.value, s.value)
        if keep_noise:
            np.testing.assert_array_equal(b.noise, s.noise)


def test_draw_noise_is_the_mechanisms_noise() -> None:
    mixed = [GaussianMechanism(1.0, 0.3, 2), GOEMechanism(1.0, 1.7, 4), GaussianMechanism(2.0, 5.0, 1)] * 3
    vectors = [GaussianMechanism(1.0, 0.3, 3), GaussianMechanism(1.0, 0.3, 3), GaussianMechanism(1.0, 7.0, 3)] * 4
    for mechanisms in (mixed, vectors):
        drawn = draw_noise(mechanisms, np.random.default_rng(1))
        rng = np.random.default_rng(1)
        for m, noise in zip(mechanisms, drawn, strict=True):
            np.testing.assert_array_equal(noise, m.release(np.zeros(m.output_shape), rng))
        assert len({n.tobytes() for n in drawn}) == len(drawn)  # every release its own draws
        plan = ReleasePlan([(f"r{i}", 1, m) for i, m in enumerate(mechanisms)])
        for _ in range(2):  # a plan derives its layout once, then draws the same noise from the same generator
            _, planned, stacks = plan.draw_noise(np.random.default_rng(1))
            for x, y in zip(planned, drawn, strict=True):
                np.testing.assert_array_equal(x, y)
            for positions, stacked in stacks.items():  # each mechanism's releases, stacked
                np.testing.assert_array_equal(stacked, np.stack([drawn[i] for i in positions]))


def test_batched_releases_check_every_value() -> None:
    board = Billboard()
    mat, vec = GOEMechanism(1.0, 1.0, 2), GaussianMechanism(1.0, 1.0, 2)
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidParameterError, match="symmetric"):
        board.publish_stages("G", 1, mat, np.stack([np.eye(2), [[0.0, 1.0], [0.0, 0.0]]]), "prefix", rng)
    with pytest.raises(InvalidParameterError, match="finite"):
        board.publish_stages("v", 1, vec, np.array([[0.0, 1.0], [np.nan, 0.0]]), "prefix", rng)
    assert board.n_published == 0 and board.ledger.n_releases == 0
    reserved = board.reserve(1, [("v", 2, vec), ("v", 1, vec)], "prefix", rng)
    assert board.ledger.n_releases == 2  # recorded when reserved: the ledger never lags a release
    with pytest.raises(InvalidParameterError, match="shape"):
        reserved.publish("v", 2, np.zeros(3))
    with pytest.raises(InvalidParameterError, match="reserved"):
        reserved.publish("v", 3, np.zeros(2))
    reserved.publish("v", 2, np.zeros(2))
    with pytest.raises(InvalidParameterError, match="once"):
        reserved.publish("v", 2, np.zeros(2))  # a second release would reuse its noise
    assert board.n_published == 1


def test_replay_billboard_replays_batched_releases() -> None:
    _, single, _, out_s = batched_and_one_by_one(False)
    replay = ReplayBillboard(single.history())
    mat, vec = GOEMechanism(1.0, 0.5, 3), GaussianMechanism(1.0, 2.0, 3)
    zeros = np.zeros((4, 3, 3))
    out = []
    for k in (1, 2):
        out.append(replay.publish_stages("G", k, mat, zeros, "tree", np.random.default_rng(0)))
        reserved = replay.reserve(k, [(f, h + 1, m) for h in range(4) for f, m in (("v", vec), ("M", mat))],
                                  "prefix", np.random.default_rng(0))
        for h in range(4):
            out.append(reserved.publish("v", h + 1, np.zeros(3)))
            out.append(reserved.publish("M", h + 1, zeros[h]))
    for a, b in zip(out, out_s, strict=True):
        np.testing.assert_array_equal(a, b)
    assert replay.ledger == single.ledger


def test_publish_all_equals_publishing_one_by_one() -> None:
    vec, mat = GaussianMechanism(1.0, 2.0, 3), GOEMechanism(1.0, 0.5, 3)
    plan = [(family, h + 1, m) for h in range(3) for family, m in (("G", mat), ("v", vec))]
    grams = np.stack([np.eye(3) * h for h in range(3)])
    vectors = np.arange(9.0).reshape(3, 3)
    boards = [Billboard(keep_history=True, keep_noise=True) for _ in range(2)]
    together = boards[0].reserve(1, plan, "current", np.random.default_rng(2)).publish_all({"G": grams, "v": vectors})
    single = boards[1].reserve(1, plan, "current", np.random.default_rng(2))
    for h in range(3):
        np.testing.assert_array_equal(together["G"][h], single.publish("G", h + 1, grams[h]))
        np.testing.assert_array_equal(together["v"][h], single.publish("v", h + 1, vectors[h]))
    assert [(r.family, r.stage) for r in boards[0].history()] == [(r.family, r.stage) for r in boards[1].history()]
    assert boards[0].ledger == boards[1].ledger
    with pytest.raises(InvalidParameterError, match="raw_values"):
        boards[0].reserve(2, plan, "current", np.random.default_rng(2)).publish_all({"G": grams})


def test_publish_group_equals_publish() -> None:
    a, b = GaussianMechanism(1.0, 2.0, 3), GaussianMechanism(1.0, 9.0, 3)
    plan = [(family, h, m) for h in (2, 1) for family, m in (("a", a), ("b", b))]
    boards = [Billboard(keep_history=True) for _ in range(2)]
    grouped = boards[0].reserve(1, plan, "prefix", np.random.default_rng(5))
    single = boards[1].reserve(1, plan, "prefix", np.random.default_rng(5))
    values = np.arange(6.0).reshape(2, 3)
    for h in (2, 1):
        for x, y in zip(grouped.publish_group(("a", "b"), h, values),
                        [single.publish("a", h, values[0]), single.publish("b", h, values[1])], strict=True):
            np.testing.assert_array_equal(x, y)
    assert boards[0].ledger == boards[1].ledger and boards[0].n_published == 4
    board = Billboard()
    reserved = board.reserve(1, plan, "prefix", np.random.default_rng(5))
    with pytest.raises(InvalidParameterError, match="finite"):
        reserved.publish_group(("a", "b"), 2, [np.zeros(3), np.full(3, np.inf)])
    assert board.n_published == 0  # nothing released when one value fails its check


@pytest.mark.parametrize("keep_noise", [False, True])
def test_publish_block_equals_publishing_one_by_one(keep_noise: bool) -> None:
    a, b = GaussianMechanism(1.0, 2.0, 3), GaussianMechanism(1.0, 9.0, 3)
    plan = [(family, h, m) for h in (3, 2, 1) for family, m in (("a", a), ("b", b))]
    values = np.arange(18.0).reshape(6, 3) - 4.0
    boards = [Billboard(keep_history=True, keep_noise=keep_noise) for _ in range(2)]
    together = boards[0].reserve(1, plan, "prefix", np.random.default_rng(7)).publish_block(values)
    single = boards[1].reserve(1, plan, "prefix", np.random.default_rng(7))
    one_by_one = np.stack([single.publish(f, h, x) for (f, h, _), x in zip(plan, values, strict=True)])
    np.testing.assert_array_equal(together, one_by_one)
    assert boards[0].ledger == boards[1].ledger and boards[0].n_published == boards[1].n_published == 6
    for x, y in zip(boards[0].history(), boards[1].history(), strict=True):
        assert (x.family, x.episode, x.stage) == (y.family, y.episode, y.stage)
        np.testing.assert_array_equal(x.value, y.value)
        if keep_noise:
            np.testing.assert_array_equal(x.noise, y.noise)


def test_publish_block_checks_every_value_before_any_release() -> None:
    vec, mat = GaussianMechanism(1.0, 2.0, 3), GOEMechanism(1.0, 0.5, 3)
    board = Billboard()
    reserved = board.reserve(1, [("a", 2, vec), ("a", 1, vec)], "prefix", np.random.default_rng(5))
    with pytest.raises(InvalidParameterError, match="finite"):
        reserved.publish_block(np.array([np.zeros(3), np.full(3, np.nan)]))
    with pytest.raises(InvalidParameterError, match="raw_values"):
        reserved.publish_block(np.zeros((3, 3)))
    assert board.n_published == 0  # nothing released when one value fails its check
    reserved.publish_block(np.zeros((2, 3)))
    with pytest.raises(InvalidParameterError, match="once"):
        reserved.publish_block(np.zeros((2, 3)))  # a second release would reuse its noise
    # no noise block (GOE releases): each checked, then released in turn, the same as one by one
    matrices = np.stack([np.eye(3), 2 * np.eye(3)])
    boards = [Billboard() for _ in range(2)]
    plan = [("G", 1, mat), ("G", 2, mat)]
    together = boards[0].reserve(1, plan, "prefix", np.random.default_rng(3)).publish_block(matrices)
    single = boards[1].reserve(1, plan, "prefix", np.random.default_rng(3))
    np.testing.assert_array_equal(together, np.stack([single.publish("G", h + 1, matrices[h]) for h in range(2)]))
    with pytest.raises(InvalidParameterError, match="symmetric"):
        Billboard().reserve(1, plan, "prefix", np.random.default_rng(3)).publish_block(
            np.stack([np.eye(3), np.triu(np.ones((3, 3)))]))


def test_publish_block_on_a_replay_billboard_returns_the_recorded_values() -> None:
    vec = GaussianMechanism(1.0, 2.0, 3)
    plan = [("v", h, vec) for h in (2, 1)]
    original = Billboard(keep_history=True)
    published = original.reserve(1, plan, "prefix", np.random.default_rng(1)).publish_block(np.ones((2, 3)))
    replay = ReplayBillboard(original.history())
    replayed = replay.reserve(1, plan, "prefix", np.random.default_rng(9)).publish_block(np.zeros((2, 3)))
    np.testing.assert_array_equal(replayed, published)


def test_publish_all_keeps_the_same_history_as_publishing_one_by_one() -> None:
    vec, mat = GaussianMechanism(1.0, 2.0, 3), GOEMechanism(1.0, 0.5, 3)
    plan = [(family, h + 1, m) for h in range(3) for family, m in (("G", mat), ("v", vec))]
    grams = np.stack([np.eye(3) * h for h in range(3)])
    vectors = np.arange(9.0).reshape(3, 3)
    boards = [Billboard(keep_history=True, keep_noise=True) for _ in range(2)]
    together = boards[0].reserve(1, plan, "current", np.random.default_rng(4)).publish_all({"G": grams, "v": vectors})
    single = boards[1].reserve(1, plan, "current", np.random.default_rng(4))
    for h in range(3):
        single.publish("G", h + 1, grams[h])
        single.publish("v", h + 1, vectors[h])
    assert boards[0].n_published == boards[1].n_published == 6
    for x, y in zip(boards[0].history(), boards[1].history(), strict=True):
        assert (x.family, x.stage) == (y.family, y.stage)
        np.testing.assert_array_equal(x.value, y.value)
        np.testing.assert_array_equal(x.noise, y.noise)
    np.testing.assert_array_equal(together["G"], np.stack([r.value for r in boards[1].history("G")]))


def test_publish_noised_records_the_claimed_mechanism_and_keeps_no_noise() -> None:
    vec = GaussianMechanism(1.0, 2.0, 3)
    board = Billboard(keep_history=True, keep_noise=True, noise_rng=np.random.default_rng(3))
    rng = board.noise_source()
    value = np.ones(3) + rng.normal(0.0, vec.sigma, 3)
    returned = board.publish_noised("v", 1, 1, vec, value, "prefix")
    assert np.array_equal(returned, value) and board.ledger.n_releases == 1 and board.n_published == 1
    (kept,) = board.history()
    assert kept.noise is None and kept.mechanism is vec and not kept.value.flags.writeable
    with pytest.raises(InvalidParameterError, match="output shape"):
        board.publish_noised("v", 2, 1, vec, np.ones(4), "prefix")
    with pytest.raises(InvalidParameterError, match="finite"):
        board.publish_noised("v", 2, 1, vec, np.array([1.0, np.nan, 0.0]), "prefix")
    with pytest.raises(InvalidParameterError, match="dpverify mechanism"):
        board.publish_noised("v", 2, 1, object(), np.ones(3), "prefix")  # type: ignore[arg-type]


def test_noise_source_is_the_billboards_generator_and_needs_one() -> None:
    generator = np.random.default_rng(0)
    assert Billboard(noise_rng=generator).noise_source() is generator
    with pytest.raises(InvalidParameterError, match="noise_rng"):
        Billboard().noise_source()
    with pytest.raises(InvalidParameterError, match="noise_rng"):
        Billboard(noise_rng=0)  # type: ignore[arg-type]


def test_a_replay_keeps_what_would_have_been_published_and_hands_back_the_record() -> None:
    vec = GaussianMechanism(1.0, 2.0, 3)
    original = Billboard(keep_history=True)
    original.publish("v", 1, 1, vec, np.zeros(3), "prefix", np.random.default_rng(1))
    original.publish_noised("w", 1, 1, vec, np.full(3, 7.0), "prefix")
    replay = ReplayBillboard(original.history(), keep_history=True, keep_noise=True,
                             noise_rng=np.random.default_rng(2))
    handed = replay.publish("v", 1, 1, vec, np.ones(3), "prefix", np.random.default_rng(1))
    assert np.array_equal(handed, original.history()[0].value)
    attempted = replay.history()[0]
    assert np.allclose(attempted.noise, original.history()[0].value, rtol=0, atol=1e-14)  # the same draw
    assert np.allclose(attempted.value, 1.0 + original.history()[0].value)
    handed = replay.publish_noised("w", 1, 1, vec, np.full(3, 9.0), "prefix")
    assert np.array_equal(handed, np.full(3, 7.0)) and np.array_equal(replay.history()[1].value, np.full(3, 9.0))


def test_the_goe_mechanism_releases_the_symmetric_part_of_a_rounding_asymmetric_matrix() -> None:
    goe = GOEMechanism(1.0, 0.5, 3)
    raw = np.arange(9.0).reshape(3, 3) * 0.1
    raw = raw + raw.T
    tilted = raw.copy()
    tilted[0, 1] += 1e-15  # rounding asymmetry within the tolerance
    for publish in ("one", "stages", "reserved"):
        board = Billboard(keep_history=True)
        rng = np.random.default_rng(4)
        if publish == "one":
            board.publish("G", 1, 1, goe, tilted, "prefix", rng)
        elif publish == "stages":
            board.publish_stages("G", 1, goe, np.stack([tilted, raw]), "prefix", rng)
        else:
            board.reserve(1, [("G", 1, goe)], "prefix", rng).publish("G", 1, tilted)
        value = board.history()[0].value
        assert np.array_equal(value, value.T), publish  # exactly symmetric: no un-noised antisymmetric part
    with pytest.raises(InvalidParameterError, match="symmetric"):
        Billboard().publish("G", 1, 1, goe, raw + np.triu(np.ones((3, 3)), 1), "prefix", np.random.default_rng(0))
