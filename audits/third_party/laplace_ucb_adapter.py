"""Audits :mod:`laplace_ucb_bandit` unedited: its loop on dpverify's bandit rounds, its releases recorded."""

from functools import partial
from types import SimpleNamespace
from typing import Any

import numpy as np

from dpverify.adapters import ClosedLoopAgent
from dpverify.agents.core.billboard import Billboard
from dpverify.audits.third_party import laplace_ucb_bandit as code
from dpverify.conversions import DPGuarantee
from dpverify.mechanisms import LaplaceMechanism


def make_agent(bandit: Any, num_rounds: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
               epsilon: float = 1.0, delta: float = 1e-5, fresh_noise: bool = True) -> ClosedLoopAgent:
    board = billboard if billboard is not None else Billboard("replace-one", noise_rng=rng.spawn(1)[0])
    learner = code.LaplaceUcbBandit(bandit.num_arms, num_rounds, epsilon, delta, board.noise_source(), fresh_noise)
    laplace, draw = LaplaceMechanism(1.0, learner.scale, learner.A), learner.private_sums
    rounds = iter(learner.release_rounds)
    vars(learner)["private_sums"] = lambda s: board.publish_noised("sums", next(rounds), 1, laplace, draw(s), "prefix")
    config = SimpleNamespace(num_episodes=num_rounds, epsilon=epsilon, delta=delta, relation="replace-one")
    protocol = SimpleNamespace(billboard=board, ledger=board.ledger, privacy_notion="jdp", config=config,
                               claimed_guarantee=lambda: DPGuarantee(epsilon, delta, "cks", 0.0))
    return ClosedLoopAgent.bandit(learner.run, bandit, name="laplace-ucb-bandit", protocol=protocol)


make_reused_noise = partial(make_agent, fresh_noise=False)
