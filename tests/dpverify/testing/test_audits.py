"""Audit assertions: pass on a correct mechanism, refute a broken one, deterministic, messages carry the summary."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.audit import NO_VIOLATION_FOUND, VIOLATION, NeighbourPair
from dpverify.calibrate_mechanism import calibrate_gaussian, calibrate_laplace
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, LaplaceMechanism
from dpverify.testing import (
    DEFAULT_AGENT_TRIALS,
    DEFAULT_CONFIDENCE,
    DEFAULT_TRIALS,
    assert_audit_passes,
    assert_audit_refutes,
)

pytestmark = pytest.mark.dp_statistical

SIGMA = calibrate_gaussian(1.0, 1e-5, sensitivity=1.0).sigma


def noisy_sum(noise_factor: float):
    """A home-made batched mechanism: the sum of a dataset of values in [0, 1] plus N(0, (factor·σ)²)."""

    def mechanism(dataset, n, rng):
        return float(np.sum(np.clip(dataset, 0.0, 1.0))) + rng.normal(0.0, noise_factor * SIGMA, size=n)

    return mechanism


PAIR = (np.array([0.0, 0.3, 0.9]), np.array([1.0, 0.3, 0.9]))


def test_a_correct_mechanism_passes_and_a_half_noise_copy_is_refuted() -> None:
    passed = assert_audit_passes(noisy_sum(1.0), PAIR, 1.0, 1e-5, gaussian_claim=True)
    assert passed.verdict == NO_VIOLATION_FOUND
    assert passed.trials == DEFAULT_TRIALS and passed.confidence == DEFAULT_CONFIDENCE
    refuted = assert_audit_refutes(noisy_sum(0.5), PAIR, 1.0, 1e-5, gaussian_claim=True)
    assert refuted.verdict == VIOLATION
    with pytest.raises(AssertionError, match=r"refutes the claim \(ε, δ\) = \(1, 1e-05\):\nverdict: VIOLATION"):
        assert_audit_passes(noisy_sum(0.5), PAIR, 1.0, 1e-5, gaussian_claim=True)
    with pytest.raises(AssertionError, match=r"did not refute(.|\n)*verdict: NO VIOLATION FOUND(.|\n)*ceiling"):
        assert_audit_refutes(noisy_sum(1.0), PAIR, 1.0, 1e-5, gaussian_claim=True)


def test_dpverify_mechanisms_default_to_their_own_claim_and_worst_case_pair() -> None:
    result = assert_audit_passes(GaussianMechanism(1.0, SIGMA))
    assert result.gaussian_claim and result.claimed_epsilon <= 1.0 and result.pair_label == "0 vs Delta e1"
    assert_audit_refutes(GaussianMechanism(1.0, 0.5 * SIGMA), epsilon=1.0)
    laplace = calibrate_laplace(0.5, 1.0)
    assert not assert_audit_passes(laplace).gaussian_claim
    assert_audit_refutes(LaplaceMechanism(1.0, 0.5), epsilon=0.5)  # scale ε instead of 1/ε


def test_deterministic_under_a_seed_and_from_a_generator(dp_rng) -> None:
    a = assert_audit_passes(noisy_sum(1.0), PAIR, 1.0, 1e-5, trials=20_000, seed=7)
    assert a == assert_audit_passes(noisy_sum(1.0), PAIR, 1.0, 1e-5, trials=20_000, seed=7)
    assert a != assert_audit_passes(noisy_sum(1.0), PAIR, 1.0, 1e-5, trials=20_000, seed=8)
    seed = np.random.default_rng(3).integers(0, 2**63 - 1)
    from_rng = assert_audit_passes(noisy_sum(1.0), PAIR, 1.0, 1e-5, trials=20_000, seed=np.random.default_rng(3))
    assert from_rng.seed == seed
    assert assert_audit_passes(noisy_sum(1.0), PAIR, 1.0, 1e-5, trials=20_000, seed=dp_rng).seed >= 0


def test_several_candidate_pairs_and_a_closure_need_no_pickling() -> None:
    offsets = {"first": 0.0, "second": 0.0}

    def reads_one_user_twice(dataset, n, rng):  # a closure: fine in the calling process
        return dataset[0] + dataset[1] * (1 + offsets["second"]) + rng.normal(0.0, SIGMA, size=n)

    pairs = [NeighbourPair((0.0, 0.0), (1.0, 0.0), "user 0"), NeighbourPair((0.0, 0.0), (0.0, 1.0), "user 1")]
    assert_audit_passes(reads_one_user_twice, pairs, 1.0, 1e-5, gaussian_claim=True)
    offsets["second"] = 1.0  # user 1's value now moves the output by 2: sensitivity 2, not 1
    result = assert_audit_refutes(reads_one_user_twice, pairs, 1.0, 1e-5, gaussian_claim=True)
    assert result.pair_label == "user 1"


def test_bad_input() -> None:
    with pytest.raises(InvalidParameterError, match="neighbours"):
        assert_audit_passes(noisy_sum(1.0), None, 1.0, 1e-5)
    with pytest.raises(InvalidParameterError, match="epsilon"):
        assert_audit_passes(noisy_sum(1.0), PAIR)
    with pytest.raises(InvalidParameterError, match="mechanism"):
        assert_audit_passes("not a mechanism", PAIR, 1.0, 1e-5)
    with pytest.raises(InvalidParameterError, match="seed"):
        assert_audit_passes(noisy_sum(1.0), PAIR, 1.0, 1e-5, seed=-1)
    with pytest.raises(InvalidParameterError, match="trials"):
        assert_audit_passes(noisy_sum(1.0), PAIR, 1.0, 1e-5, trials=1)


@pytest.mark.slow
def test_agents_pass_and_a_planted_agent_bug_is_refuted() -> None:
    from dpverify.audits.agent_zoo import luyo_vector_noise_never_added

    passed = assert_audit_passes("luyo", notion="billboard", epsilon=1.0)
    assert passed.verdict == NO_VIOLATION_FOUND and passed.trials == DEFAULT_AGENT_TRIALS
    assert passed.spec.env == "random-linear" and passed.spec.episodes == 3
    refuted = assert_audit_refutes(luyo_vector_noise_never_added, notion="billboard", epsilon=1.0)
    assert refuted.spec.agent == "dpverify.audits.agent_zoo:luyo_vector_noise_never_added"
    assert "agent: dpverify.audits.agent_zoo" in refuted.summary()  # what a failing assert_audit_passes shows


def test_agent_audit_bad_input() -> None:
    with pytest.raises(InvalidParameterError, match="neighbours"):
        assert_audit_passes("luyo", PAIR, 1.0, notion="jdp")
    with pytest.raises(InvalidParameterError, match="epsilon"):
        assert_audit_passes("luyo", notion="jdp")
    with pytest.raises(InvalidParameterError, match="agent"):
        assert_audit_passes("no-such-agent", notion="jdp", epsilon=1.0)

    def local_factory(mdp, num_episodes, rng, /, *, billboard=None, **options):  # not importable by name
        raise AssertionError("never built")

    with pytest.raises(InvalidParameterError, match="importable by name"):
        assert_audit_passes(local_factory, notion="jdp", epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="notion"):
        assert_audit_passes("luyo", notion="central", epsilon=1.0)
    with pytest.raises(InvalidParameterError, match="env applies to agent audits only"):
        assert_audit_passes(noisy_sum(1.0), PAIR, 1.0, 1e-5, env="random-linear")
    with pytest.raises(InvalidParameterError, match="episodes"):
        assert_audit_refutes(noisy_sum(0.5), PAIR, 1.0, 1e-5, episodes=5)
