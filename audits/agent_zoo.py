"""A zoo of planted privacy bugs in whole agents, each next to its correct twin.

Every bug is a small change to a reference agent of :mod:`dpverify.agents` that a reviewer could miss and
that breaks the agent's privacy claim; the twin is the unchanged agent (the same claim, the same
configuration). :func:`run_agent_zoo` audits every case by the route(s) listed for it
(:func:`dpverify.agent_audit.audit_agent`) and compares each verdict with the expected one: a
bug must be flagged VIOLATION by every route that can see it, and no twin may be flagged.

DP-LSVI-UCB++ bugs (Sahu 2025, Algorithm 1) are variants of its batched twin
(:mod:`dpverify.agents.dp_lsvi_ucb_pp.batched`), overriding one hook each (and ``half-sensitivity``, with the
Luyo et al. and Ngo et al. twins' ``luyo-half-sensitivity`` and ``ngo-half-sensitivity``: noise for half the true
sensitivity, the ledger still meeting the claim; LDP-UCRL-VTR's ``ldp-half-sensitivity`` and
``ldp-quarter-sensitivity`` likewise: :class:`LdpScaledSensitivity` says why only the second
breaks its claim):

* ``noise-reused`` — one noise draw per statistic and stage, reused at every episode (Algorithm 1
  line 1 as printed: φ1, φ2, φ3, K1 sampled once): release(k+1) − release(k) is noise-free.
* ``targets-clipped-above`` — the value estimates used as regression targets are clipped to ≤ H only,
  so noisy negative estimates enter the sums (and their squares exceed H² in w̄): the per-user terms
  exceed the calibrated sensitivity.
* ``feature-norm-3`` — the raw Min et al. scale: features 3φ (‖φ‖ up to 3) with the noise calibrated for
  ‖φ‖ ≤ 1.
* ``jdp-leak`` — the billboard is published correctly, but the action given to user k is planned from
  the *un-noised* sums of users 1..k−1. Billboard audits cannot see it (the transcript is unchanged);
  JDP audits, which look at other users' actions, must.
* ``budget-per-episode`` — every release calibrated to ρ/(4H), as if it were the only episode, instead
  of sharing ρ over the 4H(K−1) releases that read a user (composition over episodes forgotten).

Other agents (through the private-agent protocol; the bug replaces one Gaussian mechanism of the agent
by the same mechanism with its noise numerically absent, σ·10⁻¹²):

* ``luyo-vector-noise`` — Luyo et al. 2021 with the noise of its vector trees (next-state and reward
  sums) never added.
* ``ldp-unnoised-message`` — LDP-UCRL-VTR (Liao et al. 2021) whose users send their target message
  Δu un-noised (the Gram message is still privatised).

Bandit agents (:mod:`dpverify.audits.bandit_zoo`: each bug a one-rule variant of JDP-LinUCB, DP-UCB or
LDP-LinUCB, batched): ``jdp-linucb-half-noise`` (noise for half the sensitivity, worst-case canaries),
``jdp-linucb-tree-noise-reused``, ``jdp-linucb-wrong-node-sets`` (running sums recorded as tree nodes, K = 16),
``jdp-linucb-raw-statistics`` (planning from the raw sums: a JDP leak), ``dp-ucb-tree-noise-reused``,
``dp-ucb-raw-count`` (the UCB index reads the raw reward sums), ``ldp-linucb-half-noise`` and
``ldp-linucb-unnoised-target``. DP-UCB's half-noise and wrong-node-set bugs are within reach of the white-box
checks only (Laplace noise: the audits' Clopper–Pearson bound needs far more trials than the zoo runs; at K = 3
half the noise even stays within the (ε, δ) claim): :func:`dpverify.audits.bandit_zoo.contract_outcomes`.

Third-party-style agents — written outside dpverify against the documented protocol, loaded by file path,
with the bugs implementers really make in their *records* (a ledger that records more noise than is drawn,
a release labelled as reading fewer users than it does, a sensitivity for the wrong statistic or relation)
— are in :mod:`dpverify.audits.third_party_zoo` (``dpverify audit agent-zoo --third-party``): the distinguishing
audits here cannot see those, the white-box release checks (:mod:`dpverify.whitebox`) do.

Sizes are reduced so the default suite runs the zoo in seconds: random linear MDPs with sparse
(Dirichlet 0.5) features, H = 2, K = 3 (the billboard/JDP window then covers every later episode), a
few thousand trials per side. ``scale`` multiplies the trials for a stronger run.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpverify.agent_audit import AgentAuditResult, AgentAuditSpec, AgentSetup, audit_agent
from dpverify.agents.dp_lsvi_ucb_pp.batched import BatchedDpLsviUcbPlusPlus
from dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp import DpLsviUcbPlusPlusConfig
from dpverify.agents.ldp_ucrl_vtr.batched import BatchedLdpUcrlVtr
from dpverify.agents.registry import agent_factory
from dpverify.agents.tree_lsvi.batched import BatchedLuyo, BatchedNgo
from dpverify.audit.executors import Executor, SerialExecutor
from dpverify.audit.result import NO_VIOLATION_FOUND, VIOLATION
from dpverify.audits.bandit_zoo import BATCHED as BANDIT_VARIANTS
from dpverify.errors import InvalidParameterError

CLAIM_EPSILON = 1.0
CLAIM_DELTA = 1e-5

# ---- DP-LSVI-UCB++ variants (batched) --------------------------------------------------------------------


class ReusedNoise(BatchedDpLsviUcbPlusPlus):
    """Bug: one draw per (statistic, stage), reused at every episode."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._drawn: dict[tuple[str, int], np.ndarray] = {}

    def gram_noise(self, h: int) -> np.ndarray:
        if ("gram", h) not in self._drawn:
            self._drawn[("gram", h)] = super().gram_noise(h)
        return self._drawn[("gram", h)]

    def vector_noise(self, family: str, h: int) -> np.ndarray:
        if (family, h) not in self._drawn:
            self._drawn[(family, h)] = super().vector_noise(family, h)
        return self._drawn[(family, h)]


