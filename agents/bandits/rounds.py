"""What every bandit agent of this package shares: one round per user, and a trial axis through the algorithm.

Each agent is written once, as a **rule** (:class:`BanditRule`): the algorithm carried for n independent runs
("trials") at once — every statistic has a leading axis of n, every release is made for the n trials in one
call, and ties are broken with one key per (context, arm) from each trial's own stream. Two front-ends run
the same rule, so there is no second implementation to keep identical:

* the **reference agent** (:class:`BanditAgent`; :class:`PrivateBandit` for a private one): n = 1 and the
  runner's protocol — ``begin_episode()`` returns the round's policy table (the arm for every context, arm 0
  at the outcome states, which a round never starts in: :mod:`dpverify.agents.envs.bandit`) and
  ``end_episode(trajectory)`` hands the rule the user's (context, arm, reward); a private agent's releases
  go through the billboard (:class:`BillboardChannel`: fresh noise from the agent's noise stream, recorded in
  the ledger, replayable);
* the **batched twin** (:class:`BatchedBandit`, the registry card's ``batched``): n trials for the two-world
  and one-run audits, releases through :class:`TrialChannel`, which draws each trial's noise exactly as the
  billboard draws it — with ``PerTrialRandomness(generators, SPAWNED_STREAMS)`` (:mod:`dpverify.agents.core.
  batching`) trial i is, bit for bit, the reference agent built with generator i (the tests check it).

Randomness: the reference agent spawns two streams from its generator, noise first and ties second (as the
tree agents and LDP-UCRL-VTR do, :func:`~dpverify.agents.core.batching.SPAWNED_STREAMS`); per round it draws
one tie key per (context, arm) when it deploys, then the noise of its releases, in publication order.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import Mechanism

from ..core.base import Agent, Trajectory
from ..core.batching import SPAWNED_STREAMS, PerTrialRandomness, check_episode_cap, twin_config
from ..core.billboard import Billboard
from ..core.planning import TIE_TOLERANCE, maximizing_actions
from ..core.private import PrivateAgent
from ..envs.bandit import Bandit

#: The stage label of every release of a bandit agent (a round is an episode of one stage).
STAGE = 1


@dataclass(frozen=True, eq=False)
class Round:
    """What the users of one round brought, one entry per trial: their contexts, the arms pulled, the rewards."""

    contexts: np.ndarray
    arms: np.ndarray
    rewards: np.ndarray


# ---- where a rule's releases go --------------------------------------------------------------------------


class BillboardChannel:
    """The reference agent's releases (n = 1): each through :meth:`Billboard.publish_block` with fresh noise from
    the agent's noise stream ``rng``, recorded in the billboard's ledger."""

    n = 1

    def __init__(self, billboard: Billboard, rng: np.random.Generator) -> None:
        self.billboard, self.rng = billboard, rng

    def release(self, episode: int, family: str, mechanism: Mechanism, users: str, raw: np.ndarray) -> np.ndarray:
        """``raw`` (1, *shape) released as one (family, episode, stage 1) release; the noisy value (1, *shape)."""
        return np.asarray(self.billboard.publish_block(episode, [(family, STAGE, mechanism)], raw, users, self.rng))

    def own_noise(self, mechanism: Mechanism) -> np.ndarray:
        """One release's noise drawn by the agent itself, from the billboard's :meth:`~Billboard.noise_source`
        (the planted agents of :mod:`dpverify.audits.bandit_zoo` that add their noise themselves)."""
        return mechanism.noise(self.billboard.noise_source(), 1)

    def release_noised(self, episode: int, family: str, mechanism: Mechanism, users: str,
                       noisy: np.ndarray) -> np.ndarray:
        """An already-noised value (1, *shape) recorded as a release of ``mechanism``; the value to use."""
        return self.billboard.publish_noised(family, episode, STAGE, mechanism, noisy[0], users)[None]


class TrialChannel:
    """The batched twin's releases (n trials): each trial's noise drawn as the billboard would draw it — from that
    trial's noise stream under :class:`~dpverify.agents.core.batching.PerTrialRandomness`, from the one generator
    under :class:`~dpverify.agents.core.batching.BatchRandomness` — and the releases of the episodes in ``record``
    (all when None) kept as (family, episode, stage, value (n, ...)) (:mod:`dpverify.agents.core.batching`)."""

    def __init__(self, randomness: Any, record: Sequence[int] | None) -> None:
        self.randomness = randomness
        self.n = int(randomness.n)
        self.record = None if record is None else {int(k) for k in record}
        self.releases: list[tuple[Any, ...]] = []

    def noise(self, mechanism: Mechanism) -> np.ndarray:
        """One release's noise for every trial, (n, *shape)."""
        streams = getattr(self.randomness, "noise", None)
        if isinstance(streams, list):  # PerTrialRandomness: each trial's own stream, as its billboard draws
            return np.concatenate([mechanism.noise(g, 1) for g in streams])
        return mechanism.noise(self.randomness.generator, self.n)

    def release(self, episode: int, family: str, mechanism: Mechanism, users: str, raw: np.ndarray) -> np.ndarray:
        return self.release_noised(episode, family, mechanism, users, raw + self.noise(mechanism))

    own_noise = noise

    def release_noised(self, episode: int, family: str, mechanism: Mechanism, users: str,
                       noisy: np.ndarray) -> np.ndarray:
        if self.record is None or episode in self.record:
            self.releases.append((family, episode, STAGE, noisy))
        return noisy


