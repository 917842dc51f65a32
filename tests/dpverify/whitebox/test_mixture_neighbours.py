"""The audit linear mixture MDP is a valid linear mixture MDP whose path canaries realise
LDP-UCRL-VTR's per-stage sensitivity caps in the white-box sensitivity replay."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.agent_audit import AgentAuditSpec
from dpverify.agent_audit.canaries import MeasuredPair, measure_pair
from dpverify.agent_audit.runs import agent_setup
from dpverify.agents.core.tapes import ordinary_tapes, replace, tape_rollout
from dpverify.agents.envs.linear_mdp import LinearMixtureMDP, mixture_feature_norm
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp
from dpverify.errors import InvalidParameterError
from dpverify.whitebox.mixture_neighbours import (
    PIVOT,
    audit_mixture_mdp,
    mixture_tapes,
    mu_ceilings,
    stage_caps,
    type_names,
)
from dpverify.whitebox.neighbours import audit_environment, audit_tapes, candidate_pairs

#: The cosine of each type's vector to the pivot's (module docstring of mixture_neighbours).
COSINES = {"pivot": 1.0, "orthogonal": 0.0, "balanced": -0.25}
#: μ of the claim (1, 1e-5) under the exact conversion.
CLAIMED_MU = 0.26805


def _vectors(mdp: LinearMixtureMDP) -> np.ndarray:
    """Σ_s′ ψ(s′|s, a) of every state (one action, one stage): the type vectors v_s."""
    return mdp.basis[0, :, 0].sum(axis=1)


@pytest.mark.parametrize(("dim", "horizon", "actions", "bound"),
                         [(2, 2, 1, 1.0), (3, 2, 4, 1.0), (3, 6, 2, 1.0), (5, 4, 16, 1.0),
                          (4, 3, 3, 0.6)])
def test_the_audit_mixture_mdp_is_valid_with_full_norm_vectors_at_the_stated_angles(
        dim: int, horizon: int, actions: int, bound: float) -> None:
    mdp = audit_mixture_mdp(horizon, actions, dim, feature_norm_bound=bound)
    # validated on construction: probabilities, rewards, the declared norm bound
    assert isinstance(mdp, LinearMixtureMDP)
    assert (mdp.horizon, mdp.num_actions, mdp.dim) == (horizon, actions, dim)
    assert mdp.feature_norm_bound == bound
    assert mixture_feature_norm(mdp.basis) == pytest.approx(bound)  # full norm, within the bound
    assert np.allclose(mdp.transitions, 1.0 / mdp.num_states) and np.all(mdp.rewards == 1.0)
    assert np.allclose(np.linalg.norm(mdp.theta, axis=1), math.sqrt(dim) / bound)
    # ψ ignores the action: the agent's choice cannot matter
    assert np.all(mdp.basis == mdp.basis[:, :, :1])
    vectors = _vectors(mdp)
    assert np.allclose(np.linalg.norm(vectors, axis=1), bound)
    cosines = dict(zip(type_names(mdp), vectors @ vectors[0] / bound**2, strict=True))
    expected = dict(COSINES, opposed=2.0 / dim - 1.0) if dim >= 3 else {"pivot": 1.0,
                                                                        "orthogonal": 0.0}
    assert cosines == pytest.approx(expected)


def test_no_audit_mixture_mdp_in_one_dimension_and_parameters_are_checked() -> None:
    assert audit_mixture_mdp(3, 2, 1) is None
    with pytest.raises(InvalidParameterError, match="^feature_norm_bound "):
        audit_mixture_mdp(3, 2, 3, feature_norm_bound=0.0)
    with pytest.raises(InvalidParameterError, match="^horizon "):
        stage_caps(0)


def test_path_canaries_stay_in_their_state_whatever_the_policy() -> None:
    mdp = audit_mixture_mdp(4, 3, 3)
    assert mdp is not None
    tapes = mixture_tapes(mdp)
    assert list(tapes) == ["pivot", "orthogonal", "balanced", "opposed"]
    assert audit_tapes(mdp).keys() == tapes.keys()
    rng = np.random.default_rng(0)
    for s, tape in enumerate(tapes.values()):
        for _ in range(3):
            path = tape_rollout(mdp, rng.integers(0, 3, size=(4, mdp.num_states)), tape).states
            assert path.tolist() == [s] * 5  # a path of positive probability (P = 1/S everywhere)
    pairs = candidate_pairs(list(tapes), "replace-one", audit=True)
    others = ("orthogonal", "balanced", "opposed")
    assert [p.label for p in pairs] == [f"{PIVOT} -> {name}" for name in others]


def test_audit_environment_builds_the_mixture_one_with_the_declared_bound() -> None:
    original = zhou2021_mixture_mdp(dim=3, horizon=3)
    audit = audit_environment(original)
    assert isinstance(audit, LinearMixtureMDP) and audit.name == "audit-mixture"
    assert (audit.horizon, audit.num_actions, audit.dim) == (3, original.num_actions, 3)
    assert audit.feature_norm_bound == original.feature_norm_bound


def test_stage_caps_and_mu_ceilings() -> None:
    assert stage_caps(2).tolist() == [0.25, 0.0]
    assert stage_caps(4).tolist() == [0.5625, 0.25, 0.0625, 0.0]
    family, pair = mu_ceilings(6, 0.268)
    assert pair == pytest.approx(math.sqrt(2) * family)
    assert pair == pytest.approx(0.268 * math.sqrt(979 / 1296 / 6))  # Σ_h ((5 − h)/6)⁴ = 979/1296
    # below μ_claim/√5 for every H: a factor 2 in the noise cannot break the claim
    assert all(mu_ceilings(h, 1.0)[1] < 1 / math.sqrt(5) for h in range(1, 60))
    # the staged model calibrates each stage for its own range: every sending stage at its full
    # sensitivity, and the pair's ceiling is the claim
    assert stage_caps(4, "staged").tolist() == [1.0, 1.0, 1.0, 0.0]
    family, pair = mu_ceilings(6, 0.268, "staged")
    assert family == pytest.approx(0.268 / math.sqrt(2)) and pair == pytest.approx(0.268)
    with pytest.raises(InvalidParameterError, match="^horizon "):
        mu_ceilings(1, 0.268, "staged")


def _measured(horizon: int, base: str, other: str, position: str = "first",
              model: str = "standard") -> MeasuredPair:
    env = (("dim", 3), ("horizon", horizon), ("num_actions", 2), ("num_states", 3), ("seed", 3))
    spec = AgentAuditSpec("ldp-ucrl-vtr", "random-mixture", 3, "ldp", 1.0, 1e-5, trials=40,
                          env_options=env, positions=(position,), canary_design="worst-case",
                          agent_options=(("sensitivity_model", model),))
    setup = agent_setup(spec)
    mdp = setup.environment()
    tapes = mixture_tapes(mdp)
    users = ordinary_tapes(mdp, 3, 0)
    j = 1 if position == "first" else 2
    first, second = replace(users, j, tapes[base]), replace(users, j, tapes[other])
    return measure_pair(setup, mdp, first, second, j, f"{base} -> {other}", "audit environment", 0)


@pytest.mark.parametrize(("horizon", "model"), [(2, "standard"), (4, "standard"), (4, "staged")])
def test_the_canaries_realise_the_per_stage_caps_in_the_sensitivity_replay(horizon: int,
                                                                           model: str) -> None:
    # the first stage's cap: the largest realised fraction of each family (the staged model: 1,
    # each stage calibrated for its own range, so the fractions are the same at every stage that
    # sends)
    cap = float(stage_caps(horizon, model)[0])
    fractions, mus = {}, {}
    for other in ("orthogonal", "balanced", "opposed"):
        pair = _measured(horizon, PIVOT, other, model=model)
        fractions[other] = {f.family: f.fraction / cap for f in pair.fractions}
        mus[other] = pair.mu
    # measured (of the caps; the same at H = 2 and 4): orthogonal gram 1.000 target 0.707, balanced
    # 0.968 and 0.791, opposed 0.943 and 0.816 (module docstring: |sin x| and sin(x/2)); the
    # environment's own canaries realise 0.01–0.02 of the sensitivity
    assert fractions["orthogonal"]["gram"] == pytest.approx(1.0, abs=1e-6)
    assert fractions["orthogonal"]["target"] == pytest.approx(math.sqrt(0.5), abs=1e-6)
    expected = {"gram": math.sqrt(15 / 16), "target": math.sqrt(5 / 8)}
    assert fractions["balanced"] == pytest.approx(expected)
    assert fractions["opposed"]["target"] >= 0.8 and fractions["balanced"]["gram"] >= 0.95
    # the pair of largest μ carries √(25/32) = 0.884 of the ceiling (both families at their caps)
    best = max(mus.values())
    ceiling = mu_ceilings(horizon, CLAIMED_MU, model)[1]
    assert best == mus["balanced"] == pytest.approx(math.sqrt(25 / 32) * ceiling, rel=1e-3)


def test_after_the_first_user_the_values_need_not_be_at_the_cap() -> None:
    # the broadcast then holds the noisy estimates of the earlier users' messages
    first = _measured(4, PIVOT, "balanced")
    later = _measured(4, PIVOT, "balanced", position="middle")
    assert first.mu is not None and later.mu is not None and later.mu < first.mu