class TargetsClippedAbove(BatchedDpLsviUcbPlusPlus):
    """Bug: value estimates and regression targets clipped to ≤ H only (no floor at 0)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.value_floor = -math.inf

    def clip_targets(self, values: np.ndarray, h: int) -> np.ndarray:
        return np.minimum(values, self.target_caps[h])


class FeatureNorm3(BatchedDpLsviUcbPlusPlus):
    """Bug: features 3φ (the raw Min et al. scale) with noise calibrated for ‖φ‖ ≤ 1."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.features = 3.0 * self.features


class JdpLeak(BatchedDpLsviUcbPlusPlus):
    """Bug: the billboard is correct, but planning (hence every later action) reads the raw sums, as the
    non-private LSVI-UCB++ would: Λ = λI + Σ w φφᵀ (no noise, no shift) and the raw vector sums."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.noisy_logdet = np.full_like(self.noisy_logdet, self.dim * math.log(self.regularization))
        self.last_switch_logdet = self.noisy_logdet.copy()

    def planning_statistics(self, raw: np.ndarray, released: np.ndarray) -> np.ndarray:
        if raw.ndim == 4:  # the Gram matrices: the planner adds (λ + shift)I, so take the shift back out
            return raw - self.shift * np.eye(self.dim)
        return raw


class BudgetPerEpisode(BatchedDpLsviUcbPlusPlus):
    """Bug: every release calibrated to ρ/(4H) (one episode's share) instead of the composed share."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        calibration = self.reference.calibration
        forgotten = calibration.rho / (4.0 * self.horizon)
        self.noise_scale = math.sqrt(calibration.rho0 / forgotten)

    def gram_noise(self, h: int) -> np.ndarray:
        return self.noise_scale * super().gram_noise(h)

    def vector_noise(self, family: str, h: int) -> np.ndarray:
        return self.noise_scale * super().vector_noise(family, h)


class HalfSensitivity(BatchedDpLsviUcbPlusPlus):
    """Bug: every release's noise calibrated for half its true sensitivity (σ/2; a ledger written from the
    same halved sensitivity would still meet the claim) — the true μ is twice the claimed one."""

    def gram_noise(self, h: int) -> np.ndarray:
        return 0.5 * super().gram_noise(h)

    def vector_noise(self, family: str, h: int) -> np.ndarray:
        return 0.5 * super().vector_noise(family, h)


class LuyoHalfSensitivity(BatchedLuyo):
    """Bug: Luyo et al. with every tree node's noise calibrated for half its true sensitivity (σ/2, s/2; the
    ledger still meets the claim) — the true μ is twice the claimed one."""

    def _noise(self, mechanism: Any, shape: tuple[int, ...]) -> np.ndarray:
        return 0.5 * super()._noise(mechanism, shape)


class NgoHalfSensitivity(BatchedNgo):
    """Bug: Ngo et al. with the Gram tree's noise calibrated for half its true sensitivity (s/2)."""

    def _noise(self, mechanism: Any, shape: tuple[int, ...]) -> np.ndarray:
        return 0.5 * super()._noise(mechanism, shape)


class LdpScaledSensitivity(BatchedLdpUcrlVtr):
    """Bug: LDP-UCRL-VTR (Liao et al. 2021, Algorithm 1, lines 13–14) whose users' messages carry
    noise calibrated for 1/``factor`` of the true sensitivities (σ/factor for the GOE matrix and the
    Gaussian vector; a ledger written from the same reduced sensitivities would meet the claim).

    Whether that breaks the claim depends on the calibration's slack: the values are capped at
    H − h − 1, so no input moves a stage-h message by more than c_h = ((H − h − 1)/H)² of its
    sensitivity (:func:`dpverify.whitebox.mixture_neighbours.stage_caps`), and a user's true μ is at
    most factor·μ_claim·√(Σ_h c_h²/H) < factor·μ_claim/√5. Half the sensitivity (factor 2) stays
    within the claim for every H (μ < 0.9·μ_claim): a wrong calibration, but no privacy violation,
    and no audit can refute it. A quarter (factor 4) breaks it once the canaries carry more than a
    quarter of the claimed μ: the worst-case design's best pair carries 0.27 of it at H = 4 and 0.31
    at H = 6 (docs/auditing.md, "Canaries that realise the sensitivity"). Under the staged sensitivity
    model (``sensitivity_model="staged"``: each stage calibrated for its own range, no slack) the same
    pair carries √(25/32) = 0.884 of the claimed μ, and half the sensitivity is a true violation
    (1.77·μ_claim)."""

    factor = 2.0

    def message_noise(self) -> tuple[np.ndarray, np.ndarray]:
        gram, target = super().message_noise()
        return gram / self.factor, target / self.factor


class LdpHalfSensitivity(LdpScaledSensitivity):
    """Noise for half the sensitivity (:class:`LdpScaledSensitivity`): within the claim."""

    factor = 2.0


class LdpQuarterSensitivity(LdpScaledSensitivity):
    """Noise for a quarter of the sensitivity (:class:`LdpScaledSensitivity`): the true μ exceeds
    the claimed one once the canaries carry more than a quarter of it."""

    factor = 4.0


@dataclass(frozen=True)
class BatchedVariant:
    """A picklable batch factory ``(setup, mdp, randomness, record) -> agent`` for one variant class (its config
    class is the twin's ``config_class``, DP-LSVI-UCB++'s by default)."""

    variant: str

    def __call__(self, setup: AgentSetup, mdp: Any, randomness: Any, record: Any) -> Any:
        cls = VARIANTS[self.variant]
        config = getattr(cls, "config_class", DpLsviUcbPlusPlusConfig)(setup.episodes, **dict(setup.agent_options))
        return cls(mdp, config, randomness, record=record)


VARIANTS: dict[str, type] = {
    "correct": BatchedDpLsviUcbPlusPlus,
    "noise-reused": ReusedNoise,
    "targets-clipped-above": TargetsClippedAbove,
    "feature-norm-3": FeatureNorm3,
    "jdp-leak": JdpLeak,
    "budget-per-episode": BudgetPerEpisode,
    "half-sensitivity": HalfSensitivity,
    "luyo": BatchedLuyo,
    "luyo-half-sensitivity": LuyoHalfSensitivity,
    "ngo": BatchedNgo,
    "ngo-half-sensitivity": NgoHalfSensitivity,
    "ldp-ucrl-vtr": BatchedLdpUcrlVtr,
    "ldp-half-sensitivity": LdpHalfSensitivity,
    "ldp-quarter-sensitivity": LdpQuarterSensitivity,
    **{f"{agent}-{bug}": cls for (agent, bug), cls in BANDIT_VARIANTS.items()},
}


# ---- agents through the protocol, with the noise of some releases left out --------------------------------

#: The bug's noise scale: 10⁻¹² of the calibrated one, i.e. numerically absent (a mechanism needs σ > 0).
ABSENT = 1e-12


def _unnoised(mechanism: Any) -> Any:
    """The same Gaussian mechanism with its noise numerically absent (σ·10⁻¹²)."""
    return dataclasses.replace(mechanism, sigma=mechanism.sigma * ABSENT)


def luyo_vector_noise_never_added(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *,
                                  billboard: Any = None, **options: Any) -> Any:
    """Bug: Luyo et al. whose next-state and reward trees publish their nodes without noise."""
    agent = agent_factory("luyo")(mdp, num_episodes, rng, billboard=billboard, **options)
    for tree in (agent.next_state_tree, agent.reward_tree):
        tree.mechanism = _unnoised(tree.mechanism)
    return agent


def ldp_ucrl_vtr_unnoised_message(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *,
                                  billboard: Any = None, **options: Any) -> Any:
    """Bug: LDP-UCRL-VTR whose users send their target message Δu without noise."""
    agent = agent_factory("ldp-ucrl-vtr")(mdp, num_episodes, rng, billboard=billboard, **options)
    agent.target_mechanisms = tuple(None if m is None else _unnoised(m)
                                    for m in agent.target_mechanisms)
    return agent


# ---- the cases -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentZooCase:
    """One audit of the zoo: a bug or a twin, by one route and notion, and the verdict expected."""

    name: str
    bug: bool
    description: str
    spec: AgentAuditSpec
    expected: str
    variant: str | None = None

    @property
    def route(self) -> str:
        return f"{self.spec.notion} {self.spec.route}"


LINEAR_ENV = (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))
SINGLE_ACTION_ENV = (("dim", 3), ("horizon", 2), ("num_actions", 1), ("num_states", 3), ("seed", 3))
MIXTURE_ENV = (("dim", 3), ("horizon", 2), ("num_actions", 1), ("num_states", 3), ("seed", 3))
LINEAR_BANDIT_ENV = (("dim", 3), ("num_arms", 2), ("num_contexts", 2), ("seed", 3))
ARMED_BANDIT_ENV = (("num_arms", 2), ("seed", 3))


