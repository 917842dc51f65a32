"""Run-time checks every private agent makes before it releases anything.

The sensitivities a private agent is calibrated with hold only under assumptions the code must
enforce (DESIGN.md §2): the environment's features have norm at most the bound the sensitivities
assume, and the releases are recorded on a billboard of the same neighbouring relation as the
calibration. These helpers are the single place those two checks live.
"""

from __future__ import annotations

from typing import Any

from dpverify.errors import InvalidParameterError
from dpverify.neighbouring import Neighbouring

from agents.billboard import Billboard
from agents.envs.linear_mdp import NORM_TOLERANCE


def check_feature_norm(declared_bound: float, assumed: float) -> None:
    """Refuse an environment whose declared ‖φ‖ bound exceeds the bound the sensitivities assume.

    Environments validate their actual features against their declared bound on construction
    (:mod:`agents.envs.linear_mdp`), so the declared bound is the one to compare.
    """
    if declared_bound > assumed * (1.0 + NORM_TOLERANCE):
        raise InvalidParameterError(
            "feature_norm_bound",
            f"must be <= {assumed:g}, the ‖φ‖ bound the privacy sensitivities assume (the environment declares "
            f"feature_norm_bound = {declared_bound:g}; rescale its features, e.g. the rescaled Min et al. MDP, "
            "or calibrate to the real norm)",
            declared_bound,
        )


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
