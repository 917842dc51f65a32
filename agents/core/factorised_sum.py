"""Running sums by the factorisation mechanism: a square-root Toeplitz factor in buffered (BLT) form.

A running sum over users releases the prefixes A x (A the lower-triangular matrix of ones). The *factorisation*
(matrix) mechanism writes A = B C, releases C x + z with fresh noise z and estimates the prefixes as
B(Cx + z) = Ax + Bz (Li, Miklau, Hay, McGregor & Rastogi 2015; for running sums Fichtenberger, Henzinger &
Upadhyay 2023 and Henzinger, Upadhyay & Upadhyay 2023). Each user u contributes one term x_u, so its sensitivity
is Δ times the norm of column u of C, and the error of prefix k is the norm of row k of B. The binary tree is one
such factorisation; the square root C = A^(1/2) — c_j = binom(2j, j)/4^j, the coefficients of (1 − x)^(−1/2) —
is within a factor 1 + o(1) of the best for the largest prefix error (Fichtenberger et al. 2023): at K = 10⁴
its sensitivity² × worst prefix variance is 16.0 against 182 for the binary tree and 102 for the full tree with
Honaker's estimator (benchmarks/bench_estimators.py; docs/private_agents.md).

The exact square root costs O(k) per step. Its buffered linear Toeplitz (BLT) approximation (McMahan, Dvijotham
et al. 2024, "Efficient and near-optimal noise generation for streaming differential privacy") keeps p buffers:
c_0 = 1, c_j = Σ_i θ_i ω_i^(j−1), so (Cx)_k = x_k + Σ_i θ_i S_i with S_i ← ω_i S_i + x_k, and the decoder
v = C⁻¹y runs the same recursion backwards, v_k = y_k − Σ_i θ_i T_i, T_i ← ω_i T_i + v_k; the prefix estimate is
Σ_(t ≤ k) v_t = Σ x_t + (A C⁻¹ z)_k. :func:`square_root_blt` fits θ ≥ 0 on fixed time scales by non-negative least
squares on the relative error of c_j over a log grid of j ≤ K. Only utility depends on the fit: sensitivity
(Σ_(j<K) c_j², the worst column), accounting (ledger pattern :class:`dpverify.ledger.ToeplitzFactor`) and
the prefix noise (:func:`prefix_noise_factors`, Σ_(j<k) b_j² for the coefficients b of A C⁻¹) are computed from
the fitted factor itself.

Privacy under adaptivity: release k has sensitivity c_(k−u)·Δ to user u given the earlier releases (the other
users' terms depend on user u only through published values), so zCDP composes per release to
ρ_u = Σ_k c²_(k−u) Δ²/(2σ²) (Denisov, McMahan, Rush, Smith & Thakurta 2022, for lower-triangular C).
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.optimize import nnls

from dpverify import _validate
from dpverify.errors import InvalidParameterError, NumericalError
from dpverify.ledger import ToeplitzFactor
from dpverify.mechanisms import Mechanism

from .billboard import Billboard, stages

#: Buffers of the default BLT factor (6 already reach within 0.3% of the exact square root's error at K = 10⁵).
DEFAULT_BUFFERS = 8


def square_root_coefficients(n: int) -> np.ndarray:
    """c_j = binom(2j, j)/4^j for j = 0..n−1 (the exact square root of A), by c_j = c_(j−1)(2j − 1)/(2j)."""
    j = np.arange(1, _validate.integer("n", n, minimum=1), dtype=float)
    return np.concatenate(([1.0], np.cumprod((2.0 * j - 1.0) / (2.0 * j))))


@functools.cache
def square_root_blt(episodes: int, buffers: int = DEFAULT_BUFFERS) -> ToeplitzFactor:
    """The BLT factor whose c_j approximates the square root's for j = 1..K (module docstring): time scales
    τ_i log-spaced on [1, K] (ω_i = 1 − 1/(τ_i + 1)), θ ≥ 0 minimising the relative error on 400 log-spaced j."""
    K = _validate.integer("episodes", episodes, minimum=1)
    p = _validate.integer("buffers", buffers, minimum=1)
    scales = np.geomspace(1.0, max(K, 2), p)
    omegas = 1.0 - 1.0 / (scales + 1.0)
    lags = np.unique(np.geomspace(1, max(K, 2), 400).round().astype(np.int64))
    target = square_root_coefficients(int(lags.max()) + 1)[lags]
    design = omegas[None, :] ** (lags[:, None] - 1.0) / target[:, None]
    thetas, _ = nnls(design, np.ones(len(lags)))
    return ToeplitzFactor(tuple(float(t) for t in thetas), tuple(float(w) for w in omegas))


def prefix_noise_factors(factor: ToeplitzFactor, episodes: int) -> np.ndarray:
    """For n = 0..K−1: Σ_(j<n) b_j², b the coefficients of A C⁻¹ — the noise variance of the estimated prefix
    over users 1..n (read at the start of episode n + 1), in units of one release's noise variance. Raises
    NumericalError if the decoder's recursion is not finite (a factor whose inverse is unstable)."""
    K = _validate.integer("episodes", episodes, minimum=1)
    thetas, omegas = np.array(factor.thetas), np.array(factor.omegas)
    buffers = np.zeros(len(thetas))
    b, total = np.zeros(K), 0.0
    for k in range(K):  # the impulse response of the decoder: y = e_1
        v = (1.0 if k == 0 else 0.0) - float(thetas @ buffers)
        buffers = omegas * buffers + v
        total += v
        b[k] = total
    if not np.all(np.isfinite(b)):
        raise NumericalError("the Toeplitz factor's decoder diverged (its inverse is unstable)")
    return np.concatenate(([0.0], np.cumsum(b[:-1] ** 2)))


