"""dpverify: privacy accounting, noise calibration, regret bounds, reference private RL agents and
empirical privacy audits.

The public names below are importable from the package itself (``from dpverify import
GaussianMechanism, PrivacyLedger, calibrate``). They are resolved lazily, on first access, so that
``import dpverify`` (and the command line's start-up) loads none of numpy's heavier neighbours —
scipy.optimize, sympy, matplotlib — until a name that needs them is used.

- mechanisms (:mod:`dpverify.mechanisms`): :class:`GaussianMechanism`, :class:`GOEMechanism`,
  :class:`LaplaceMechanism`, :class:`RandomizedResponse`, their base :class:`NoiseMechanism`, the registry
  :data:`MECHANISMS` and :func:`register_mechanism`, :func:`mechanism_from_dict`; :class:`Neighbouring`;
- claims (:mod:`dpverify.claims`): :class:`PrivacyClaim` (pure ε, (ε, δ), ρ-zCDP, μ-GDP) compared with a ledger;
- accounting (:mod:`dpverify.ledger`, :mod:`dpverify.conversions`): :class:`PrivacyLedger`,
  :class:`DPGuarantee`, :data:`CONVERSIONS`, :func:`guarantee`, :func:`epsilon_from_rho`,
  :func:`rho_for_epsilon_delta`, :func:`epsilon_exact_gaussian`, :func:`mu_for_epsilon_delta`;
- calibration (:mod:`dpverify.calibration`, :mod:`dpverify.sensitivity`): :func:`calibrate`,
  :class:`Calibration`, :class:`ReleaseSchedule`, :class:`StatisticSpec`,
  :func:`dp_lsvi_ucbpp_schedule`, :func:`ldp_ucrl_vtr_schedule`, :func:`check_printed_calibration` (the papers'
  schedules, defined with their agents),
  :class:`SumBound`, :func:`vector_sum_sensitivity`, :func:`gram_sum_sensitivity`;
- audits (:mod:`dpverify.audit`): :func:`audit_mechanism`, :func:`run_audit`, :class:`AuditSpec`,
  :class:`NeighbourPair`, :class:`AuditResult`;
- errors (:mod:`dpverify.errors`): :class:`DpverifyError`, :class:`InvalidParameterError`,
  :class:`NumericalError`.

The regret bounds (:mod:`dpverify.bounds`), the agents (:mod:`dpverify.agents`), the concrete audits
(:mod:`dpverify.audits`) and the test helpers (:mod:`dpverify.testing`) are imported as sub-packages.
"""

from __future__ import annotations

from importlib import metadata as _metadata
from typing import TYPE_CHECKING

from dpverify._lazy import lazy_exports

try:
    __version__ = _metadata.version("dpverify")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"

#: Public name → the module that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "GaussianMechanism", "GOEMechanism", "LaplaceMechanism", "RandomizedResponse", "NoiseMechanism",
            "Mechanism",
            "MECHANISMS", "register_mechanism", "mechanism_from_dict",
        ),
        "dpverify.mechanisms",
    ),
    "Neighbouring": "dpverify.neighbouring",
    "PrivacyLedger": "dpverify.ledger",
    "PrivacyClaim": "dpverify.claims",
    **dict.fromkeys(
        (
            "DPGuarantee", "CONVERSIONS", "guarantee", "epsilon_from_rho", "rho_for_epsilon_delta",
            "epsilon_exact_gaussian", "mu_for_epsilon_delta",
        ),
        "dpverify.conversions",
    ),
    **dict.fromkeys(("calibrate", "Calibration", "ReleaseSchedule", "StatisticSpec"), "dpverify.calibration"),
    # the papers' schedules live with their agents (the core modules import no agent)
    **dict.fromkeys(("dp_lsvi_ucbpp_schedule", "check_printed_calibration"), "dpverify.agents.dp_lsvi_ucb_pp.schedule"),
    "ldp_ucrl_vtr_schedule": "dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr",
    **dict.fromkeys(("SumBound", "vector_sum_sensitivity", "gram_sum_sensitivity"), "dpverify.sensitivity"),
    **dict.fromkeys(
        ("audit_mechanism", "run_audit", "AuditSpec", "NeighbourPair", "AuditResult"), "dpverify.audit"
    ),
    **dict.fromkeys(("DpverifyError", "InvalidParameterError", "NumericalError"), "dpverify.errors"),
}

__all__ = ["__version__", *_EXPORTS]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # static checkers see the real names (``X as X`` marks a re-export)
    from dpverify.agents.dp_lsvi_ucb_pp.schedule import check_printed_calibration as check_printed_calibration
    from dpverify.agents.dp_lsvi_ucb_pp.schedule import dp_lsvi_ucbpp_schedule as dp_lsvi_ucbpp_schedule
    from dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr import ldp_ucrl_vtr_schedule as ldp_ucrl_vtr_schedule
    from dpverify.audit import AuditResult as AuditResult
    from dpverify.audit import AuditSpec as AuditSpec
    from dpverify.audit import NeighbourPair as NeighbourPair
    from dpverify.audit import audit_mechanism as audit_mechanism
    from dpverify.audit import run_audit as run_audit
    from dpverify.calibration import Calibration as Calibration
    from dpverify.calibration import ReleaseSchedule as ReleaseSchedule
    from dpverify.calibration import StatisticSpec as StatisticSpec
    from dpverify.calibration import calibrate as calibrate
    from dpverify.claims import PrivacyClaim as PrivacyClaim
    from dpverify.conversions import CONVERSIONS as CONVERSIONS
    from dpverify.conversions import DPGuarantee as DPGuarantee
    from dpverify.conversions import epsilon_exact_gaussian as epsilon_exact_gaussian
    from dpverify.conversions import epsilon_from_rho as epsilon_from_rho
    from dpverify.conversions import guarantee as guarantee
    from dpverify.conversions import mu_for_epsilon_delta as mu_for_epsilon_delta
    from dpverify.conversions import rho_for_epsilon_delta as rho_for_epsilon_delta
    from dpverify.errors import DpverifyError as DpverifyError
    from dpverify.errors import InvalidParameterError as InvalidParameterError
    from dpverify.errors import NumericalError as NumericalError
    from dpverify.ledger import PrivacyLedger as PrivacyLedger
    from dpverify.mechanisms import MECHANISMS as MECHANISMS
    from dpverify.mechanisms import GaussianMechanism as GaussianMechanism
    from dpverify.mechanisms import GOEMechanism as GOEMechanism
    from dpverify.mechanisms import LaplaceMechanism as LaplaceMechanism
    from dpverify.mechanisms import Mechanism as Mechanism
    from dpverify.mechanisms import NoiseMechanism as NoiseMechanism
    from dpverify.mechanisms import RandomizedResponse as RandomizedResponse
    from dpverify.mechanisms import mechanism_from_dict as mechanism_from_dict
    from dpverify.mechanisms import register_mechanism as register_mechanism
    from dpverify.neighbouring import Neighbouring as Neighbouring
    from dpverify.sensitivity import SumBound as SumBound
    from dpverify.sensitivity import gram_sum_sensitivity as gram_sum_sensitivity
    from dpverify.sensitivity import vector_sum_sensitivity as vector_sum_sensitivity
