"""What every private agent shares: its configuration, its input checks and its privacy pipeline.

A private agent is a learning rule plus a release schedule. :class:`PrivateAgent` owns the pipeline
that turns the schedule into published statistics and an accounted guarantee, so an agent module
holds only its algorithm:

1. :meth:`PrivateAgent.release_schedule` (the agent's own) lists the statistic families it releases,
   their sensitivities and the users each release reads;
2. :func:`dpverify.calibration.calibrate` turns the schedule and the target (ε, δ) into one mechanism
   per family (:attr:`PrivateAgent.calibration`, :meth:`PrivateAgent.mechanism`);
3. every release goes through the :class:`~dpverify.agents.core.billboard.Billboard` (fresh noise from the
   agent's noise generator), which records it in a :class:`~dpverify.ledger.PrivacyLedger`;
4. :meth:`PrivateAgent.claimed_guarantee` is the calibrated claim, ``agent.ledger`` accounts what was
   actually published, and :meth:`PrivateAgent.settings` reports both as ``claimed_epsilon``,
   ``claimed_delta``, ``accounted_epsilon`` and ``accounted_delta`` for every private agent.

The sensitivities hold only under assumptions the code enforces here: the environment's declared
feature-norm bound does not exceed the bound the calibration assumes (:func:`check_agent_inputs`),
every per-user term entering a release has a norm within that bound, or within its stage's bound
(:func:`check_term_norms`), and
the billboard uses the calibration's neighbouring relation (:func:`billboard_for`). The derivations
of the sensitivities and of the per-user accounting are in docs/derivations.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, cast

import numpy as np

from dpverify import _validate
from dpverify.accounting import pure_epsilon
from dpverify.calibration import CALIBRATION_ROUTES, PURE, Calibration, ReleaseSchedule, calibrate
from dpverify.claims import PrivacyClaim
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError, NumericalError
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import Mechanism
from dpverify.neighbouring import Neighbouring

from ..envs.linear_mdp import NORM_TOLERANCE, LinearMDP
from .base import Agent
from .billboard import Billboard


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
    check_feature_norm(float(cast(Any, mdp).feature_norm_bound), feature_norm_bound)


def check_term_norms(norms: np.ndarray, assumed: float | np.ndarray, what: str) -> None:
    """Run-time guard: every per-user feature entering a released sum has norm ≤ the assumed bound (a term above
    it raises; it is never clipped). ``assumed`` is one bound, or one per stage when the calibration assumes a
    bound per stage: then ``norms[..., h]`` (the last axis is the 0-based stage) is held to ``assumed[h]``."""
    if np.ndim(assumed) == 0:
        if np.any(norms > assumed * (1.0 + NORM_TOLERANCE)):
            raise InvalidParameterError(
                what, f"norm must be <= {assumed:g}, the bound the privacy calibration assumes", float(np.max(norms))
            )
        return
    bounds = np.asarray(assumed, dtype=float)
    over = np.asarray(norms) > bounds * (1.0 + NORM_TOLERANCE)
    if np.any(over):
        stage = int(np.flatnonzero(over.reshape(-1, bounds.shape[-1]).any(axis=0))[0])
        raise InvalidParameterError(
            what, f"norm at stage {stage + 1} must be <= {bounds[stage]:g}, the bound the privacy "
            "calibration assumes at that stage", float(np.max(np.asarray(norms)[..., stage])))


_M = TypeVar("_M", bound=Mechanism)


def require_mechanism(mechanism: Mechanism, kind: type[_M], family: str) -> _M:
    """``mechanism``, checked to be a ``kind`` (the calibration's schedule decides the kind of each family)."""
    if not isinstance(mechanism, kind):
        raise InvalidParameterError("mechanism", f"must be a {kind.__name__} for the {family!r} releases",
                                    type(mechanism).__name__)
    return mechanism


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
    """Hyper-parameters every private agent shares; an agent's config derives from this one, adds its
    own fields and may change a default by redeclaring a field.

    Attributes:
        num_episodes: K, the number of episodes (users) the privacy budget covers.
        epsilon, delta: the target (ε, δ); ε has no default (there is no default privacy budget).
        feature_norm_bound: F, the ‖φ‖ bound the sensitivities assume (the environment must not exceed it).
        relation: the neighbouring relation ("replace-one" or "add-remove-one").
        conversion: the calibrator's zCDP → (ε, δ) route ("exact" by default), or "pure" — a pure ε-DP target for
            an agent whose releases are all Laplace (δ then only names the δ at which (ε, δ) checks test it).
        shift_multiplier: multiplier of the noise bound added to the released Gram matrix.
        failure_probability: p of the utility analysis (radii, noise bounds); not the privacy δ.
    """

    num_episodes: int
    epsilon: float
    delta: float = 1e-5
    feature_norm_bound: float = 1.0
    relation: str = Neighbouring.REPLACE_ONE.value
    conversion: str = "exact"
    shift_multiplier: float = 1.0
    failure_probability: float = 0.01

    def __post_init__(self) -> None:
        _validate.integer("num_episodes", self.num_episodes, minimum=1)
        _validate.positive("epsilon", self.epsilon)
        _validate.open_unit("delta", self.delta)
        _validate.positive("feature_norm_bound", self.feature_norm_bound)
        object.__setattr__(self, "relation", Neighbouring.parse(self.relation).value)
        _validate.one_of("conversion", self.conversion, CALIBRATION_ROUTES)
        _validate.non_negative("shift_multiplier", self.shift_multiplier)
        _validate.open_unit("failure_probability", self.failure_probability)


@dataclass(frozen=True)
class PrivateRegressionConfig(PrivateAgentConfig):
    """The private config plus what a private ridge-regression agent's radius needs (Luyo et al., Ngo et al.,
    LDP-UCRL-VTR); an agent redeclares a field to change its default.

    Attributes (besides :class:`PrivateAgentConfig`'s):
        beta_multiplier: multiplier of the non-private theory radius.
        privacy_beta_multiplier: multiplier of the privacy term of the radius.
        regularization: λ.
    """

    beta_multiplier: float = 0.01
    privacy_beta_multiplier: float = 0.01
    regularization: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        _validate.non_negative("beta_multiplier", self.beta_multiplier)
        _validate.non_negative("privacy_beta_multiplier", self.privacy_beta_multiplier)
        _validate.positive("regularization", self.regularization)


class PrivateAgent(Agent):
    """An agent whose every read of other users' data is a billboard release (module docstring).

    Subclasses set ``name``, ``privacy_notion`` ("jdp": the billboard is private and each user's actions
    depend on it and on the user's own data; "ldp": each user privatises its own messages),
    ``config_class`` and ``mdp_type``, implement :meth:`release_schedule`, and call
    :meth:`set_up_privacy` first thing in their constructor.
    """

    privacy_notion: ClassVar[str]
    config_class: ClassVar[type[PrivateAgentConfig]]
    mdp_type: ClassVar[type] = LinearMDP
    config: Any
    schedule: ReleaseSchedule
    calibration: Calibration
    billboard: Billboard

    @classmethod
    def from_options(cls, mdp: Any, num_episodes: int, rng: np.random.Generator, /, *,
                     billboard: Billboard | None = None, **options: Any) -> PrivateAgent:
        """The registry's factory: the agent for K = ``num_episodes`` with ``options`` as config fields."""
        return cls(mdp, cls.config_class(num_episodes, **options), rng, billboard=billboard)  # type: ignore[call-arg]

    def set_up_privacy(self, mdp: Any, config: PrivateAgentConfig, rng: object, billboard: Billboard | None,
                       **billboard_options: Any) -> None:
        """Check the inputs, then schedule → calibration → billboard (module docstring)."""
        if not isinstance(config, self.config_class):
            raise InvalidParameterError("config", f"must be a {self.config_class.__name__}", type(config).__name__)
        check_agent_inputs(mdp, self.mdp_type, config.feature_norm_bound, rng)
        self.mdp, self.config = mdp, config
        self.horizon, self.num_states = mdp.horizon, mdp.num_states
        self.num_actions, self.dim = mdp.num_actions, mdp.dim
        self.schedule = self.release_schedule(mdp, config)
        self.calibration = calibrate(self.schedule, config.epsilon, config.delta, config.conversion, self.accounting)
        self.billboard = billboard_for(billboard, config.relation, **billboard_options)

    def release_schedule(self, mdp: Any, config: Any) -> ReleaseSchedule:
        """Every release the agent makes in a run of ``config.num_episodes`` episodes (the calibrated plan)."""
        raise NotImplementedError

    @property
    def accounting(self) -> str:
        """How the calibration counts releases: "per-user" (each user pays for the releases reading it)."""
        return "per-user"

    def mechanism(self, family: str, kind: type[_M] = Mechanism) -> _M:  # type: ignore[assignment]
        """The calibrated mechanism of one statistic family, checked to be a ``kind`` (an explicit error, not an
        ``assert``: the same under ``python -O``)."""
        return require_mechanism(self.calibration.mechanism(family), kind, family)

    def check_episode(self, episode: int) -> None:
        """Refuse an episode beyond the K the budget was calibrated for."""
        if episode > self.config.num_episodes:
            raise InvalidParameterError(
                "episodes", f"must be <= num_episodes = {self.config.num_episodes} (the budget covers K episodes)",
                episode)

    # ---- privacy interface ----------------------------------------------------------------------------

    @property
    def ledger(self) -> PrivacyLedger:
        """Every release made so far (family, episode, stage, mechanism, users)."""
        return self.billboard.ledger

    def claimed_guarantee(self) -> DPGuarantee | PrivacyClaim:
        """The (ε, δ) claimed for a run of K episodes: the calibrated schedule, re-accounted — a pure ε-DP claim
        (:class:`~dpverify.claims.PrivacyClaim`) for the ``pure`` calibration."""
        if self.config.conversion == PURE:
            return PrivacyClaim.pure(self._pure_epsilon(self.calibration.ledger()))
        return self.calibration.ledger().guarantee(self.config.delta, self.config.conversion, self.accounting)

    def _pure_epsilon(self, ledger: PrivacyLedger) -> float:
        epsilon, how = pure_epsilon(ledger, self.accounting)
        if epsilon is None:
            raise NumericalError(f"the pure ε of {self.name}'s releases cannot be computed ({how})")
        return epsilon

    def settings(self) -> dict[str, Any]:
        """Config fields, derived constants, and the claimed and ledger-accounted (ε, δ)."""
        settings = super().settings()
        if self.config.conversion == PURE:  # pure ε-DP: δ = 0 on both sides
            claimed = (self._pure_epsilon(self.calibration.ledger()), 0.0)
            accounted = (self._pure_epsilon(self.ledger), 0.0)
        else:
            claim = self.calibration.ledger().guarantee(self.config.delta, self.config.conversion, self.accounting)
            record = self.ledger.guarantee(self.config.delta, self.config.conversion, self.accounting)
            claimed, accounted = (claim.epsilon, claim.delta), (record.epsilon, record.delta)
        settings.update({
            "privacy_notion": self.privacy_notion,
            "claimed_epsilon": claimed[0],
            "claimed_delta": claimed[1],
            "accounted_epsilon": accounted[0],
            "accounted_delta": accounted[1],
            "rho": self.calibration.rho,
            "rho0": self.calibration.rho0,
            "noise_std": {s.spec.key: s.noise_std for s in self.calibration.statistics},
            "sensitivity": {s.spec.key: s.spec.sensitivity for s in self.calibration.statistics},
        })
        return settings
