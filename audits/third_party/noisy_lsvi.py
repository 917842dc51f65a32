"""A private least-squares value iteration, written the way code outside dpverify is (a third party's).

Each episode k the agent plans by a backward pass over the stages h = H, …, 1 from two statistics of the
users 1..k−1 it has served, both published on the billboard, which noises them:

* ``gram``   G_h = Σ_i φ_iφ_iᵀ (a symmetric matrix, GOE noise), and
* ``target`` b_h = Σ_i φ_i V_{h+1}(s′_i) (a vector, Gaussian noise), with V_{h+1} ∈ [0, H] the value the
  pass has just computed;

then w_h = (G̃_h + λI)⁻¹ b̃_h, Q_h = r_h + φᵀw_h + β‖φ‖_{(G̃_h+λI)⁻¹}, V_h = clip(max_a Q_h, 0, H − h) and the
greedy policy (ties broken at random). Under replace-one with ‖φ‖ ≤ F a user changes G_h by at most √2·F²
(Frobenius) and b_h by at most 2HF; under add/remove-one by F² and HF. A user is read by the 2H releases of
each of the K − 1 episodes after its own, so each release gets ρ/(2H(K − 1)) of the budget (exact μ-GDP
accounting; dpverify's calibrators round the noise up).

``make_agent`` is the correct agent; every other factory plants one bug that a reviewer could miss, in what
the agent *records* on the billboard (its noise is drawn by the billboard, so it is what the mechanism says):

* ``make_mean_for_sum`` — the target noise calibrated for the mean b_h/(k − 1), added to the sum;
* ``make_prefix_as_current`` — releases recorded as reading the current user only (``users="current"``),
  the noise calibrated for each user's own 2H releases;
* ``make_off_by_one`` — the statistics released at the end of episode k, after user k's data is added, but
  labelled episode k (recorded as reading users 1..k−1);
* ``make_per_coordinate_clip`` — features clipped to [−1, 1] per coordinate "so that ‖φ‖ ≤ 1", the agent
  accepting any environment (``make_norm_clip`` clips the norm: its correct twin);
* ``make_add_remove_for_replace`` — add/remove sensitivities used for a replace-one claim;
* ``make_stacked_grams`` — the H Gram matrices stacked into one message calibrated as one Gram matrix
  (``make_stacked_grams_fixed`` calibrates the stack: its twin);
* ``make_over_conservative`` — correct, with twice the noise it needs (a claim weaker than it could be);
* ``make_raw_average`` — the planner averages each published value with a second noisy copy of the raw
  statistic, drawn from its own coins outside the billboard (two looks at the data: ε ≈ 1.47 for a claim of 1);
  ``make_published_average`` averages it with a second noisy copy of the published value (post-processing: its
  twin);
* ``make_swapped_labels`` — every release labelled with its stage as the episode and its episode as the stage: the
  records are wrong, the noise (calibrated for the 2H(K − 1) releases that truly read a user) is right, and the
  claim holds; ``make_swapped_calibrated`` calibrates the noise to what its swapped ledger charges the worst user,
  2(H − 1)K releases, fewer than the truth when K > H: the claim is false;
* ``make_episode_seeded`` — each release's noise drawn from a generator seeded with (episode, stage): public
  quantities, so the noise is known to anyone;
* ``make_tuned_mechanism`` — the target noise through a ``GaussianMechanism`` subclass "tuned" to add half its σ;
  ``make_logged_mechanism`` — a subclass that only counts its releases (its twin).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.agents.core.billboard import Billboard
from dpverify.calibrate_mechanism import calibrate_gaussian, calibrate_goe
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, Mechanism

REGULARIZATION = 1.0
BONUS = 0.05


@dataclass(frozen=True)
class NoisyLsviConfig:
    num_episodes: int
    epsilon: float
    delta: float = 1e-5
    relation: str = "replace-one"
    feature_norm_bound: float | None = 1.0  # None: the agent accepts any environment (it clips)

    def __post_init__(self) -> None:
        if not isinstance(self.num_episodes, int) or self.num_episodes < 1:
            raise InvalidParameterError("num_episodes", "must be an integer >= 1", self.num_episodes)


class NoisyLsvi:
    """The correct agent (module docstring); subclasses override one method each to plant a bug."""

    name = "noisy-lsvi"
    privacy_notion = "jdp"
    noise_factor = 1.0  # the over-conservative twin doubles it

    def __init__(self, mdp: Any, config: NoisyLsviConfig, rng: np.random.Generator,
                 billboard: Billboard | None = None) -> None:
        bound = config.feature_norm_bound
        if bound is not None and mdp.feature_norm_bound > bound:
            raise InvalidParameterError("feature_norm_bound", f"must be <= {bound} (the bound the noise assumes)",
                                        mdp.feature_norm_bound)
        self.config = config
        self.horizon, self.num_states, self.dim = mdp.horizon, mdp.num_states, mdp.dim
        self.rewards = np.asarray(mdp.rewards)
        self.features = self.prepare_features(np.asarray(mdp.features, dtype=float))
        self.coins, self.noise_rng = rng.spawn(2)  # the policy's coins apart from the noise
        self.billboard = billboard if billboard is not None else Billboard(config.relation, noise_rng=self.noise_rng)
        self.gram_mechanism, self.target_mechanism = self.calibrate()
        H, d, S = self.horizon, self.dim, self.num_states
        self.gram = np.zeros((H, d, d))            # Σ φφᵀ per stage (raw: never read but through the billboard)
        self.next_state_sums = np.zeros((H, d, S))  # Σ φ e_{s'}ᵀ per stage, so that b_h = M_h V
        self.episode = 0
        self.mu = 0.0

    # ---- what the bugs change ---------------------------------------------------------------------------

    def prepare_features(self, features: np.ndarray) -> np.ndarray:
        return features

    def sensitivities(self) -> tuple[float, float]:
        """(Frobenius sensitivity of G_h, ℓ2 sensitivity of b_h) under the configured relation, ‖φ‖ ≤ 1."""
        if self.config.relation == "add-remove-one":
            return 1.0, float(self.horizon)
        return math.sqrt(2.0), 2.0 * self.horizon

    def compositions(self) -> int:
        """How many releases read one user: 2H in each of the K − 1 episodes after its own."""
        return 2 * self.horizon * max(self.config.num_episodes - 1, 1)

    def calibrate(self) -> tuple[Mechanism, Mechanism]:
        c = self.config
        gram_sensitivity, target_sensitivity = self.sensitivities()
        n = self.compositions()
        gram = calibrate_goe(c.epsilon, c.delta, gram_sensitivity, self.dim, n, c.relation)
        target = calibrate_gaussian(c.epsilon, c.delta, target_sensitivity, n, self.dim, c.relation)
        if self.noise_factor != 1.0:
            gram = GOEMechanism(gram.frobenius_sensitivity, gram.entry_std * self.noise_factor, gram.dim, gram.relation)
            target = GaussianMechanism(target.sensitivity, target.sigma * self.noise_factor, target.dim,
                                       target.relation)
        return gram, target

    def users(self) -> str:
        return "prefix"

    def release(self, family: str, k: int, h: int, mechanism: Mechanism, raw: np.ndarray) -> np.ndarray:
        return self.billboard.publish(family, k, h + 1, mechanism, raw, self.users(), self.noise_rng)

    def release_grams(self, k: int) -> np.ndarray:
        return np.stack([self.release("gram", k, h, self.gram_mechanism, self.gram[h]) for h in range(self.horizon)])

    def target_mechanism_at(self, k: int) -> Mechanism:
        return self.target_mechanism

    # ---- the protocol -----------------------------------------------------------------------------------

    @property
    def ledger(self) -> Any:
        return self.billboard.ledger

    def claimed_guarantee(self) -> DPGuarantee:
        return DPGuarantee(self.config.epsilon, self.config.delta, "exact", 0.0)

    def settings(self) -> dict[str, Any]:
        claim = self.claimed_guarantee()
        accounted = self.ledger.guarantee(claim.delta, claim.conversion, "per-user")
        return {"claimed_epsilon": claim.epsilon, "claimed_delta": claim.delta,
                "accounted_epsilon": accounted.epsilon, "accounted_delta": accounted.delta}

    def begin_episode(self) -> np.ndarray:
        if self.episode >= self.config.num_episodes:
            raise InvalidParameterError("episode", f"must be <= num_episodes = {self.config.num_episodes}",
                                        self.episode + 1)
        self.episode += 1
        return self.plan(self.episode)

    def plan(self, k: int) -> np.ndarray:
        """The greedy policy (H, S) for the optimistic Q-values of episode k, ties broken by the coins."""
        q = self.q_values(k)
        keys = self.coins.random(q.shape) * (q >= q.max(axis=-1, keepdims=True) - 1e-9)
        return np.argmax(keys, axis=-1)

    def q_values(self, k: int) -> np.ndarray:
        """Q_h(s, a) for every stage, state and action, from the statistics published at episode k."""
        H, S = self.horizon, self.num_states
        grams = self.release_grams(k)
        q = np.empty(self.rewards.shape)
        v_next = np.zeros(S)
        for h in range(H - 1, -1, -1):
            matrix = 0.5 * (grams[h] + grams[h].T)
            values, vectors = np.linalg.eigh(matrix)
            inverse = (vectors / (np.maximum(values, 0.0) + REGULARIZATION)) @ vectors.T
            target = self.release("target", k, h, self.target_mechanism_at(k), self.next_state_sums[h] @ v_next)
            w = inverse @ target
            phi = self.features[h]
            bonus = BONUS * np.sqrt(np.einsum("sad,de,sae->sa", phi, inverse, phi))
            q[h] = self.rewards[h] + phi @ w + bonus
            v_next = np.clip(q[h].max(axis=-1), 0.0, H - h)
        return q

    def end_episode(self, trajectory: Any) -> None:
        if trajectory is None:  # an empty slot: the episode happened, no user data arrived
            return
        for h in range(self.horizon):
            phi = self.features[h, trajectory.states[h], trajectory.actions[h]]
            self.gram[h] += np.outer(phi, phi)
            self.next_state_sums[h][:, trajectory.states[h + 1]] += phi


# ---- the bugs ----------------------------------------------------------------------------------------------


class MeanForSum(NoisyLsvi):
    """Bug: the target's sensitivity and noise are those of the mean b_h/(k − 1); the sum is published."""

    def target_mechanism_at(self, k: int) -> Mechanism:
        n = max(k - 1, 1)
        m = self.target_mechanism
        return GaussianMechanism(m.sensitivity / n, m.sigma / n, m.dim, m.relation)  # type: ignore[attr-defined]


