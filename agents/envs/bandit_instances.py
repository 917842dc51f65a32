"""Bandit instances: finite-armed stochastic bandits and linear contextual bandits, fixed by a seed.

* :func:`armed_bandit` — A arms, one context, one-hot features (x_a = e_a, d = A, θ = the means). Its
  ``instance`` is ``"random"`` (means uniform on [0.1, 0.9], drawn from ``seed``), ``"hard"`` (one arm at
  ½ + gap, the others at ½: the instance of the minimax lower bounds, e.g. Lattimore & Szepesvári 2020,
  §15.2) or ``"audit"`` (the audit bandit of :func:`dpverify.agents.envs.bandit.audit_bandit`).
* :func:`linear_bandit` — a linear contextual bandit with C contexts of A arms in ℝ^d (d ≥ 2):
  x = (1/√2, u/√2) with u uniform on the unit sphere of ℝ^{d−1}, θ = (1/√2, v/√2) with ‖v‖ = 1, so that
  ‖x‖ = 1 and m(c, a) = ⟨θ, x⟩ = ½ + ⟨u, v⟩/2 ∈ [0, 1]; ``instance="audit"`` gives the audit bandit.

Rewards (``rewards``): ``"bernoulli"`` — levels {0, 1}, P(1) = the mean; ``"gaussian"`` — a Gaussian of
standard deviation ``noise_std`` discretised on ``num_levels`` equally spaced levels of [0, 1] (bounded
noise), its location solved by bisection so that its mean equals the arm's mean to 10⁻¹² (the mean used for
regret is always the exact mean of the outcome law, :attr:`~dpverify.agents.envs.bandit.Bandit.means`).
"""

from __future__ import annotations

import math

import numpy as np

from dpverify import _validate
from dpverify.errors import InvalidParameterError

from .bandit import Bandit, audit_bandit

REWARD_MODELS: tuple[str, ...] = ("bernoulli", "gaussian")
ARMED_INSTANCES: tuple[str, ...] = ("random", "hard", "audit")
LINEAR_INSTANCES: tuple[str, ...] = ("random", "audit")
#: Bisection steps for the location of a discretised Gaussian (the interval halves each step).
_BISECTION_STEPS = 200


def discretised_gaussian(mean: float, std: float, levels: np.ndarray) -> np.ndarray:
    """Probabilities over ``levels`` (increasing, from 0 to 1) proportional to exp(−(r − m)²/(2σ²)), with the
    location m chosen so that the mean is ``mean`` (a mean at 0 or 1 puts all mass there)."""
    if mean <= levels[0]:
        return np.eye(len(levels))[0]
    if mean >= levels[-1]:
        return np.eye(len(levels))[-1]

    def law(location: float) -> np.ndarray:
        logits = -((levels - location) ** 2) / (2.0 * std * std)
        weights = np.exp(logits - logits.max())
        return weights / weights.sum()

    low, high = -1.0 - 40.0 * std, 2.0 + 40.0 * std
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (low + high)
        if float(law(middle) @ levels) < mean:
            low = middle
        else:
            high = middle
    return law(0.5 * (low + high))


def _outcomes(means: np.ndarray, rewards: str, noise_std: float, num_levels: int) -> tuple[np.ndarray, np.ndarray]:
    """(outcome probabilities (..., L), levels (L,)) of the reward model for the given means."""
    _validate.one_of("rewards", rewards, REWARD_MODELS)
    if rewards == "bernoulli":
        return np.stack([1.0 - means, means], axis=-1), np.array([0.0, 1.0])
    std = _validate.positive("noise_std", noise_std)
    levels = np.linspace(0.0, 1.0, _validate.integer("num_levels", num_levels, minimum=2))
    laws = np.stack([discretised_gaussian(float(m), std, levels) for m in means.reshape(-1)])
    return laws.reshape(*means.shape, len(levels)), levels


def armed_bandit(num_arms: int = 10, seed: int = 0, instance: str = "random", gap: float = 0.1,
                 rewards: str = "bernoulli", noise_std: float = 0.2, num_levels: int = 11,
                 means: list[float] | tuple[float, ...] | None = None) -> Bandit:
    """A finite-armed stochastic bandit (module docstring); ``means`` overrides the instance's means."""
    A = _validate.integer("num_arms", num_arms, minimum=2)
    seed = _validate.integer("seed", seed, minimum=0)
    _validate.one_of("instance", instance, ARMED_INSTANCES)
    if instance == "audit":
        return audit_bandit(A, A)
    if means is not None:
        arm_means = np.asarray(means, dtype=float)
        if arm_means.shape != (A,) or np.any(~np.isfinite(arm_means)) or np.any((arm_means < 0) | (arm_means > 1)):
            raise InvalidParameterError("means", f"must be {A} numbers in [0, 1] (one per arm)", means)
    elif instance == "hard":
        gap = _validate.positive("gap", gap)
        if gap > 0.5:
            raise InvalidParameterError("gap", "must be <= 0.5 (the best arm's mean is 1/2 + gap)", gap)
        arm_means = np.full(A, 0.5)
        arm_means[np.random.default_rng(np.random.SeedSequence(seed)).integers(A)] = 0.5 + gap
    else:
        arm_means = np.random.default_rng(np.random.SeedSequence(seed)).uniform(0.1, 0.9, A)
    outcomes, levels = _outcomes(arm_means, rewards, noise_std, num_levels)
    laws = outcomes[None]
    exact = laws @ levels
    name = f"{'bernoulli' if rewards == 'bernoulli' else 'gaussian'}-bandit"
    return Bandit(np.eye(A)[None], laws, levels, np.ones(1), 1.0, exact[0], name=name)


def linear_bandit(dim: int = 5, num_arms: int = 10, num_contexts: int = 20, seed: int = 0, instance: str = "random",
                  rewards: str = "bernoulli", noise_std: float = 0.2, num_levels: int = 11) -> Bandit:
    """A linear contextual bandit with ‖x‖ = 1 and means in [0, 1] (module docstring)."""
    d = _validate.integer("dim", dim, minimum=2)
    A = _validate.integer("num_arms", num_arms, minimum=2)
    C = _validate.integer("num_contexts", num_contexts, minimum=1)
    seed = _validate.integer("seed", seed, minimum=0)
    _validate.one_of("instance", instance, LINEAR_INSTANCES)
    if instance == "audit":
        return audit_bandit(d, A)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    directions = rng.standard_normal((C, A, d - 1))
    directions /= np.linalg.norm(directions, axis=-1, keepdims=True)
    features = np.concatenate([np.full((C, A, 1), 1.0 / math.sqrt(2.0)), directions / math.sqrt(2.0)], axis=-1)
    v = rng.standard_normal(d - 1)
    theta = np.concatenate([[1.0 / math.sqrt(2.0)], v / np.linalg.norm(v) / math.sqrt(2.0)])
    means = np.clip(features @ theta, 0.0, 1.0)  # ½ + ⟨u, v⟩/2 lies in [0, 1]; the clip removes rounding only
    outcomes, levels = _outcomes(means, rewards, noise_std, num_levels)
    return Bandit(features, outcomes, levels, np.full(C, 1.0 / C), 1.0, theta, name="linear-bandit")


__all__ = ["ARMED_INSTANCES", "LINEAR_INSTANCES", "REWARD_MODELS", "armed_bandit", "discretised_gaussian",
           "linear_bandit"]
