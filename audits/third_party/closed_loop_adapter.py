"""The adapter that makes :mod:`closed_loop_lsvi` auditable, unedited (docs/auditing.md, "Adapters"): its loop
run step by step, its global-generator noise seeded from the billboard's noise source, each noisy statistic it
hands to ``np.linalg.solve`` recorded with the mechanism it claims (and solved with the published value).
``make_agent`` draws fresh noise each episode; ``make_reused_noise`` is the code's reused-noise bug."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import numpy as np

from dpverify.adapters import ClosedLoopAgent, SeededGlobalRng, watch_calls
from dpverify.agents.core.billboard import Billboard
from dpverify.audits.third_party import closed_loop_lsvi as code
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism


def make_agent(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
               epsilon: float = 1.0, delta: float = 1e-5, fresh_noise: bool = True) -> ClosedLoopAgent:
    if mdp.feature_norm_bound > 1.0:
        raise InvalidParameterError("feature_norm_bound", "must be <= 1 (the bound the noise assumes)",
                                    mdp.feature_norm_bound)
    board = billboard if billboard is not None else Billboard("replace-one", noise_rng=rng.spawn(1)[0])
    seeded = SeededGlobalRng(board.noise_source())
    with seeded:
        agent = code.ClosedLoopLsvi(mdp.features, mdp.rewards, num_episodes, epsilon, delta,
                                    seed=int(board.noise_source().integers(2**31)), fresh_noise=fresh_noise)
    gram = GOEMechanism(agent.gram_sensitivity, agent.gram_std, agent.d)
    target = GaussianMechanism(agent.target_sensitivity, agent.target_std, agent.d)
    solved, stage_gram = [0], [np.eye(agent.d)]

    def on_solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        if rhs.ndim == 2:  # the bonus: solved with the stage's published Gram matrix
            return np.linalg.solve(stage_gram[0], rhs)
        k, h = solved[0] // agent.H + 1, agent.H - solved[0] % agent.H
        solved[0] += 1
        stage_gram[0] = board.publish_noised("gram", k, h, gram, matrix, "prefix")
        return np.linalg.solve(stage_gram[0], board.publish_noised("target", k, h, target, rhs, "prefix"))

    def loop(env: Any) -> None:
        with watch_calls(code, "np.linalg.solve", on_solve):
            agent.run(env)

    config = SimpleNamespace(num_episodes=num_episodes, epsilon=epsilon, delta=delta, relation="replace-one",
                             feature_norm_bound=1.0)
    protocol = SimpleNamespace(billboard=board, ledger=board.ledger, privacy_notion="jdp", config=config,
                               claimed_guarantee=lambda: DPGuarantee(epsilon, delta, "exact", 0.0))
    return ClosedLoopAgent(loop, mdp, name="closed-loop-lsvi", protocol=protocol, around=seeded)


make_reused_noise = functools.partial(make_agent, fresh_noise=False)
