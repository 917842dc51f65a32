"""Random valid linear MDPs and linear mixture MDPs, for property tests and small learning tests.

Constructions (valid by design, then validated again by the model classes):

* :func:`random_linear_mdp` — φ_h(s, a) on the probability simplex of R^d (Dirichlet(concentration)),
  so ‖φ‖₂ ≤ 1; each row μ_h[i, :] a probability vector over next states (Dirichlet), so
  P_h(·|s,a) = Σ_i φ_i μ_h[i, :] is a convex combination of distributions; θ_h ∈ [0, 1]^d uniform, so
  r_h(s,a) = ⟨φ, θ_h⟩ ∈ [0, 1].
* :func:`random_linear_mixture_mdp` — ψ_h(·|s,a)_i = q_i(·|s,a)/√d with q_i a distribution over next
  states, θ_h = √d·w_h with w_h on the simplex: P_h(·|s,a) = Σ_i w_i q_i(·|s,a) is a distribution and
  ‖Σ_s' ψ(s'|s,a)V(s')‖₂ ≤ 1 for V ∈ [0, 1]^S; rewards uniform on [0, 1].

A small Dirichlet concentration gives near-deterministic, near-vertex instances (more structure to
learn); 1.0 gives uniform ones. Randomness only from the caller's ``numpy.random.Generator``.
"""

from __future__ import annotations

import numpy as np

from dpverify import _validate

from .linear_mdp import LinearMDP, LinearMixtureMDP, mixture_feature_norm, require_environment_memory


def _sizes(num_states: int, num_actions: int, dim: int, horizon: int) -> tuple[int, int, int, int]:
    return (
        _validate.integer("num_states", num_states, minimum=1),
        _validate.integer("num_actions", num_actions, minimum=1),
        _validate.integer("dim", dim, minimum=1),
        _validate.integer("horizon", horizon, minimum=1),
    )


def random_linear_mdp(
    rng: np.random.Generator,
    num_states: int = 3,
    num_actions: int = 2,
    dim: int = 3,
    horizon: int = 3,
    concentration: float = 0.5,
    stage_independent_features: bool = True,
) -> LinearMDP:
    """A random linear MDP with ‖φ‖₂ ≤ 1 (module docstring); initial distribution Dirichlet(1)."""
    num_states, num_actions, dim, horizon = _sizes(num_states, num_actions, dim, horizon)
    concentration = _validate.positive("concentration", concentration)
    stages = 1 if stage_independent_features else horizon
    H, S, A, d = float(horizon), float(num_states), float(num_actions), float(dim)
    # features, μ and the transitions the model derives (H·S·A·S)
    require_environment_memory({"num_states": num_states, "num_actions": num_actions, "dim": dim, "horizon": horizon},
                               8.0 * (stages * S * A * d + H * d * S + 2.0 * H * S * A * S), "a random linear MDP")
    features = rng.dirichlet(np.full(dim, concentration), size=(stages, num_states, num_actions))
    features = np.broadcast_to(features, (horizon, num_states, num_actions, dim))
    mu = rng.dirichlet(np.full(num_states, concentration), size=(horizon, dim))  # (H, d, S)
    theta = rng.random((horizon, dim))
    initial = rng.dirichlet(np.ones(num_states))
    return LinearMDP(features, mu, theta, initial, feature_norm_bound=1.0, name="random-linear")


def random_linear_mixture_mdp(
    rng: np.random.Generator,
    num_states: int = 3,
    num_actions: int = 2,
    dim: int = 3,
    horizon: int = 3,
    concentration: float = 0.5,
) -> LinearMixtureMDP:
    """A random linear mixture MDP with ‖ψ_V‖₂ ≤ 1 for V ∈ [0, 1]^S (module docstring)."""
    num_states, num_actions, dim, horizon = _sizes(num_states, num_actions, dim, horizon)
    concentration = _validate.positive("concentration", concentration)
    H, S, A, d = float(horizon), float(num_states), float(num_actions), float(dim)
    require_environment_memory({"num_states": num_states, "num_actions": num_actions, "dim": dim, "horizon": horizon},
                               8.0 * (3.0 * H * S * A * S * d + 2.0 * H * S * A * S), "a random linear mixture MDP")
    # q[h, s, a, i, :] is a distribution over next states; basis[..., s', i] = q[..., i, s'] / sqrt(d)
    q = rng.dirichlet(np.full(num_states, concentration), size=(horizon, num_states, num_actions, dim))
    basis = np.moveaxis(q, -2, -1) / np.sqrt(dim)
    weights = rng.dirichlet(np.full(dim, concentration), size=horizon)
    theta = weights * np.sqrt(dim)
    rewards = rng.random((horizon, num_states, num_actions))
    initial = rng.dirichlet(np.ones(num_states))
    bound = max(mixture_feature_norm(basis), 1e-300)
    return LinearMixtureMDP(basis, theta, rewards, initial, feature_norm_bound=bound, name="random-mixture")
