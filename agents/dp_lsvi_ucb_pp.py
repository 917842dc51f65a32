"""DP-LSVI-UCB++ — LSVI-UCB++ with every statistic released through the billboard with fresh noise.

Sahu 2025 ("DP-LSVI-UCB++: differentially private reinforcement learning for linear MDPs"), Algorithm 1,
privacy proof Theorem A.1 / Lemma A.1, constants Theorem 3.2.
The learning rule is :class:`dpverify.agents.lsvi_ucb_pp.LsviUcbPlusPlus` (same corrections of the printed
algorithm, documented there); this module replaces every read of other users' data by a privatised
release. Stages are 0-indexed in code and 1-based in the ledger labels (paper notation).

Releases of episode k (users 1..k−1 are read; episode-k user's data is added after the episode):

* for every stage h, before planning (the switching test of line 10 needs all of them):
  ``gram``   Λ̃_{k,h} = Σ_{i<k} σ̄_{i,h}⁻² φ_iφ_iᵀ + (Z + Zᵀ)/√2        (line 26, GOE, fresh Z)
* for h = H, …, 1 in the backward pass (lines 6–8):
  ``w_hat``   Σ_{i<k} σ̄_{i,h}⁻² φ_i V̂_{k,h+1}(s'_i)  + N(0, σ̂²I)       (fresh draw)
  ``w_check`` Σ_{i<k} σ̄_{i,h}⁻² φ_i V̌_{k,h+1}(s'_i)  + N(0, σ̂²I)       (fresh draw)
  ``w_bar``   Σ_{i<k} σ̄_{i,h}⁻² φ_i V̂_{k,h+1}(s'_i)² + N(0, σ̄²I)       (fresh draw)

i.e. exactly the 4HK releases of :func:`dpverify.agents.dp_lsvi_ucb_pp_schedule.dp_lsvi_ucbpp_schedule`, each published
through :meth:`dpverify.agents.billboard.Billboard.publish` (``users="prefix"``) so that the agent's
:attr:`~DpLsviUcbPlusPlus.ledger` records what was actually released. Noise levels come from
:func:`dpverify.calibration.calibrate` for the target (ε, δ), with the ``"paper"`` (Appendix A:
2H, 2H, 2H², √2) or the ``"derived"`` (2/H, 2/H, 2, √2/H²; docs/derivations.md) sensitivities.

Everything after a release is post-processing of public values: the planner adds the shift
(λ + 2·c_Λ·λ̃_Λ)I to the released Gram matrix (paper: 2λ̃_Λ I, line 1; λ is LSVI-UCB++'s own
regulariser, kept so that the ε → ∞ limit is LSVI-UCB++ and the matrix stays invertible when λ̃_Λ → 0),
floors its eigenvalues at λ (a projection onto {Λ ⪰ λI}: Lemma A.1 only holds with probability 1 − δ,
and a noisy matrix that is not positive definite would make bonuses imaginary), inverts it directly
(d × d) and computes the bonuses ‖φ‖_{Λ̃⁻¹} and log det Λ̃ (the rare-switching test, line 10) from it.
The deployed policy is the greedy policy of Q̂, which is a function of the billboard (and public
features, rewards and the agent's own tie-breaking randomness) only; a user's action is that policy at
the user's own state — the billboard lemma (Sahu 2025 Lemma 2.4) then gives joint DP.

Sensitivity assumptions, enforced where the per-user terms are formed:

* ‖φ(s, a)‖₂ ≤ F (``feature_norm_bound``, 1 by default) — checked at construction against the
  environment's ``feature_norm_bound`` and its actual features (the raw Min et al. MDP, ‖φ‖ = 3, is
  refused; rescale it or calibrate to F = 3);
* regression targets V̂, V̌ ∈ [0, H] (clipped before every sum; V̂² ∈ [0, H²]);
* weights σ̄⁻² ≤ 1/H² (σ̄ ≥ H by line 25; ≤ 1 suffices for the "paper" model) — checked when a user's
  data is added.

Constants (Sahu 2025 Lemma A.1 and Theorem 3.2, from :mod:`dpverify.bounds.constants`, the single
source). The paper states them for its printed noise (φ1, φ2 ~ N(0, 2H²/ρ0), K1 with entry variance
1/(4ρ0)). The noise actually added here is the calibrated one, so the constants are evaluated at the
ρ at which the printed noise *equals* the calibrated noise: for the GOE entry std s,
ρ_Λ = HK/s² (then 1/(4ρ0) = s²) gives λ̃_Λ; for the vector std σ̂, ρ_L = 8H³K/σ̂² (then
2H²/ρ0 = σ̂²) gives L (and ‖φ3‖ ≤ H·L holds because σ̄/σ̂ = H in both sensitivity models). The radii
are then β̂ = β̌ = HL√(dλ̃_Λ) + √(d³H²ι₂²), β̄ = H²L²√(dλ̃_Λ) + √(d³H⁴ι₂²) with
ι₂ = max{1, log(HK⁴L²d/(p λ̃_Λ))} (:data:`dpverify.bounds.constants.PRINTED`; the max keeps the O(·)
logarithm ≥ 1 when the noise is tiny). Each radius is split into its privacy term (the one with L)
and its statistical term; the first is multiplied by ``privacy_radius_multiplier``, the second by
``beta_*_multiplier`` (defaults 10⁻⁵ both: theory values with O-constant 1 are ≈ 10⁴–10⁸× too large to
learn anything at practical K). Every value used is reported by
:meth:`DpLsviUcbPlusPlus.settings`.

Deviations from the printed Algorithm 1 (all documented in docs/private_agents.md):

1. fresh noise at every release instead of φ1, φ2, φ3, K1 sampled once (line 1) — reused noise makes
   release(k+1) − release(k) noise-free, which is not private;
2. the Gram release is the prefix sum plus one fresh GOE draw (line 26 adds K1 at every episode, so
   its noise would accumulate as k·K1);
3. targets clipped to [0, H] and the pessimistic value takes max{·, Q̌_old, 0} (the printed
   min{·, Q̌_old, 0} pins Q̌ ≤ 0), the switching test is made once per episode before the backward
   pass (as in :mod:`dpverify.agents.lsvi_ucb_pp`);
4. shift λ + 2c_Λλ̃_Λ and the eigenvalue floor λ (above);
5. radii = registry value × multipliers, with L and λ̃_Λ of the noise actually added.

Known behaviour (docs/results.md, statement 4): the vector noise std and the shift both scale as 1/√ρ,
so while the shift dominates λ the first episodes' regression is equally noisy at every ε and Q̂ (a
running minimum) keeps early under-estimates; the agent reaches LSVI-UCB++ only once 2λ̃_Λ < λ
(ε ≈ 10¹² on the Min et al. MDP at K = 3000).

Cost per episode: H GOE releases and 3H vector releases (billboard overhead dominates), one batched
Cholesky factorisation of the H noisy d × d matrices (an eigendecomposition for any that needs
flooring), O(H(d² + dS + SAd²)) arithmetic — independent of k (raw sums aggregated by next state:
Σ_i w_i φ_i V(s'_i) = M_h V in O(dS)). When rare switching keeps the policy, the 3H vector releases are
made at once and the bonuses summed at the visited pairs only
(:meth:`DpLsviUcbPlusPlus.plan`; the same values, bit for bit).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from dpverify import _validate
from dpverify.agents.base import Trajectory
from dpverify.agents.billboard import Billboard, ReleasePlan, ReservedReleases
from dpverify.agents.dp_lsvi_ucb_pp_schedule import dp_lsvi_ucbpp_schedule
from dpverify.agents.dp_lsvi_ucb_pp_tree import TreeRidgeStatistics, dp_lsvi_ucbpp_tree_schedule, tree_noise_stds
from dpverify.agents.envs.linear_mdp import LinearMDP
from dpverify.agents.lsvi_ucb_pp import DEFAULT_REGULARIZATION as LSVI_UCB_PP_REGULARIZATION
from dpverify.agents.lsvi_ucb_pp import LsviUcbPlusPlus, LsviUcbPlusPlusConfig
from dpverify.agents.private import PrivateAgent, PrivateAgentConfig
from dpverify.agents.statistics import WEIGHT_CHECK_TOLERANCE, PublishedRidgeStatistics, RidgeStatistics
from dpverify.bounds import constants as paper_constants
from dpverify.bounds.symbols import H as H_symbol
from dpverify.bounds.symbols import K as K_symbol
from dpverify.bounds.symbols import d as d_symbol
from dpverify.bounds.symbols import delta as delta_symbol
from dpverify.calibration import Calibration, ReleaseSchedule
from dpverify.errors import InvalidParameterError

#: Default multipliers of the registry radii (see the module docstring and docs/private_agents.md).
DEFAULT_RADIUS_MULTIPLIER = 1e-5
#: How the weighted sums are privatised: fresh noise per prefix (the paper), or one of the trees.
AGGREGATIONS: tuple[str, ...] = ("fresh", "tree", "honaker", "factorised")
#: The counter of each running-sum aggregation (:data:`dpverify.agents.dp_lsvi_ucb_pp_tree.COUNTERS`).
COUNTER_OF_AGGREGATION: dict[str, str] = {"tree": "binary", "honaker": "dyadic", "factorised": "factorised"}
#: Relative slack of the weight check (floating-point rounding only; the check is the shared statistics').
CHECK_TOLERANCE = WEIGHT_CHECK_TOLERANCE

VECTOR_FAMILIES: tuple[str, ...] = ("w_hat", "w_check", "w_bar")
ALL_FAMILIES: tuple[str, ...] = ("gram",) + VECTOR_FAMILIES


@dataclass(frozen=True)
class DpLsviUcbPlusPlusConfig(PrivateAgentConfig):
    """Hyper-parameters of DP-LSVI-UCB++ (module docstring).

    Attributes (besides :class:`~dpverify.agents.private.PrivateAgentConfig`'s: K, over which the budget is
    spread (4HK releases), the target (ε, δ) of the published statistics (JDP of the actions), F, relation,
    conversion, shift_multiplier c_Λ of λ̃_Λ in the 2λ̃_Λ shift, p of the utility analysis):
        sensitivity_model: "paper" (Appendix A) or "derived" (docs/derivations.md).
        accounting: "per-user" (each user pays for the releases that read it) or "naive" (4HK·ρ0).
        beta_hat_multiplier, beta_check_multiplier, beta_bar_multiplier: multipliers of the statistical
            terms √(d³H²ι₂²) (β̂, β̌) and √(d³H⁴ι₂²) (β̄) — LSVI-UCB++'s radii, same default.
        privacy_radius_multiplier: multiplier of the privacy terms HL√(dλ̃_Λ) (β̂, β̌), H²L²√(dλ̃_Λ) (β̄);
            default 10⁻⁵ like the statistical terms (1, 0.1, 0.03, 0.01 were worse on the Min et al.
            MDP at K = 3000: docs/private_agents.md).
        variance_floor_multiplier, disagreement_multiplier: c_σ, c_D as in LSVI-UCB++.
        regularization: λ (None → LSVI-UCB++'s default λ, see :mod:`dpverify.agents.lsvi_ucb_pp`).
        switching: rare switching (line 10); False updates Q̂, Q̌ every episode (an ablation).
        keep_history, keep_noise: keep the billboard's published values (and noise) for audits/tests.
        aggregation: "fresh" (the paper: 4HK prefix releases, fresh noise each), "tree" (binary-tree
            counters of G_h and of the next-state sums M_h, fresh noise per node:
            :mod:`dpverify.agents.dp_lsvi_ucb_pp_tree`), "honaker" (the full dyadic tree of both, prefixes by
            Honaker's estimator: :mod:`dpverify.agents.dyadic_tree`) or "factorised" (a square-root Toeplitz
            factorisation of both running sums: :mod:`dpverify.agents.factorised_sum`).
    """

    sensitivity_model: str = "derived"
    accounting: str = "per-user"
    beta_hat_multiplier: float = DEFAULT_RADIUS_MULTIPLIER
    beta_check_multiplier: float = DEFAULT_RADIUS_MULTIPLIER
    beta_bar_multiplier: float = DEFAULT_RADIUS_MULTIPLIER
    privacy_radius_multiplier: float = DEFAULT_RADIUS_MULTIPLIER
    variance_floor_multiplier: float = 0.0
    disagreement_multiplier: float = 0.0
    regularization: float | None = None
    switching: bool = True
    keep_history: bool = False
    keep_noise: bool = False
    aggregation: str = "fresh"

    def __post_init__(self) -> None:
        super().__post_init__()
        _validate.one_of("sensitivity_model", self.sensitivity_model, ("paper", "derived"))
        _validate.one_of("aggregation", self.aggregation, AGGREGATIONS)
        _validate.one_of("accounting", self.accounting, ("per-user", "naive"))
        for name in ("beta_hat_multiplier", "beta_check_multiplier", "beta_bar_multiplier", "privacy_radius_multiplier",
                     "variance_floor_multiplier", "disagreement_multiplier"):
            _validate.non_negative(name, getattr(self, name))
        if self.regularization is not None:
            _validate.positive("regularization", self.regularization)
        for name in ("switching", "keep_history", "keep_noise"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidParameterError(name, "must be True or False", getattr(self, name))


# ---- constants of Sahu 2025 evaluated for the noise actually added ---------------------------------


@functools.cache
def _printed_radius(name: str, part: str):
    """One term of β of Theorem 3.2 as printed (in L and λ̃_Λ), with ι₂ floored at 1 (module docstring).

    ``part="privacy"`` is the term with L (HL√(dλ̃_Λ), or H²L²√(dλ̃_Λ) for β̄: it covers the privacy
    noise), ``part="statistical"`` the rest (√(d³H²ι₂²), or √(d³H⁴ι₂²): the non-private radius).
    """
    iota = sympy.Symbol("iota2", positive=True)
    expr = paper_constants.PRINTED[name]
    log_term = sympy.log(H_symbol * K_symbol**4 * paper_constants.L_symbol**2 * d_symbol
                         / (delta_symbol * paper_constants.lambda_symbol))
    expr = expr.subs(log_term, iota)
    privacy = sympy.Add(*[t for t in sympy.Add.make_args(expr) if t.has(paper_constants.L_symbol)])
    term = privacy if part == "privacy" else sympy.simplify(expr - privacy)
    args = (d_symbol, H_symbol, K_symbol, delta_symbol, paper_constants.L_symbol, paper_constants.lambda_symbol, iota)
    return sympy.lambdify(args, term, modules="math")


def noise_constants(calibration: Calibration, dim: int, horizon: int, episodes: int,
                    failure_probability: float) -> dict[str, float]:
    """L, λ̃_Λ (Lemma A.1) and β̂, β̌, β̄ (Theorem 3.2, O-constant 1) for the calibrated noise.

    Lemma A.1 is stated for the printed noise at budget ρ; it is evaluated at the ρ for which the
    printed noise equals the calibrated one: ρ_Λ = HK/s² for the GOE entry std s, ρ_L = 8H³K/σ̂² for
    the std σ̂ of the w_hat/w_check noise (module docstring).
    """
    return noise_constants_for_std(calibration.mechanism("gram").noise_scale,  # the GOE entry std
                                   calibration.mechanism("w_hat").noise_scale,  # the Gaussian σ
                                   dim, horizon, episodes, failure_probability)


def noise_constants_for_std(s: float, sigma_hat: float, dim: int, horizon: int, episodes: int,
                            failure_probability: float) -> dict[str, float]:
    """:func:`noise_constants` for a Gram noise of GOE entry std ``s`` and a noise of std ``sigma_hat`` per
    coordinate on the ŵ/w̌ sums (the tree variant passes the std of its prefix sums)."""
    rho_lambda = horizon * episodes / s**2
    rho_l = 8.0 * horizon**3 * episodes / sigma_hat**2
    lam = paper_constants.dp_lsvi_ucbpp_constants(d=dim, H=horizon, K=episodes, rho=rho_lambda,
                                                  delta=failure_probability).lambda_tilde
    big_l = paper_constants.dp_lsvi_ucbpp_constants(d=dim, H=horizon, K=episodes, rho=rho_l,
                                                    delta=failure_probability).L
    iota2 = max(1.0, math.log(horizon * float(episodes) ** 4 * big_l**2 * dim / (failure_probability * lam)))
    values = {"L": big_l, "lambda_tilde": lam, "iota2": iota2, "rho_lambda": rho_lambda, "rho_L": rho_l}
    for name in ("beta_hat", "beta_check", "beta_bar"):
        for part in ("privacy", "statistical"):
            values[f"{name}_{part}"] = float(
                _printed_radius(name, part)(dim, horizon, episodes, failure_probability, big_l, lam, iota2))
        values[name] = values[f"{name}_privacy"] + values[f"{name}_statistical"]
    return values


# ---- privatised statistics --------------------------------------------------------------------------


class PrivatisedRidgeStatistics(PublishedRidgeStatistics):
    """Raw prefix sums kept exactly; every read by the planner goes through the billboard.

    The raw sums (``gram`` without λ, ``next_state_sums``) are private state: the only methods that
    return anything computed from them are :meth:`release_grams` and :meth:`release_sums`, which publish
    through the billboard with fresh noise. :meth:`weighted_sum` (the raw read of the parent class)
    refuses, so no code path can read a raw sum by mistake (the read methods shared with the tree variant
    are :class:`dpverify.agents.statistics.PublishedRidgeStatistics`'s).
    """

    raw_read_hint = "use release_sum (billboard)"

    def __init__(self, features: np.ndarray, rewards: np.ndarray, regularization: float, shift: float,
                 calibration: Calibration, billboard: Billboard, noise_rng: np.random.Generator,
                 max_weight: float) -> None:
        super().__init__(features, rewards, regularization, shift, calibration, billboard, noise_rng, max_weight)
        self.mechanisms = {family: calibration.mechanism(family) for family in ALL_FAMILIES}
        self.raw_gram = np.zeros((self.horizon, self.dim, self.dim))  # Σ_i w_i φ_i φ_iᵀ (no λ)
        self._reserved: ReservedReleases
        # The vector releases of a backward pass, in publication order: stages H..1, each w_hat, w_check, w_bar.
        self._vector_plan = ReleasePlan([(family, h + 1, self.mechanisms[family])
                                         for h in range(self.horizon - 1, -1, -1) for family in VECTOR_FAMILIES])

    def add_episode(self, states: np.ndarray, actions: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Add user k's transitions to the raw sums; check the weight bound the sensitivities assume."""
        w = self._checked_weights(weights)
        h = np.arange(self.horizon)
        s, a, s_next = states[:-1], actions, states[1:]
        x = self.features[h, s, a]
        weighted_x = w[:, None] * x
        self.raw_gram += weighted_x[:, :, None] * x[:, None, :]
        self.next_state_sums[h, :, s_next] += weighted_x
        self.count += 1

    # ---- releases ---------------------------------------------------------------------------------

    def release_grams(self) -> None:
        """Publish Λ̃_{k,h} for every stage of the current episode k; derive inverse, log-det, bonuses.

        Post-processing of the published matrix: symmetrise (exact already), add (λ + shift)I, floor
        the eigenvalues at λ, invert (Cholesky, or the eigendecomposition where flooring is needed).
        """
        k = self._episode_to_release()
        noisy = self.billboard.publish_stages("gram", k, self.mechanisms["gram"], self.raw_gram, "prefix",
                                              self.noise_rng)
        # The vector releases of this episode's backward pass (stages H..1, each w_hat, w_check, w_bar),
        # recorded and their noise drawn now, in that order (the noise does not depend on the data).
        self._reserved = self.billboard.reserve(k, self._vector_plan, "prefix", self.noise_rng)
        self._set_published_grams(noisy)

    def release_sums(self, h: int, v_hat: np.ndarray, v_check: np.ndarray) -> tuple[np.ndarray, ...]:
        """Publish Σ_{i<k} w_i φ_i V(s'_i) (= M_h V) for V = V̂ (``w_hat``), V̌ (``w_check``) and V̂² (``w_bar``),
        each with its own fresh Gaussian noise (stage h 0-based)."""
        self._check_released()
        sums = self.next_state_sums[h]
        return tuple(self._reserved.publish_group(VECTOR_FAMILIES, h + 1, [sums @ v_hat, sums @ v_check,
                                                                            sums @ v_hat**2]))

    def release_all_sums(self, v_hat: np.ndarray, v_check: np.ndarray) -> tuple[np.ndarray, ...]:
        """:meth:`release_sums` of every stage at once, for a backward pass whose targets are known before it
        starts (no policy update): ``v_hat[h]``, ``v_check[h]`` are stage h's targets, shape (H, S). The same
        values (each M_h V by the same matrix-vector product) and noise, published in the same order (stages
        H..1, each w_hat, w_check, w_bar); returns the three (H, d) stacks."""
        self._check_released()
        sums = self.next_state_sums
        raw = np.empty((self.horizon, len(VECTOR_FAMILIES), self.dim))
        for j, targets in enumerate((v_hat, v_check, v_hat**2)):
            raw[:, j] = (sums @ targets[:, :, None])[:, :, 0]
        noisy = self._reserved.publish_block(raw[::-1].reshape(-1, self.dim)).reshape(raw.shape)[::-1]
        return tuple(np.ascontiguousarray(noisy[:, j]) for j in range(len(VECTOR_FAMILIES)))


# ---- the agent ----------------------------------------------------------------------------------------


class DpLsviUcbPlusPlus(PrivateAgent, LsviUcbPlusPlus):
    """DP-LSVI-UCB++ (Sahu 2025, Algorithm 1) on a finite linear MDP (module docstring).

    Args:
        mdp: the environment (its features must satisfy ‖φ‖ ≤ ``config.feature_norm_bound``).
        config: :class:`DpLsviUcbPlusPlusConfig`.
        rng: the agent's generator; the privacy noise uses a child generator spawned from it, the
            tie-breaking the generator itself.
        billboard: where releases are published (default: a new :class:`Billboard` with the config's
            relation and history flags); tests and audits may pass their own.
    """

    name = "dp-lsvi-ucb++"
    privacy_notion = "jdp"
    config_class = DpLsviUcbPlusPlusConfig  # type: ignore[assignment]  # the private config, not LSVI-UCB++'s

    def __init__(self, mdp: LinearMDP, config: DpLsviUcbPlusPlusConfig, rng: np.random.Generator,
                 billboard: Billboard | None = None) -> None:
        self.set_up_privacy(mdp, config, rng, billboard, keep_history=config.keep_history,
                            keep_noise=config.keep_noise)
        H, d, K = mdp.horizon, mdp.dim, config.num_episodes
        regularization = config.regularization
        if regularization is None:  # LSVI-UCB++'s own default, so that ε → ∞ recovers LSVI-UCB++
            regularization = LSVI_UCB_PP_REGULARIZATION
        max_weight = 1.0 if config.sensitivity_model == "paper" else 1.0 / H**2
        counter = COUNTER_OF_AGGREGATION.get(config.aggregation)  # running-sum counters (dp_lsvi_ucb_pp_tree)
        if counter is not None:
            self.noise_values = noise_constants_for_std(
                *tree_noise_stds(self.calibration, H, mdp.num_states, K, counter), d, H, K, config.failure_probability)
        else:
            self.noise_values = noise_constants(self.calibration, d, H, K, config.failure_probability)
        self.shift = 2.0 * config.shift_multiplier * self.noise_values["lambda_tilde"]
        shared = (mdp.features, mdp.rewards, regularization, self.shift, self.calibration, self.billboard,
                  rng.spawn(1)[0], max_weight)
        statistics: RidgeStatistics = (TreeRidgeStatistics(*shared, K, counter) if counter is not None
                                       else PrivatisedRidgeStatistics(*shared))
        base = LsviUcbPlusPlusConfig(
            num_episodes=K,
            beta_hat_multiplier=config.beta_hat_multiplier,
            beta_check_multiplier=config.beta_check_multiplier,
            beta_bar_multiplier=config.beta_bar_multiplier,
            variance_floor_multiplier=config.variance_floor_multiplier,
            disagreement_multiplier=config.disagreement_multiplier,
            regularization=regularization,
            failure_probability=config.failure_probability,
            switching=config.switching,
        )
        super().__init__(mdp, base, rng, statistics=statistics)
        self.config = config  # settings() reports the private config
        self.statistics: PrivatisedRidgeStatistics  # (or TreeRidgeStatistics: the same release methods)
        # Radii of Theorem 3.2 for the calibrated noise × multipliers (replacing the non-private ones).
        self.theory = {name: self.noise_values[name] for name in ("beta_hat", "beta_check", "beta_bar")}
        values, c_priv = self.noise_values, config.privacy_radius_multiplier
        self.beta_hat = (c_priv * values["beta_hat_privacy"]
                         + config.beta_hat_multiplier * values["beta_hat_statistical"])
        self.beta_check = (c_priv * values["beta_check_privacy"]
                           + config.beta_check_multiplier * values["beta_check_statistical"])
        self.beta_bar = (c_priv * values["beta_bar_privacy"]
                         + config.beta_bar_multiplier * values["beta_bar_statistical"])
        self.horizon_cap = float(H)
        self._bonus_current = False  # whether _bonus_norm holds this episode's bonuses of every (h, s, a)

    def release_schedule(self, mdp: LinearMDP, config: DpLsviUcbPlusPlusConfig) -> ReleaseSchedule:
        """The 4HK releases of Sahu 2025 §3 (one Gram matrix and three vectors per stage and episode), or
        with ``aggregation="tree"`` the 2HK tree nodes of G_h and M_h (``"honaker"``: every node of their full
        dyadic trees; ``"factorised"``: the 2HK rows of C·x)."""
        counter = COUNTER_OF_AGGREGATION.get(config.aggregation)
        if counter is not None:
            return dp_lsvi_ucbpp_tree_schedule(mdp.horizon, config.num_episodes, mdp.dim, mdp.num_states,
                                               config.sensitivity_model, config.relation, config.feature_norm_bound,
                                               counter)
        return dp_lsvi_ucbpp_schedule(mdp.horizon, config.num_episodes, mdp.dim, config.sensitivity_model,
                                      config.relation, config.feature_norm_bound)

    @property
    def accounting(self) -> str:
        """The config's accounting ("per-user" or "naive", which the calibration then also uses)."""
        return str(self.config.accounting)

    def derived_settings(self) -> dict[str, Any]:
        settings = super().derived_settings()
        settings.update({
            "L": self.noise_values["L"],
            "lambda_tilde": self.noise_values["lambda_tilde"],
            "iota2": self.noise_values["iota2"],
            **{f"theory_{name}_{part}": self.noise_values[f"{name}_{part}"]
               for name in ("beta_hat", "beta_check", "beta_bar") for part in ("privacy", "statistical")},
            "gram_shift": self.shift,
            "num_switches": self.num_switches,
            "schedule_assumptions": list(self.schedule.assumptions),
        })
        return settings

    # ---- planning (Algorithm 1 lines 5–21) ------------------------------------------------------------

    def begin_episode(self) -> np.ndarray:
        self.check_episode(self.statistics.episode)
        self.statistics.release_grams()  # the H Gram releases of episode k (the switching test reads them)
        return super().begin_episode()

    def plan(self) -> np.ndarray:
        """LSVI-UCB++'s backward pass; when rare switching keeps Q̂, Q̌ (line 10 false) the targets V̂, V̌ of every
        stage are known before the pass, so the 3H vector releases and regressions are made at once
        (:meth:`regress_all`, the same values and noise in the same order as stage by stage)."""
        if not self.config.switching or self.switch_condition():
            self._bonus_norm[:] = np.sqrt(self.statistics.bonus_squared_all())  # ‖φ‖_{Λ̃⁻¹} of every stage at once
            self._bonus_current = True
            return super().plan()
        self._bonus_current = False  # Q̂, Q̌ kept: the bonuses are read at the visited pairs only
        self.regress_all()
        return self.q_hat

    def visited_bonus_norms(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """‖φ‖_{Λ̃⁻¹} at the visited pairs (the same values as of every pair: after a pass without switch only
        these H are computed; ``_bonus_norm`` then holds the last switching episode's)."""
        if self._bonus_current:
            return super().visited_bonus_norms(states, actions)
        return np.sqrt(self.statistics.bonus_squared_at(states, actions))

    def regress_all(self) -> None:
        """:meth:`regress` of every stage at once (targets V̂_{h+1}, V̌_{h+1} unchanged during the pass)."""
        stats = self.statistics
        v_hat = np.minimum(np.maximum(self.v_hat[1:], 0.0), self.horizon_cap)
        v_check = np.minimum(np.maximum(self.v_check[1:], 0.0), self.horizon_cap)
        inverse = stats.gram_inverses()
        sums = stats.release_all_sums(v_hat, v_check)
        for w, released in zip((self._w_hat, self._w_check, self._w_bar), sums, strict=True):
            w[:] = (inverse @ released[:, :, None])[:, :, 0]

    def regress(self, h: int) -> None:
        """ŵ, w̌, w̄ (lines 6–8) from three fresh releases; targets clipped to [0, H] (the sensitivity assumption)."""
        stats = self.statistics
        inverse = stats.gram_inverse(h)
        v_hat = np.minimum(np.maximum(self.v_hat[h + 1], 0.0), self.horizon_cap)
        v_check = np.minimum(np.maximum(self.v_check[h + 1], 0.0), self.horizon_cap)
        w_hat_sum, w_check_sum, w_bar_sum = stats.release_sums(h, v_hat, v_check)
        self._w_hat[h] = inverse @ w_hat_sum
        self._w_check[h] = inverse @ w_check_sum
        self._w_bar[h] = inverse @ w_bar_sum

    def end_episode(self, trajectory: Trajectory | None) -> None:
        """Lines 22–28: the user's σ̄⁻² (from public w's and the user's own data) and its raw terms; None is an
        empty slot (:mod:`dpverify.agents.base`)."""
        if trajectory is None:
            self.statistics.skip_episode()
            return
        self.statistics.add_episode(trajectory.states, trajectory.actions, self.variance_weights(trajectory))


__all__ = [
    "DpLsviUcbPlusPlus",
    "DpLsviUcbPlusPlusConfig",
    "PrivatisedRidgeStatistics",
    "noise_constants",
    "noise_constants_for_std",
]
