"""Agents whose claims are stated under add/remove-one, for the add/remove agent audits.

Each episode k the agent publishes the noisy next-state counts of users 1..k−1 (one one-hot vector per
stage and user) and plays greedily on rewards, preferring rarely published next states. Adding or removing
one user moves the count vector by √H in ℓ2 (replacing one moves it by √(2H)); the user appears in at most
K − 1 releases, so μ-GDP under add/remove needs σ = √H·√(K − 1)/μ (Dong, Roth & Su 2019, Corollary 3.3).

An absent user is an empty slot (``end_episode(None)``, :mod:`dpverify.agents.core.base`): the episode still
happens and its release is made, nothing is counted. ``make_agent`` is that correct agent.
``make_scaled_down_agent`` is the planted bug: it states the same add/remove claim but its noise is a
quarter of what removal needs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpverify.agents.core.billboard import Billboard
from dpverify.conversions import DPGuarantee, mu_for_epsilon_delta
from dpverify.mechanisms import GaussianMechanism


class CountAgent:
    privacy_notion = "jdp"

    def __init__(self, mdp: Any, num_episodes: int, rng: np.random.Generator, billboard: Billboard | None,
                 epsilon: float, delta: float, relation: str, noise_scale: float) -> None:
        self.num_episodes, self.epsilon, self.delta = num_episodes, epsilon, delta
        self.horizon, self.num_states = mdp.horizon, mdp.num_states
        self.rewards = np.asarray(mdp.rewards)
        self.transitions = np.asarray(mdp.transitions)
        self.noise_rng, self.rng = rng.spawn(2)
        self.billboard = Billboard(relation) if billboard is None else billboard
        self.mu = mu_for_epsilon_delta(epsilon, delta)
        sensitivity = math.sqrt(self.horizon)  # add/remove: one user's H one-hot vectors
        sigma = noise_scale * sensitivity * math.sqrt(max(num_episodes - 1, 1)) / self.mu * (1 + 1e-12)
        self.mechanism = GaussianMechanism(sensitivity, sigma, self.horizon * self.num_states, relation)
        self.counts = np.zeros((self.horizon, self.num_states))
        self.episode = 0

    def claimed_guarantee(self) -> DPGuarantee:
        return DPGuarantee(self.epsilon, self.delta, "exact", self.mu**2 / 2)

    def begin_episode(self) -> np.ndarray:
        self.episode += 1
        published = np.zeros_like(self.counts)
        if self.episode > 1:
            published = self.billboard.publish("counts", self.episode, 1, self.mechanism, self.counts.ravel(),
                                               "prefix", self.noise_rng).reshape(self.counts.shape)
        rarity = -published / max(self.episode - 1, 1)
        q = self.rewards + 0.1 * np.einsum("hsat,ht->hsa", self.transitions, rarity)
        keys = self.rng.random(q.shape) * (q >= q.max(axis=-1, keepdims=True) - 1e-9)
        return np.argmax(keys, axis=-1)

    def end_episode(self, trajectory: Any) -> None:
        if trajectory is None:  # empty slot: no user data this episode
            return
        self.counts[np.arange(self.horizon), trajectory.states[1:]] += 1.0


def make_agent(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
               epsilon: float = 1.0, delta: float = 1e-5, relation: str = "add-remove-one") -> CountAgent:
    return CountAgent(mdp, num_episodes, rng, billboard, epsilon, delta, relation, 1.0)


def make_scaled_down_agent(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *,
                           billboard: Billboard | None = None, epsilon: float = 1.0, delta: float = 1e-5,
                           relation: str = "add-remove-one") -> CountAgent:
    return CountAgent(mdp, num_episodes, rng, billboard, epsilon, delta, relation, 0.25)
