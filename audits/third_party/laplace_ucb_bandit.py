"""A private UCB bandit written as research code often is: its own bandit interface, its own loop, its own noise.

This module does not import dpverify. It stands for code written elsewhere, and :mod:`laplace_ucb_adapter`
audits it unedited. The learner is UCB1 (Auer, Cesa-Bianchi & Fischer 2002) on privately released reward sums,
released lazily at the rounds t = 1, 2, 4, 8, … (the doubling trick of the private-bandit literature, e.g.
Sajed & Sheffet 2019): at a release round the vector of the A arms' reward sums over rounds 1..t−1 is
published with Laplace noise of scale b on every coordinate; in between, the arm maximising
S̃_a / N_a + √(2 log(t + 1) / n_a) is pulled (S̃_a, N_a: the published sum and count, n_a: the live count).

The arm of a round depends on the published sums and the learner's own choices only, so replacing one user
(their reward r ∈ [0, 1]) moves one coordinate of later sums by at most 1: ℓ1 sensitivity 1. The J = ⌊log₂ K⌋ + 1
releases each get ε₀ with J·ε₀²/2 = ρ (ε₀-DP ⇒ ε₀²/2-zCDP, Bun & Steinke 2016, Proposition 1.4), ρ from (ε, δ)
by ε = ρ + 2√(ρ log(1/δ)) (ibid., Proposition 1.3); b = 1/ε₀.

``fresh_noise=False`` is the planted bug: one noise vector drawn in the constructor and added at every release
(the difference of two releases is then noise-free).

The bandit interface it expects: ``env.pull(arm) -> reward`` and ``env.num_arms``.
"""

import math

import numpy as np


class LaplaceUcbBandit:
    def __init__(self, num_arms, num_rounds, epsilon=1.0, delta=1e-5, rng=None, fresh_noise=True):
        self.A, self.T = num_arms, num_rounds
        self.rng = rng if rng is not None else np.random.default_rng()
        self.fresh_noise = fresh_noise
        self.release_rounds = [2 ** j for j in range(int(math.log2(num_rounds)) + 1)]
        log_term = math.log(1.0 / delta)
        rho = (math.sqrt(log_term + epsilon) - math.sqrt(log_term)) ** 2
        self.epsilon0 = math.sqrt(2.0 * rho / len(self.release_rounds))
        self.scale = 1.0 / self.epsilon0
        self.noise = self.rng.laplace(0.0, self.scale, size=self.A)
        self.rewards = []

    def private_sums(self, sums):
        if self.fresh_noise:
            self.noise = self.rng.laplace(0.0, self.scale, size=self.A)
        return sums + self.noise

    def run(self, env):
        sums, counts = np.zeros(self.A), np.zeros(self.A)
        published, published_counts = np.zeros(self.A), np.zeros(self.A)
        for t in range(1, self.T + 1):
            if t in self.release_rounds:
                published, published_counts = self.private_sums(sums), counts.copy()
            seen = np.maximum(published_counts, 1.0)
            index = published / seen + np.sqrt(2.0 * math.log(t + 1) / np.maximum(counts, 1.0))
            index[counts == 0] = np.inf
            arm = int(np.argmax(index))
            reward = env.pull(arm)
            sums[arm] += reward
            counts[arm] += 1
            self.rewards.append(reward)
