"""Every registered private agent satisfies the private-agent contract (dpverify.testing.check_private_agent)."""

from __future__ import annotations

import pytest

from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp
from dpverify.agents.registry import AGENTS, private_agents
from dpverify.testing import CONTRACT_PROPERTIES, assert_private_agent

ENVIRONMENTS = {
    "linear": lambda: min2021_mdp(horizon=4, num_actions=5),
    "mixture": lambda: zhou2021_mixture_mdp(horizon=3),
}
#: Options that make each agent spend its whole budget in a short run (Ngo et al. update adaptively: a
#: generous ε and two updates reach the cap within K = 20 episodes).
OPTIONS = {"ngo": {"epsilon": 100.0, "max_updates": 2}}


def test_the_registry_lists_the_private_agents() -> None:
    assert {"dp-lsvi-ucb++", "luyo", "ngo", "ldp-ucrl-vtr"} <= set(private_agents())


@pytest.mark.parametrize("name", private_agents())
def test_registered_private_agent_meets_the_contract(name: str) -> None:
    entry = AGENTS[name]
    options = OPTIONS.get(name, {"epsilon": 1.0})
    result = assert_private_agent(entry.factory, ENVIRONMENTS[entry.env_kind](), num_episodes=20, options=options,
                                  name=name)
    assert [p.name for p in result.properties] == list(CONTRACT_PROPERTIES)
    # every registered agent declares its feature-norm bound: no property may be "not applicable" (the
    # agents' own test files rely on this check for the refusal of oversized features)
    assert all(p.status == "pass" for p in result.properties), result.summary()
    assert result.notion == ("ldp" if name == "ldp-ucrl-vtr" else "jdp")
