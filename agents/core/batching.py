"""Running many independent trials of an agent at once: the randomness and the loop of a *batched twin*.

A batched twin (registry card ``batched``, :class:`dpverify.agents.registry.BatchedTwin`) carries a leading
axis of n independent runs through every step of its agent: ``begin_episode() -> (n, H, S)`` policies,
``end_episode(states (n, H + 1), actions (n, H))``, and the releases it kept, in publication order:
``(family, episode, stage, value (n, ...))``, or ``(family, episode, stage, value, made (n,))`` for a release
only some trials make (e.g. at a data-dependent policy update; ``value`` is then zero where not ``made``).

Its randomness comes from :class:`PerTrialRandomness` — trial i draws exactly as a reference agent
constructed with generator i (its noise and tie-breaking streams derived as that agent derives them), which
is how the twin's tests prove it is the same algorithm, trial by trial — or :class:`BatchRandomness`, the
same distributions for all trials from one generator (the audits' fast path: independent trials, fresh
noise per release).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dpverify.errors import InvalidParameterError

from .planning import TIE_TOLERANCE, maximizing_actions


def CHILD_NOISE_STREAMS(generator: np.random.Generator) -> tuple[np.random.Generator, np.random.Generator]:
    """(noise, ties) as DP-LSVI-UCB++ derives them: noise from ``rng.spawn(1)[0]``, tie keys from ``rng``."""
    return generator.spawn(1)[0], generator


def SPAWNED_STREAMS(generator: np.random.Generator) -> tuple[np.random.Generator, np.random.Generator]:
    """(noise, ties) as the tree agents and LDP-UCRL-VTR derive them: ``rng.spawn(2)``, noise first."""
    noise, ties = generator.spawn(2)
    return noise, ties


class PerTrialRandomness:
    """Trial i draws exactly as a reference agent constructed with ``generators[i]`` would.

    ``streams(generator) -> (noise generator, tie generator)`` is how the reference agent derives its two
    streams from its generator (default :func:`CHILD_NOISE_STREAMS`, DP-LSVI-UCB++'s)."""

    def __init__(self, generators: Sequence[np.random.Generator], streams: Any = None) -> None:
        derive = CHILD_NOISE_STREAMS if streams is None else streams
        pairs = [derive(g) for g in generators]
        self.noise = [noise for noise, _ in pairs]
        self.ties = [ties for _, ties in pairs]
        self.n = len(pairs)

    def normal(self, scale: float, shape: tuple[int, ...]) -> np.ndarray:
        return np.stack([g.normal(0.0, scale, size=shape) for g in self.noise])

    def uniform(self, shape: tuple[int, ...]) -> np.ndarray:
        return np.stack([g.random(shape) for g in self.ties])

    def normal_where(self, mask: np.ndarray, scale: float, shape: tuple[int, ...]) -> np.ndarray:
        """N(0, s²) of the given shape for the trials in ``mask`` (the others draw nothing: zeros)."""
        out = np.zeros((self.n, *shape))
        for i in np.flatnonzero(mask):
            out[i] = self.noise[i].normal(0.0, scale, size=shape)
        return out


class BatchRandomness:
    """All n trials from one generator: N(0, s²) and U[0, 1) arrays of shape (n, *shape)."""

    def __init__(self, generator: np.random.Generator, n: int) -> None:
        if not isinstance(generator, np.random.Generator):
            raise InvalidParameterError("rng", "must be a numpy.random.Generator", type(generator).__name__)
        self.generator = generator
        self.n = int(n)

    def normal(self, scale: float, shape: tuple[int, ...]) -> np.ndarray:
        return self.generator.normal(0.0, scale, size=(self.n, *shape))

    def uniform(self, shape: tuple[int, ...]) -> np.ndarray:
        return self.generator.random((self.n, *shape))

    def normal_where(self, mask: np.ndarray, scale: float, shape: tuple[int, ...]) -> np.ndarray:
        """N(0, s²) of the given shape for the trials in ``mask`` (zeros elsewhere)."""
        out = np.zeros((self.n, *shape))
        out[mask] = self.generator.normal(0.0, scale, size=(int(np.count_nonzero(mask)), *shape))
        return out



def rollout_batch(policies: np.ndarray, initial_state: int, next_states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every trial follows its policy (n, H, S) on one user tape: (states (n, H + 1), actions (n, H))."""
    n, H = policies.shape[0], policies.shape[1]
    trial = np.arange(n)
    states = np.empty((n, H + 1), dtype=np.int64)
    actions = np.empty((n, H), dtype=np.int64)
    states[:, 0] = initial_state
    for h in range(H):
        actions[:, h] = policies[trial, h, states[:, h]]
        states[:, h + 1] = next_states[h, states[:, h], actions[:, h]]
    return states, actions


def run_batch(agent: Any, initial_states: np.ndarray, next_states: np.ndarray,
              keep_policies: Sequence[int] | None = None, empty: Sequence[int] = ()) -> dict[int, np.ndarray]:
    """Run every trial over the K tapes (arrays from :func:`dpverify.agents.core.tapes.tape_arrays`).

    The 0-based episodes in ``empty`` are empty slots (an add/remove neighbour: the episode happens, the agent
    plans and releases on schedule, no user data arrives): ``agent.end_episode_empty()`` in place of a rollout.
    Returns the policies (n, H, S) of the 1-based episodes in ``keep_policies`` (all when None).
    """
    kept: dict[int, np.ndarray] = {}
    empty_set = {int(k) for k in empty}
    for k in range(len(initial_states)):
        policies = agent.begin_episode()
        if keep_policies is None or (k + 1) in keep_policies:
            kept[k + 1] = policies
        if k in empty_set:
            agent.end_episode_empty()
            continue
        states, actions = rollout_batch(policies, int(initial_states[k]), next_states[k])
        agent.end_episode(states, actions)
    return kept


def twin_config(config_class: Any, name: str, num_episodes: int, options: dict[str, Any]) -> Any:
    """The reference agent's config for a twin, from its factory options (the billboard's history options, which
    a twin has no use for, left out); a refused option is bad input naming the agent."""
    options = {k: v for k, v in options.items() if k not in ("keep_history", "keep_noise")}
    try:
        return config_class(num_episodes, **options)
    except TypeError as exc:
        raise InvalidParameterError("--agent-option", f"is not accepted by {name} ({exc})",
                                    ", ".join(options)) from None


def check_episode_cap(count: int, num_episodes: int) -> None:
    """A twin's episode ``count + 1`` must be within the K its privacy budget covers (as the reference agents)."""
    if count + 1 > num_episodes:
        raise InvalidParameterError("episodes", f"must be <= num_episodes = {num_episodes} (the budget covers K "
                                    "episodes)", count + 1)


def greedy_actions(q: np.ndarray, randomness: Any) -> np.ndarray:
    """One maximising action per (trial, h, s) of ``q`` (n, H, S, A), uniform among the ties: the reference agents'
    :func:`~dpverify.agents.core.planning.sample_greedy_actions`, one tie key per (h, s, a) from each trial's stream."""
    keys = randomness.uniform(q.shape[1:])
    keys[~maximizing_actions(q, TIE_TOLERANCE)] = -1.0
    return np.argmax(keys, axis=-1)
