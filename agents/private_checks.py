"""Run-time checks every private agent makes before it releases anything.

The sensitivities a private agent is calibrated with hold only under assumptions the code must
enforce (DESIGN.md §2): the environment's features have norm at most the bound the sensitivities
assume, and the releases are recorded on a billboard of the same neighbouring relation as the
calibration. These helpers are the single place those two checks live, next to the configuration every private agent shares.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.agents.billboard import Billboard
from dpverify.agents.envs.linear_mdp import NORM_TOLERANCE
from dpverify.conversions import CONVERSIONS
from dpverify.errors import InvalidParameterError
from dpverify.neighbouring import Neighbouring

#: Default multipliers of the JDP agents' radii (Jin et al.'s d·H·√ι and the privacy term; see
#: docs/private_agents_b.md); an agent may redeclare the fields with its own defaults.
DEFAULT_BETA_MULTIPLIER = 0.01
DEFAULT_PRIVACY_BETA_MULTIPLIER = 0.01


def check_feature_norm(declared_bound: float, assumed: float) -> None:
    """Refuse an environment whose declared ‖φ‖ bound exceeds the bound the sensitivities assume.

    Environments validate their actual features against their declared bound on construction
    (:mod:`dpverify.agents.envs.linear_mdp`), so the declared bound is the one to compare.
    """
    if declared_bound > assumed * (1.0 + NORM_TOLERANCE):
        raise InvalidParameterError(
            "feature_norm_bound",
            f"must be <= {assumed:g}, the ‖φ‖ bound the privacy sensitivities assume (the environment declares "
            f"feature_norm_bound = {declared_bound:g}; rescale its features, e.g. the rescaled Min et al. MDP, "
            "or calibrate to the real norm)",
            declared_bound,
        )


def check_agent_inputs(mdp: Any, mdp_type: type, feature_norm_bound: float, rng: object) -> None:
    """Validate what every private agent is constructed from: the environment's type, its declared
    feature-norm bound against the one the sensitivities assume, and an explicit Generator."""
    if not isinstance(mdp, mdp_type):
        raise InvalidParameterError("mdp", f"must be a {mdp_type.__name__}", type(mdp).__name__)
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError("rng", "must be a numpy.random.Generator", type(rng).__name__)
    check_feature_norm(mdp.feature_norm_bound, feature_norm_bound)


def billboard_for(billboard: Billboard | None, relation: Neighbouring | str, **options: Any) -> Billboard:
    """The billboard to publish on: the given one (checked to use ``relation``) or a new one."""
    relation = Neighbouring.parse(relation)
    if billboard is None:
        return Billboard(relation, **options)
    if billboard.relation is not relation:
        raise InvalidParameterError(
            "billboard.relation", f"must be the calibration's relation {relation.value!r}", billboard.relation.value
        )
    return billboard


@dataclass(frozen=True)
class PrivateAgentConfig:
    """Hyper-parameters every private agent of this package shares (Luyo et al., Ngo et al.,
    LDP-UCRL-VTR); subclasses add their own and may change a default by redeclaring the field.

    Attributes: num_episodes K; the target (epsilon, delta) — epsilon has no default (there is no
    default privacy budget); beta_multiplier and privacy_beta_multiplier of the confidence radius;
    shift_multiplier of the noise bound added to the Gram matrix; regularization λ;
    failure_probability p; feature_norm_bound, the ‖φ‖ bound the sensitivities assume; relation, the
    neighbouring relation; conversion, the calibrator's (ε, δ) route. All are validated here.
    """

    num_episodes: int
    epsilon: float
    delta: float = 1e-5
    beta_multiplier: float = DEFAULT_BETA_MULTIPLIER
    privacy_beta_multiplier: float = DEFAULT_PRIVACY_BETA_MULTIPLIER
    shift_multiplier: float = 1.0
    regularization: float = 1.0
    failure_probability: float = 0.01
    feature_norm_bound: float = 1.0
    relation: str = Neighbouring.REPLACE_ONE.value
    conversion: str = "exact"

    def __post_init__(self) -> None:
        _validate.integer("num_episodes", self.num_episodes, minimum=1)
        _validate.positive("epsilon", self.epsilon)
        _validate.open_unit("delta", self.delta)
        object.__setattr__(self, "relation", Neighbouring.parse(self.relation).value)
        _validate.one_of("conversion", self.conversion, CONVERSIONS)
        _validate.positive("feature_norm_bound", self.feature_norm_bound)
        _validate.non_negative("beta_multiplier", self.beta_multiplier)
        _validate.non_negative("privacy_beta_multiplier", self.privacy_beta_multiplier)
        _validate.non_negative("shift_multiplier", self.shift_multiplier)
        _validate.positive("regularization", self.regularization)
        _validate.open_unit("failure_probability", self.failure_probability)
