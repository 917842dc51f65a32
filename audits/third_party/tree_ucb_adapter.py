"""Audits :mod:`tree_ucb_bandit` unedited: each node recorded with the rounds that pulled its arm in its block."""

from functools import partial
from types import SimpleNamespace
from typing import Any

from dpverify.adapters import ClosedLoopAgent
from dpverify.agents.core.billboard import Billboard
from dpverify.audits.third_party import tree_ucb_bandit as code
from dpverify.claims import PrivacyClaim
from dpverify.ledger import UserSet
from dpverify.mechanisms import LaplaceMechanism


def make_agent(bandit: Any, num_rounds: int, rng: Any, /, *, billboard: Billboard | None = None, epsilon: float = 1.0,
               delta: float = 0.0, half_scale: bool = False, round_ranges: bool = False) -> ClosedLoopAgent:
    board = billboard if billboard is not None else Billboard("replace-one", noise_rng=rng.spawn(1)[0])
    learner = code.TreeUcbBandit(bandit.num_arms, num_rounds, epsilon, board.noise_source(), half_scale)
    laplace, draw = LaplaceMechanism(1.0, learner.scale), learner.noised
    read = (lambda arm, n: range(learner.t - n + 1, learner.t + 1)) if round_ranges else (  # the bug: rounds
        lambda arm, n: learner.rounds[arm][-n:])  # the rounds that pulled the arm in the node's block
    vars(learner)["noised"] = lambda arm, level, total: board.publish_noised(
        f"arm{arm}", learner.t, level + 1, laplace, [draw(arm, level, total)], UserSet(read(arm, 1 << level)))[0]
    config = SimpleNamespace(num_episodes=num_rounds, epsilon=epsilon, delta=delta, relation="replace-one")
    protocol = SimpleNamespace(billboard=board, ledger=board.ledger, privacy_notion="jdp", config=config,
                               claimed_guarantee=lambda: PrivacyClaim.pure(epsilon))  # δ = 0 whatever delta says
    return ClosedLoopAgent.bandit(learner.run, bandit, name="tree-ucb-bandit", protocol=protocol)


make_half_scale, make_round_ranges = partial(make_agent, half_scale=True), partial(make_agent, round_ranges=True)
