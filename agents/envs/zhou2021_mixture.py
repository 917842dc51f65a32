"""The hard linear mixture MDP of Zhou, Gu & Szepesvári 2021 used in Liao et al. 2021's experiments.

States (S = H + 2, our indices): chain states c_0 … c_{H−1} (indices 0 … H−1; the paper's x_0 … x_{H−1}),
``DEAD = H`` (the paper's x_{H+1}: absorbing, no reward) and ``GOOD = H + 1`` (x_{H+2}: absorbing,
reward 1 at every stage spent there). Episodes start in c_0. Actions a ∈ {−1, +1}^{d−1}
(A = 2^{d−1}; action index i has coordinate j equal to +1 iff bit j of i is set).

Constants: δ = 1/H, Δ = √(δ/K)/(4√2), α = √(1/(1 + Δ(d−1))), β = √(Δ/(1 + Δ(d−1))); μ_h ∈ {−Δ, +Δ}^{d−1}
with i.i.d. uniform signs; θ_h = (1/α, μ_h/β). From chain state c_j (any stage h):

    P_h(c_{j+1} | c_j, a) = 1 − δ − ⟨μ_h, a⟩,   P_h(GOOD | c_j, a) = δ + ⟨μ_h, a⟩,

with c_H ≡ DEAD (the chain ends in the no-reward absorbing state). The basis realising this,
P_h(s'|s,a) = ⟨ψ(s'|s,a), θ_h⟩, is ψ(c_{j+1}|c_j,a) = (α(1−δ), −βa), ψ(GOOD|c_j,a) = (αδ, βa) and
ψ(s|s,a) = (α, 0) for the two absorbing states (zero elsewhere). Since α² + (d−1)β² = 1,
‖Σ_s' ψ(s'|s,a)V(s')‖₂ ≤ 1 for V ∈ [0, 1]^S (``feature_norm_bound = 1``). The optimal action at stage h
is sign(μ_h) (unique: ⟨μ_h, a⟩ is maximised only there).

Defaults (Liao et al. 2021's experiment): d = 5, H = 6, K = 10⁴ (K enters Δ), signs from
``numpy.random.default_rng(sign_seed)`` with ``sign_seed = 2021``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpverify import _validate
from dpverify.errors import InvalidParameterError

from .linear_mdp import LinearMixtureMDP, require_environment_memory

DEFAULT_DIM = 5
DEFAULT_HORIZON = 6
DEFAULT_EPISODES = 10_000
DEFAULT_SIGN_SEED = 2021


def hypercube_actions(dim: int) -> np.ndarray:
    """The action vectors a ∈ {−1, +1}^{d−1}: shape (2^{d−1}, d−1)."""
    count = 2 ** (dim - 1)
    bits = (np.arange(count)[:, None] >> np.arange(dim - 1)[None, :]) & 1
    return 2.0 * bits - 1.0


def zhou2021_constants(dim: int, horizon: int, num_episodes: int) -> dict[str, float]:
    """δ, Δ, α, β of the instance (module docstring)."""
    delta = 1.0 / horizon
    gap = math.sqrt(delta / num_episodes) / (4.0 * math.sqrt(2.0))
    alpha = math.sqrt(1.0 / (1.0 + gap * (dim - 1)))
    beta = math.sqrt(gap / (1.0 + gap * (dim - 1)))
    return {"delta": delta, "Delta": gap, "alpha": alpha, "beta": beta}


def zhou2021_mixture_mdp(
    dim: int = DEFAULT_DIM,
    horizon: int = DEFAULT_HORIZON,
    num_episodes: int = DEFAULT_EPISODES,
    signs: Sequence[Sequence[int]] | None = None,
    sign_seed: int = DEFAULT_SIGN_SEED,
) -> LinearMixtureMDP:
    """The Zhou et al. 2021 hard instance (module docstring). ``signs`` (H × (d−1), entries ±1) fixes μ_h."""
    dim = _validate.integer("dim", dim, minimum=2)
    if dim > 13:
        raise InvalidParameterError("dim", "must be <= 13 (2^(d-1) actions are enumerated)", dim)
    horizon = _validate.integer("horizon", horizon, minimum=2)
    num_episodes = _validate.integer("num_episodes", num_episodes, minimum=1)
    S, A = float(horizon + 2), 2.0 ** (dim - 1)  # the chain, two absorbing states; the hypercube's actions
    require_environment_memory({"horizon": horizon, "dim": dim}, 8.0 * (S * A * S * dim + 3.0 * horizon * S * A * S),
                               "the Zhou et al. 2021 linear mixture MDP")
    if signs is None:
        rng = np.random.default_rng(np.random.SeedSequence(_validate.integer("sign_seed", sign_seed, minimum=0)))
        sign_array = rng.choice(np.array([-1.0, 1.0]), size=(horizon, dim - 1))
    else:
        sign_array = np.asarray(signs, dtype=np.float64)
        if sign_array.shape != (horizon, dim - 1) or not np.all(np.abs(sign_array) == 1):
            raise InvalidParameterError("signs", f"must be a {horizon} x {dim - 1} array of +1/-1", signs)
    c = zhou2021_constants(dim, horizon, num_episodes)
    delta, gap, alpha, beta = c["delta"], c["Delta"], c["alpha"], c["beta"]
    mus = gap * sign_array  # (H, d-1)

    actions = hypercube_actions(dim)  # (A, d-1)
    num_actions = actions.shape[0]
    num_states = horizon + 2
    dead, good = horizon, horizon + 1
    basis = np.zeros((num_states, num_actions, num_states, dim))
    for j in range(horizon):
        following = j + 1 if j + 1 < horizon else dead
        basis[j, :, following, 0] = alpha * (1 - delta)
        basis[j, :, following, 1:] = -beta * actions
        basis[j, :, good, 0] = alpha * delta
        basis[j, :, good, 1:] = beta * actions
    for absorbing in (dead, good):
        basis[absorbing, :, absorbing, 0] = alpha
    theta = np.concatenate([np.full((horizon, 1), 1.0 / alpha), mus / beta], axis=1)
    rewards = np.zeros((horizon, num_states, num_actions))
    rewards[:, good, :] = 1.0
    initial = np.zeros(num_states)
    initial[0] = 1.0
    return LinearMixtureMDP(
        basis=basis,
        theta=theta,
        rewards=rewards,
        initial_distribution=initial,
        feature_norm_bound=1.0,
        name="zhou2021",
    )


def optimal_actions(mdp_signs: np.ndarray) -> np.ndarray:
    """Index of the action sign(μ_h) for each stage (bit j set iff the j-th sign is +1)."""
    signs = np.asarray(mdp_signs)
    return ((signs > 0).astype(int) << np.arange(signs.shape[1])[None, :]).sum(axis=1)
