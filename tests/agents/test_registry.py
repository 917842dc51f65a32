"""The registry of agents and environments, and the protocol every registered private agent follows."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dpverify.accounting import pure_epsilon
from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.core.private import PrivateAgent
from dpverify.agents.registry import (
    AGENTS,
    ENVIRONMENTS,
    AgentEntry,
    BatchedTwin,
    agent_factory,
    build_agent,
    build_environment,
    private_agents,
    register_agent,
    schedules,
)
from dpverify.claims import PrivacyClaim
from dpverify.errors import InvalidParameterError

BANDIT_ENV = ("linear-bandit", {"dim": 3, "num_arms": 3, "num_contexts": 2})
SMALL_ENV = {"linear": ("min2021", {"horizon": 3, "num_actions": 4}), "mixture": ("zhou2021", {"horizon": 3, "dim": 3}),
             "bandit": BANDIT_ENV}
RAW_ENV = {"linear": ("min2021-raw", {"horizon": 3, "num_actions": 4}),
           "mixture": ("zhou2021", {"horizon": 3, "dim": 3}), "bandit": BANDIT_ENV}
PRIVATE = ["dp-lsvi-ucb++", "luyo", "ngo", "ldp-ucrl-vtr", "jdp-linucb", "ldp-linucb", "dp-ucb"]


def small_env(kind: str, episodes: int, table=SMALL_ENV):
    name, options = table[kind]
    return ENVIRONMENTS[name].factory(episodes, **options)


def test_every_paper_agent_is_registered() -> None:
    assert {"lsvi-ucb", "lsvi-ucb++", "ucrl-vtr", "linucb", "ucb"} <= set(AGENTS) - set(private_agents())
    assert set(private_agents()) == set(PRIVATE)
    assert {"min2021", "min2021-raw", "zhou2021", "random-linear", "random-mixture", "bernoulli-bandit",
            "linear-bandit"} <= set(ENVIRONMENTS)


@pytest.mark.parametrize("name", PRIVATE)
def test_private_agent_protocol(name: str) -> None:
    entry = AGENTS[name]
    K = 6
    mdp = small_env(entry.env_kind, K)
    billboard = Billboard("replace-one", keep_history=True)
    agent = entry.factory(mdp, K, np.random.default_rng(0), billboard=billboard, epsilon=1.0)
    assert isinstance(agent, PrivateAgent) and agent.billboard is billboard and agent.ledger is billboard.ledger
    assert agent.privacy_notion in ("jdp", "ldp")
    assert (agent.config.num_episodes, agent.config.epsilon, agent.config.delta, agent.config.relation) == (
        K, 1.0, 1e-5, "replace-one")
    run_episodes(mdp, agent, K, np.random.default_rng(1))
    settings = agent.settings()
    claim = PrivacyClaim.of(agent.claimed_guarantee())
    if claim.measure == "pure":  # a pure ε-DP claim (dp-ucb): δ = 0 on both sides, the ledger's pure ε
        stated, accounted = (claim.value, 0.0), (pure_epsilon(agent.ledger)[0], 0.0)
    else:
        guarantee = agent.ledger.guarantee(agent.config.delta, agent.config.conversion)
        stated, accounted = (claim.value, claim.delta), (guarantee.epsilon, guarantee.delta)
        assert accounted[1] == 1e-5
    assert (settings["claimed_epsilon"], settings["claimed_delta"]) == stated and stated[0] <= 1.0
    assert (settings["accounted_epsilon"], settings["accounted_delta"]) == accounted
    assert accounted[0] <= stated[0] * (1 + 1e-12)
    assert len(billboard.history()) == agent.ledger.n_releases
    with pytest.raises(InvalidParameterError, match="episodes"):
        agent.begin_episode()
    with pytest.raises(InvalidParameterError, match="relation"):
        entry.factory(mdp, K, np.random.default_rng(0), billboard=Billboard("add-remove-one"), epsilon=1.0)


@pytest.mark.parametrize("name", PRIVATE)
def test_private_agents_refuse_a_larger_feature_norm(name: str) -> None:
    entry = AGENTS[name]
    mdp = small_env(entry.env_kind, 4, RAW_ENV)
    with pytest.raises(InvalidParameterError, match="feature_norm_bound"):
        entry.factory(mdp, 4, np.random.default_rng(0), epsilon=1.0,
                      feature_norm_bound=0.5 * mdp.feature_norm_bound)


def test_registration_rules() -> None:
    with pytest.raises(InvalidParameterError, match="already registered"):
        register_agent("luyo", lambda *a, **k: None, "linear", "again")
    with pytest.raises(InvalidParameterError, match="env_kind"):
        register_agent("bad-kind", lambda *a, **k: None, "tabular", "")
    assert "bad-kind" not in AGENTS


def test_naming_the_agents_imports_none_of_them() -> None:
    code = ("import sys, dpverify.agents.registry as r; "
            "print(sorted(m for m in sys.modules if m.startswith('dpverify.agents.') and 'envs' not in m))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['dpverify.agents.registry']"


# ---- the card and the one way to build ---------------------------------------------------------------------


def test_every_private_agent_has_a_full_card() -> None:
    from dpverify.bounds import REGISTRY

    for name in private_agents():
        entry = AGENTS[name]
        assert entry.notion in ("jdp", "ldp") and entry.counterpart in AGENTS and not AGENTS[entry.counterpart].private
        assert entry.bound in REGISTRY
    assert AGENTS["ldp-ucrl-vtr"].notion == "ldp" and AGENTS["dp-lsvi-ucb++"].batched is not None
    assert set(schedules()) == {"dp-lsvi-ucb++", "ldp-ucrl-vtr", "jdp-linucb", "ldp-linucb", "dp-ucb"}


def test_a_card_is_validated() -> None:
    with pytest.raises(InvalidParameterError, match="notion"):
        AgentEntry("x", lambda *a, **k: None, "linear", "", private=True)
    with pytest.raises(InvalidParameterError, match="private"):
        AgentEntry("x", lambda *a, **k: None, "linear", "", notion="jdp")
    with pytest.raises(InvalidParameterError, match="BatchedTwin"):
        AgentEntry("x", lambda *a, **k: None, "linear", "", private=True, notion="jdp", batched="module:twin")
    with pytest.raises(InvalidParameterError, match="has no field colour"):
        register_agent("card-test", lambda *a, **k: None, "linear", "", colour="red")
    assert "card-test" not in AGENTS


def test_every_private_agent_has_a_batched_twin_and_says_what_it_covers() -> None:
    assert all(AGENTS[name].batched is not None for name in private_agents())
    twin = AGENTS["dp-lsvi-ucb++"].batched
    assert twin is not None and twin.applies({"epsilon": 1.0}) and twin.applies({"relation": "add-remove-one"})
    assert twin.applies({"aggregation": "tree"})  # the binary-tree variant has its twin too
    assert not twin.applies({"aggregation": "honaker"})  # the dyadic and factorised counters run the reference


def test_one_wording_for_every_builder() -> None:
    with pytest.raises(InvalidParameterError, match="must be one of .*min2021") as info:
        build_environment("nope", 3)
    assert info.value.parameter == "env"
    with pytest.raises(InvalidParameterError, match="--env-option is not accepted by min2021") as info:
        build_environment("min2021", 3, {"colour": "red"})
    with pytest.raises(InvalidParameterError, match="or module.path:factory") as info:
        agent_factory("nope", parameter="--agent")
    assert info.value.parameter == "--agent"
    mdp = build_environment("min2021", 3, (("horizon", 2),))
    with pytest.raises(InvalidParameterError, match="--agent-option is not accepted by lsvi-ucb"):
        build_agent("lsvi-ucb", mdp, 3, np.random.default_rng(0), {"colour": "red"})
    with pytest.raises(InvalidParameterError, match="must be a linear mixture MDP for agent ucrl-vtr"):
        build_agent("ucrl-vtr", mdp, 3, np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="billboard=") as info:
        build_agent("lsvi-ucb", mdp, 3, np.random.default_rng(0), billboard=Billboard("replace-one"))
    assert info.value.parameter == "agent"
    plain = build_agent("lsvi-ucb", mdp, 3, np.random.default_rng(0), billboard=Billboard("replace-one"),
                        billboard_required=False)
    assert plain.begin_episode().shape == (2, mdp.num_states)


def test_a_new_private_agent_needs_its_module_its_registration_and_its_test() -> None:
    """The recipe of CONTRIBUTING.md, followed once: a registered agent with a card is known to ``verify`` (its
    notion, counterpart and bound), to the two-world audits (its batched twin) and to the runner, with no
    change in dpverify/verify, dpverify/audit or dpverify/cli."""
    from dpverify.agent_audit.runs import AgentSetup, _is_batched
    from dpverify.verify.target import bound_of, counterpart_for, notion_of, resolve_agent

    def covers(options):
        return options.get("relation") != "add-remove-one"

    register_agent("recipe-agent", "dpverify.agents.tree_lsvi.luyo:LuyoAgent.from_options", "linear",
                   "a new private agent",
                   private=True, notion="jdp", counterpart="lsvi-ucb", bound="luyo-2021/linear-mdp",
                   batched=BatchedTwin("dpverify.agents.dp_lsvi_ucb_pp.batched_tree:build_twin", covers))
    try:
        target = resolve_agent("recipe-agent")
        mdp = build_environment("min2021", 4, {"horizon": 2})
        agent = build_agent("recipe-agent", mdp, 4, np.random.default_rng(0), {"epsilon": 1.0},
                            billboard=Billboard("replace-one"))
        assert (notion_of(target, agent), counterpart_for(target, agent, mdp), bound_of(target, agent)) == (
            "jdp", "lsvi-ucb", "luyo-2021/linear-mdp")
        assert target.batched({}) and _is_batched(AgentSetup("recipe-agent", "min2021", 4, (), ()), None)
        assert not _is_batched(AgentSetup("recipe-agent", "min2021", 4, (), (("relation", "add-remove-one"),)), None)
        assert not _is_batched(AgentSetup("recipe-agent", "min2021", 4, (), ()), False)  # batched=False: never
        assert "recipe-agent" in private_agents()
    finally:
        del AGENTS["recipe-agent"]
