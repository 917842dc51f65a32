"""LDP-LinUCB (Zheng et al. 2020): each user's two messages, local DP only, and the private-agent contract."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.agents.bandits.ldp_linucb import LdpLinUcb, LdpLinUcbConfig, ldp_linucb_schedule
from dpverify.agents.core.base import run_episodes
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.envs.bandit_instances import linear_bandit
from dpverify.errors import InvalidParameterError
from dpverify.testing import check_private_agent


def test_schedule_two_messages_per_user() -> None:
    gram, target = ldp_linucb_schedule(100, 4).statistics
    assert (gram.kind, gram.dim, gram.users.kind, gram.sensitivity) == ("symmetric-matrix", 4, "current",
                                                                         pytest.approx(math.sqrt(2)))
    assert (target.kind, target.users.kind, target.sensitivity) == ("vector", "current", 2.0)


def test_user_t_sends_its_two_messages_and_the_ledger_meets_the_claim() -> None:
    bandit = linear_bandit(dim=3, num_arms=3, num_contexts=2, seed=1)
    K = 20
    board = Billboard("replace-one", keep_history=True, keep_noise=True)
    agent = LdpLinUcb(bandit, LdpLinUcbConfig(K, epsilon=2.0), np.random.default_rng(0), board)
    run_episodes(bandit, agent, K, np.random.default_rng(1))
    for t in (1, 7, K):
        assert [(r.family, r.value.shape) for r in board.messages_of(t)] == [("gram", (3, 3)), ("target", (3,))]
    assert agent.ledger.guarantee(1e-5, "exact").epsilon == pytest.approx(agent.claimed_guarantee().epsilon)
    assert agent.claimed_guarantee().epsilon <= 2.0


def test_local_dp_is_replace_one_only() -> None:
    with pytest.raises(InvalidParameterError, match="local DP") as info:
        LdpLinUcbConfig(10, epsilon=1.0, relation="add-remove-one")
    assert info.value.parameter == "relation"


def test_the_contract_holds() -> None:
    bandit = linear_bandit(dim=3, num_arms=3, num_contexts=3, seed=0)
    for relation in ("replace-one",):
        result = check_private_agent(LdpLinUcb.from_options, bandit, num_episodes=12,
                                     options={"epsilon": 1.0, "relation": relation}, whitebox=False)
        assert result.passed, result.summary()


@pytest.mark.slow
def test_the_contract_holds_with_its_white_box_checks() -> None:
    bandit = linear_bandit(dim=3, num_arms=3, num_contexts=3, seed=0)
    for relation in ("replace-one",):
        result = check_private_agent(LdpLinUcb.from_options, bandit, num_episodes=24,
                                     options={"epsilon": 1.0, "relation": relation})
        assert result.passed, result.summary()
