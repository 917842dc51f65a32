"""The agent zoo as a regression suite: every planted bug flagged by the routes that can see it, no twin.

The default suite runs the batched quick cases at reduced size; the sensitivity bugs and the agents run
one at a time (Luyo et al., LDP-UCRL-VTR) run under ``slow``; the per-episode budget bug (K = 65,
1.2·10⁴ trials per side) runs in ``dpverify audit agent-zoo`` and ``benchmarks/bench_agent_audit.py zoo``
only.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.audit.result import NO_VIOLATION_FOUND, VIOLATION
from dpverify.audits.agent_zoo import cases, run_agent_zoo

QUICK = ("noise-reused", "noise-reused (twin)", "jdp-leak", "jdp-leak (twin)")
#: The bugs run under ``slow``, each with its twin, at a scale that still flags the bug with a margin (seed
#: 0, claim ε = 1): ε lower bounds ≈ 12.5 (targets clipped), 1.56 (features of norm 3), 17.6 (Luyo et
#: al., LDP-UCRL-VTR; 20.2 at scale 0.5).
SLOW = {"targets-clipped-above": 0.1, "feature-norm-3": 0.5, "luyo-vector-noise": 0.35, "ldp-unnoised-message": 0.35}


def _check(outcomes: list) -> None:
    bad = [o.row() for o in outcomes if not o.as_expected]
    assert not bad, bad


def test_every_bug_has_a_twin_and_a_route_that_flags_it() -> None:
    all_cases = cases()
    bugs = {c.name for c in all_cases if c.bug}
    twins = {c.name for c in all_cases if not c.bug}
    assert {"noise-reused", "targets-clipped-above", "feature-norm-3", "jdp-leak", "budget-per-episode",
            "luyo-vector-noise", "ldp-unnoised-message"} <= bugs
    for bug in bugs:
        assert any(c.expected == VIOLATION for c in all_cases if c.name == bug)
        assert f"{bug} (twin)" in twins
    assert all(c.expected == NO_VIOLATION_FOUND for c in all_cases if not c.bug)
    # the JDP leak is invisible to the billboard route and must be caught by the JDP route
    leak = {c.spec.notion: c.expected for c in all_cases if c.name == "jdp-leak"}
    assert leak == {"billboard": NO_VIOLATION_FOUND, "jdp": VIOLATION}


def test_quick_zoo() -> None:
    _check(run_agent_zoo(scale=0.2, only=QUICK))


@pytest.mark.slow
def test_sensitivity_bugs_and_the_other_agents() -> None:
    outcomes = []
    for bug, scale in SLOW.items():
        outcomes += run_agent_zoo(scale=scale, only=(bug, f"{bug} (twin)"))
    assert len(outcomes) == 2 * len(SLOW)
    _check(outcomes)


def test_half_sensitivity_draws_half_the_noise_of_the_correct_agent() -> None:
    # the planted bug of docs/make_canary_audits.py: the same draws, scaled by 1/2 (noise for Δ/2)
    from dpverify.agents.core.batching import BatchRandomness
    from dpverify.agents.dp_lsvi_ucb_pp.batched import BatchedDpLsviUcbPlusPlus
    from dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp import DpLsviUcbPlusPlusConfig
    from dpverify.agents.registry import ENVIRONMENTS
    from dpverify.audits.agent_zoo import VARIANTS, HalfSensitivity

    assert VARIANTS["half-sensitivity"] is HalfSensitivity
    mdp = ENVIRONMENTS["random-linear"].factory(3, dim=3, horizon=2, num_actions=2, num_states=3, seed=3)
    config = DpLsviUcbPlusPlusConfig(3, epsilon=1.0, delta=1e-5)
    correct, half = (cls(mdp, config, BatchRandomness(np.random.default_rng(5), 4))
                     for cls in (BatchedDpLsviUcbPlusPlus, HalfSensitivity))
    assert np.array_equal(half.gram_noise(0), 0.5 * correct.gram_noise(0))
    assert np.array_equal(half.vector_noise("w_hat", 1), 0.5 * correct.vector_noise("w_hat", 1))


@pytest.mark.parametrize(("correct_name", "bug_name"), [("luyo", "luyo-half-sensitivity"),
                                                        ("ngo", "ngo-half-sensitivity")])
def test_tree_agents_half_sensitivity_draws_half_the_noise(correct_name: str, bug_name: str) -> None:
    # the same draws, scaled by 1/2, for every tree node the agent releases
    from dpverify.agent_audit.runs import AgentSetup
    from dpverify.agents.core.batching import BatchRandomness
    from dpverify.agents.registry import ENVIRONMENTS
    from dpverify.audits.agent_zoo import BatchedVariant

    mdp = ENVIRONMENTS["random-linear"].factory(3, dim=3, horizon=2, num_actions=2, num_states=3, seed=3)
    setup = AgentSetup(correct_name, "random-linear", 3, (), (("delta", 1e-5), ("epsilon", 1.0)))
    correct, half = (BatchedVariant(name)(setup, mdp, BatchRandomness(np.random.default_rng(5), 4), (1,))
                     for name in (correct_name, bug_name))
    assert type(half).__name__.endswith("HalfSensitivity")
    mechanisms = [correct.gram_mechanism, getattr(correct, "next_state_mechanism", correct.gram_mechanism)]
    for mechanism, shape in zip(mechanisms, [(3, 3), (9,) if correct_name == "luyo" else (3, 3)], strict=True):
        assert np.array_equal(half._noise(mechanism, shape), 0.5 * correct._noise(mechanism, shape))


@pytest.mark.parametrize(("bug_name", "factor"),
                         [("ldp-half-sensitivity", 2.0), ("ldp-quarter-sensitivity", 4.0)])
def test_ldp_scaled_sensitivity_draws_the_noise_of_the_correct_agent_over_its_factor(
        bug_name: str, factor: float) -> None:
    # the same draws for every message, the GOE matrix and the Gaussian vector divided by the factor
    from dpverify.agent_audit.runs import AgentSetup
    from dpverify.agents.core.batching import BatchRandomness
    from dpverify.agents.ldp_ucrl_vtr.batched import BatchedLdpUcrlVtr
    from dpverify.agents.registry import ENVIRONMENTS
    from dpverify.audits.agent_zoo import BatchedVariant, LdpScaledSensitivity

    mdp = ENVIRONMENTS["random-mixture"].factory(3, dim=3, horizon=2, num_actions=1, num_states=3,
                                                 seed=3)
    setup = AgentSetup("ldp-ucrl-vtr", "random-mixture", 3, (), (("delta", 1e-5), ("epsilon", 1.0)))
    correct, bug = (BatchedVariant(name)(setup, mdp, BatchRandomness(np.random.default_rng(5), 4),
                                         (1,))
                    for name in ("ldp-ucrl-vtr", bug_name))
    assert type(correct) is BatchedLdpUcrlVtr and isinstance(bug, LdpScaledSensitivity)
    assert bug.factor == factor
    for expected, drawn in zip(correct.message_noise(), bug.message_noise(), strict=True):
        assert np.array_equal(drawn, expected / factor)
