"""A private UCB-VI written as research code often is: one class, a closed loop, numpy's global generator for
everything — the noise and the coins that break ties.

This module does not import dpverify (:mod:`closed_loop_ucbvi_adapter` makes it auditable). Tabular UCB-VI
(Azar, Osband & Munos 2017) with Gaussian noise on its counts: each episode k it privatises, for every stage h
from H down to 1, the visit counts N_h(s, a) and the transition counts N_h(s, a, s') of the users 1..k−1 it has
served, each plus fresh N(0, σ²) noise, and plans optimistically with them (empirical transitions from the
noisy counts, clipped at 0; a bonus β·(H − h)/√max(Ñ_h(s, a), 1); values clipped to H − h); it breaks ties
between greedy actions with ``np.random.choice``. A replaced user moves each count vector by at most √2 (ℓ2),
and each user is read by the 2H releases of each of the K − 1 later episodes: ρ0 = ρ/(2H(K − 1)),
σ = √2/√(2ρ0), ρ from (ε, δ) by ε = ρ + 2√(ρ log(1/δ)) (Bun & Steinke 2016, Proposition 1.3).

The options are the bugs third parties plant in such code (the defaults are correct):

* ``episode_seed=True`` — ``np.random.seed(k)`` at every episode: the noise is a known function of k;
* ``root_means=True`` — the first action also weighs the raw running mean of the returns that followed each
  first action (data read outside the privatised counts);
* ``noise_scale=0.5`` — half the noise the calibration asks for.
"""

from __future__ import annotations

import math

import numpy as np

BONUS = 0.1


class PrivateUcbVi:
    def __init__(self, rewards, num_episodes, epsilon=1.0, delta=1e-5, seed=0, episode_seed=False,
                 root_means=False, noise_scale=1.0):
        np.random.seed(seed)
        self.rewards = np.asarray(rewards, dtype=float)  # (H, S, A)
        self.H, self.S, self.A = self.rewards.shape
        self.K = num_episodes
        log_term = math.log(1.0 / delta)
        rho = (math.sqrt(log_term + epsilon) - math.sqrt(log_term)) ** 2
        self.sensitivity = math.sqrt(2.0)
        self.sigma = self.sensitivity / math.sqrt(2.0 * rho / (2 * self.H * max(self.K - 1, 1)))
        self.episode_seed, self.root_means, self.noise_scale = episode_seed, root_means, noise_scale
        self.visits = np.zeros((self.H, self.S, self.A))
        self.moves = np.zeros((self.H, self.S, self.A, self.S))
        self.root_returns, self.root_counts = np.zeros(self.A), np.zeros(self.A)

    def privatize(self, counts):
        return counts + np.random.normal(0.0, self.sigma * self.noise_scale, counts.shape)

    def plan(self):
        q = np.zeros((self.H, self.S, self.A))
        v = np.zeros(self.S)
        for h in reversed(range(self.H)):
            visits = self.privatize(self.visits[h])
            moves = np.maximum(self.privatize(self.moves[h]), 0.0)
            totals = moves.sum(axis=-1, keepdims=True)
            p = np.where(totals > 0, moves / np.maximum(totals, 1e-12), 1.0 / self.S)
            bonus = BONUS * (self.H - h) / np.sqrt(np.maximum(visits, 1.0))
            q[h] = np.minimum(self.rewards[h] + p @ v + bonus, self.H - h)
            v = q[h].max(axis=-1)
        return q

    def choose(self, q, h, state):
        values = q[h, state].copy()
        if h == 0 and self.root_means:
            values += self.root_returns / np.maximum(self.root_counts, 1.0)
        return int(np.random.choice(np.flatnonzero(values >= values.max() - 1e-9)))

    def run(self, env):
        for k in range(1, self.K + 1):
            if self.episode_seed:
                np.random.seed(k)
            q = self.plan()
            state, _ = env.reset()
            first, total = None, 0.0
            for h in range(self.H):
                action = self.choose(q, h, state)
                first = action if first is None else first
                next_state, reward, terminated, truncated, _ = env.step(action)
                self.visits[h, state, action] += 1.0
                self.moves[h, state, action, next_state] += 1.0
                total += reward
                state = next_state
            self.root_returns[first] += total
            self.root_counts[first] += 1.0
