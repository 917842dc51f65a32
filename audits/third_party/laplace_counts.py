"""A pure-DP visit-count agent with Laplace noise, written as a third party would (not part of dpverify).

Each episode k the agent publishes the counts of the next states users 1..k−1 reached at every stage (an
H·S vector) with Laplace noise, and plays greedily on the rewards, preferring actions that lead to rarely
seen states. Replacing one user moves one unit of count at each stage: the ℓ1 change is at most 2H, the ℓ2
change √(2H). A user is read by the K − 1 releases after its episode; the Laplace scale b is calibrated for
that composition by zCDP (Bun & Steinke 2016, Proposition 1.4: ε₀-DP ⇒ ε₀²/2-zCDP) and the claim converted
to (ε, δ) by Canonne, Kamath & Steinke 2020 (``cks``).

``make_agent`` is correct (ℓ1 sensitivity 2H). ``make_l2_scale`` is the bug: b calibrated from the ℓ2
sensitivity √(2H), which the Gaussian mechanism would use, so each release is √(2H)× less private than
recorded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.agents.core.billboard import Billboard
from dpverify.calibrate_mechanism import calibrate_laplace
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError


@dataclass(frozen=True)
class LaplaceCountsConfig:
    num_episodes: int
    epsilon: float
    delta: float
    relation: str = "replace-one"

    def __post_init__(self) -> None:
        if not isinstance(self.num_episodes, int) or self.num_episodes < 1:
            raise InvalidParameterError("num_episodes", "must be an integer >= 1", self.num_episodes)


class LaplaceCounts:
    name = "laplace-counts"
    privacy_notion = "jdp"

    def __init__(self, mdp: Any, config: LaplaceCountsConfig, rng: np.random.Generator, billboard: Billboard | None,
                 l1: bool) -> None:
        self.config = config
        self.horizon, self.num_states = mdp.horizon, mdp.num_states
        self.rewards = np.asarray(mdp.rewards)
        self.transitions = np.asarray(mdp.transitions)
        self.noise_rng, self.coins = rng.spawn(2)
        self.billboard = Billboard(config.relation) if billboard is None else billboard
        sensitivity = 2.0 * self.horizon if l1 else math.sqrt(2.0 * self.horizon)  # the bug: the ℓ2 value
        self.mechanism = calibrate_laplace(config.epsilon, sensitivity, max(config.num_episodes - 1, 1),
                                           self.horizon * self.num_states, config.delta, config.relation)
        self.counts = np.zeros((self.horizon, self.num_states))
        self.episode = 0

    @property
    def ledger(self) -> Any:
        return self.billboard.ledger

    def claimed_guarantee(self) -> DPGuarantee:
        return DPGuarantee(self.config.epsilon, self.config.delta, "cks", 0.0)

    def settings(self) -> dict[str, Any]:
        claim = self.claimed_guarantee()
        accounted = self.ledger.guarantee(claim.delta, claim.conversion, "per-user")
        return {"claimed_epsilon": claim.epsilon, "claimed_delta": claim.delta,
                "accounted_epsilon": accounted.epsilon, "accounted_delta": accounted.delta}

    def begin_episode(self) -> np.ndarray:
        if self.episode >= self.config.num_episodes:
            raise InvalidParameterError("episode", f"must be <= num_episodes = {self.config.num_episodes}",
                                        self.episode + 1)
        self.episode += 1
        published = np.zeros_like(self.counts)
        if self.episode > 1:
            published = self.billboard.publish("counts", self.episode, 1, self.mechanism, self.counts.ravel(),
                                               "prefix", self.noise_rng).reshape(self.counts.shape)
        rarity = -published / max(self.episode - 1, 1)
        q = self.rewards + 0.1 * np.einsum("hsat,ht->hsa", self.transitions, rarity)
        keys = self.coins.random(q.shape) * (q >= q.max(axis=-1, keepdims=True) - 1e-9)
        return np.argmax(keys, axis=-1)

    def end_episode(self, trajectory: Any) -> None:
        if trajectory is not None:
            self.counts[np.arange(self.horizon), trajectory.states[1:]] += 1.0


def make_agent(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
               epsilon: float = 1.0, delta: float = 1e-5, relation: str = "replace-one") -> LaplaceCounts:
    return LaplaceCounts(mdp, LaplaceCountsConfig(num_episodes, epsilon, delta, relation), rng, billboard, l1=True)


def make_l2_scale(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
                  epsilon: float = 1.0, delta: float = 1e-5, relation: str = "replace-one") -> LaplaceCounts:
    return LaplaceCounts(mdp, LaplaceCountsConfig(num_episodes, epsilon, delta, relation), rng, billboard, l1=False)