def _spec(agent: str, env: str, notion: str, trials: int, route: str = "two-world", episodes: int = 3,
          env_options: tuple[tuple[str, Any], ...] = LINEAR_ENV, **extra: Any) -> AgentAuditSpec:
    extra.setdefault("window", episodes)
    return AgentAuditSpec(agent, env, episodes, notion, CLAIM_EPSILON, CLAIM_DELTA, route=route, trials=trials,
                          env_options=env_options, positions=("first",), **extra)


def cases(scale: float = 1.0) -> tuple[AgentZooCase, ...]:
    """Every case of the zoo; ``scale`` multiplies the two-world trials (default sizes suit CI)."""
    t = max(20, int(round(3000 * scale)))
    small = max(20, int(round(300 * scale)))
    out: list[AgentZooCase] = []

    def dp(name: str, variant: str, notion: str, expected: str, description: str, route: str = "two-world",
           factor: int = 1, **extra: Any) -> None:
        trials = factor * t if route == "two-world" else 1
        spec = _spec("dp-lsvi-ucb++", "random-linear", notion, trials, route, **extra)
        out.append(AgentZooCase(name, True, description, spec, expected, variant))
        out.append(AgentZooCase(f"{name} (twin)", False, "the reference DP-LSVI-UCB++, same configuration", spec,
                                NO_VIOLATION_FOUND, "correct"))

    one_run: dict[str, Any] = {"episodes": 400, "canaries": 200, "window": 1}
    # one action per state: a canary's features are fixed by its states (the sensitivity bugs show fully)
    single: dict[str, Any] = {"env_options": SINGLE_ACTION_ENV}
    dp("noise-reused", "noise-reused", "billboard", VIOLATION, "one noise draw per statistic, reused every episode")
    dp("noise-reused", "noise-reused", "billboard", VIOLATION, "one noise draw per statistic, reused every episode",
       route="one-run", **one_run)
    dp("targets-clipped-above", "targets-clipped-above", "billboard", VIOLATION,
       "value targets clipped to <= H only", agent_options=(("shift_multiplier", 0.0),), **single)
    dp("feature-norm-3", "feature-norm-3", "billboard", VIOLATION, "features of norm 3, noise for norm 1", factor=2,
       **single)
    dp("jdp-leak", "jdp-leak", "billboard", NO_VIOLATION_FOUND,
       "actions planned from un-noised sums (billboard intact: invisible here)")
    dp("jdp-leak", "jdp-leak", "jdp", VIOLATION, "actions planned from un-noised sums")
    dp("budget-per-episode", "budget-per-episode", "billboard", VIOLATION, "per-release budget rho/(4H), not composed",
       episodes=65, factor=4, **single)
    out.append(AgentZooCase(
        "luyo-vector-noise", True, "Luyo et al. with the vector trees' noise never added",
        _spec("dpverify.audits.agent_zoo:luyo_vector_noise_never_added", "random-linear", "billboard", small,
              gaussian_claim=True), VIOLATION))
    out.append(AgentZooCase("luyo-vector-noise (twin)", False, "the reference Luyo et al. agent",
                            _spec("luyo", "random-linear", "billboard", small), NO_VIOLATION_FOUND))
    out.append(AgentZooCase(
        "ldp-unnoised-message", True, "LDP-UCRL-VTR sending its target message un-noised",
        _spec("dpverify.audits.agent_zoo:ldp_ucrl_vtr_unnoised_message", "random-mixture", "ldp", small,
              env_options=MIXTURE_ENV, gaussian_claim=True), VIOLATION))
    out.append(AgentZooCase("ldp-unnoised-message (twin)", False, "the reference LDP-UCRL-VTR",
                            _spec("ldp-ucrl-vtr", "random-mixture", "ldp", small, env_options=MIXTURE_ENV),
                            NO_VIOLATION_FOUND))
    out += _bandit_cases(t)
    return tuple(out)


