"""The private LSVI of :mod:`noisy_lsvi`, adding its noise itself — as most code outside dpverify does.

Each statistic is computed, noised by the agent and recorded on the billboard with the mechanism the agent
claims to have used (``billboard.publish_noised(family, k, h, mechanism, noisy_value, users)``); the noise is
drawn from ``billboard.noise_source()``, the billboard's generator, as the protocol asks (docs/auditing.md,
"Third-party agents"). The billboard cannot see the noise, so a mistake in it is invisible to the ledger.

``make_agent`` is correct; each other factory plants one bug in the noise:

* ``make_half_noise`` — records σ, adds σ/2 (a factor 2 lost in the calibration): the lying ledger;
* ``make_reused_noise`` — one draw per statistic and stage, reused every episode (Sahu 2025, Algorithm 1
  line 1 as printed);
* ``make_broadcast_noise`` — one scalar draw added to every coordinate of a vector;
* ``make_unnoised_coordinate`` — the last coordinate of each vector left without noise (a slice off by one);
* ``make_asymmetric_gram`` — the Gram noise Z added without symmetrising, recorded as GOE's (Z + Zᵀ)/√2;
* ``make_global_rng_noise`` — noise from numpy's global generator (``np.random.normal``): not reproducible
  from any seed, so no behavioural check can run (the verdict is INCONCLUSIVE, never CONSISTENT);
* ``make_own_rng_noise`` — correct noise, drawn from the agent's own generator instead of
  ``noise_source()``: the auditor cannot vary it, so the noise check cannot run;
* ``make_generator_per_family`` — each episode one seed from ``noise_source()``, and each statistic family draws
  from a generator it rebuilds from that seed: the Gram matrices and the target vectors, of different shapes,
  share their standard normals (ε = ∞); ``make_generator_per_episode`` builds one generator per episode that both
  families draw from in turn (its twin).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpverify.audits.third_party.noisy_lsvi import NoisyLsvi, factory
from dpverify.mechanisms import GOEMechanism, Mechanism


class SelfNoisedLsvi(NoisyLsvi):
    """The correct self-noising agent."""

    name = "self-noised-lsvi"
    noise_scale = 1.0  # the lying ledger: 0.5

    def generator(self) -> np.random.Generator:
        return self.billboard.noise_source()

    def draw(self, family: str, k: int, h: int, mechanism: Mechanism) -> np.ndarray:
        rng = self.generator()
        if isinstance(mechanism, GOEMechanism):
            z = rng.normal(0.0, mechanism.entry_std * self.noise_scale, mechanism.output_shape)
            return (z + z.T) / math.sqrt(2.0)
        return rng.normal(0.0, mechanism.noise_scale * self.noise_scale, mechanism.output_shape)

    def release(self, family: str, k: int, h: int, mechanism: Mechanism, raw: np.ndarray) -> np.ndarray:
        noisy = raw + self.draw(family, k, h, mechanism)
        return self.billboard.publish_noised(family, k, h + 1, mechanism, noisy, self.users())


class HalfNoise(SelfNoisedLsvi):
    """Bug: σ recorded, σ/2 added."""

    noise_scale = 0.5


class ReusedNoise(SelfNoisedLsvi):
    """Bug: one draw per (statistic, stage), reused at every episode."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.drawn: dict[tuple[str, int], np.ndarray] = {}

    def draw(self, family: str, k: int, h: int, mechanism: Mechanism) -> np.ndarray:
        if (family, h) not in self.drawn:
            self.drawn[(family, h)] = super().draw(family, k, h, mechanism)
        return self.drawn[(family, h)]


class BroadcastNoise(SelfNoisedLsvi):
    """Bug: the target vector gets one scalar draw on every coordinate."""

    def draw(self, family: str, k: int, h: int, mechanism: Mechanism) -> np.ndarray:
        if family == "target":
            return np.full(mechanism.output_shape, self.generator().normal(0.0, mechanism.noise_scale))
        return super().draw(family, k, h, mechanism)


class UnnoisedCoordinate(SelfNoisedLsvi):
    """Bug: ``noise[:-1]`` — the last coordinate of the target vector is published without noise."""

    def draw(self, family: str, k: int, h: int, mechanism: Mechanism) -> np.ndarray:
        noise = super().draw(family, k, h, mechanism)
        if family == "target":
            noise[-1] = 0.0
        return noise


class AsymmetricGram(SelfNoisedLsvi):
    """Bug: G + Z with Z iid N(0, s²) entrywise (not symmetrised), recorded as the GOE mechanism."""

    def draw(self, family: str, k: int, h: int, mechanism: Mechanism) -> np.ndarray:
        if isinstance(mechanism, GOEMechanism):
            return self.generator().normal(0.0, mechanism.entry_std, mechanism.output_shape)
        return super().draw(family, k, h, mechanism)


class GlobalRngNoise(SelfNoisedLsvi):
    """Not auditable: the noise comes from numpy's global generator."""

    def generator(self) -> Any:
        return np.random  # the legacy global RandomState (its .normal has the same signature)


class OwnRngNoise(SelfNoisedLsvi):
    """Not auditable by noise: correct noise, drawn from the agent's own generator, not noise_source()."""

    def generator(self) -> np.random.Generator:
        return self.noise_rng


class GeneratorPerEpisode(SelfNoisedLsvi):
    """Correct: one generator per episode, seeded from noise_source(), that every family draws from in turn."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.streams: dict[str, np.random.Generator] = {}
        self.seeded_at = 0

    def stream(self, family: str, seed: int) -> np.random.Generator:
        return self.streams.setdefault("episode", np.random.default_rng(seed))

    def draw(self, family: str, k: int, h: int, mechanism: Mechanism) -> np.ndarray:
        if self.seeded_at != k:
            self.seeded_at, self.seed, self.streams = k, int(self.billboard.noise_source().integers(2**63)), {}
        rng = self.stream(family, self.seed)
        if isinstance(mechanism, GOEMechanism):
            z = rng.normal(0.0, mechanism.entry_std, mechanism.output_shape)
            return (z + z.T) / math.sqrt(2.0)
        return rng.normal(0.0, mechanism.noise_scale, mechanism.output_shape)


class GeneratorPerFamily(GeneratorPerEpisode):
    """Bug: each family rebuilds its generator from the episode's seed: two families, one stream of normals."""

    def stream(self, family: str, seed: int) -> np.random.Generator:
        return self.streams.setdefault(family, np.random.default_rng(seed))


make_agent = factory(SelfNoisedLsvi, "make_agent", module=__name__)
make_half_noise = factory(HalfNoise, "make_half_noise", module=__name__)
make_reused_noise = factory(ReusedNoise, "make_reused_noise", module=__name__)
make_broadcast_noise = factory(BroadcastNoise, "make_broadcast_noise", module=__name__)
make_unnoised_coordinate = factory(UnnoisedCoordinate, "make_unnoised_coordinate", module=__name__)
make_asymmetric_gram = factory(AsymmetricGram, "make_asymmetric_gram", module=__name__)
make_global_rng_noise = factory(GlobalRngNoise, "make_global_rng_noise", module=__name__)
make_own_rng_noise = factory(OwnRngNoise, "make_own_rng_noise", module=__name__)
make_generator_per_episode = factory(GeneratorPerEpisode, "make_generator_per_episode", module=__name__)
make_generator_per_family = factory(GeneratorPerFamily, "make_generator_per_family", module=__name__)
