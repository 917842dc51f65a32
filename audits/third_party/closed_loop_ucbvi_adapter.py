"""The adapter that makes :mod:`closed_loop_ucbvi` auditable, unedited: its loop run step by step, numpy's global
generator seeded from the billboard's noise source, each count vector it privatises recorded with the mechanism it
claims (and planned with as published).

That code draws its tie-breaking coins from the same global stream as its noise. ``make_agent`` leaves it so: the
noise seed then moves the coins, and whether its consumption of coins depends on the users cannot be separated
from a leak (the verdict is INCONCLUSIVE, never REFUTED). ``make_separated`` answers the code's
``np.random.choice`` from a generator of the factory's (``watch_calls``), one uniform per decision, so that the
global stream carries the noise alone, the coins are drawn in an order no user changes, and every check runs.
``make_choice_coins`` answers it with that generator's ``choice``, which draws nothing when there is one
candidate: the coins' order then follows the states users visit, and the checks that would have to tell that
from a leak say they cannot (INCONCLUSIVE, never REFUTED). The bugs of :mod:`closed_loop_ucbvi` are planted
through the separated adapter.
"""

from __future__ import annotations

import contextlib
import functools
from types import SimpleNamespace
from typing import Any

import numpy as np

from dpverify.adapters import ClosedLoopAgent, SeededGlobalRng, watch_calls
from dpverify.agents.core.billboard import Billboard
from dpverify.audits.third_party import closed_loop_ucbvi as code
from dpverify.conversions import DPGuarantee
from dpverify.mechanisms import GaussianMechanism


def make_agent(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
               epsilon: float = 1.0, delta: float = 1e-5, coins_by: str = "", **bugs: Any) -> ClosedLoopAgent:
    noise_rng, coins = rng.spawn(2)
    board = billboard if billboard is not None else Billboard("replace-one", noise_rng=noise_rng)
    seeded = SeededGlobalRng(board.noise_source())
    with seeded:
        agent = code.PrivateUcbVi(mdp.rewards, num_episodes, epsilon, delta,
                                  seed=int(board.noise_source().integers(2**31)), **bugs)
    H, S, A = agent.H, agent.S, agent.A
    visits = GaussianMechanism(agent.sensitivity, agent.sigma, S * A)
    moves = GaussianMechanism(agent.sensitivity, agent.sigma, S * A * S)
    made = [0]
    privatize = agent.privatize

    def recorded(counts: np.ndarray) -> np.ndarray:  # called for visits and moves at h = H, ..., 1, every episode
        k, i = made[0] // (2 * H) + 1, made[0] % (2 * H)
        made[0] += 1
        family, mechanism = ("visits", visits) if i % 2 == 0 else ("moves", moves)
        noisy = privatize(counts).ravel()
        return board.publish_noised(family, k, H - i // 2, mechanism, noisy, "prefix").reshape(counts.shape)

    agent.privatize = recorded  # type: ignore[method-assign]

    draws = {"uniform": lambda a, *_, **__: a[int(coins.random() * len(a))],  # one coin per decision, always
             "choice": lambda a, *_, **__: coins.choice(a)}  # no coin when there is one candidate

    def loop(env: Any) -> None:
        with contextlib.ExitStack() as stack:
            if coins_by:
                stack.enter_context(watch_calls(code, "np.random.choice", draws[coins_by]))
            agent.run(env)

    config = SimpleNamespace(num_episodes=num_episodes, epsilon=epsilon, delta=delta, relation="replace-one")
    protocol = SimpleNamespace(billboard=board, ledger=board.ledger, privacy_notion="jdp", config=config,
                               claimed_guarantee=lambda: DPGuarantee(epsilon, delta, "exact", 0.0))
    return ClosedLoopAgent(loop, mdp, name="closed-loop-ucbvi", protocol=protocol, around=seeded)


make_separated = functools.partial(make_agent, coins_by="uniform")
make_choice_coins = functools.partial(make_agent, coins_by="choice")
make_episode_seeded = functools.partial(make_agent, coins_by="uniform", episode_seed=True)
make_root_means = functools.partial(make_agent, coins_by="uniform", root_means=True)
make_half_noise = functools.partial(make_agent, coins_by="uniform", noise_scale=0.5)
