"""The audit environments are valid linear MDPs realising the sensitivities; canary paths fix the features."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.agents.core.tapes import tape_rollout
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.whitebox.neighbours import (
    HALF_ANGLE_DEGREES,
    audit_linear_mdp,
    audit_tapes,
    candidate_pairs,
    own_tapes,
)


def test_the_audit_environment_is_a_valid_linear_mdp_with_nearly_opposite_and_orthogonal_features() -> None:
    mdp = audit_linear_mdp(horizon=4, num_states=2, num_actions=3, dim=5)
    assert mdp is not None and mdp.num_states == 6 and mdp.feature_norm_bound == 1.0
    norms = np.linalg.norm(mdp.features, axis=-1)
    assert np.allclose(norms, 1.0)
    plus, minus, orth = mdp.features[0, 0, 0], mdp.features[0, 1, 0], mdp.features[0, 2, 0]
    assert np.linalg.norm(plus - minus) == pytest.approx(2 * math.sin(math.radians(HALF_ANGLE_DEGREES)))
    assert plus @ orth == 0.0 and minus @ orth == 0.0
    # type-+ states lead to type-+ states with reward 1, type-− to type-− with reward 0
    assert mdp.rewards[0, 0, 0] == pytest.approx(1.0) and mdp.rewards[0, 1, 0] == pytest.approx(0.0)
    assert mdp.transitions[0, 0, 0, 3] == pytest.approx(0.5) and mdp.transitions[0, 0, 0, 1] == 0.0
    assert audit_linear_mdp(3, 2, 1, dim=1) is None


def test_the_oversized_environment_has_coordinates_in_the_unit_box_and_norm_root_d() -> None:
    mdp = audit_linear_mdp(horizon=3, num_states=2, num_actions=2, dim=4, oversized=True)
    assert mdp is not None and mdp.feature_norm_bound == pytest.approx(2.0)
    assert np.all(np.abs(mdp.features) <= 1.0) and np.allclose(np.linalg.norm(mdp.features, axis=-1), 2.0)


def test_canary_tapes_visit_their_path_whatever_the_policy() -> None:
    mdp = audit_linear_mdp(horizon=4, num_states=6, num_actions=3, dim=3)
    assert mdp is not None
    tapes = audit_tapes(mdp)
    assert set(tapes) == {"plus", "minus", "alt-pm", "alt-mp", "orth"}
    rng = np.random.default_rng(0)
    for _ in range(3):
        policy = rng.integers(0, 3, size=(4, 6))
        path = tape_rollout(mdp, policy, tapes["alt-pm"]).states
        assert [int(s) % 3 for s in path] == [0, 1, 0, 1, 0]  # types +, −, +, …
    assert set(own_tapes(min2021_mdp(horizon=3, num_actions=2))) == {"high", "low"}


def test_pairs_per_relation() -> None:
    names = ["plus", "minus", "alt-pm", "alt-mp", "orth"]
    pairs = candidate_pairs(names, "replace-one", audit=True)
    assert {p.base for p in pairs} == {"minus", "alt-mp"} and len(pairs) == 8
    assert [p.label for p in candidate_pairs(["high", "low"], "add-remove-one", audit=False)] == [
        "absent -> high", "absent -> low"]
