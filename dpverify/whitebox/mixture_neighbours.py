"""The audit linear mixture MDP: users and an environment that realise LDP-UCRL-VTR's sensitivities.

What is released. User k of LDP-UCRL-VTR (Liao, He & Gu 2021, Algorithm 1, lines 13–14) sends, for
each 0-indexed stage h, ΔΛ_h = φφᵀ (a GOE-privatised matrix, Frobenius sensitivity √2·F²) and
Δu_h = φ·y (a Gaussian vector, ℓ2 sensitivity 2·F·H), where φ = φ_V(s_h, a_h) =
Σ_{s′} ψ_h(s′|s_h, a_h) V_{h+1}(s′), y = V_{h+1}(s_{h+1}), V is the user's optimistic value planned
from the server's broadcast alone, F = H·L, and L bounds ‖Σ_{s′} ψ(s′|s,a) V(s′)‖ for V ∈ [0, 1]^S.
Local DP compares two data of one user; the broadcast (hence V) does not depend on them, so the two
canaries of a pair share V and differ only in the states and actions they visit.

The caps (calibration slack, a property of the agent). The agent caps V_{h+1} at H − h − 1, so
‖φ‖ ≤ (H − h − 1)·L and y ≤ H − h − 1 at stage h, and for any two inputs
‖φ₁φ₁ᵀ − φ₂φ₂ᵀ‖_F ≤ √2·(H − h − 1)²·L² and ‖φ₁y₁ − φ₂y₂‖ ≤ 2·(H − h − 1)²·L: neither family's
change reaches more than c_h = ((H − h − 1)/H)² of its sensitivity (:func:`stage_caps`; nothing at
the last stage). Two value features of full norm (H − h − 1)·L at an angle x, with both targets at
the cap, change the Gram message by c_h·|sin x| and the target message by c_h·sin(x/2) of their
sensitivities: orthogonal features realise the Gram cap and 1/√2 of the target's, opposite ones the
target's and no Gram. Every message is calibrated to the same ρ₀ = ρ/(2H), so the pair's μ² is
μ₀²·Σ_h (f_gram,h² + f_target,h²) with μ₀ = μ_claim/√(2H): with both families at their caps at
every stage it would be μ_claim²·Σ_h c_h²/H (:func:`mu_ceilings`), and no one pair of features
reaches that, since sin²x + sin²(x/2) is at most 25/16 (at cos x = −1/4), not 2.

The staged model (``LdpUcrlVtrConfig(sensitivity_model="staged")``) calibrates stage h for its
own range — F_h = (H − h − 1)·L and targets in [0, H − h − 1] — and sends nothing at the last
stage: there c_h = 1 at every stage that sends, every message gets ρ₀ = ρ/(2(H − 1)), and the
pair ceiling is the claimed μ itself; the same canaries carry √(25/32) = 0.884 of it.

The environment (:func:`audit_mixture_mdp`). θ_h = t·e₀ with t = √d/L at every stage (‖θ_h‖ = √d
for L = 1, the bound UCRL-VTR's radius assumes). Each state s has a type vector

    v_s = e₀/t + r·(cos γ_s·e₁ + sin γ_s·e₂),   r = √(L² − 1/t²) = L·√(1 − 1/d),

so ⟨v_s, θ_h⟩ = 1 and ‖v_s‖ = L, and the basis is ψ_h(s′|s, a) = v_s/S for every action a and
next state s′. It is a valid linear mixture MDP (Ayoub et al. 2020; Liao et al. 2021,
Definition 3.1): P_h(s′|s, a) = ⟨ψ_h(s′|s, a), θ_h⟩ = 1/S — from every state a uniform next state,
so every path has positive probability; rewards are 1 everywhere (in [0, 1]); the initial
distribution is uniform; and for V ∈ [0, 1]^S, Σ_{s′} ψ(s′|s, a)·V(s′) = (mean of V)·v_s has norm
at most L, the bound the original environment declares (so the agent's feature-norm check passes).
:class:`~dpverify.agents.envs.linear_mdp.LinearMixtureMDP` checks all of it itself (the norm bound
exactly, by enumerating the 2^S vertices). The angle between the pivot's vector and v_s has
cos = 1/d + (1 − 1/d)·cos γ_s; the types (:data:`TYPES`):

* ``pivot`` (γ = 0), the base of every pair;
* ``orthogonal`` (cos = 0): the Gram cap fully, the target's at 1/√2;
* ``balanced`` (cos = −1/4, d ≥ 3): the largest μ of one pair, Gram 0.968 and target 0.791 of the
  caps;
* ``opposed`` (γ = π, d ≥ 3: cos = 2/d − 1, the most opposite features with ‖θ_h‖ = √d/L):
  Gram 2·√(d − 1)/d and target √(1 − 1/d) of the caps (0.943 and 0.816 at d = 3).

For d = 2 the complement of θ is a line: ``pivot`` and ``orthogonal`` (γ = π) only. For d = 1
there is no direction to choose (None).

The values. Every state's true value is H − h, the cap. User k's optimistic value is
V_h(s) = min(1 + ⟨φ, θ̂⟩ + β_h·‖φ‖_{Σ⁻¹}, H − h) with φ = v_s·(mean of V_{h+1}) for every action:
the same for every state, whatever action the agent picks. For the first user (Σ = λI, θ̂ = 0;
Liao et al. 2021, line 5) it is at the cap at every stage when β_{1,h}·L ≥ √λ (at H = 2 nothing is
needed: V_{H−1} = 1 is the cap; at the default radii β_{1,h} > 1 for H ≥ 3 and λ = 1). The path
canaries (:func:`mixture_tapes`) stay in the state of one type, so φ_h = (H − h − 1)·v_s and
y_h = H − h − 1 at every stage: the pair (pivot, s) realises c_h·|sin x| of the Gram sensitivity
and c_h·sin(x/2) of the target's at every stage, x the angle of its type. At a later position θ̂ is
the noisy estimate of the earlier users' messages and V need not be at the cap: the first position
is the one to audit. Measured figures: docs/auditing.md, "LDP-UCRL-VTR in the audit linear mixture
MDP".
"""

