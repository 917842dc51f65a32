"""The tree-aggregated LSVI agents (Luyo et al. 2021; Ngo et al. 2022) for many independent runs at once.

The same algorithms as :class:`dpverify.agents.tree_lsvi.luyo.LuyoAgent` and
:class:`dpverify.agents.tree_lsvi.ngo.NgoAgent` (:mod:`dpverify.agents.tree_lsvi.tree_lsvi`: binary-tree
mechanism of Chan, Shi & Song 2011 on the per-stage sums, LSVI-UCB of Jin et al. 2020 on the published
prefix sums), with a leading axis of n independent runs ("trials") through every step, so that a two-world
audit runs 10⁵ agents in a few calls of numpy linear algebra per episode. Every constant (calibrated noise,
shift Γ, radius β, batch length) is read from one reference agent built with the same config, so both paths
use the same numbers by construction.

Arithmetic. Every product is the reference agent's, trial by trial: a matrix–vector product ``A @ x`` of
contiguous arrays is ``np.matvec`` over the trials (the same BLAS call per trial; a batched ``einsum`` or
``@`` sums in another order and differs in the last bits), the product with the environment's feature array
(a strided view, which numpy multiplies in its unblocked loop) is made trial by trial, the reference's
``einsum`` is the same ``einsum`` with a trial index, and its factorisations are numpy's stacked LAPACK calls,
made matrix by matrix.

Randomness (:mod:`dpverify.agents.core.batching`): the reference agent spawns two generators from its own, noise
first and tie-breaking second (:data:`TREE_STREAMS`); per episode it draws one tie key per (h, s, a) at the
start and, at the end, one noise block per family (all H stages in one call), gram, then the agent's target
families. Under ``PerTrialRandomness(generators, SPAWNED_STREAMS)`` this twin makes the same draws, so its
policies and releases equal the reference agent's trial by trial (``tests/agents/tree_lsvi/test_batched.py``).
Both relations are batched: under add/remove-one an empty slot (``end_episode_empty``: the episode happens,
the nodes are released on schedule, nothing of a user is in them) is the reference agent's ``end_episode(None)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, Mechanism

from ..core.batching import check_episode_cap, greedy_actions, twin_config
from ..core.noise_bounds import floored_inverse
from ..core.private import check_term_norms
from ..envs.linear_mdp import LinearMDP
from .luyo import LuyoAgent, LuyoConfig
from .ngo import NgoAgent, NgoConfig
from .tree_lsvi import TreeLsviAgent


def TREE_STREAMS(generator: np.random.Generator) -> tuple[np.random.Generator, np.random.Generator]:
    """(noise, ties) as :class:`~dpverify.agents.tree_lsvi.tree_lsvi.TreeLsviAgent` derives them: ``rng.spawn(2)``."""
    noise, ties = generator.spawn(2)
    return noise, ties


def node_noise(randomness: Any, mechanism: Mechanism, horizon: int, shape: tuple[int, ...]) -> np.ndarray:
    """The noise ``Billboard.publish_block`` adds to H releases of ``mechanism`` (one draw of shape (H, *shape)
    from each trial's noise stream, as ``mechanism.release(zeros, rng, H)``), for every trial: (n, H, *shape)."""
    if isinstance(mechanism, GOEMechanism):
        z = randomness.normal(mechanism.entry_std, (horizon, *shape))
        return np.zeros(shape) + (z + np.swapaxes(z, -1, -2)) / math.sqrt(2.0)
    if isinstance(mechanism, GaussianMechanism):
        return np.zeros(shape) + randomness.normal(mechanism.sigma, (horizon, *shape))
    raise InvalidParameterError("mechanism", "must be a GOE or Gaussian mechanism", type(mechanism).__name__)


class BatchedTreeSum:
    """:class:`~dpverify.agents.tree_lsvi.tree_lsvi.BinaryTreeSum` for n trials: at user k, the node
    (k − lowbit(k), k] of every trial and stage is released with the noise given, and :attr:`prefix` is the
    noisy sum over 1..k."""

    def __init__(self, n: int, horizon: int, shape: tuple[int, ...], max_users: int) -> None:
        self.levels = int(max_users).bit_length()
        self.max_users = int(max_users)
        self._raw = np.zeros((n, self.levels, horizon, *shape))
        self._noisy = np.zeros((n, self.levels, horizon, *shape))
        self.prefix = np.zeros((n, horizon, *shape))
        self.count = 0

    def add(self, terms: np.ndarray, noise: np.ndarray, symmetrise: bool = False) -> np.ndarray:
        """Add user k's terms (n, H, *shape) and release the node ending at k with ``noise``; the noisy node.

        With ``symmetrise`` (a GOE release) the node's symmetric part is released, as the billboard releases it
        (exactly the node where it is symmetric); the raw partial sums keep the node as summed."""
        k = self.count + 1
        if k > self.max_users:
            raise InvalidParameterError("episodes", f"must be <= {self.max_users} (the calibrated K)", k)
        level = (k & -k).bit_length() - 1
        node = self._raw[:, :level].sum(axis=1) + terms
        released = 0.5 * (node + np.swapaxes(node, -1, -2)) if symmetrise else node
        noisy = released + noise
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
        randomness: ``PerTrialRandomness(generators, SPAWNED_STREAMS)`` or ``BatchRandomness``.
        record: 1-based episodes whose releases are kept in :attr:`releases` (family, episode, stage,
            value (n, ...)); ``None`` keeps every release.
    """

    privacy_notion = "jdp"

    def __init__(self, reference: TreeLsviAgent, randomness: Any, record: Sequence[int] | None) -> None:
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
        self.releases: list[tuple[Any, ...]] = []  # (family, episode, stage, value (n, ...)[, made (n,)])
        self.q = np.zeros((n, H, S, A))
        self.count = 0

    # ---- releases ----------------------------------------------------------------------------------

    def _noise(self, mechanism: Mechanism, shape: tuple[int, ...]) -> np.ndarray:
        """One release of every stage of every trial, drawn as the mechanism draws it (n, H, *shape)."""
        return node_noise(self.randomness, mechanism, self.horizon, shape)

    def release(self, tree: BatchedTreeSum, family: str, mechanism: Mechanism, terms: np.ndarray) -> None:
        """Add the users' terms to ``tree`` and publish its node for every stage (kept when recorded)."""
        shape = terms.shape[2:]
        noisy = tree.add(terms, self._noise(mechanism, shape), symmetrise=isinstance(mechanism, GOEMechanism))
        k = tree.count
        if self.record is None or k in self.record:
            self.releases.extend((family, k, h + 1, noisy[:, h]) for h in range(self.horizon))

    # ---- planning ----------------------------------------------------------------------------------

    def shifted_gram(self) -> np.ndarray:
        """Λ̃_h = G̃_h + (λ + Γ)I of every trial and stage, from the published tree prefix."""
        return self.gram_tree.prefix + (self.regularization + self.gram_shift) * np.eye(self.dim)

    def gram_inverse(self, gram: np.ndarray | None = None) -> np.ndarray:
        """Λ̃⁻¹ (eigenvalues floored at λ) of ``gram`` (default every trial's :meth:`shifted_gram`)."""
        inverse, _, _ = floored_inverse(self.shifted_gram() if gram is None else gram, self.regularization)
        return inverse

    def backward_pass(self, inverse: np.ndarray, targets: Any, trials: np.ndarray | None = None) -> np.ndarray:
        """LSVI with Λ̃⁻¹ = ``inverse`` (m, H, d, d) and ũ_h = ``targets(h, V_{h+1})`` (m, d) for the m trials
        ``trials`` (default all); fills their rows of Q and returns Q, shape (n, H, S, A)."""
        H, S, A = self.horizon, self.num_states, self.num_actions
        rows = np.arange(self.n) if trials is None else trials
        m = len(rows)
        bonus_sq = np.einsum("hnd,thde,hne->thn", self.flat_features, inverse, self.flat_features)
        bonus = self.beta * np.sqrt(np.maximum(bonus_sq, 0.0)).reshape(m, H, S, A)
        q = np.empty((m, H, S, A))
        next_values = np.zeros((m, S))
        for h in range(H - 1, -1, -1):
            w = np.matvec(inverse[:, h], targets(h, next_values))
            cap = float(H - h)
            # φ_h w of the reference is numpy's unblocked loop on a strided view: made per trial, the same call
            values = np.stack([self.features[h] @ w[t] for t in range(m)])
            q[:, h] = np.minimum(values + bonus[:, h], cap)
            next_values = np.minimum(np.maximum(q[:, h].max(axis=-1), 0.0), cap)
        self.q[rows] = q
        return self.q

    def visited_features(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """φ_h(s_h, a_h) of every trial and stage (n, H, d), checked against the bound the sensitivities assume."""
        x = self.features[np.arange(self.horizon)[None, :], states[:, :-1], actions]
        check_term_norms(np.linalg.norm(x, axis=-1), self.config.feature_norm_bound, "features")
        return x


class BatchedLuyo(BatchedTreeLsvi):
    """n independent Luyo et al. 2021 runs (:class:`~dpverify.agents.tree_lsvi.luyo.LuyoAgent`; module docstring)."""

    name = "luyo (batched)"
    config_class = LuyoConfig

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
                                  lambda h, v: np.matvec(next_state[:, h], v) + rewards[:, h])

    def begin_episode(self) -> np.ndarray:
        """The deployed policies of every trial, shape (n, H, S) (re-planned at the start of each batch)."""
        check_episode_cap(self.count, self.config.num_episodes)
        if self.count % self.batch_length == 0:
            self.plan()
        return greedy_actions(self.q, self.randomness)

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

    def end_episode_empty(self) -> None:
        """An empty slot in every trial: the three nodes are released on schedule with no user's terms in them."""
        n, H, d, S = self.n, self.horizon, self.dim, self.num_states
        self.release(self.gram_tree, "gram", self.gram_mechanism, np.zeros((n, H, d, d)))
        self.release(self.next_state_tree, "next_state", self.next_state_mechanism, np.zeros((n, H, d * S)))
        self.release(self.reward_tree, "reward", self.reward_mechanism, np.zeros((n, H, d)))
        self.count += 1


class BatchedNgo(BatchedTreeLsvi):
    """n independent Ngo et al. 2022 runs (:class:`~dpverify.agents.tree_lsvi.ngo.NgoAgent`; module docstring).

    Each trial re-plans when its own released log-determinants double (and its update budget allows): at
    those episodes it publishes its H target vectors (releases made by those trials only)."""

    name = "ngo (batched)"
    config_class = NgoConfig

    def __init__(self, mdp: LinearMDP, config: NgoConfig, randomness: Any,
                 record: Sequence[int] | None = None) -> None:
        reference = NgoAgent(mdp, config, np.random.default_rng(0))
        super().__init__(reference, randomness, record)
        n, H, d, S = self.n, self.horizon, self.dim, self.num_states
        self.target_mechanism = reference.target_mechanism
        self.max_updates = int(reference.max_updates)
        self.next_state_sums = np.zeros((n, H, d, S))
        self.reward_sums = np.zeros((n, H, d))
        self.last_logdet = np.full((n, H), -np.inf)
        self.policy_updates = np.zeros(n, dtype=np.int64)

    def _log_determinants(self, gram: np.ndarray) -> np.ndarray:
        """log det Λ̃_h of the trials' stacks ``gram`` (m, H, d, d), as :meth:`NgoAgent._log_determinant` computes
        it for each trial: by Cholesky where no eigenvalue is below λ, else by the floored eigendecomposition
        (decided trial by trial, so a trial's value does not depend on the others)."""
        try:
            return self._cholesky_log_determinants(gram)
        except np.linalg.LinAlgError:
            return np.stack([self._trial_log_determinants(g) for g in gram])

    def _trial_log_determinants(self, gram: np.ndarray) -> np.ndarray:
        try:
            return self._cholesky_log_determinants(gram)
        except np.linalg.LinAlgError:
            return floored_inverse(gram, self.regularization)[1]

    def _cholesky_log_determinants(self, gram: np.ndarray) -> np.ndarray:
        np.linalg.cholesky(gram - self.regularization * np.eye(self.dim))
        chol = np.linalg.cholesky(gram)
        return 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)

    def _plan(self, trials: np.ndarray, release: bool) -> np.ndarray:
        """Re-plan the trials ``trials`` (publishing their targets with ``release``); their new log-dets."""
        gram = self.shifted_gram()[trials]
        inverse, logdet, _ = floored_inverse(gram, self.regularization)
        k = self.count + 1
        made = np.zeros(self.n, dtype=bool)
        made[trials] = True

        def targets(h: int, next_values: np.ndarray) -> np.ndarray:
            if not release:  # no data yet: the sum over zero users is 0 and nothing is read
                return np.zeros((len(trials), self.dim))
            raw = np.matvec(self.next_state_sums[trials, h], next_values) + self.reward_sums[trials, h]
            noise = self.randomness.normal_where(made, self.target_mechanism.sigma, (self.dim,))
            noisy = raw + noise[trials]
            if self.record is None or k in self.record:
                value = np.zeros((self.n, self.dim))
                value[trials] = noisy
                self.releases.append(("target", k, h + 1, value, made.copy()))
            return noisy

        self.backward_pass(inverse, targets, trials)
        return logdet

    def begin_episode(self) -> np.ndarray:
        """The deployed policies of every trial, shape (n, H, S) (re-planned where its log-dets doubled)."""
        check_episode_cap(self.count, self.config.num_episodes)
        every = np.arange(self.n)
        if self.count == 0:
            self.last_logdet = self._plan(every, release=False)
        else:
            open_budget = self.policy_updates < self.max_updates
            update = np.zeros(self.n, dtype=bool)
            if np.any(open_budget):
                candidates = every[open_budget]
                logdet = self._log_determinants(self.shifted_gram()[candidates])
                update[candidates] = np.any(logdet >= self.last_logdet[candidates] + math.log(2.0), axis=1)
            if np.any(update):
                trials = every[update]
                self.last_logdet[trials] = self._plan(trials, release=True)
                self.policy_updates[trials] += 1
        return greedy_actions(self.q, self.randomness)

    def end_episode(self, states: np.ndarray, actions: np.ndarray) -> None:
        """Add every trial's user (states (n, H + 1), actions (n, H)): the Gram tree's node, and the raw sums."""
        n, H = self.n, self.horizon
        x = self.visited_features(states, actions)
        trial, h = np.arange(n)[:, None], np.arange(H)[None, :]
        self.release(self.gram_tree, "gram", self.gram_mechanism, x[..., :, None] * x[..., None, :])
        self.next_state_sums[trial, h, :, states[:, 1:]] += x
        self.reward_sums += x * self.rewards[h, states[:, :-1], actions][..., None]
        self.count += 1

    def end_episode_empty(self) -> None:
        """An empty slot in every trial: the Gram node is released on schedule with no user's terms in it."""
        self.release(self.gram_tree, "gram", self.gram_mechanism, np.zeros((self.n, self.horizon, self.dim, self.dim)))
        self.count += 1


def build_ngo_twin(mdp: LinearMDP, num_episodes: int, options: dict[str, Any], randomness: Any,
                   record: Sequence[int] | None) -> BatchedNgo:
    """The batched Ngo et al. agent for the reference agent's factory options (its registry card's twin)."""
    return BatchedNgo(mdp, twin_config(NgoConfig, "ngo", num_episodes, options), randomness, record=record)


def covers(options: dict[str, Any]) -> bool:
    """Whether the batched twin implements the agent with these factory options: every option, both relations."""
    return True


def build_luyo_twin(mdp: LinearMDP, num_episodes: int, options: dict[str, Any], randomness: Any,
                    record: Sequence[int] | None) -> BatchedLuyo:
    """The batched Luyo et al. agent for the reference agent's factory options (its registry card's twin)."""
    return BatchedLuyo(mdp, twin_config(LuyoConfig, "luyo", num_episodes, options), randomness, record=record)