def max_prefix_noise_factor(factor: ToeplitzFactor, episodes: int) -> float:
    """The worst case over episodes k ≤ K of :func:`prefix_noise_factors`, at least 1."""
    return max(1.0, float(prefix_noise_factors(factor, episodes).max()))


class FactorisedSum:
    """A running sum of per-user terms, per stage, by the factorisation mechanism with a BLT factor.

    At the k-th call of :meth:`add` (user k), row k of C·x is formed from the buffers and published for every
    stage through ``billboard.publish_block`` (stages 1..H, users ``factor``) with fresh noise;
    :attr:`prefix` is then the decoded estimate of the sum over users 1..k (module docstring). Raw terms and
    buffers never leave this object.
    """

    def __init__(self, billboard: Billboard, family: str, mechanism: Mechanism, factor: ToeplitzFactor, horizon: int,
                 shape: tuple[int, ...], max_users: int, rng: np.random.Generator) -> None:
        self.billboard, self.family, self.mechanism, self.factor, self.rng = billboard, family, mechanism, factor, rng
        self.horizon = horizon
        self.max_users = _validate.integer("max_users", max_users, minimum=1)
        self._thetas = np.array(factor.thetas).reshape((-1,) + (1,) * (1 + len(shape)))
        self._omegas = np.array(factor.omegas).reshape(self._thetas.shape)
        self._encoder = np.zeros((len(factor.thetas), horizon, *shape))  # S_i: Σ_(t<k) ω_i^(k−1−t) x_t
        self._decoder = np.zeros_like(self._encoder)  # T_i: Σ_(t<k) ω_i^(k−1−t) v_t
        self.prefix = np.zeros((horizon, *shape))
        self.count = 0

    def add(self, terms: np.ndarray | None) -> None:
        """Add user k's terms (shape (H, *shape)) and publish row k of C·x; None is an empty slot (the row is still
        published, with nothing of slot k in it)."""
        k = self.count + 1
        if k > self.max_users:
            raise InvalidParameterError("episodes", f"must be <= {self.max_users} (the calibrated K)", k)
        x = np.zeros_like(self.prefix) if terms is None else np.asarray(terms, dtype=float)
        row = x + (self._thetas * self._encoder).sum(axis=0)
        labels = stages(self.family, self.mechanism, self.horizon)
        released = np.asarray(self.billboard.publish_block(k, labels, row, self.factor, self.rng))
        decoded = released - (self._thetas * self._decoder).sum(axis=0)
        self._encoder = self._omegas * self._encoder + x
        self._decoder = self._omegas * self._decoder + decoded
        self.prefix = self.prefix + decoded
        self.count = k


__all__ = [
    "DEFAULT_BUFFERS",
    "FactorisedSum",
    "max_prefix_noise_factor",
    "prefix_noise_factors",
    "square_root_blt",
    "square_root_coefficients",
]