def _bandit_cases(t: int) -> list[AgentZooCase]:
    """The bandit agents' planted bugs, each next to the correct agent on the same audit (module docstring)."""
    out: list[AgentZooCase] = []
    worst: dict[str, Any] = {"canary_design": "worst-case", "window": 1}

    def case(agent: str, bug: str, notion: str, description: str, factor: int = 1, episodes: int = 3,
             **extra: Any) -> None:
        env, options = ("bernoulli-bandit", ARMED_BANDIT_ENV) if agent == "dp-ucb" else (
            "linear-bandit", LINEAR_BANDIT_ENV)
        spec = _spec(agent, env, notion, factor * t, episodes=episodes, env_options=options, **extra)
        out.append(AgentZooCase(f"{agent}-{bug}", True, description, spec, VIOLATION, f"{agent}-{bug}"))
        out.append(AgentZooCase(f"{agent}-{bug} (twin)", False, f"the reference {agent}, same configuration", spec,
                                NO_VIOLATION_FOUND))

    case("jdp-linucb", "half-noise", "billboard", "tree noise for half the sensitivity (recorded so)", factor=4,
         **worst)
    case("jdp-linucb", "tree-noise-reused", "billboard", "one noise draw added to every tree node")
    case("jdp-linucb", "wrong-node-sets", "billboard", "running sums released as tree nodes", episodes=16,
         canary_design="worst-case")
    case("jdp-linucb", "raw-statistics", "jdp", "arms chosen from the raw Gram matrix and target")
    case("dp-ucb", "tree-noise-reused", "billboard", "one Laplace draw added to every reward-counter node")
    case("dp-ucb", "raw-count", "jdp", "UCB index read from the raw reward sums", episodes=4)
    case("ldp-linucb", "half-noise", "ldp", "messages noised for half the sensitivity (recorded so)", factor=4,
         **worst)
    case("ldp-linucb", "unnoised-target", "ldp", "users send x·r without noise")
    return out


