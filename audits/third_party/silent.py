"""Agents that publish nothing, written as a third party would: with no statistic on the billboard the ledger is
empty (ε = 0), and the claim holds exactly when the actions read no user's data.

* ``make_agent`` — a uniformly random policy from its coins every episode: data-free, private at ε = 0;
* ``make_raw_explorer`` — publishes nothing, yet plays the least-tried action at each stage and state, counted on
  the raw trajectories of the users it has served: every later user's actions read earlier users' data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.agents.core.billboard import Billboard
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError


@dataclass(frozen=True)
class SilentConfig:
    num_episodes: int
    epsilon: float
    delta: float = 1e-5
    relation: str = "replace-one"


class Silent:
    """Publishes nothing; ``explore`` plants the bug (the least-tried action, on raw counts)."""

    name = "silent"
    privacy_notion = "jdp"

    def __init__(self, mdp: Any, config: SilentConfig, rng: np.random.Generator, billboard: Billboard | None = None,
                 explore: bool = False) -> None:
        self.config, self.explore = config, explore
        self.billboard = billboard if billboard is not None else Billboard(config.relation)
        self.coins = rng.spawn(1)[0]
        self.counts = np.zeros((mdp.horizon, mdp.num_states, mdp.num_actions))
        self.episode = 0

    @property
    def ledger(self) -> Any:
        return self.billboard.ledger

    def claimed_guarantee(self) -> DPGuarantee:
        return DPGuarantee(self.config.epsilon, self.config.delta, "exact", 0.0)

    def begin_episode(self) -> np.ndarray:
        if self.episode >= self.config.num_episodes:
            raise InvalidParameterError("episode", f"must be <= num_episodes = {self.config.num_episodes}",
                                        self.episode + 1)
        self.episode += 1
        H, S, A = self.counts.shape
        random = self.coins.integers(0, A, (H, S))
        return np.argmin(self.counts, axis=-1) if self.explore else random

    def end_episode(self, trajectory: Any) -> None:
        if trajectory is None:
            return
        for h, (s, a) in enumerate(zip(trajectory.states[:-1], trajectory.actions, strict=True)):
            self.counts[h, s, a] += 1.0


def _factory(explore: bool, name: str) -> Any:
    def make(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
             epsilon: float = 1.0, delta: float = 1e-5, relation: str = "replace-one") -> Silent:
        return Silent(mdp, SilentConfig(num_episodes, epsilon, delta, relation), rng, billboard, explore)

    make.__name__ = make.__qualname__ = name
    make.__module__ = __name__
    return make


make_agent = _factory(False, "make_agent")
make_raw_explorer = _factory(True, "make_raw_explorer")
