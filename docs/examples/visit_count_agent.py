"""A third-party-style agent (not part of dpverify) with a privacy bug, to audit from the command line.

Each episode k, the agent publishes the noisy counts of the next states users 1..k−1 reached at every
stage, and plays greedily on rewards, preferring actions that lead to rarely published states (a
function of the published counts and its own random tie-breaking). One user changes the count vector
by at most √(2H) in ℓ2 under replace-one (one one-hot vector per stage moves), and appears in the
K − 1 releases after its episode, so the Gaussian noise must be σ = √(2H)·√(K − 1)/μ for μ-GDP
(Dong, Roth & Su 2019, Corollary 3.3).

The bug (``make_agent``): σ = √(2H)/μ, as if each release were the only one — the composition over
episodes is forgotten. ``make_fixed_agent`` is the correct twin.

The private-agent protocol this module follows (docs/auditing.md, "Third-party agents"):

* the factory ``(mdp, num_episodes, rng, /, *, billboard=None, **options)``; without a billboard the
  agent publishes on its own;
* ``begin_episode()`` → an (H, S) policy, ``end_episode(trajectory)``; ``begin_episode`` refuses an
  episode past ``num_episodes`` with ``InvalidParameterError``;
* every release published on the billboard (which records it in ``billboard.ledger``), noise drawn from
  a generator of its own so that the policy depends only on published values and the agent's own coins;
* the claim: ``privacy_notion``, ``claimed_guarantee()``, ``ledger``, a frozen ``config`` (num_episodes,
  epsilon, delta, relation) and ``settings()`` with the claimed and the accounted (ε, δ).

The agent reads no features, so it declares no feature-norm bound: the contract's feature-norm
property does not apply to it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.agents.core.billboard import Billboard
from dpverify.conversions import DPGuarantee, mu_for_epsilon_delta
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism


@functools.cache
def _mu(epsilon: float, delta: float) -> float:
    """The μ of a Gaussian mechanism that is exactly (ε, δ)-DP (computed once per claim)."""
    return mu_for_epsilon_delta(epsilon, delta)


@dataclass(frozen=True)
class VisitCountConfig:
    num_episodes: int
    epsilon: float
    delta: float
    relation: str = "replace-one"  # the relation the sensitivity √(2H) holds under

    def __post_init__(self) -> None:  # ε and δ are checked by mu_for_epsilon_delta, the relation by the billboard
        if not isinstance(self.num_episodes, int) or self.num_episodes < 1:
            raise InvalidParameterError("num_episodes", "must be an integer >= 1", self.num_episodes)


class VisitCountAgent:
    privacy_notion = "jdp"

    def __init__(self, mdp: Any, config: VisitCountConfig, rng: np.random.Generator, billboard: Billboard | None,
                 compose: bool) -> None:
        self.config = config
        self.horizon, self.num_states = mdp.horizon, mdp.num_states
        self.rewards = np.asarray(mdp.rewards)
        self.transitions = np.asarray(mdp.transitions)
        self.noise_rng, self.rng = rng.spawn(2)  # noise coins apart from the policy's own coins
        self.billboard = Billboard(config.relation) if billboard is None else billboard
        self.mu = _mu(config.epsilon, config.delta)
        sensitivity = math.sqrt(2 * self.horizon)
        releases = config.num_episodes - 1 if compose else 1  # the bug: 1
        sigma = sensitivity * math.sqrt(max(releases, 1)) / self.mu * (1 + 1e-12)  # rounded up, never down
        self.mechanism = GaussianMechanism(sensitivity, sigma, self.horizon * self.num_states, config.relation)
        self.counts = np.zeros((self.horizon, self.num_states))
        self.episode = 0

    @property
    def ledger(self) -> Any:
        return self.billboard.ledger

    def claimed_guarantee(self) -> DPGuarantee:
        return DPGuarantee(self.config.epsilon, self.config.delta, "exact", self.mu**2 / 2)

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
        rarity = -published / max(self.episode - 1, 1)                       # prefer rarely seen next states
        q = self.rewards + 0.1 * np.einsum("hsat,ht->hsa", self.transitions, rarity)
        keys = self.rng.random(q.shape) * (q >= q.max(axis=-1, keepdims=True) - 1e-9)
        return np.argmax(keys, axis=-1)

    def end_episode(self, trajectory: Any) -> None:
        self.counts[np.arange(self.horizon), trajectory.states[1:]] += 1.0


def make_agent(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
               epsilon: float = 1.0, delta: float = 1e-5) -> VisitCountAgent:
    return VisitCountAgent(mdp, VisitCountConfig(num_episodes, epsilon, delta), rng, billboard, compose=False)


def make_fixed_agent(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
                     epsilon: float = 1.0, delta: float = 1e-5) -> VisitCountAgent:
    return VisitCountAgent(mdp, VisitCountConfig(num_episodes, epsilon, delta), rng, billboard, compose=True)