@dataclass(frozen=True)
class AgentZooOutcome:
    """A case, its audit result and whether the verdict was the expected one."""

    case: AgentZooCase
    result: AgentAuditResult

    @property
    def as_expected(self) -> bool:
        return self.result.verdict == self.case.expected

    def row(self) -> dict[str, Any]:
        r = self.result
        return {
            "case": self.case.name,
            "kind": "bug" if self.case.bug else "twin",
            "agent": self.case.spec.agent.rsplit(":", 1)[-1],
            "route": self.case.route,
            "verdict": r.verdict,
            "expected": self.case.expected,
            "as_expected": self.as_expected,
            "epsilon_lower_bound": round(r.epsilon_lower_bound, 4),
            "method": r.method,
            "trials": r.trials,
            "canaries": r.canaries,
            "seconds": round(r.seconds, 2),
        }


def run_agent_zoo(scale: float = 1.0, seed: int = 0, executor: Executor | None = None,
                  progress: bool | None = False, only: tuple[str, ...] | None = None) -> list[AgentZooOutcome]:
    """Audit every case (or those named in ``only``); each result holds its verdict and the expected one."""
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise InvalidParameterError("scale", "must be a positive number", scale)
    outcomes = []

    runner = executor if executor is not None else SerialExecutor()
    for case in cases(scale):
        if only is not None and case.name not in only:
            continue
        spec = replace(case.spec, seed=seed)
        factory = BatchedVariant(case.variant) if case.variant is not None else None
        start = time.perf_counter()
        result = audit_agent(spec, executor=runner, progress=progress, batch_factory=factory)
        del start
        outcomes.append(AgentZooOutcome(case, result))
    return outcomes
