"""A third-party-style agent (not part of dpverify) with a privacy bug, to audit from the command line.

Each episode k, the agent publishes the noisy counts of the next states users 1..k−1 reached at every
stage, and plays greedily on rewards, preferring actions that lead to rarely published states (a
function of the published counts, its own random tie-breaking and the user's own state). One user
changes the count vector by at most √(2H) in ℓ2 (one one-hot vector per stage moves), and appears in
the K − 1 releases after its episode, so the Gaussian noise must be σ = √(2H)·√(K − 1)/μ for μ-GDP
(Dong, Roth & Su 2019, Corollary 3.3).

The bug (``make_agent``): σ = √(2H)/μ, as if each release were the only one — the composition over
episodes is forgotten. ``make_fixed_agent`` is the correct twin.

The audit needs only: the factory ``(mdp, num_episodes, rng, /, *, billboard=None, **options)``,
``begin_episode()``/``end_episode(trajectory)``, releases published on the given billboard, and the
claim (``claimed_guarantee()``, ``privacy_notion``).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from dpverify.conversions import DPGuarantee, mu_for_epsilon_delta
from dpverify.mechanisms import GaussianMechanism


@functools.cache
def _mu(epsilon: float, delta: float) -> float:
    """The μ of a Gaussian mechanism that is exactly (ε, δ)-DP (computed once per claim)."""
    return mu_for_epsilon_delta(epsilon, delta)


class VisitCountAgent:
    privacy_notion = "jdp"

    def __init__(self, mdp: Any, num_episodes: int, rng: np.random.Generator, billboard: Any,
                 epsilon: float, delta: float, compose: bool) -> None:
        self.horizon, self.num_states = mdp.horizon, mdp.num_states
        self.rewards = np.asarray(mdp.rewards)
        self.transitions = np.asarray(mdp.transitions)
        self.rng, self.billboard = rng, billboard
        self.epsilon, self.delta = epsilon, delta
        self.mu = _mu(epsilon, delta)
        sensitivity = math.sqrt(2 * self.horizon)
        releases = num_episodes - 1 if compose else 1  # the bug: 1
        self.mechanism = GaussianMechanism(sensitivity, sensitivity * math.sqrt(releases) / self.mu,
                                           self.horizon * self.num_states)
        self.counts = np.zeros((self.horizon, self.num_states))
        self.episode = 0

    def claimed_guarantee(self) -> DPGuarantee:
        return DPGuarantee(self.epsilon, self.delta, "exact", self.mu**2 / 2)

    def begin_episode(self) -> np.ndarray:
        self.episode += 1
        published = np.zeros_like(self.counts)
        if self.episode > 1:
            published = self.billboard.publish("counts", self.episode, 1, self.mechanism, self.counts.ravel(),
                                               "prefix", self.rng).reshape(self.counts.shape)
        rarity = -published / max(self.episode - 1, 1)                       # prefer rarely seen next states
        q = self.rewards + 0.1 * np.einsum("hsat,ht->hsa", self.transitions, rarity)
        keys = self.rng.random(q.shape) * (q >= q.max(axis=-1, keepdims=True) - 1e-9)
        return np.argmax(keys, axis=-1)

    def end_episode(self, trajectory: Any) -> None:
        self.counts[np.arange(self.horizon), trajectory.states[1:]] += 1.0


def make_agent(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Any = None,
               epsilon: float = 1.0, delta: float = 1e-5) -> VisitCountAgent:
    return VisitCountAgent(mdp, num_episodes, rng, billboard, epsilon, delta, compose=False)


def make_fixed_agent(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Any = None,
                     epsilon: float = 1.0, delta: float = 1e-5) -> VisitCountAgent:
    return VisitCountAgent(mdp, num_episodes, rng, billboard, epsilon, delta, compose=True)
