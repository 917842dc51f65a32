"""The private LSVI of :mod:`noisy_lsvi` acting step by step — ``act(h, state)`` — as agents over large state
spaces do (docs/auditing.md, "Third-party agents", step level).

At the start of each episode (``begin_episode()``, which returns None) the agent publishes its statistics
and keeps its Q-values; it never hands over a policy table. Each step it is asked ``act(h, state)`` and answers
the greedy action at that state alone (ties broken by its coins), and it is told the step's outcome by
``observe(h, state, action, reward, next_state)``; the episode's trajectory still arrives at ``end_episode``.
dpverify runs, replays and audits it with the checks and audits of the table agents, on the actions it took.

The factories are the step-level twins of table-route cases of the third-party zoo:

* ``make_agent`` — the correct billboard-noised agent (:func:`noisy_lsvi.make_agent`);
* ``make_mean_for_sum`` — target noise for the mean, added to the sum (:func:`noisy_lsvi.make_mean_for_sum`);
* ``make_self_noised`` — the correct agent noising itself (:func:`self_noised_lsvi.make_agent`);
* ``make_half_noise`` — records σ, adds σ/2 (:func:`self_noised_lsvi.make_half_noise`);
* ``make_raw_average`` and its twin ``make_published_average`` (:func:`noisy_lsvi.make_raw_average`);
* ``make_generator_per_family`` and its twin ``make_generator_per_episode``
  (:func:`self_noised_lsvi.make_generator_per_family`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpverify.audits.third_party.noisy_lsvi import MeanForSum, NoisyLsvi, PublishedAverage, RawAverage, factory
from dpverify.audits.third_party.self_noised_lsvi import (
    GeneratorPerEpisode,
    GeneratorPerFamily,
    HalfNoise,
    SelfNoisedLsvi,
)


class StepLevel(NoisyLsvi):
    """The step-level interface over any of the learners: Q-values per episode, one action per step."""

    def begin_episode(self) -> None:  # type: ignore[override]
        """Publish this episode's statistics and keep its Q-values (nothing is returned)."""
        if self.episode >= self.config.num_episodes:
            super().begin_episode()  # raises, naming num_episodes
        self.episode += 1
        self.q = self.q_values(self.episode)
        self.steps_observed = 0

    def act(self, h: int, state: int) -> int:
        """The greedy action at stage ``h`` (0-based) in ``state``, ties broken by the coins."""
        q = self.q[h, state]
        keys = self.coins.random(q.shape) * (q >= q.max() - 1e-9)
        return int(np.argmax(keys))

    def observe(self, h: int, state: int, action: int, reward: float, next_state: int) -> None:
        """The step's outcome (this learner takes its data from the trajectory at the episode's end)."""
        self.steps_observed += 1


class StepLevelLsvi(StepLevel):
    name = "step-level-lsvi"


class StepLevelMeanForSum(StepLevel, MeanForSum):
    name = "step-level-mean-for-sum"


class StepLevelSelfNoised(StepLevel, SelfNoisedLsvi):
    name = "step-level-self-noised"


class StepLevelHalfNoise(StepLevel, HalfNoise):
    name = "step-level-half-noise"


class StepLevelRawAverage(StepLevel, RawAverage):
    name = "step-level-raw-average"


class StepLevelPublishedAverage(StepLevel, PublishedAverage):
    name = "step-level-published-average"


class StepLevelGeneratorPerFamily(StepLevel, GeneratorPerFamily):
    name = "step-level-generator-per-family"


class StepLevelGeneratorPerEpisode(StepLevel, GeneratorPerEpisode):
    name = "step-level-generator-per-episode"


def _factory(cls: type[NoisyLsvi], name: str) -> Any:
    return factory(cls, name, module=__name__)


make_agent = _factory(StepLevelLsvi, "make_agent")
make_mean_for_sum = _factory(StepLevelMeanForSum, "make_mean_for_sum")
make_self_noised = _factory(StepLevelSelfNoised, "make_self_noised")
make_half_noise = _factory(StepLevelHalfNoise, "make_half_noise")
make_raw_average = _factory(StepLevelRawAverage, "make_raw_average")
make_published_average = _factory(StepLevelPublishedAverage, "make_published_average")
make_generator_per_family = _factory(StepLevelGeneratorPerFamily, "make_generator_per_family")
make_generator_per_episode = _factory(StepLevelGeneratorPerEpisode, "make_generator_per_episode")
