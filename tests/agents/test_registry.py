"""The registry of agents and environments, and the protocol every registered private agent follows."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dpverify.agents.base import run_episodes
from dpverify.agents.billboard import Billboard
from dpverify.agents.private import PrivateAgent
from dpverify.agents.registry import AGENTS, ENVIRONMENTS, private_agents, register_agent
from dpverify.errors import InvalidParameterError

SMALL_ENV = {"linear": ("min2021", {"horizon": 3, "num_actions": 4}), "mixture": ("zhou2021", {"horizon": 3, "dim": 3})}
RAW_ENV = {"linear": ("min2021-raw", {"horizon": 3, "num_actions": 4}),
           "mixture": ("zhou2021", {"horizon": 3, "dim": 3})}


def small_env(kind: str, episodes: int, table=SMALL_ENV):
    name, options = table[kind]
    return ENVIRONMENTS[name].factory(episodes, **options)


def test_every_paper_agent_is_registered() -> None:
    assert {"lsvi-ucb", "lsvi-ucb++", "ucrl-vtr"} <= set(AGENTS) - set(private_agents())
    assert set(private_agents()) == {"dp-lsvi-ucb++", "luyo", "ngo", "ldp-ucrl-vtr"}
    assert {"min2021", "min2021-raw", "zhou2021", "random-linear", "random-mixture"} <= set(ENVIRONMENTS)


@pytest.mark.parametrize("name", ["dp-lsvi-ucb++", "luyo", "ngo", "ldp-ucrl-vtr"])
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
    claim = agent.claimed_guarantee()
    accounted = agent.ledger.guarantee(agent.config.delta, agent.config.conversion)
    assert settings["claimed_epsilon"] == claim.epsilon <= 1.0 and settings["claimed_delta"] == claim.delta
    assert settings["accounted_epsilon"] == accounted.epsilon <= claim.epsilon * (1 + 1e-12)
    assert settings["accounted_delta"] == accounted.delta == 1e-5
    assert len(billboard.history()) == agent.ledger.n_releases
    with pytest.raises(InvalidParameterError, match="episodes"):
        agent.begin_episode()
    with pytest.raises(InvalidParameterError, match="relation"):
        entry.factory(mdp, K, np.random.default_rng(0), billboard=Billboard("add-remove-one"), epsilon=1.0)


@pytest.mark.parametrize("name", ["dp-lsvi-ucb++", "luyo", "ngo", "ldp-ucrl-vtr"])
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