# ---- the rule -------------------------------------------------------------------------------------------


class BanditRule(abc.ABC):
    """A bandit algorithm for n trials at once (module docstring).

    Subclasses implement :meth:`scores` (the index of every (context, arm), shape (n, C, A), computed from
    published values only for a private rule) and :meth:`learn` (the round's users' data enters the statistics;
    None is an empty slot: the round happened, no user's data arrived). ``channel`` carries a private rule's
    releases (None for a non-private one); ``calibration`` its calibrated mechanisms.
    """

    def __init__(self, bandit: Bandit, config: Any, randomness: Any, channel: Any = None,
                 calibration: Any = None) -> None:
        self.bandit, self.config, self.randomness = bandit, config, randomness
        self.channel, self.calibration = channel, calibration
        self.n = int(randomness.n)
        self.features = bandit.features
        self.num_contexts, self.num_arms, self.dim = bandit.num_contexts, bandit.num_arms, bandit.dim
        self.round = 0  # rounds completed
        self.arms = np.zeros((self.n, self.num_contexts), dtype=np.int64)  # the arms deployed this round

    @abc.abstractmethod
    def scores(self) -> np.ndarray:
        """The index of every (context, arm) for round ``self.round + 1``, shape (n, C, A)."""

    @abc.abstractmethod
    def learn(self, played: Round | None) -> None:
        """Round ``self.round + 1``'s users' data (None: an empty slot), then ``self.round += 1``."""

    def learn_without_data(self) -> None:
        """The no-data control's round (:mod:`dpverify.agents.core.learning`): an empty slot (a local-DP rule sends
        the messages of zero statistics instead)."""
        self.learn(None)

    def choose(self) -> np.ndarray:
        """The arm of every (trial, context), shape (n, C): a largest index, uniform among the ties (one key per
        (context, arm), :func:`~dpverify.agents.core.planning.maximizing_actions`)."""
        scores = self.scores()
        keys = self.randomness.uniform((self.num_contexts, self.num_arms))
        keys[~maximizing_actions(scores, TIE_TOLERANCE)] = -1.0
        return np.argmax(keys, axis=-1)

    def deploy(self) -> np.ndarray:
        """The round's policy table of every trial, shape (n, 1, S): the chosen arm at each context, arm 0 at
        the outcome states (never a round's start)."""
        self.arms = self.choose()
        policies = np.zeros((self.n, 1, self.bandit.num_states), dtype=np.int64)
        policies[:, 0, : self.num_contexts] = self.arms
        return policies

    def pulled_features(self, played: Round) -> np.ndarray:
        """x_{c_t, a_t} of every trial's user, shape (n, d)."""
        return self.features[played.contexts, played.arms]

    def settings(self) -> dict[str, Any]:
        """Derived constants for the agent's ``settings()`` (radii, shifts, counts)."""
        return {}


def played_round(bandit: Bandit, trajectory: Trajectory) -> Round:
    """One user's round read from its trajectory (:meth:`~dpverify.agents.envs.bandit.Bandit.round_of`)."""
    context, arm, reward = bandit.round_of(trajectory)
    return Round(np.array([context]), np.array([arm]), np.array([reward]))


def _check_bandit(bandit: object, rng: object) -> None:
    if not isinstance(bandit, Bandit):
        raise InvalidParameterError("mdp", "must be a Bandit (dpverify.agents.envs.bandit: --env bernoulli-bandit "
                                    "or linear-bandit)", type(bandit).__name__)
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError("rng", "must be a numpy.random.Generator", type(rng).__name__)


# ---- front-ends -------------------------------------------------------------------------------------------


class BanditAgent(Agent):
    """A non-private bandit agent: its rule with one trial, the runner's protocol (module docstring)."""

    rule_class: ClassVar[type[BanditRule]]

    def __init__(self, bandit: Bandit, config: Any, rng: np.random.Generator) -> None:
        _check_bandit(bandit, rng)
        if not isinstance(config, self.config_class):
            raise InvalidParameterError("config", f"must be a {self.config_class.__name__}", type(config).__name__)
        self.mdp, self.config = bandit, config
        self.rule = self.rule_class(bandit, config, PerTrialRandomness([rng], SPAWNED_STREAMS))

    def begin_episode(self) -> np.ndarray:
        if self.rule.round + 1 > self.config.num_episodes:
            raise InvalidParameterError("episodes", f"must be <= num_episodes = {self.config.num_episodes}",
                                        self.rule.round + 1)
        return self.rule.deploy()[0]

    def end_episode(self, trajectory: Trajectory | None) -> None:
        self.rule.learn(None if trajectory is None else played_round(self.mdp, trajectory))

    def derived_settings(self) -> dict[str, Any]:
        return self.rule.settings()


