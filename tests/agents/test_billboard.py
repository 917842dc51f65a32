"""The billboard: every publication is noised by a dpverify mechanism and recorded in the ledger."""

import numpy as np
import pytest

from dpverify.agents.billboard import Billboard, ReplayBillboard
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