from __future__ import annotations

import math

import numpy as np

from dpverify import _validate
from dpverify.agents.core.tapes import UserTape
from dpverify.agents.envs.linear_mdp import LinearMixtureMDP
from dpverify.errors import InvalidParameterError

#: The canary types, by their cosine to the pivot's vector (None: the most opposite one, γ = π).
TYPES: tuple[tuple[str, float | None], ...] = (
    ("pivot", 1.0), ("orthogonal", 0.0), ("balanced", -0.25), ("opposed", None))
#: The base of every candidate pair in the audit mixture MDP.
PIVOT = "pivot"


def stage_caps(horizon: int, sensitivity_model: str = "standard") -> np.ndarray:
    """c_h for h = 0 … H − 1: the largest fraction of either family's sensitivity at stage h that
    any two inputs realise, the values being capped at H − h − 1 (module docstring). Under
    LDP-UCRL-VTR's ``"standard"`` model, c_h = ((H − h − 1)/H)²; under its ``"staged"`` one each
    stage is calibrated for its own range, so c_h = 1, and 0 at the last stage, which sends
    nothing."""
    horizon = _validate.integer("horizon", horizon, minimum=1)
    model = _validate.one_of("sensitivity_model", sensitivity_model, ("standard", "staged"))
    if model == "staged":
        return (np.arange(horizon) < horizon - 1).astype(float)
    return ((horizon - 1 - np.arange(horizon)) / horizon) ** 2


def mu_ceilings(horizon: int, claimed_mu: float,
                sensitivity_model: str = "standard") -> tuple[float, float]:
    """(one family's μ, the pair's μ) with the family — both families — at its cap at every stage:
    with n messages of each family per user (H, or H − 1 under the staged model) each calibrated to
    μ₀ = μ_claim/√(2n), μ_claim·√(Σ_h c_h²/(2n)) and μ_claim·√(Σ_h c_h²/n) (module docstring); the
    staged model's pair ceiling is the claim itself."""
    claimed_mu = _validate.positive("claimed_mu", claimed_mu)
    caps = stage_caps(horizon, sensitivity_model)
    total = float(np.sum(caps**2))
    messages = horizon if sensitivity_model == "standard" else horizon - 1
    if messages == 0:
        raise InvalidParameterError("horizon", "must be >= 2 under the staged sensitivity model",
                                    horizon)
    return claimed_mu * math.sqrt(total / (2 * messages)), claimed_mu * math.sqrt(total / messages)


def _type_cosines(dim: int) -> list[tuple[str, float]]:
    """cos γ of each type present at dimension d (module docstring: cos = 1/d + (1 − 1/d)·cos γ)."""
    if dim == 2:
        return [("pivot", 1.0), ("orthogonal", -1.0)]
    out = []
    for name, cosine in TYPES:
        out.append((name, -1.0 if cosine is None else (cosine - 1.0 / dim) / (1.0 - 1.0 / dim)))
    return out


def audit_mixture_mdp(horizon: int, num_actions: int, dim: int,
                      feature_norm_bound: float = 1.0) -> LinearMixtureMDP | None:
    """The audit linear mixture MDP of the module docstring (a state per type); None for d = 1."""
    horizon = _validate.integer("horizon", horizon, minimum=1)
    num_actions = _validate.integer("num_actions", num_actions, minimum=1)
    dim = _validate.integer("dim", dim, minimum=1)
    bound = _validate.positive("feature_norm_bound", feature_norm_bound)
    if dim < 2:
        return None
    t = math.sqrt(dim) / bound
    r = bound * math.sqrt(1.0 - 1.0 / dim)
    types = _type_cosines(dim)
    vectors = np.zeros((len(types), dim))
    vectors[:, 0] = 1.0 / t
    for s, (_, cos_gamma) in enumerate(types):
        vectors[s, 1] = r * cos_gamma
        if dim >= 3:
            vectors[s, 2] = r * math.sqrt(max(0.0, 1.0 - cos_gamma**2))
    num_states = len(types)
    basis = np.broadcast_to(vectors[:, None, None, :] / num_states,
                            (num_states, num_actions, num_states, dim))
    theta = np.zeros((horizon, dim))
    theta[:, 0] = t
    return LinearMixtureMDP(basis, theta, np.ones((horizon, num_states, num_actions)),
                            np.full(num_states, 1.0 / num_states), feature_norm_bound=bound,
                            name="audit-mixture")


def type_names(mdp: LinearMixtureMDP) -> tuple[str, ...]:
    """The type of each state of an audit mixture MDP, by state index."""
    return tuple(name for name, _ in _type_cosines(mdp.dim))


def mixture_tapes(mdp: LinearMixtureMDP) -> dict[str, UserTape]:
    """The path canaries of the audit mixture MDP: a user who starts in, and stays in, the state of
    one type whatever the agent plays (T[h, s, a] = that state), by type name."""
    shape = (mdp.horizon, mdp.num_states, mdp.num_actions)
    return {name: UserTape(s, np.full(shape, s, dtype=np.int64), f"canary-{name}")
            for s, name in enumerate(type_names(mdp))}
