"""The tree-aggregated LSVI agents (Luyo et al. 2021; Ngo et al. 2022) for many independent runs at once.

The same algorithms as :class:`dpverify.agents.luyo.LuyoAgent` and :class:`dpverify.agents.ngo.NgoAgent`
(:mod:`dpverify.agents.tree_lsvi`: binary-tree mechanism of Chan, Shi & Song 2011 on the per-stage sums,
LSVI-UCB of Jin et al. 2020 on the published prefix sums), with a leading axis of n independent runs
("trials") through every step, so that a two-world audit runs 10⁵ agents in a few calls of numpy linear
algebra per episode. Every constant (calibrated noise, shift Γ, radius β, batch length) is read from one
reference agent built with the same config, so both paths use the same numbers by construction.

Randomness (:mod:`dpverify.agents.batching`): the reference agent spawns two generators from its own, noise
first and tie-breaking second (:data:`TREE_STREAMS`); per episode it draws one tie key per (h, s, a) at the
start and, at the end, one noise block per family (all H stages in one call), gram, then the agent's target
families. Under ``PerTrialRandomness(generators, TREE_STREAMS)`` this twin makes the same draws, so its
policies and releases equal the reference agent's trial by trial (``tests/agents/test_batched_tree_lsvi.py``).
Only replace-one runs without empty slots are batched (add/remove audits run the reference agent).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpverify.agents.envs.linear_mdp import LinearMDP
from dpverify.agents.luyo import LuyoAgent, LuyoConfig
from dpverify.agents.noise_bounds import floored_inverse
from dpverify.agents.planning import TIE_TOLERANCE
from dpverify.agents.private import NORM_TOLERANCE
from dpverify.agents.tree_lsvi import TreeLsviAgent
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, Mechanism


def TREE_STREAMS(generator: np.random.Generator) -> tuple[np.random.Generator, np.random.Generator]:
    """(noise, ties) as :class:`~dpverify.agents.tree_lsvi.TreeLsviAgent` derives them: ``rng.spawn(2)``."""
    noise, ties = generator.spawn(2)
    return noise, ties


class BatchedTreeSum:
    """:class:`~dpverify.agents.tree_lsvi.BinaryTreeSum` for n trials: at user k, the node (k − lowbit(k), k] of
    every trial and stage is released with the noise given, and :attr:`prefix` is the noisy sum over 1..k."""

    def __init__(self, n: int, horizon: int, shape: tuple[int, ...], max_users: int) -> None:
        self.levels = int(max_users).bit_length()
        self.max_users = int(max_users)
        self._raw = np.zeros((n, self.levels, horizon, *shape))
        self._noisy = np.zeros((n, self.levels, horizon, *shape))
        self.prefix = np.zeros((n, horizon, *shape))
        self.count = 0

    def add(self, terms: np.ndarray, noise: np.ndarray) -> np.ndarray:
        """Add user k's terms (n, H, *shape) and release the node ending at k with ``noise``; the noisy node."""
        k = self.count + 1
        if k > self.max_users:
            raise InvalidParameterError("episodes", f"must be <= {self.max_users} (the calibrated K)", k)
        level = (k & -k).bit_length() - 1
        node = self._raw[:, :level].sum(axis=1) + terms
        noisy = node + noise
        self._raw[:, level] = node
        self._raw[:, :level] = 0.0
        self._noisy[:, level] = noisy
        self._noisy[:, :level] = 0.0
        self.prefix = self._noisy.sum(axis=1)
        self.count = k
        return noisy


