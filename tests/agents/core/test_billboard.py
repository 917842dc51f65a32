"""The billboard: every publication is noised by a dpverify mechanism and recorded in the ledger."""

import numpy as np
import pytest

from dpverify.agents.core.billboard import Billboard, ReplayBillboard, stages
from dpverify.agents.core.private import billboard_for, check_feature_norm
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


def block_and_one_by_one(keep_noise: bool):
    """The same releases through publish_block (a Gram block per episode, then mixed vector/matrix blocks) and
    through publish one by one, from generators of one seed."""
    vec, mat = GaussianMechanism(1.0, 2.0, 3), GOEMechanism(1.0, 0.5, 3)
    rng = np.random.default_rng(4)
    grams = rng.normal(size=(4, 3, 3))
    grams = grams + np.swapaxes(grams, 1, 2)
    vectors = rng.normal(size=(4, 3))
    batched, single = (Billboard(keep_history=True, keep_noise=keep_noise) for _ in range(2))
    rb, rs = np.random.default_rng(9), np.random.default_rng(9)
    out_b, out_s = [], []
    for k in (1, 2):
        out_b.extend(batched.publish_block(k, stages("G", mat, 4), grams, "tree", rb))
        out_s.extend(single.publish("G", k, h + 1, mat, grams[h], "tree", rs) for h in range(4))
        for h in (4, 3, 2, 1):
            out_b.extend(batched.publish_block(k, [("v", h, vec), ("w", h, vec), ("M", h, mat)],
                                               [vectors[h - 1], 2 * vectors[h - 1], grams[h - 1]], "prefix", rb))
            out_s.append(single.publish("v", k, h, vec, vectors[h - 1], "prefix", rs))
            out_s.append(single.publish("w", k, h, vec, 2 * vectors[h - 1], "prefix", rs))
            out_s.append(single.publish("M", k, h, mat, grams[h - 1], "prefix", rs))
    return batched, single, out_b, out_s


@pytest.mark.parametrize("keep_noise", [False, True])
def test_a_block_of_releases_equals_the_releases_one_by_one(keep_noise: bool) -> None:
    batched, single, out_b, out_s = block_and_one_by_one(keep_noise)
    for b, s in zip(out_b, out_s, strict=True):
        np.testing.assert_array_equal(b, s)  # the same draws, bit for bit
    assert batched.ledger == single.ledger and batched.n_published == single.n_published == 2 * 16
    for b, s in zip(batched.history(), single.history(), strict=True):
        assert (b.family, b.episode, b.stage, b.users) == (s.family, s.episode, s.stage, s.users)
        np.testing.assert_array_equal(b.value, s.value)
        if keep_noise:
            np.testing.assert_array_equal(b.noise, s.noise)
    if keep_noise:
        assert_fresh_noise(r.noise for r in batched.history())


def test_one_release_draws_the_mechanisms_own_noise() -> None:
    for mechanism in (GaussianMechanism(1.0, 0.3, 2), GOEMechanism(1.0, 1.7, 4)):
        raw = np.eye(4) if mechanism.kind == "goe" else np.ones(2)
        published = Billboard().publish("x", 1, 1, mechanism, raw, "prefix", np.random.default_rng(1))
        np.testing.assert_array_equal(published, mechanism.release(raw, np.random.default_rng(1)))


def test_a_block_checks_every_value_before_any_release() -> None:
    board = Billboard()
    mat, vec = GOEMechanism(1.0, 1.0, 2), GaussianMechanism(1.0, 1.0, 2)
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidParameterError, match="symmetric"):
        board.publish_block(1, stages("G", mat, 2), np.stack([np.eye(2), [[0.0, 1.0], [0.0, 0.0]]]), "prefix", rng)
    with pytest.raises(InvalidParameterError, match="finite"):
        board.publish_block(1, [("G", 1, mat), ("v", 1, vec)], [np.eye(2), np.array([np.nan, 0.0])], "prefix", rng)
    with pytest.raises(InvalidParameterError, match="shape"):
        board.publish_block(1, stages("v", vec, 2), np.zeros((2, 3)), "prefix", rng)
    with pytest.raises(InvalidParameterError, match="one value per release"):
        board.publish_block(1, stages("v", vec, 2), np.zeros((3, 2)), "prefix", rng)
    assert board.n_published == 0 and board.ledger.n_releases == 0  # nothing recorded or released
    assert rng.bit_generator.state == np.random.default_rng(0).bit_generator.state  # and no noise drawn


