"""A private LSVI written as research code often is: one class, a closed loop, numpy's global generator.

This module does not import dpverify. It stands for code written elsewhere (in the style of published
research code: ``np.random.seed`` in the constructor, the noise drawn there, a ``run(env)`` that owns the
loop over episodes and steps, the statistics handed straight to ``np.linalg.solve``), and
:mod:`closed_loop_adapter` makes it auditable without editing it (docs/auditing.md, "Adapters for code as it is
written").

Each episode k it plans by a backward pass over h = H, …, 1 from the users 1..k−1 it has served:
Λ_h = Σ φφᵀ + (Z_h + Z_hᵀ)/√2 + λI (Z_h iid N(0, s²): GOE noise), b_h = Σ φ V_{h+1}(s′) + N(0, σ²I),
w_h = Λ_h⁻¹b_h, Q_h = r + φᵀw_h + β‖φ‖_{Λ_h⁻¹}, V_h = clip(max_a Q_h, 0, H − h); then it plays the greedy
policy. With ‖φ‖ ≤ 1 and V ∈ [0, H] a replaced user moves Σφφᵀ by at most √2 (Frobenius) and b_h by at most
2H (ℓ2); the 2H releases of each of the K episodes get ρ/(2HK) each, ρ from (ε, δ) by
ε = ρ + 2√(ρ log(1/δ)) (Bun & Steinke 2016, Proposition 1.3).

``fresh_noise=False`` is the bug: the noise of each stage is drawn once, in the constructor, and reused at every
episode (as in Sahu 2025's Algorithm 1, line 1, as printed). ``fresh_noise=True`` draws it anew each episode.
"""

from __future__ import annotations

import math

import numpy as np

REGULARIZATION = 1.0
BONUS = 0.05


class ClosedLoopLsvi:
    def __init__(self, features, rewards, num_episodes, epsilon=1.0, delta=1e-5, seed=0, fresh_noise=False):
        np.random.seed(seed)
        self.features = np.asarray(features, dtype=float)  # (H, S, A, d)
        self.rewards = np.asarray(rewards, dtype=float)    # (H, S, A)
        self.H, self.S, self.A, self.d = self.features.shape
        self.K = num_episodes
        self.epsilon, self.delta = epsilon, delta
        self.fresh_noise = fresh_noise
        log_term = math.log(1.0 / delta)
        self.rho = (math.sqrt(log_term + epsilon) - math.sqrt(log_term)) ** 2
        rho0 = self.rho / (2 * self.H * self.K)
        self.target_sensitivity, self.gram_sensitivity = 2.0 * self.H, math.sqrt(2.0)
        self.target_std = self.target_sensitivity / math.sqrt(2.0 * rho0)
        self.gram_std = self.gram_sensitivity / (2.0 * math.sqrt(rho0))
        self.draw_noise()
        self.episode_returns = []

    def draw_noise(self):
        z = np.random.normal(0.0, self.gram_std, size=(self.H, self.d, self.d))
        self.gram_noise = (z + np.transpose(z, (0, 2, 1))) / math.sqrt(2.0)
        self.target_noise = np.random.normal(0.0, self.target_std, size=(self.H, self.d))

    def plan(self, gram, next_state_sums):
        q = np.zeros((self.H, self.S, self.A))
        v_next = np.zeros(self.S)
        flat = self.features.reshape(self.H, self.S * self.A, self.d)
        for h in reversed(range(self.H)):
            Lambda = gram[h] + self.gram_noise[h] + REGULARIZATION * np.eye(self.d)
            b = next_state_sums[h] @ v_next + self.target_noise[h]
            w = np.linalg.solve(Lambda, b)
            spread = np.linalg.solve(Lambda, flat[h].T).T
            bonus = BONUS * np.sqrt(np.maximum(np.sum(spread * flat[h], axis=1), 0.0))
            q[h] = self.rewards[h] + (flat[h] @ w + bonus).reshape(self.S, self.A)
            v_next = np.clip(q[h].max(axis=1), 0.0, self.H - h)
        return q

    def run(self, env):
        gram = np.zeros((self.H, self.d, self.d))
        next_state_sums = np.zeros((self.H, self.d, self.S))
        for k in range(self.K):
            if self.fresh_noise and k > 0:
                self.draw_noise()
            q = self.plan(gram, next_state_sums)
            state, _ = env.reset()
            total = 0.0
            for h in range(self.H):
                action = int(np.argmax(q[h, state]))
                next_state, reward, terminated, truncated, _ = env.step(action)
                phi = self.features[h, state, action]
                gram[h] += np.outer(phi, phi)
                next_state_sums[h][:, next_state] += phi
                total += reward
                state = next_state
            self.episode_returns.append(total)
