"""Resource estimates of agent audits and verifications: refused before anything is built, the option named."""

from __future__ import annotations

import pytest

from dpverify.agent_audit import AgentAuditSpec, audit_agent
from dpverify.agents.envs import min2021_mdp
from dpverify.audit.resources import require_episodes, run_operations, users_memory
from dpverify.errors import InvalidParameterError
from dpverify.verify import verify

MDP = min2021_mdp(horizon=20, num_actions=100)


def test_the_estimates_follow_the_sizes_they_name() -> None:
    one = users_memory(MDP, 1)
    assert one >= 8 * 20 * 2 * 100  # a tape's next-state table
    assert users_memory(MDP, 1000) == pytest.approx(1000 * one)
    assert run_operations(MDP, 10) == pytest.approx(10 * 20 * (10 * 10 + 2 * 100 * 10))
    assert run_operations(min2021_mdp(horizon=2, num_actions=100), 10) < run_operations(MDP, 10)


def test_a_command_that_fits_passes_and_one_that_does_not_names_its_option(monkeypatch: pytest.MonkeyPatch) -> None:
    require_episodes("--episodes", 1000, MDP, 1000, 31, "the quick verification")  # the README's size fits
    with pytest.raises(InvalidParameterError, match=r"--episodes is too large: the audit: .* users' tapes"):
        require_episodes("--episodes", 10**12, MDP, 10**12, 1, "the audit")
    monkeypatch.setenv("DPVERIFY_WORK_LIMIT", "1e6")
    with pytest.raises(InvalidParameterError, match=r"--trials is too large: .* operations, above the work limit"):
        require_episodes("--trials", 10**4, MDP, 100, 2e4, "the two-world audit")


def test_verify_refuses_an_impossible_k_before_building_anything() -> None:
    with pytest.raises(InvalidParameterError, match="--episodes is too large: the quick verification"):
        verify("dp-lsvi-ucb++", "min2021", 1.0, 1e-5, episodes=10**12)


@pytest.mark.slow
def test_audit_agent_refuses_trials_and_canaries_that_cannot_fit() -> None:
    common = {"agent": "ngo", "env": "min2021", "notion": "billboard", "epsilon": 1.0, "delta": 1e-5}
    with pytest.raises(InvalidParameterError, match="--episodes is too large"):
        audit_agent(AgentAuditSpec(**common, episodes=10**12, trials=400))
    with pytest.raises(InvalidParameterError, match="--trials is too large: the two-world audit"):
        audit_agent(AgentAuditSpec(**common, episodes=10, trials=10**12))
    with pytest.raises(InvalidParameterError, match=r"--canaries is too large: the one-run audit's canary views"):
        audit_agent(AgentAuditSpec(**common, episodes=10_000, route="one-run", trials=1, canaries=5000, window=5000))