class PrefixAsCurrent(NoisyLsvi):
    """Bug: every release recorded as reading the current user only, the noise calibrated for that."""

    def users(self) -> str:
        return "current"

    def compositions(self) -> int:
        return 2 * self.horizon


class OffByOne(NoisyLsvi):
    """Bug: the statistics are released at the end of episode k, after user k's data is in, labelled k."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.next_policy: np.ndarray | None = None

    def plan(self, k: int) -> np.ndarray:
        if self.next_policy is None:  # the first episode plans from nothing (no release: no data yet)
            return np.zeros((self.horizon, self.num_states), dtype=np.int64)
        return self.next_policy

    def end_episode(self, trajectory: Any) -> None:
        super().end_episode(trajectory)
        self.next_policy = super().plan(self.episode)  # labelled episode k, reading users 1..k


class PerCoordinateClip(NoisyLsvi):
    """Bug: φ clipped to [−1, 1] coordinate by coordinate, "so that ‖φ‖ ≤ 1"; any environment accepted."""

    def prepare_features(self, features: np.ndarray) -> np.ndarray:
        return np.clip(features, -1.0, 1.0)


class NormClip(NoisyLsvi):
    """The twin of :class:`PerCoordinateClip`: φ scaled to ‖φ‖ ≤ 1, any environment accepted."""

    def prepare_features(self, features: np.ndarray) -> np.ndarray:
        norms = np.linalg.norm(features, axis=-1, keepdims=True)
        return features / np.maximum(norms, 1.0)


class AddRemoveForReplace(NoisyLsvi):
    """Bug: the add/remove-one sensitivities (F², HF) for a replace-one claim."""

    def sensitivities(self) -> tuple[float, float]:
        return 1.0, float(self.horizon)


class StackedGrams(NoisyLsvi):
    """Bug: the H Gram matrices sent as one vector, calibrated as one Gram matrix (a user moves all H)."""

    stack_calibrated = False  # the twin: the stack's sensitivity is √H times one Gram matrix's

    def calibrate(self) -> tuple[Mechanism, Mechanism]:
        gram, target = super().calibrate()
        c, H, d = self.config, self.horizon, self.dim
        sensitivity = gram.sensitivity_value * (math.sqrt(H) if self.stack_calibrated else 1.0)
        # one stacked release per episode instead of H: K − 1 of them read a user, next to H(K − 1) targets
        n = 2 * max(c.num_episodes - 1, 1)
        stacked = calibrate_gaussian(c.epsilon, c.delta, sensitivity, n, H * d * d, c.relation)
        half = calibrate_gaussian(c.epsilon, c.delta, target.sensitivity_value, H * n, d, c.relation)
        return stacked, half

    def release_grams(self, k: int) -> np.ndarray:
        flat = self.release("grams", k, 0, self.gram_mechanism, self.gram.reshape(-1))
        return flat.reshape(self.horizon, self.dim, self.dim)


class StackedGramsFixed(StackedGrams):
    """The twin of :class:`StackedGrams`: the stack's sensitivity is √H times one Gram matrix's."""

    stack_calibrated = True


class OverConservative(NoisyLsvi):
    """Correct, with twice the noise it needs: its ledger accounts well below its claim."""

    noise_factor = 2.0


class RawAverage(NoisyLsvi):
    """Bug: each published value averaged with a second noisy copy of the raw statistic, drawn from the coins."""

    def second_copy(self, raw: np.ndarray, published: np.ndarray, mechanism: Mechanism) -> np.ndarray:
        return raw + _noise_like(mechanism, self.coins)

    def release(self, family: str, k: int, h: int, mechanism: Mechanism, raw: np.ndarray) -> np.ndarray:
        published = super().release(family, k, h, mechanism, raw)
        return 0.5 * (published + self.second_copy(raw, published, mechanism))


class PublishedAverage(RawAverage):
    """The twin of :class:`RawAverage`: the second copy is drawn around the published value (post-processing)."""

    def second_copy(self, raw: np.ndarray, published: np.ndarray, mechanism: Mechanism) -> np.ndarray:
        return published + _noise_like(mechanism, self.coins)


def _noise_like(mechanism: Mechanism, rng: np.random.Generator) -> np.ndarray:
    """Noise of the mechanism's law and scale (GOE: symmetrised), from ``rng``."""
    z = rng.normal(0.0, mechanism.noise_scale, mechanism.output_shape)
    return (z + z.T) / math.sqrt(2.0) if isinstance(mechanism, GOEMechanism) else z


