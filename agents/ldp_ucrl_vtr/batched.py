"""LDP-UCRL-VTR (Liao, He & Gu 2021) for many independent runs at once: a leading trial axis through every step.

The same algorithm as :class:`dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr.LdpUcrlVtr`: per episode k the server broadcasts
Σ_{k,h}⁻¹ and θ̂_{k,h} from the privatised messages of users 1..k−1 (shifted by r_{k−1}I), user k plans
optimistically from the broadcast alone (Algorithm 1, line 7), acts, and sends its messages — per
released stage a GOE-privatised φ_Vφ_Vᵀ and a Gaussian-privatised φ_V·V_{h+1}(s_{h+1}) (lines
13–14): 2H under the standard sensitivity model, 2(H − 1) under the staged one, whose stage H sends
nothing and keeps server sums of 0. Every constant (each stage's noise, feature bound and target
range, the radii, each stage's shift) is read from one reference agent built with the same config.

Randomness (:mod:`dpverify.agents.core.batching`): as the reference agent, two streams spawned from the trial's
generator, noise first (:func:`~dpverify.agents.core.batching.SPAWNED_STREAMS`); per episode one tie key
per (h, s, a), then the normals of the user's messages in publication order (as
:meth:`~dpverify.agents.core.billboard.Billboard.publish_block` draws them). The planner's products are the
reference's, trial by trial (its ``einsum`` with a trial index, ``np.matvec`` for its matrix–vector products), so
the twin's policies and messages equal the reference agent's bit for bit
(``tests/agents/ldp_ucrl_vtr/test_batched.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpverify.errors import InvalidParameterError

from ..core.batching import check_episode_cap, greedy_actions, twin_config
from ..core.private import check_term_norms
from ..envs.linear_mdp import LinearMixtureMDP
from .ldp_ucrl_vtr import LdpUcrlVtr, LdpUcrlVtrConfig, stage_inverses


class BatchedLdpUcrlVtr:
    """n independent LDP-UCRL-VTR runs (module docstring).

    Args:
        mdp: the linear mixture MDP.
        config: :class:`~dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr.LdpUcrlVtrConfig`.
        randomness: ``PerTrialRandomness(generators, SPAWNED_STREAMS)`` or ``BatchRandomness``.
        record: 1-based episodes whose messages are kept in :attr:`releases` (family, episode, stage,
            value (n, ...)); ``None`` keeps every message.
    """

    name = "ldp-ucrl-vtr (batched)"
    privacy_notion = "ldp"
    config_class = LdpUcrlVtrConfig

    def __init__(self, mdp: LinearMixtureMDP, config: LdpUcrlVtrConfig, randomness: Any,
                 record: Sequence[int] | None = None) -> None:
        reference = LdpUcrlVtr(mdp, config, np.random.default_rng(0))
        self.reference, self.config, self.mdp, self.randomness = reference, config, mdp, randomness
        self.n = n = int(randomness.n)
        H, S, A, d = mdp.horizon, mdp.num_states, mdp.num_actions, mdp.dim
        self.horizon, self.num_states, self.num_actions, self.dim = H, S, A, d
        self.basis = mdp.basis
        self.rewards = np.asarray(mdp.rewards)
        # The released stages (0-based) and each one's noise: GOE entry std and Gaussian σ.
        self.released_stages = reference.released_stages
        self.gram_stds = np.array([_mechanism(reference.gram_mechanisms, h).entry_std
                                   for h in self.released_stages])
        self.target_sigmas = np.array([_mechanism(reference.target_mechanisms, h).noise_scale
                                       for h in self.released_stages])
        self.value_feature_bounds = reference.value_feature_bounds
        self.target_caps = reference.target_caps
        self.regularization = float(config.regularization)
        self.record = None if record is None else {int(k) for k in record}
        self.releases: list[tuple[Any, ...]] = []
        self.gram_sums = np.zeros((n, H, d, d))
        self.target_sums = np.zeros((n, H, d))
        self.values = np.zeros((n, H + 1, S))
        self.value_features = np.zeros((n, H, S, A, d))
        self.q = np.zeros((n, H, S, A))
        self.count = 0

    # ---- the server and the user's plan --------------------------------------------------------------------

    def broadcast(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Σ⁻¹ (n, H, d, d), θ̂ (n, H, d), β (H,)) for user k = count + 1 of every trial (line 21)."""
        k = self.count + 1
        server = self.reference.server
        shift = server.shift_for(self.count)  # per stage
        gram = self.gram_sums + (self.regularization + shift)[:, None, None] * np.eye(self.dim)
        inverse, _ = stage_inverses(gram, self.regularization, server.sending)
        theta = np.einsum("nhij,nhj->nhi", inverse, self.target_sums)
        return inverse, theta, self.reference.beta(k)

    def plan(self) -> np.ndarray:
        """Every trial's user plans from its broadcast
        (:func:`~dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr.user_plan`)."""
        inverse, theta, beta = self.broadcast()
        H = self.horizon
        self.values = np.zeros((self.n, H + 1, self.num_states))
        for h in range(H - 1, -1, -1):
            x = np.einsum("satd,nt->nsad", self.basis[h], self.values[:, h + 1])
            norms = np.sqrt(np.maximum(np.einsum("nsad,nde,nsae->nsa", x, inverse[:, h], x), 0.0))
            cap = float(H - h)
            self.q[:, h] = np.minimum(self.rewards[h] + np.matvec(x, theta[:, h, None, :]) + beta[h] * norms, cap)
            self.values[:, h] = np.clip(self.q[:, h].max(axis=-1), 0.0, cap)
            self.value_features[:, h] = x
        return self.q

    def begin_episode(self) -> np.ndarray:
        """The policies every trial's user k deploys, shape (n, H, S)."""
        check_episode_cap(self.count, self.config.num_episodes)
        self.plan()
        return greedy_actions(self.q, self.randomness)

    # ---- the user's messages -------------------------------------------------------------------------------

    def message_noise(self) -> tuple[np.ndarray, np.ndarray]:
        """The noise of every trial's messages, drawn as one block in publication order (per
        released stage a Gram message, then a target message), each stage's at its own scale: shapes
        (n, H, d, d) and (n, H, d), 0 at a stage that sends nothing."""
        H, d, n = self.horizon, self.dim, self.n
        stages = list(self.released_stages)
        block = self.randomness.normal(1.0, (len(stages) * (d * d + d),))
        block = block.reshape(n, len(stages), d * d + d)
        z = self.gram_stds[:, None, None] * block[:, :, : d * d].reshape(n, len(stages), d, d)
        gram, target = np.zeros((n, H, d, d)), np.zeros((n, H, d))
        gram[:, stages] = (z + np.swapaxes(z, -1, -2)) / math.sqrt(2.0)
        target[:, stages] = self.target_sigmas[:, None] * block[:, :, d * d:]
        return gram, target

    def end_episode(self, states: np.ndarray, actions: np.ndarray) -> None:
        """Every trial's user privatises its statistics and sends them; the server adds them (lines 13–20)."""
        n, H = self.n, self.horizon
        trial, h = np.arange(n)[:, None], np.arange(H)[None, :]
        x = self.value_features[trial, h, states[:, :-1], actions]
        check_term_norms(np.linalg.norm(x, axis=-1), self.value_feature_bounds,
                               "value features φ_V")
        # each stage's targets clipped to its range
        y = np.clip(self.values[trial, h + 1, states[:, 1:]], 0.0, self.target_caps)
        gram_noise, target_noise = self.message_noise()
        gram = x[..., :, None] * x[..., None, :] + gram_noise
        target = x * y[..., None] + target_noise
        silent = [stage for stage in range(H) if stage not in self.released_stages]
        gram[:, silent], target[:, silent] = 0.0, 0.0  # nothing sent: the server's sums stay 0
        k = self.count + 1
        if self.record is None or k in self.record:
            for stage in self.released_stages:
                self.releases.append(("gram", k, stage + 1, gram[:, stage]))
                self.releases.append(("target", k, stage + 1, target[:, stage]))
        self.gram_sums += gram
        self.target_sums += target
        self.count = k

    def end_episode_empty(self) -> None:
        """Refused, as the reference agent refuses ``end_episode(None)``: local DP has no empty slot."""
        raise InvalidParameterError("trajectory", "must be given: a local-DP agent's claim is about one user's "
                                    "messages, so it has no empty slot (add/remove is not audited for local DP)", None)


def _mechanism(mechanisms: Sequence[Any], h: int) -> Any:
    """The reference agent's mechanism of a released stage (never None there)."""
    mechanism = mechanisms[h]
    if mechanism is None:
        raise InvalidParameterError("stage", "must be a released stage", h + 1)
    return mechanism


def covers(options: dict[str, Any]) -> bool:
    """Whether the batched twin implements the agent with these options (local DP is replace-one
    only; either sensitivity model)."""
    return options.get("relation", "replace-one") == "replace-one"


def build_twin(mdp: LinearMixtureMDP, num_episodes: int, options: dict[str, Any], randomness: Any,
               record: Sequence[int] | None) -> BatchedLdpUcrlVtr:
    """The batched LDP-UCRL-VTR for the reference agent's factory options (its registry card's twin)."""
    return BatchedLdpUcrlVtr(mdp, twin_config(LdpUcrlVtrConfig, "ldp-ucrl-vtr", num_episodes, options), randomness,
                             record=record)