def test_one_release_is_checked_drawn_and_recorded_as_a_block_of_one_is() -> None:
    from dpverify.mechanisms import LaplaceMechanism

    mat, vec = GOEMechanism(1.0, 1.0, 2), GaussianMechanism(1.0, 1.0, 2)
    inf_diagonal, nan_pair = np.diag([np.inf, 1.0]), np.array([[0.0, np.nan], [np.nan, 0.0]])
    for mechanism, raw, match in ((mat, inf_diagonal, "finite"), (mat, nan_pair, "finite"),
                                  (mat, np.array([[0.0, 1.0], [0.0, 0.0]]), "symmetric"),
                                  (vec, np.array([np.inf, 0.0]), "finite"), (vec, np.zeros(3), "shape")):
        board, rng = Billboard(), np.random.default_rng(0)
        with pytest.raises(InvalidParameterError, match=match):
            board.publish("x", 1, 1, mechanism, raw, "prefix", rng)
        assert board.n_published == 0 and board.ledger.n_releases == 0
        assert rng.bit_generator.state == np.random.default_rng(0).bit_generator.state
    laplace = LaplaceMechanism(1.0, 0.5, 2)
    for mechanism, raw in ((laplace, np.ones(2)), (mat, np.eye(2)), (vec, np.ones(2))):
        one, block = (Billboard(keep_history=True, keep_noise=True) for _ in range(2))
        published = one.publish("x", 3, 2, mechanism, raw, "current", np.random.default_rng(5))
        from_block = block.publish_block(3, [("x", 2, mechanism), ("y", 1, mechanism)], [raw, raw], "current",
                                         np.random.default_rng(5))[0]
        np.testing.assert_array_equal(published, from_block)
        kept, kept_block = one.history()[0], block.history()[0]
        assert kept[:4] == kept_block[:4] and kept.mechanism == mechanism and not kept.value.flags.writeable
        np.testing.assert_array_equal(kept.noise, kept_block.noise)
        assert [(b.family, b.episodes, b.stages) for b in one.ledger.blocks] == [("x", (3, 3), (2, 2))]


def test_one_release_reads_the_agents_value_without_changing_it() -> None:
    mat, vec = GOEMechanism(1.0, 1.0, 2), GaussianMechanism(1.0, 1.0, 2)
    for mechanism, raw in ((mat, np.array([[1.0, 2.0], [2.0, 3.0]])), (mat, [[1, 2], [2, 3]]), (vec, np.arange(2)),
                           (vec, np.ones(4)[::2])):
        before = np.array(raw, dtype=float)
        one, block = Billboard(keep_history=True), Billboard(keep_history=True)
        published = one.publish("x", 1, 1, mechanism, raw, "prefix", np.random.default_rng(2))
        np.testing.assert_array_equal(published, block.publish_block(
            1, [("x", 1, mechanism), ("y", 1, mechanism)], [raw, raw], "prefix", np.random.default_rng(2))[0])
        np.testing.assert_array_equal(np.asarray(raw, dtype=float), before)  # (released from a view of it)
        kept = published.copy()
        published += 1.0  # the agent's copy is its own: the record keeps what was published
        np.testing.assert_array_equal(one.history()[0].value, kept)


def test_replay_billboard_replays_blocks_and_single_releases() -> None:
    _, single, _, out_s = block_and_one_by_one(False)
    replay = ReplayBillboard(single.history())
    batched_replay = ReplayBillboard(single.history())
    vec, mat = GaussianMechanism(1.0, 2.0, 3), GOEMechanism(1.0, 0.5, 3)
    zeros = np.zeros((4, 3, 3))
    out, out_block = [], []
    for k in (1, 2):
        out.extend(replay.publish("G", k, h + 1, mat, zeros[h], "tree", np.random.default_rng(0)) for h in range(4))
        out_block.extend(batched_replay.publish_block(k, stages("G", mat, 4), zeros, "tree", np.random.default_rng(0)))
        for h in (4, 3, 2, 1):
            for family, m, value in (("v", vec, np.zeros(3)), ("w", vec, np.zeros(3)), ("M", mat, zeros[0])):
                out.append(replay.publish(family, k, h, m, value, "prefix", np.random.default_rng(0)))
            out_block.extend(batched_replay.publish_block(k, [("v", h, vec), ("w", h, vec), ("M", h, mat)],
                                                          [np.zeros(3), np.zeros(3), zeros[0]], "prefix",
                                                          np.random.default_rng(0)))
    for a, b, c in zip(out, out_block, out_s, strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)
    assert replay.ledger == single.ledger == batched_replay.ledger


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
    for publish in ("one", "block"):
        board = Billboard(keep_history=True)
        rng = np.random.default_rng(4)
        if publish == "one":
            board.publish("G", 1, 1, goe, tilted, "prefix", rng)
        else:
            board.publish_block(1, stages("G", goe, 2), np.stack([tilted, raw]), "prefix", rng)
        value = board.history()[0].value
        assert np.array_equal(value, value.T), publish  # exactly symmetric: no un-noised antisymmetric part
    with pytest.raises(InvalidParameterError, match="symmetric"):
        Billboard().publish("G", 1, 1, goe, raw + np.triu(np.ones((3, 3)), 1), "prefix", np.random.default_rng(0))


