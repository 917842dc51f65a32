"""UCRL-VTR (dpverify.agents.nonprivate.ucrl_vtr): learns on linear mixture MDPs, changes its policy, records its
radius."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.base import run_episodes
from dpverify.agents.envs.random_mdps import random_linear_mixture_mdp
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp
from dpverify.agents.nonprivate.ucrl_vtr import UcrlVtr, UcrlVtrConfig
from dpverify.errors import InvalidParameterError


def run(mdp, episodes: int, seed: int, **options):
    agent_seed, env_seed = np.random.SeedSequence(seed).spawn(2)
    agent = UcrlVtr(mdp, UcrlVtrConfig(episodes, **options), np.random.default_rng(agent_seed))
    regret, changed = run_episodes(mdp, agent, episodes, np.random.default_rng(env_seed))
    return agent, regret, changed


@pytest.mark.parametrize("seed", range(4))
def test_learns_on_random_mixture(seed: int) -> None:
    mdp = random_linear_mixture_mdp(np.random.default_rng(1), num_states=4, num_actions=3, dim=3, horizon=4,
                                    concentration=0.3)
    _, regret, changed = run(mdp, 400, seed)
    fifth = len(regret) // 5
    assert regret[-fifth:].mean() <= 0.5 * regret[:fifth].mean()
    assert changed.sum() >= 5


def test_runs_on_zhou_instance_and_records_settings() -> None:
    mdp = zhou2021_mixture_mdp(num_episodes=100)
    agent, regret, changed = run(mdp, 100, 0, beta_multiplier=0.2)
    assert np.all(regret >= -1e-12) and changed.sum() > 0
    settings = agent.settings()
    assert settings["beta_multiplier"] == 0.2 and settings["agent"] == "ucrl-vtr"
    assert settings["beta_final"] == pytest.approx(0.2 * settings["theory_beta_final"])
    assert settings["theta_norm_bound_used"] == pytest.approx(np.sqrt(5))


def test_invalid_config() -> None:
    with pytest.raises(InvalidParameterError, match="theta_norm_bound"):
        UcrlVtrConfig(10, theta_norm_bound=-1)


def test_first_policy_breaks_ties_at_random() -> None:
    mdp = zhou2021_mixture_mdp(num_episodes=100)
    policies = [UcrlVtr(mdp, UcrlVtrConfig(10), np.random.default_rng(s)).begin_episode() for s in range(5)]
    assert len({p.tobytes() for p in policies}) > 1 and any(np.any(p != 0) for p in policies)