class SwappedLabels(NoisyLsvi):
    """Records wrong, claim true: every release labelled (episode = its stage, stage = its episode)."""

    def release(self, family: str, k: int, h: int, mechanism: Mechanism, raw: np.ndarray) -> np.ndarray:
        return self.billboard.publish(family, h + 1, k, mechanism, raw, self.users(), self.noise_rng)


class SwappedCalibrated(SwappedLabels):
    """Bug: labels swapped, the noise calibrated to what the swapped ledger charges its worst user, 2(H − 1)K."""

    def compositions(self) -> int:
        return 2 * max(self.horizon - 1, 1) * self.config.num_episodes


class EpisodeSeeded(NoisyLsvi):
    """Bug: each release's noise drawn from a generator seeded with its (episode, stage)."""

    def release(self, family: str, k: int, h: int, mechanism: Mechanism, raw: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng([k, h])
        return self.billboard.publish(family, k, h + 1, mechanism, raw, self.users(), rng)


@dataclass(frozen=True)
class TunedGaussian(GaussianMechanism):
    """A Gaussian mechanism 'tuned' to add half its σ (what a subclass may do to ``release``)."""

    def release(self, value: object, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
        return np.asarray(value, dtype=float) + rng.normal(0.0, self.sigma / 2.0, self.output_shape)


@dataclass(frozen=True)
class LoggedGaussian(GaussianMechanism):
    """A Gaussian mechanism subclass that only logs its releases (its noise is the base class's)."""

    def release(self, value: object, rng: np.random.Generator, n: int | None = None) -> np.ndarray:
        LOG.append(self.dim)
        return super().release(value, rng, n)


LOG: list[int] = []


class TunedMechanism(NoisyLsvi):
    """Bug: the target noise drawn through :class:`TunedGaussian` (half the recorded σ)."""

    subclass: type[GaussianMechanism] = TunedGaussian

    def calibrate(self) -> tuple[Mechanism, Mechanism]:
        gram, target = super().calibrate()
        return gram, self.subclass(target.sensitivity_value, target.noise_scale, target.dim, target.relation)


class LoggedMechanism(TunedMechanism):
    """The twin of :class:`TunedMechanism`: a subclass whose release is the base class's."""

    subclass = LoggedGaussian


# ---- factories (the protocol's signature) --------------------------------------------------------------------


def factory(cls: type[NoisyLsvi], name: str, feature_norm_bound: float | None = 1.0, module: str = __name__) -> Any:
    """The protocol's factory ``(mdp, num_episodes, rng, /, *, billboard=None, **options)`` of one class, under
    the module-level name (and module) it is bound to, so that worker processes can import it."""
    def make(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
             epsilon: float = 1.0, delta: float = 1e-5, relation: str = "replace-one") -> NoisyLsvi:
        config = NoisyLsviConfig(num_episodes, epsilon, delta, relation, feature_norm_bound)
        return cls(mdp, config, rng, billboard)

    make.__name__ = make.__qualname__ = name
    make.__module__ = module
    return make


make_agent = factory(NoisyLsvi, "make_agent")
make_mean_for_sum = factory(MeanForSum, "make_mean_for_sum")
make_prefix_as_current = factory(PrefixAsCurrent, "make_prefix_as_current")
make_off_by_one = factory(OffByOne, "make_off_by_one")
make_per_coordinate_clip = factory(PerCoordinateClip, "make_per_coordinate_clip", feature_norm_bound=None)
make_norm_clip = factory(NormClip, "make_norm_clip", feature_norm_bound=None)
make_add_remove_for_replace = factory(AddRemoveForReplace, "make_add_remove_for_replace")
make_stacked_grams = factory(StackedGrams, "make_stacked_grams")
make_stacked_grams_fixed = factory(StackedGramsFixed, "make_stacked_grams_fixed")
make_over_conservative = factory(OverConservative, "make_over_conservative")
make_raw_average = factory(RawAverage, "make_raw_average")
make_published_average = factory(PublishedAverage, "make_published_average")
make_swapped_labels = factory(SwappedLabels, "make_swapped_labels")
make_swapped_calibrated = factory(SwappedCalibrated, "make_swapped_calibrated")
make_episode_seeded = factory(EpisodeSeeded, "make_episode_seeded")
make_tuned_mechanism = factory(TunedMechanism, "make_tuned_mechanism")
make_logged_mechanism = factory(LoggedMechanism, "make_logged_mechanism")