def test_a_mechanism_subclass_releases_with_its_own_release_never_the_base_class_noise() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Halved(GaussianMechanism):
        def release(self, value, rng, n=None):
            return np.asarray(value, dtype=float) + rng.normal(0.0, self.sigma / 2, self.output_shape)

    @dataclass(frozen=True)
    class Broken(GaussianMechanism):
        def release(self, value, rng, n=None):
            return np.zeros(self.dim + 1)

    board = Billboard(keep_history=True, keep_noise=True)
    halved = Halved(1.0, 2.0, 4)
    values = board.publish_block(1, [("v", h, halved) for h in range(1, 501)], np.zeros((500, 4)), "prefix",
                                 np.random.default_rng(0))
    noise = np.stack([r.noise for r in board.history()])
    assert np.array_equal(noise, values) and 0.9 < noise.std() < 1.1  # σ/2 = 1, as the subclass draws it
    with pytest.raises(InvalidParameterError, match="Broken.release"):
        board.publish("v", 2, 1, Broken(1.0, 2.0, 4), np.zeros(4), "prefix", np.random.default_rng(0))


def test_large_finite_entries_are_published_and_a_block_of_one_is_a_stack() -> None:
    vec, mat = GaussianMechanism(1.0, 1.0, 2), GOEMechanism(1.0, 1.0, 2)
    huge = np.array([1e308, 1e308])  # finite entries (whose sum is not): published
    published = Billboard().publish("x", 1, 1, vec, huge, "prefix", np.random.default_rng(3))
    np.testing.assert_array_equal(published, vec.release(huge, np.random.default_rng(3)))
    with pytest.raises(InvalidParameterError, match="finite"):
        Billboard().publish("x", 1, 1, vec, np.array([1e308, np.inf]), "prefix", np.random.default_rng(3))
    for mechanism, raw in ((vec, np.ones(2)), (mat, np.eye(2))):
        block = Billboard().publish_block(2, [("x", 1, mechanism)], [raw], "prefix", np.random.default_rng(4))
        one = Billboard().publish("x", 2, 1, mechanism, raw, "prefix", np.random.default_rng(4))
        assert block.shape == (1, *mechanism.output_shape)
        np.testing.assert_array_equal(block[0], one)


def test_a_noise_generator_derived_when_first_asked_for_is_the_one_derived_at_once() -> None:
    from dpverify.agents.core.billboard import derived_noise_generator

    rng = np.random.default_rng(np.random.SeedSequence(11))
    board = Billboard(noise_from=rng)
    rng.spawn(2), rng.random(3)  # what an agent does with its generator before it asks for the noise source
    expected = derived_noise_generator(np.random.default_rng(np.random.SeedSequence(11)))
    assert board.noise_source().bit_generator.state == expected.bit_generator.state
    assert board.noise_rng is board.noise_source()  # derived once
    assert Billboard().noise_rng is None
    with pytest.raises(InvalidParameterError, match="noise_from"):
        Billboard(noise_rng=np.random.default_rng(0), noise_from=rng)
    legacy = np.random.MT19937(0)
    legacy._legacy_seeding(1)  # (seeded as RandomState seeds: no seed sequence)
    with pytest.raises(InvalidParameterError, match="SeedSequence"):  # refused when made, not when first used
        Billboard(noise_from=np.random.Generator(legacy))
    with pytest.raises(InvalidParameterError, match="Generator"):
        Billboard(noise_from=np.random.RandomState(0))  # type: ignore[arg-type]
