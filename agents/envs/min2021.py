"""The synthetic linear MDP of Min et al. 2021, used in Sahu 2025 §4 (Figure 1).

S = {0, 1}, A = {0, …, A−1} (A = 100 in the paper, at most 256), d = 10:

* u_a ∈ {−1, +1}⁸ is the 8-bit binary code of a (bit i of a, least significant first, mapped
  b ↦ 2b − 1); δ(s, a) = 1{s = 0 and a = 0};
* φ(s, a) = (u_a, δ(s, a), 1 − δ(s, a)), stage-independent, ‖φ‖₂ = 3 (the raw form);
* μ_h(s') = (0, …, 0, (1 − s') ⊕ α_h, s' ⊕ α_h) with α_h ∈ {0, 1} (⊕ = XOR);
* θ_h = (0, …, 0, r, 1 − r).

So r_h(s, a) = r if (s, a) = (0, 0) else 1 − r, and the transitions are deterministic: from (0, 0) the
next state is α_h, from anything else 1 − α_h. Only "a = 0 or not, in state 0" matters; with
D_h = V*_h(0) − V*_h(1) one has D_H = 2r − 1 (with the paper's 1-indexed H) and
D_h = max(0, (2r − 1) + (1 − 2α_h)·D_{h+1}); ties between optimal actions occur (every a ≠ 0 is
equivalent, and a = 0 ties with them when D_h = 0 in state 0).

The rescaled form (``rescaled=True``, the default) is the same MDP with φ/3, 3μ_h, 3θ_h, so
‖φ‖₂ = 1 as the privacy analyses of Sahu 2025 assume; ``rescaled=False``
gives the raw form with ``feature_norm_bound = 3``.

Defaults: H = 20 (Sahu 2025 §4), A = 100, r = 0.99 (a parameter), initial
distribution uniform on S, α_h drawn i.i.d. uniform on {0, 1} once per instance from
``numpy.random.default_rng(alpha_seed)`` with ``alpha_seed = 2021`` unless ``alphas`` is given.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpverify import _validate
from dpverify.errors import InvalidParameterError

from .linear_mdp import LinearMDP, require_environment_memory

NUM_STATES = 2
CODE_BITS = 8
DIM = CODE_BITS + 2
MAX_ACTIONS = 2**CODE_BITS
DEFAULT_HORIZON = 20
DEFAULT_NUM_ACTIONS = 100
DEFAULT_REWARD = 0.99
DEFAULT_ALPHA_SEED = 2021


def action_codes(num_actions: int) -> np.ndarray:
    """u_a for a = 0..A−1: shape (A, 8), entries ±1 (bit i of a, least significant first)."""
    bits = (np.arange(num_actions)[:, None] >> np.arange(CODE_BITS)[None, :]) & 1
    return 2.0 * bits - 1.0


def min2021_features(num_actions: int = DEFAULT_NUM_ACTIONS) -> np.ndarray:
    """The raw features φ(s, a) = (u_a, δ(s, a), 1 − δ(s, a)): shape (2, A, 10), ‖φ‖₂ = 3."""
    codes = action_codes(num_actions)
    features = np.zeros((NUM_STATES, num_actions, DIM))
    features[:, :, :CODE_BITS] = codes[None, :, :]
    delta = np.zeros((NUM_STATES, num_actions))
    delta[0, 0] = 1.0
    features[:, :, CODE_BITS] = delta
    features[:, :, CODE_BITS + 1] = 1.0 - delta
    return features


def default_alphas(horizon: int, alpha_seed: int = DEFAULT_ALPHA_SEED) -> tuple[int, ...]:
    """α_1..α_H i.i.d. uniform on {0, 1} from ``numpy.random.default_rng(alpha_seed)``."""
    rng = np.random.default_rng(np.random.SeedSequence(alpha_seed))
    return tuple(int(x) for x in rng.integers(0, 2, size=horizon))


def min2021_mdp(
    horizon: int = DEFAULT_HORIZON,
    num_actions: int = DEFAULT_NUM_ACTIONS,
    reward: float = DEFAULT_REWARD,
    alphas: Sequence[int] | None = None,
    initial_distribution: Sequence[float] = (0.5, 0.5),
    rescaled: bool = True,
    alpha_seed: int = DEFAULT_ALPHA_SEED,
) -> LinearMDP:
    """The Min et al. 2021 linear MDP (module docstring); ``rescaled`` selects ‖φ‖ = 1 (else 3)."""
    horizon = _validate.integer("horizon", horizon, minimum=1)
    num_actions = _validate.integer("num_actions", num_actions, minimum=2)
    if num_actions > MAX_ACTIONS:
        raise InvalidParameterError("num_actions", f"must be <= {MAX_ACTIONS} (8-bit action codes)", num_actions)
    per_stage = DIM * NUM_STATES + DIM + 2.0 * NUM_STATES * num_actions * (NUM_STATES + DIM)  # μ, θ, φ, transitions
    require_environment_memory({"horizon": horizon}, 8.0 * horizon * per_stage, "the Min et al. 2021 linear MDP")
    reward = _validate.real("reward", reward)
    if not 0.0 <= reward <= 1.0:
        raise InvalidParameterError("reward", "must lie in [0, 1]", reward)
    if alphas is None:
        alphas = default_alphas(horizon, _validate.integer("alpha_seed", alpha_seed, minimum=0))
    alphas = tuple(alphas)
    if len(alphas) != horizon:
        raise InvalidParameterError("alphas", f"must have length horizon = {horizon}", alphas)
    for value in alphas:
        if isinstance(value, bool) or value not in (0, 1):
            raise InvalidParameterError("alphas", "must contain only 0 and 1", alphas)
    if not isinstance(rescaled, bool):
        raise InvalidParameterError("rescaled", "must be True or False", rescaled)

    scale = 3.0 if rescaled else 1.0
    features = min2021_features(num_actions) / scale
    mu = np.zeros((horizon, DIM, NUM_STATES))
    theta = np.zeros((horizon, DIM))
    for h, alpha in enumerate(alphas):
        for next_state in range(NUM_STATES):
            mu[h, CODE_BITS, next_state] = (1 - next_state) ^ alpha
            mu[h, CODE_BITS + 1, next_state] = next_state ^ alpha
        theta[h, CODE_BITS] = reward
        theta[h, CODE_BITS + 1] = 1.0 - reward
    return LinearMDP(
        features=features,
        mu=mu * scale,
        theta=theta * scale,
        initial_distribution=np.asarray(initial_distribution, dtype=np.float64),
        feature_norm_bound=1.0 if rescaled else 3.0,
        name="min2021" if rescaled else "min2021-raw",
    )


def optimal_gap_recursion(alphas: Sequence[int], reward: float = DEFAULT_REWARD) -> np.ndarray:
    """D_h = V*_h(0) − V*_h(1) by a closed-form recursion (0-indexed h; D_H = 0 beyond).

    D_h = max(0, (2r − 1) + (1 − 2α_h)·D_{h+1}) with D_{H} = 0 after the last stage. An independent
    check of :func:`dpverify.agents.core.planning.optimal_values` on this MDP.
    """
    horizon = len(alphas)
    gaps = np.zeros(horizon + 1)
    for h in range(horizon - 1, -1, -1):
        gaps[h] = max(0.0, (2 * reward - 1) + (1 - 2 * alphas[h]) * gaps[h + 1])
    return gaps[:horizon]
