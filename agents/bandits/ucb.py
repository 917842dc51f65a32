"""UCB1 — the optimistic rule of the finite-armed agents, and its non-private agent.

Auer, Cesa-Bianchi & Fischer 2002 ("Finite-time analysis of the multiarmed bandit problem"), UCB1: after t
rounds, with n_a pulls and reward sum S_a of arm a, pull

    argmax_a S_a/n_a + √(2 log t / n_a)   (an arm never pulled first, ties at random)   (:func:`ucb_index`)

scaled by ``beta_multiplier`` (1 is UCB1). The private agent (:mod:`dpverify.agents.bandits.dp_ucb`) adds a
bound on the noise of its released sums, divided by n_a. The finite-armed agents ignore the context of a round
(a contextual bandit's contexts are pooled): one arm is deployed for every context.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate

from ..core.planning import TIE_TOLERANCE, maximizing_actions
from ..envs.bandit import Bandit
from .rounds import BanditAgent, BanditRule, Round

DEFAULT_BETA_MULTIPLIER = 1.0


def ucb_index(sums: np.ndarray, pulls: np.ndarray, rounds: int, beta: float, noise_width: float = 0.0) -> np.ndarray:
    """S_a/n_a + β√(2 log t/n_a) + w/n_a for every trial and arm (n, A); +∞ for an arm never pulled."""
    pulled = pulls > 0
    n = np.where(pulled, pulls, 1.0)
    index = sums / n + beta * np.sqrt(2.0 * math.log(max(rounds, 1)) / n) + noise_width / n
    return np.where(pulled, index, np.inf)


class ArmRule(BanditRule):
    """What the finite-armed rules share: one arm for every context (ties at random, one key per arm), and
    the public pull counts (a function of the deployed arms alone: an empty slot still counts the arm deployed,
    its reward 0, so that the counts never depend on whether a user came)."""

    def __init__(self, bandit: Bandit, config: Any, randomness: Any, channel: Any = None,
                 calibration: Any = None) -> None:
        super().__init__(bandit, config, randomness, channel, calibration)
        self.pulls = np.zeros((self.n, self.num_arms))

    def choose(self) -> np.ndarray:
        index = self.arm_index()
        keys = self.randomness.uniform((self.num_arms,))
        keys[~maximizing_actions(index, TIE_TOLERANCE)] = -1.0  # never-pulled arms (+∞) tie with each other
        arms = np.argmax(keys, axis=-1)
        return np.broadcast_to(arms[:, None], (self.n, self.num_contexts)).copy()

    def scores(self) -> np.ndarray:
        return np.broadcast_to(self.arm_index()[:, None, :], (self.n, self.num_contexts, self.num_arms))

    def arm_index(self) -> np.ndarray:
        """The index of every trial's arms (n, A)."""
        raise NotImplementedError

    def reward_terms(self, played: Round | None) -> np.ndarray:
        """The round's reward vector of every trial (n, A): r·e_a at the arm pulled (0 for an empty slot); the
        pull counted either way."""
        arms = self.arms[:, 0] if played is None else played.arms
        self.pulls[np.arange(self.n), arms] += 1.0
        terms = np.zeros((self.n, self.num_arms))
        if played is not None:
            terms[np.arange(self.n), arms] = np.clip(played.rewards, 0.0, 1.0)
        return terms


@dataclass(frozen=True)
class UcbConfig:
    """UCB1's hyper-parameters: K (``num_episodes``) and the multiplier of √(2 log t/n_a)."""

    num_episodes: int
    beta_multiplier: float = DEFAULT_BETA_MULTIPLIER

    def __post_init__(self) -> None:
        _validate.integer("num_episodes", self.num_episodes, minimum=1)
        _validate.non_negative("beta_multiplier", self.beta_multiplier)


class UcbRule(ArmRule):
    """UCB1 on the exact reward sums."""

    def __init__(self, bandit: Bandit, config: UcbConfig, randomness: Any, channel: Any = None,
                 calibration: Any = None) -> None:
        super().__init__(bandit, config, randomness, channel, calibration)
        self.sums = np.zeros((self.n, self.num_arms))

    def arm_index(self) -> np.ndarray:
        return ucb_index(self.sums, self.pulls, self.round, self.config.beta_multiplier)

    def learn(self, played: Round | None) -> None:
        self.sums += self.reward_terms(played)
        self.round += 1


class Ucb(BanditAgent):
    """Non-private UCB1 (Auer et al. 2002): the counterpart of ``dp-ucb``."""

    name = "ucb"
    config_class = UcbConfig
    rule_class = UcbRule


__all__ = ["ArmRule", "Ucb", "UcbConfig", "UcbRule", "ucb_index"]
