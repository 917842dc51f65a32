"""DP-UCB — UCB1 on per-arm reward counters released through the binary mechanism with Laplace noise.

Mishra & Thakurta 2015 ("(Nearly) optimal differentially private stochastic multi-arm bandits", UAI 2015) and
Tossou & Dimitrakakis 2016 ("Algorithms for differentially private multi-armed bandits", AAAI 2016): UCB1
(:mod:`dpverify.agents.bandits.ucb`) whose reward sums S_a are read only through tree-based counters with
Laplace noise, the index widened by a bound on that noise:

    argmax_a S̃_a/n_a + β√(2 log t/n_a) + β_priv · w/n_a,

w the noise bound of a prefix of ⌊log₂K⌋ + 1 Laplace nodes (:func:`~dpverify.agents.bandits.counters.
laplace_sum_bound`, union over the arms and rounds). The pull counts n_a are public: they are a function of the
deployed arms, which are post-processing of the released counters and of the agent's coins (a round deploys
one arm, whoever comes; an empty slot counts its arm with reward 0).

The counters. The A arms' counters run on the round axis — arm a's term at round t is r_t·1{a_t = a}, 0 when
another arm is pulled — and the A nodes that end at round t are released together as one A-vector
(:class:`~dpverify.agents.bandits.counters.TreeCounter`, ``users="tree"``) through the Laplace mechanism. The
user of round t changes one coordinate (the arm it was given, fixed by the published past) by at most 1, so the
vector's ℓ1 sensitivity is 1 under replace-one and add/remove-one: the same privacy as A separate counters of
which a user enters one (the papers' per-arm trees), and a pattern the per-user ledger accounts exactly: every
user lies in ⌊log₂K⌋ + 1 releases.

Privacy claim. The papers' own: pure ε-DP of the action sequence, by basic composition of the ⌊log₂K⌋ + 1
Laplace nodes a reward enters, each at ε0 = ε/(⌊log₂K⌋ + 1), scale b = 1/ε0 (the ``pure`` calibration of
:func:`dpverify.calibration.calibrate`; ``dpverify calibrate --schedule dp-ucb --episodes 1000 --dim 10
--conversion pure`` gives b = 10 at K = 1000, ε = 1). The claim is a :class:`~dpverify.claims.PrivacyClaim` in
pure ε, which the ledger meets by basic composition, exactly. (``--agent-option conversion=cks`` makes the weaker
(ε, δ) claim through a zCDP conversion instead, with more noise: b = 12.79 for the same target.) The action
sequence is then ε-DP, hence the actions given to the other users are ε-JDP (the notion dpverify audits: a
round's own arm never depends on its user's reward).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpverify import _validate
from dpverify.calibration import Calibration, NamedSchedule, ReleaseSchedule, StatisticSpec
from dpverify.mechanisms import LaplaceMechanism
from dpverify.neighbouring import Neighbouring

from ..core.private import PrivateAgentConfig, require_mechanism
from ..envs.bandit import Bandit
from .counters import TREE, TreeCounter, laplace_sum_bound
from .rounds import BatchedBandit, PrivateBandit, Round, twin_builder
from .ucb import DEFAULT_BETA_MULTIPLIER, ArmRule, ucb_index

#: The ℓ1 sensitivity of a round's reward vector r·e_a with r clipped to [0, 1] (either relation).
REWARD_SENSITIVITY = 1.0
DEFAULT_PRIVACY_BETA_MULTIPLIER = 1.0
#: The claim's default calibration: pure ε-DP, the papers' (module docstring).
DEFAULT_CONVERSION = "pure"


@dataclass(frozen=True)
class DpUcbConfig(PrivateAgentConfig):
    """Hyper-parameters of DP-UCB (module docstring): those of every private agent (K, the target (ε, δ),
    relation, conversion — ``pure`` by default —, p of the noise bound; ``feature_norm_bound`` is that of the
    arms as one-hot features, 1, which the agent does not read otherwise) and the multipliers of the UCB1 width
    and of the noise width."""

    conversion: str = DEFAULT_CONVERSION
    beta_multiplier: float = DEFAULT_BETA_MULTIPLIER
    privacy_beta_multiplier: float = DEFAULT_PRIVACY_BETA_MULTIPLIER

    def __post_init__(self) -> None:
        super().__post_init__()
        _validate.non_negative("beta_multiplier", self.beta_multiplier)
        _validate.non_negative("privacy_beta_multiplier", self.privacy_beta_multiplier)


def dp_ucb_schedule(episodes: int, num_arms: int,
                    relation: Neighbouring | str = Neighbouring.REPLACE_ONE) -> ReleaseSchedule:
    """The tree nodes of the A reward counters, one A-vector per round (module docstring)."""
    relation = Neighbouring.parse(relation)
    num_arms = _validate.integer("num_arms", num_arms, minimum=1)
    return ReleaseSchedule(
        name="dp-ucb",
        source="Mishra & Thakurta 2015; Tossou & Dimitrakakis 2016 (tree-based counters, Laplace noise)",
        relation=relation,
        episodes=episodes,
        stages=1,
        statistics=(StatisticSpec("rewards", "tree node of the per-arm reward sums Σ r·e_a (Laplace)", "l1-vector",
                                  num_arms, REWARD_SENSITIVITY, TREE),),
        assumptions=(
            "rewards clipped to [0, 1]; one arm pulled per round, so a user moves one coordinate by at most 1",
            "pull counts are public (a function of the deployed arms)",
            f"neighbouring relation: {relation.value}",
            "each tree node released once with fresh noise; prefix sums are post-processing",
        ),
    )


def _named_build(horizon: int, episodes: int, dim: int, model: str, relation: Neighbouring) -> ReleaseSchedule:
    return dp_ucb_schedule(episodes, dim, relation)


#: The schedule the registry card of ``dp-ucb`` offers to ``dpverify calibrate`` (``--dim`` is the number of arms;
#: Laplace releases: ``--conversion pure``, ``cks`` or ``bun-steinke``, the exact conversion being for Gaussians only).
NAMED_SCHEDULE = NamedSchedule(name="dp-ucb", build=_named_build, models=("tree",), default_model="tree")


class DpUcbRule(ArmRule):
    """DP-UCB for n trials (module docstring)."""

    #: The reward counters (planted variants swap them: :mod:`dpverify.audits.bandit_zoo`).
    counter_class: ClassVar[type[TreeCounter]] = TreeCounter

    def __init__(self, bandit: Bandit, config: DpUcbConfig, randomness: Any, channel: Any,
                 calibration: Calibration) -> None:
        super().__init__(bandit, config, randomness, channel, calibration)
        mechanism = require_mechanism(calibration.mechanism("rewards"), LaplaceMechanism, "rewards")
        self.counter = self.counter_class(channel, "rewards", mechanism, self.n, (self.num_arms,), config.num_episodes)
        p = config.failure_probability / (self.num_arms * config.num_episodes)
        self.noise_width = laplace_sum_bound(mechanism.scale, self.counter.levels, p)

    def published_sums(self) -> np.ndarray:
        """S̃, the noisy reward sums the round's index reads (n, A)."""
        return self.counter.prefix

    def arm_index(self) -> np.ndarray:
        c = self.config
        return ucb_index(self.published_sums(), self.pulls, self.round, c.beta_multiplier,
                         c.privacy_beta_multiplier * self.noise_width)

    def learn(self, played: Round | None) -> None:
        self.counter.add(self.reward_terms(played))
        self.round += 1

    def settings(self) -> dict[str, Any]:
        return {"noise_width": self.noise_width, "tree_levels": self.counter.levels,
                "laplace_scale": float(self.counter.mechanism.noise_scale)}


class DpUcb(PrivateBandit):
    """DP-UCB (Mishra & Thakurta 2015; Tossou & Dimitrakakis 2016) on a bandit (module docstring)."""

    name = "dp-ucb"
    privacy_notion = "jdp"
    config_class = DpUcbConfig
    rule_class = DpUcbRule

    def release_schedule(self, mdp: Bandit, config: DpUcbConfig) -> ReleaseSchedule:
        return dp_ucb_schedule(config.num_episodes, mdp.num_arms, config.relation)


class BatchedDpUcb(BatchedBandit):
    """DP-UCB for n trials at once: the same rule (:mod:`dpverify.agents.bandits.rounds`)."""

    agent_class = DpUcb


#: The registry card's batched twin: every option, both relations.
build_twin = twin_builder(BatchedDpUcb, "dp-ucb")


__all__ = ["NAMED_SCHEDULE", "BatchedDpUcb", "DpUcb", "DpUcbConfig", "DpUcbRule", "build_twin",
           "dp_ucb_schedule"]
