"""Every registered private agent satisfies the private-agent contract (dpverify.testing.check_private_agent)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp import DpLsviUcbPlusPlus
from dpverify.agents.envs.bandit_instances import linear_bandit
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp
from dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr import LdpUcrlVtr
from dpverify.agents.registry import AGENTS, private_agents
from dpverify.testing import CONTRACT_PROPERTIES, assert_private_agent, check_private_agent

ENVIRONMENTS = {
    "linear": lambda: min2021_mdp(horizon=4, num_actions=5),
    "mixture": lambda: zhou2021_mixture_mdp(horizon=3),
    "bandit": lambda: linear_bandit(dim=3, num_arms=4, num_contexts=3),
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


    assert result.notion == ("ldp" if name in ("ldp-ucrl-vtr", "ldp-linucb") else "jdp")


class OffByOneStage(DpLsviUcbPlusPlus):
    """Bug: each stage's vector sensitivities computed for the next stage's target range (targets in
    [0, H − h − 1], 1-based, where the agent's targets reach H − h): too little noise by that ratio."""

    def release_schedule(self, mdp: Any, config: Any) -> Any:
        schedule = super().release_schedule(mdp, config)
        H = mdp.horizon
        specs = tuple(
            dataclasses.replace(s, sensitivity=s.sensitivity * ((H - s.stages[0] - 1) / (H - s.stages[0]))
                                ** (2 if s.family == "w_bar" else 1))
            if s.stages is not None and s.stages[0] < H - 1 else s
            for s in schedule.statistics)
        return dataclasses.replace(schedule, statistics=specs)


def test_dp_lsvi_ucb_pp_with_stage_by_stage_sensitivities_meets_the_contract() -> None:
    # The white-box checks replay users in the audit environment, whose targets reach each stage's cap: a
    # release that moved by more than its (smaller, stage-by-stage) recorded sensitivity would fail them.
    options = {"epsilon": 1.0, "sensitivity_model": "staged"}
    result = assert_private_agent(AGENTS["dp-lsvi-ucb++"].factory, ENVIRONMENTS["linear"](), num_episodes=20,
                                  options=options, name="staged")
    assert all(p.status == "pass" for p in result.properties), result.summary()
    # The detector: sensitivities one stage too small are caught by the replay, release by release.
    buggy = check_private_agent(OffByOneStage.from_options, ENVIRONMENTS["linear"](), num_episodes=20,
                                options=options, name="off by one stage")
    failed = {p.name for p in buggy.properties if p.status == "fail"}
    assert "sensitivity_within_the_record" in failed, buggy.summary()


class OffByOneStageLdp(LdpUcrlVtr):
    """Bug: LDP-UCRL-VTR's staged messages calibrated for the next stage's range (at 1-based stage
    h, F_{h+1} = (H − h − 1)·L and targets in [0, H − h − 1], where the agent's reach (H − h)·L and
    H − h): each stage's sensitivities ((H − h − 1)/(H − h))² too small, and its noise with them."""

    def release_schedule(self, mdp: Any, config: Any) -> Any:
        schedule = super().release_schedule(mdp, config)
        H = mdp.horizon
        specs = tuple(
            dataclasses.replace(s, sensitivity=s.sensitivity
                                * ((H - s.stages[0] - 1) / (H - s.stages[0])) ** 2)
            if s.stages is not None and s.stages[0] < H - 1 else s
            for s in schedule.statistics)
        return dataclasses.replace(schedule, statistics=specs)


def test_ldp_ucrl_vtr_with_stage_by_stage_sensitivities_meets_the_contract() -> None:
    # The white-box replay of the Zhou et al. environment's own canaries (its neighbour search does
    # not use the audit mixture MDP) moves stage 1's Gram message by 0.70 of its staged sensitivity
    # √2·F_1² at H = 3: enough to clear the correct agent and to catch one whose stage sensitivities
    # are a stage too small, release by release (measured: 2.82 × the buggy recorded sensitivity,
    # ε ≥ 1.58 witnessed against the claimed 1).
    options = {"epsilon": 1.0, "sensitivity_model": "staged"}
    factory = AGENTS["ldp-ucrl-vtr"].factory
    result = assert_private_agent(factory, ENVIRONMENTS["mixture"](), num_episodes=20,
                                  options=options, name="staged")
    assert all(p.status == "pass" for p in result.properties), result.summary()
    buggy = check_private_agent(OffByOneStageLdp.from_options, ENVIRONMENTS["mixture"](),
                                num_episodes=20, options=options, name="off by one stage")
    failed = {p.name for p in buggy.properties if p.status == "fail"}
    expected = {"sensitivity_within_the_record", "witnessed_pairs_within_the_claim"}
    assert expected <= failed, buggy.summary()
