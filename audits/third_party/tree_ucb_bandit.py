"""A pure ε-DP UCB bandit on per-arm binary-mechanism counters, written as research code often is: its own bandit
interface, its own loop, its own noise.

This module does not import dpverify. It stands for code written elsewhere, and :mod:`tree_ucb_adapter` audits it
unedited.

Each arm keeps a tree counter over its own pulls (the binary mechanism of Chan, Shi & Song 2011, one per arm as in
the private UCB of Mishra & Thakurta 2015 and Tossou & Dimitrakakis 2016): node (l, j) of arm a is the sum of the
rewards of that arm's pulls j·2^l + 1, …, (j + 1)·2^l, released with fresh Laplace noise when its block completes
(at the arm's (j + 1)·2^l-th pull). The sum of an arm's first n rewards is read off the released nodes of n's binary
expansion: the latest node of each level l whose bit is set in n.

Privacy: a round's reward r ∈ [0, 1] lies in one node per level of its arm's counter, in at most L = ⌊log₂ T⌋ + 1
nodes, and replacing it moves each of them by at most 1 (ℓ1 sensitivity 1). With the Laplace scale b = L/ε each
node is ε/L-DP, and the run ε-DP by composition (adaptive: which arm a round pulls, so which nodes it lies in,
depends on earlier releases only).

The learner is UCB1 (Auer, Cesa-Bianchi & Fischer 2002) on the private means: each arm once, then the arm
maximising S̃_a / n_a + √(2 log t / n_a).

``half_scale=True`` is the planted bug: the noise is drawn at scale b/2 while the scale stays b.

The bandit interface it expects: ``env.pull(arm) -> reward`` and ``env.num_arms``.
"""

import math

import numpy as np


class TreeUcbBandit:
    def __init__(self, num_arms, num_rounds, epsilon=1.0, rng=None, half_scale=False):
        self.A, self.T = num_arms, num_rounds
        self.rng = rng if rng is not None else np.random.default_rng()
        self.levels = num_rounds.bit_length()  # ⌊log2 T⌋ + 1: the nodes a round can lie in
        self.scale = self.levels / epsilon
        self.noise_scale = self.scale / 2 if half_scale else self.scale
        self.open = np.zeros((num_arms, self.levels))  # each level's running block sum
        self.latest = np.zeros((num_arms, self.levels))  # each level's last released node
        self.pulls = np.zeros(num_arms, dtype=int)
        self.rounds: list[list[int]] = [[] for _ in range(num_arms)]  # the rounds at which each arm was pulled
        self.t = 0
        self.rewards = []

    def noised(self, arm, level, total):
        return total + self.rng.laplace(0.0, self.noise_scale)

    def private_sum(self, arm):
        n = self.pulls[arm]
        return sum(self.latest[arm, level] for level in range(self.levels) if n >> level & 1)

    def update(self, arm, reward):
        self.pulls[arm] += 1
        self.rounds[arm].append(self.t)
        self.open[arm] += reward
        for level in range(self.levels):
            if self.pulls[arm] % (1 << level):
                break
            self.latest[arm, level] = self.noised(arm, level, self.open[arm, level])
            self.open[arm, level] = 0.0

    def run(self, env):
        for t in range(1, self.T + 1):
            self.t = t
            if t <= self.A:
                arm = t - 1
            else:
                means = np.array([self.private_sum(a) for a in range(self.A)]) / self.pulls
                arm = int(np.argmax(means + np.sqrt(2.0 * math.log(t) / self.pulls)))
            reward = env.pull(arm)
            self.update(arm, reward)
            self.rewards.append(reward)
