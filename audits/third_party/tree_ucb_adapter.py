"""Audits :mod:`tree_ucb_bandit` unedited: each node recorded with the rounds that pulled its arm in its block."""

from functools import partial
from types import SimpleNamespace
from typing import Any

import numpy as np

from dpverify.adapters import ClosedLoopAgent
from dpverify.agents.core.billboard import Billboard
from dpverify.audits.third_party import tree_ucb_bandit as code
from dpverify.claims import PrivacyClaim
from dpverify.ledger import UserSet
from dpverify.mechanisms import LaplaceMechanism


def make_agent(bandit: Any, num_rounds: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
               epsilon: float = 1.0, delta: float = 0.0, half_scale: bool = False, ranges: bool = False) -> Any:
    board = billboard if billboard is not None else Billboard("replace-one", noise_rng=rng.spawn(1)[0])
    learner = code.TreeUcbBandit(bandit.num_arms, num_rounds, epsilon, board.noise_source(), half_scale)
    laplace, draw = LaplaceMechanism(1.0, learner.scale), learner.noised  # the bug: ranges of rounds (last 2^l)
    read = (lambda a, n: range(learner.t - n + 1, learner.t + 1)) if ranges else lambda a, n: learner.rounds[a][-n:]
    vars(learner)["noised"] = lambda a, l, total: board.publish_noised(
        f"arm{a}", learner.t, l + 1, laplace, np.full(1, draw(a, l, total)), UserSet(read(a, 1 << l)))[0]
    return ClosedLoopAgent.bandit(learner.run, bandit, name="tree-ucb-bandit", protocol=SimpleNamespace(
        billboard=board, ledger=board.ledger, privacy_notion="jdp", claimed_guarantee=lambda: PrivacyClaim.pure(
            epsilon), config=SimpleNamespace(num_episodes=num_rounds, epsilon=epsilon, delta=delta)))  # δ: unused


make_half_scale, make_round_ranges = partial(make_agent, half_scale=True), partial(make_agent, ranges=True)