class BatchedTreeLsvi:
    """The shared part of the batched tree agents: the Gram tree, the releases kept, planning and actions.

    Args:
        reference: an agent of the batched algorithm built with the same config (its constants are used).
        randomness: ``PerTrialRandomness(generators, TREE_STREAMS)`` or ``BatchRandomness``.
        record: 1-based episodes whose releases are kept in :attr:`releases` (family, episode, stage,
            value (n, ...)); ``None`` keeps every release.
    """

    privacy_notion = "jdp"

    def __init__(self, reference: TreeLsviAgent, randomness: Any, record: Sequence[int] | None) -> None:
        if reference.config.relation != "replace-one":
            raise InvalidParameterError("relation", "must be 'replace-one' for the batched agent (add/remove audits "
                                        "run one agent at a time)", reference.config.relation)
        self.reference, self.config, self.randomness = reference, reference.config, randomness
        self.n = n = int(randomness.n)
        mdp = reference.mdp
        H, S, A, d = mdp.horizon, mdp.num_states, mdp.num_actions, mdp.dim
        self.horizon, self.num_states, self.num_actions, self.dim = H, S, A, d
        self.features = np.asarray(mdp.features)
        self.flat_features = self.features.reshape(H, S * A, d)
        self.rewards = np.asarray(mdp.rewards)
        self.gram_mechanism = reference.gram_tree.mechanism
        self.gram_tree = BatchedTreeSum(n, H, (d, d), self.config.num_episodes)
        self.regularization = float(self.config.regularization)
        self.gram_shift = float(reference.gram_shift)
        self.beta = float(reference.beta)
        self.record = None if record is None else {int(k) for k in record}
        self.releases: list[tuple[str, int, int, np.ndarray]] = []
        self.q = np.zeros((n, H, S, A))
        self.count = 0

    # ---- releases ----------------------------------------------------------------------------------

    def _noise(self, mechanism: Mechanism, shape: tuple[int, ...]) -> np.ndarray:
        """One release of every stage of every trial, drawn as the mechanism draws it (n, H, *shape)."""
        H = self.horizon
        if isinstance(mechanism, GOEMechanism):
            z = self.randomness.normal(mechanism.entry_std, (H, *shape))
            return np.zeros(shape) + (z + np.swapaxes(z, -1, -2)) / math.sqrt(2.0)
        if isinstance(mechanism, GaussianMechanism):
            return np.zeros(shape) + self.randomness.normal(mechanism.sigma, (H, *shape))
        raise InvalidParameterError("mechanism", "must be a GOE or Gaussian mechanism", type(mechanism).__name__)

    def release(self, tree: BatchedTreeSum, family: str, mechanism: Mechanism, terms: np.ndarray) -> None:
        """Add the users' terms to ``tree`` and publish its node for every stage (kept when recorded)."""
        shape = terms.shape[2:]
        noisy = tree.add(terms, self._noise(mechanism, shape))
        k = tree.count
        if self.record is None or k in self.record:
            self.releases.extend((family, k, h + 1, noisy[:, h]) for h in range(self.horizon))

    # ---- planning ----------------------------------------------------------------------------------

    def gram_inverse(self) -> np.ndarray:
        """Λ̃⁻¹ of every trial and stage from the published prefix, eigenvalues floored at λ."""
        gram = self.gram_tree.prefix + (self.regularization + self.gram_shift) * np.eye(self.dim)
        inverse, _, _ = floored_inverse(gram, self.regularization)
        return inverse

    def backward_pass(self, inverse: np.ndarray, targets: Any) -> np.ndarray:
        """LSVI with Λ̃⁻¹ = ``inverse`` (n, H, d, d) and ũ_h = ``targets(h, V_{h+1})`` (n, d) for every trial."""
        H, S, A = self.horizon, self.num_states, self.num_actions
        bonus_sq = np.einsum("hnd,thde,hne->thn", self.flat_features, inverse, self.flat_features)
        bonus = self.beta * np.sqrt(np.maximum(bonus_sq, 0.0)).reshape(self.n, H, S, A)
        next_values = np.zeros((self.n, S))
        for h in range(H - 1, -1, -1):
            w = np.einsum("tde,te->td", inverse[:, h], targets(h, next_values))
            cap = float(H - h)
            self.q[:, h] = np.minimum(np.einsum("sad,td->tsa", self.features[h], w) + bonus[:, h], cap)
            next_values = np.minimum(np.maximum(self.q[:, h].max(axis=-1), 0.0), cap)
        return self.q

    def greedy_actions(self) -> np.ndarray:
        """One maximising action per (trial, h, s), uniform among the ties (as ``sample_greedy_actions``)."""
        keys = self.randomness.uniform(self.q.shape[1:])
        keys[~(self.q >= self.q.max(axis=-1, keepdims=True) - TIE_TOLERANCE)] = -1.0
        return np.argmax(keys, axis=-1)

    def visited_features(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """φ_h(s_h, a_h) of every trial and stage (n, H, d), checked against the bound the sensitivities assume."""
        x = self.features[np.arange(self.horizon)[None, :], states[:, :-1], actions]
        norms = np.linalg.norm(x, axis=-1)
        bound = self.config.feature_norm_bound
        if np.any(norms > bound * (1.0 + NORM_TOLERANCE)):
            raise InvalidParameterError("features", f"norm must be <= {bound:g}, the bound the privacy calibration "
                                        "assumes", float(np.max(norms)))
        return x

    def check_episode(self) -> None:
        if self.count + 1 > self.config.num_episodes:
            raise InvalidParameterError("episodes", f"must be <= num_episodes = {self.config.num_episodes} (the "
                                        "budget covers K episodes)", self.count + 1)


class BatchedLuyo(BatchedTreeLsvi):
    """n independent Luyo et al. 2021 runs (:class:`~dpverify.agents.luyo.LuyoAgent`; module docstring)."""

    name = "luyo (batched)"

    def __init__(self, mdp: LinearMDP, config: LuyoConfig, randomness: Any,
                 record: Sequence[int] | None = None) -> None:
        reference = LuyoAgent(mdp, config, np.random.default_rng(0))
        super().__init__(reference, randomness, record)
        H, S, d = self.horizon, self.num_states, self.dim
        self.next_state_mechanism = reference.next_state_tree.mechanism
        self.reward_mechanism = reference.reward_tree.mechanism
        self.next_state_tree = BatchedTreeSum(self.n, H, (d * S,), config.num_episodes)
        self.reward_tree = BatchedTreeSum(self.n, H, (d,), config.num_episodes)
        self.batch_length = int(reference.batch_length)

    def plan(self) -> np.ndarray:
        """LSVI on every trial's published prefix sums, target M̃_h V_{h+1} + ρ̃_h."""
        n, H, d, S = self.n, self.horizon, self.dim, self.num_states
        next_state = self.next_state_tree.prefix.reshape(n, H, d, S)
        rewards = self.reward_tree.prefix
        return self.backward_pass(self.gram_inverse(),
                                  lambda h, v: np.einsum("tds,ts->td", next_state[:, h], v) + rewards[:, h])

    def begin_episode(self) -> np.ndarray:
        """The deployed policies of every trial, shape (n, H, S) (re-planned at the start of each batch)."""
        self.check_episode()
        if self.count % self.batch_length == 0:
            self.plan()
        return self.greedy_actions()

    def end_episode(self, states: np.ndarray, actions: np.ndarray) -> None:
        """Add every trial's user (states (n, H + 1), actions (n, H)) to the three trees, publishing their nodes."""
        n, H, d, S = self.n, self.horizon, self.dim, self.num_states
        x = self.visited_features(states, actions)
        trial, h = np.arange(n)[:, None], np.arange(H)[None, :]
        next_terms = np.zeros((n, H, d, S))
        next_terms[trial, h, :, states[:, 1:]] = x
        self.release(self.gram_tree, "gram", self.gram_mechanism, x[..., :, None] * x[..., None, :])
        self.release(self.next_state_tree, "next_state", self.next_state_mechanism, next_terms.reshape(n, H, d * S))
        rewards = self.rewards[h, states[:, :-1], actions]
        self.release(self.reward_tree, "reward", self.reward_mechanism, x * rewards[..., None])
        self.count += 1


def covers(options: dict[str, Any]) -> bool:
    """Whether the batched twin implements the agent with these factory options (replace-one runs)."""
    return options.get("relation", "replace-one") == "replace-one"


def build_luyo_twin(mdp: LinearMDP, num_episodes: int, options: dict[str, Any], randomness: Any,
                    record: Sequence[int] | None) -> BatchedLuyo:
    """The batched Luyo et al. agent for the reference agent's factory options (its registry card's twin)."""
    options = {k: v for k, v in options.items() if k not in ("keep_history", "keep_noise")}
    try:
        config = LuyoConfig(num_episodes, **options)
    except TypeError as exc:
        raise InvalidParameterError("--agent-option", f"is not accepted by luyo ({exc})", ", ".join(options)) from None
    return BatchedLuyo(mdp, config, randomness, record=record)