class PrivateBandit(PrivateAgent):
    """A private bandit agent: its rule with one trial, publishing on the billboard (module docstring).

    Subclasses set ``name``, ``privacy_notion``, ``config_class``, ``rule_class`` and implement
    :meth:`release_schedule`.
    """

    mdp_type = Bandit
    rule_class: ClassVar[type[BanditRule]]

    def __init__(self, bandit: Bandit, config: Any, rng: np.random.Generator,
                 billboard: Billboard | None = None) -> None:
        self.set_up_privacy(bandit, config, rng, billboard)
        randomness = PerTrialRandomness([rng], SPAWNED_STREAMS)
        channel = BillboardChannel(self.billboard, randomness.noise[0])
        self.rule = self.rule_class(bandit, config, randomness, channel, self.calibration)

    def begin_episode(self) -> np.ndarray:
        """The round's policy table (the arm for every context), from published values only."""
        self.check_episode(self.rule.round + 1)
        return self.rule.deploy()[0]

    def end_episode(self, trajectory: Trajectory | None) -> None:
        """The user's (context, arm, reward) enter the rule's privatised statistics; None is an empty slot."""
        self.rule.learn(None if trajectory is None else played_round(self.mdp, trajectory))

    def end_episode_without_data(self) -> None:
        """The no-data control's round (:func:`BanditRule.learn_without_data`)."""
        self.rule.learn_without_data()

    def derived_settings(self) -> dict[str, Any]:
        return {"schedule_assumptions": list(self.schedule.assumptions), **self.rule.settings()}


class BatchedBandit:
    """The batched twin of a private bandit agent: its rule with n trials (module docstring).

    Args:
        mdp: the bandit.
        config: the agent's config.
        randomness: ``PerTrialRandomness(generators, SPAWNED_STREAMS)`` or ``BatchRandomness``.
        record: 1-based episodes whose releases are kept in :attr:`releases` (None: all).

    The calibration is read from one reference agent built with the same config. A planted variant
    (:mod:`dpverify.audits.bandit_zoo`) overrides :meth:`make_rule`.
    """

    agent_class: ClassVar[type[PrivateBandit]]
    #: The agent's config class (set from ``agent_class``; the planted-bug zoo builds a twin's config from it).
    config_class: ClassVar[type]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.config_class = cls.agent_class.config_class

    def __init__(self, mdp: Bandit, config: Any, randomness: Any, record: Sequence[int] | None = None) -> None:
        self.reference = self.agent_class(mdp, config, np.random.default_rng(0))
        self.mdp, self.config, self.randomness = mdp, config, randomness
        self.n = int(randomness.n)
        self.channel = TrialChannel(randomness, record)
        self.rule = self.make_rule(mdp, config, randomness, self.channel, self.reference.calibration)
        self.releases = self.channel.releases
        self.name = f"{self.agent_class.name} (batched)"
        self.privacy_notion = self.agent_class.privacy_notion

    def make_rule(self, mdp: Bandit, config: Any, randomness: Any, channel: Any, calibration: Any) -> BanditRule:
        return self.agent_class.rule_class(mdp, config, randomness, channel, calibration)

    def begin_episode(self) -> np.ndarray:
        """The policies of every trial for the next round, shape (n, 1, S)."""
        check_episode_cap(self.rule.round, self.config.num_episodes)
        return self.rule.deploy()

    def end_episode(self, states: np.ndarray, actions: np.ndarray) -> None:
        """Every trial's user (states (n, 2): context and outcome; actions (n, 1)) enters the statistics."""
        self.rule.learn(Round(states[:, 0], actions[:, 0], self.mdp.reward_of(states[:, 1])))

    def end_episode_empty(self) -> None:
        """An empty slot in every trial (as the reference agent's ``end_episode(None)``)."""
        self.rule.learn(None)

    def end_episode_without_data(self) -> None:
        """The no-data control's round in every trial (as the reference agent's)."""
        self.rule.learn_without_data()


def twin_builder(twin_class: type[BatchedBandit], name: str) -> Callable[..., BatchedBandit]:
    """The registry card's ``build(mdp, num_episodes, options, randomness, record)`` for ``twin_class``."""

    def build(mdp: Bandit, num_episodes: int, options: dict[str, Any], randomness: Any,
              record: Sequence[int] | None) -> BatchedBandit:
        config = twin_config(twin_class.agent_class.config_class, name, num_episodes, options)
        return twin_class(mdp, config, randomness, record)

    return build


__all__ = ["STAGE", "BanditAgent", "BanditRule", "BatchedBandit", "BillboardChannel", "PrivateBandit", "Round",
           "TrialChannel", "played_round", "twin_builder"]
