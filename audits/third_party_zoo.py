"""The third-party zoo: agents written outside dpverify with real implementers' bugs, and what ``verify`` must say.

Every case is a factory of :mod:`dpverify.audits.third_party`, loaded by file path as a user's agent would be
(``dpverify verify --agent <path>:<factory>``), with the verdict ``dpverify verify`` must reach and the
white-box checks that must catch it (:mod:`dpverify.whitebox`). Each bug has a correct twin: the same code
without the bug, which must come out CLAIM CONSISTENT. Two cases cannot be audited from behaviour (their
noise does not follow the seeds the auditor passes) and must come out INCONCLUSIVE, never CONSISTENT.

:func:`run_third_party_zoo` runs :func:`dpverify.verify.verify` on every case (``docs/make_third_party_zoo.py``
at ``--budget quick``, K = 1000); :func:`whitebox_outcomes` runs the white-box checks alone, at a size the test
suite affords.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpverify.agents.registry import agent_factory, build_environment
from dpverify.errors import InvalidParameterError
from dpverify.verify import verify
from dpverify.whitebox import Subject, WhiteBoxPlan, check_releases

REFUTED, CONSISTENT, INCONCLUSIVE = "CLAIM REFUTED", "CLAIM CONSISTENT", "INCONCLUSIVE"
HERE = Path(__file__).resolve().parent / "third_party"


@dataclass(frozen=True)
class ThirdPartyCase:
    """One agent of the zoo: ``module:factory`` under ``audits/third_party``, whether it is a bug, what it does,
    the verdict ``verify`` must reach and the white-box checks that must fail (bugs) or not run
    (INCONCLUSIVE cases)."""

    name: str
    target: str
    bug: bool
    description: str
    expected: str
    caught_by: tuple[str, ...] = ()
    #: The environment the case runs on instead of the zoo's (a bandit loop needs a bandit), and its options.
    env: str = ""
    env_options: tuple[tuple[str, Any], ...] = ()

    @property
    def agent(self) -> str:
        """The ``--agent`` argument: ``<file path>:<factory>``."""
        module, _, factory = self.target.partition(":")
        return f"{HERE / (module + '.py')}:{factory}"


def _bug(name: str, target: str, description: str, *caught_by: str) -> ThirdPartyCase:
    return ThirdPartyCase(name, target, True, description, REFUTED, caught_by)


def _twin(name: str, target: str, description: str) -> ThirdPartyCase:
    return ThirdPartyCase(name, target, False, description, CONSISTENT)


PATTERN, SENSITIVITY, NOISE, STRUCTURE, WITNESSED, REPRODUCIBLE = (
    "release pattern as recorded", "sensitivity within the record", "noise as recorded", "published structure",
    "witnessed pairs within the claim", "reproducible from the seeds")

CASES: tuple[ThirdPartyCase, ...] = (
    _twin("noisy-lsvi", "noisy_lsvi:make_agent", "private LSVI, the billboard noises its statistics (correct)"),
    _bug("mean-for-sum", "noisy_lsvi:make_mean_for_sum", "target noise calibrated for the mean, added to the sum",
         SENSITIVITY, WITNESSED),
    _bug("prefix-as-current", "noisy_lsvi:make_prefix_as_current",
         "prefix releases recorded as users='current' (noise for one episode per user)", PATTERN, WITNESSED),
    _bug("off-by-one", "noisy_lsvi:make_off_by_one", "the release labelled episode k already reads user k", PATTERN),
    _bug("per-coordinate-clip", "noisy_lsvi:make_per_coordinate_clip",
         "features clipped per coordinate, noise calibrated for ‖φ‖ ≤ 1", SENSITIVITY, WITNESSED),
    _twin("norm-clip", "noisy_lsvi:make_norm_clip", "features clipped to ‖φ‖ ≤ 1 (the twin of per-coordinate-clip)"),
    _bug("add-remove-for-replace", "noisy_lsvi:make_add_remove_for_replace",
         "add/remove-one sensitivities for a replace-one claim", SENSITIVITY),
    _bug("stacked-grams", "noisy_lsvi:make_stacked_grams", "H Gram matrices in one message, calibrated as one",
         SENSITIVITY, WITNESSED),
    _twin("stacked-grams-fixed", "noisy_lsvi:make_stacked_grams_fixed", "the stack calibrated for all H (twin)"),
    _twin("over-conservative", "noisy_lsvi:make_over_conservative",
          "twice the noise needed: a claim weaker than it could be (met, with room)"),
    _twin("self-noised-lsvi", "self_noised_lsvi:make_agent",
          "the same learner adding its own noise from billboard.noise_source() (correct)"),
    _bug("half-noise", "self_noised_lsvi:make_half_noise", "records σ, adds σ/2 (a lying ledger)", NOISE, WITNESSED),
    _bug("reused-noise", "self_noised_lsvi:make_reused_noise", "one noise draw per statistic and stage, reused",
         NOISE),
    _bug("broadcast-noise", "self_noised_lsvi:make_broadcast_noise", "one scalar draw on every coordinate", NOISE),
    _bug("unnoised-coordinate", "self_noised_lsvi:make_unnoised_coordinate",
         "the last coordinate published without noise", NOISE),
    _bug("asymmetric-gram", "self_noised_lsvi:make_asymmetric_gram",
         "Gram noise not symmetrised, recorded as GOE", STRUCTURE),
    ThirdPartyCase("global-rng-noise", "self_noised_lsvi:make_global_rng_noise", False,
                   "noise from numpy's global generator: not reproducible from any seed", INCONCLUSIVE,
                   (REPRODUCIBLE,)),
    ThirdPartyCase("own-rng-noise", "self_noised_lsvi:make_own_rng_noise", False,
                   "correct noise from the agent's own generator, not billboard.noise_source()", INCONCLUSIVE,
                   (NOISE,)),
    _twin("step-level-lsvi", "step_level_lsvi:make_agent",
          "the billboard-noised learner acting step by step, act(h, state) (correct)"),
    _bug("step-level-mean-for-sum", "step_level_lsvi:make_mean_for_sum",
         "mean-for-sum, acting step by step", SENSITIVITY, WITNESSED),
    _twin("step-level-self-noised", "step_level_lsvi:make_self_noised",
          "the self-noising learner acting step by step (correct)"),
    _bug("step-level-half-noise", "step_level_lsvi:make_half_noise", "half-noise, acting step by step",
         NOISE, WITNESSED),
    _twin("closed-loop-lsvi", "closed_loop_adapter:make_agent",
          "a closed-loop run(env) with global-generator noise, fresh each episode, through a 60-line adapter"),
    _bug("closed-loop-reused-noise", "closed_loop_adapter:make_reused_noise",
         "the closed loop's noise drawn once in its constructor and reused every episode", NOISE),
    ThirdPartyCase("laplace-ucb-bandit", "laplace_ucb_adapter:make_agent", False,
                   "a UCB bandit loop with Laplace sums at doubling rounds, through a 29-line adapter (correct)",
                   CONSISTENT, env="bernoulli-bandit", env_options=(("num_arms", 3),)),
    ThirdPartyCase("laplace-ucb-reused-noise", "laplace_ucb_adapter:make_reused_noise", True,
                   "the bandit loop's noise drawn once in its constructor and added at every release", REFUTED,
                   (NOISE,), env="bernoulli-bandit", env_options=(("num_arms", 3),)),
    _twin("laplace-counts", "laplace_counts:make_agent", "pure-DP visit counts, Laplace noise for ℓ1 (correct)"),
    _bug("laplace-l2-scale", "laplace_counts:make_l2_scale", "Laplace scale from the ℓ2 sensitivity",
         SENSITIVITY),
)


def case(name: str) -> ThirdPartyCase:
    for c in CASES:
        if c.name == name:
            return c
    raise InvalidParameterError("case", f"must be one of {', '.join(c.name for c in CASES)}", name)


@dataclass(frozen=True)
class ThirdPartyOutcome:
    """A case and what was found: the verdict (of ``verify``, or the white-box checks' own), the white-box
    checks that failed and did not run, and the seconds it took."""

    case: ThirdPartyCase
    verdict: str
    failed: tuple[str, ...]
    not_run: tuple[str, ...]
    seconds: float
    reasons: tuple[str, ...] = ()

    @property
    def as_expected(self) -> bool:
        if self.verdict != self.case.expected:
            return False
        found = self.failed if self.case.expected == REFUTED else self.not_run
        return set(self.case.caught_by) <= set(found)

    def row(self) -> dict[str, Any]:
        return {"case": self.case.name, "kind": "bug" if self.case.bug else "twin", "agent": self.case.target,
                "verdict": self.verdict, "expected": self.case.expected, "as_expected": self.as_expected,
                "white-box failed": list(self.failed), "white-box not run": list(self.not_run),
                "seconds": round(self.seconds, 1)}


def _whitebox_verdict(status: str) -> str:
    return {"fail": REFUTED, "not run": INCONCLUSIVE}.get(status, CONSISTENT)


def whitebox_outcomes(env: str = "min2021", episodes: int = 16, env_options: Mapping[str, Any] | None = None,
                      search_episodes: int = 12, only: Sequence[str] | None = None, seed: int = 0
                      ) -> list[ThirdPartyOutcome]:
    """The white-box checks alone on every case (or those named in ``only``), at a small size: the verdict is
    the checks' own (a failure refutes, a check that could not run leaves it inconclusive)."""

    default = build_environment(env, episodes, tuple(dict(env_options or {"horizon": 3, "num_actions": 4}).items()))
    out = []
    for c in CASES:
        if only is not None and c.name not in only:
            continue
        start = time.perf_counter()
        mdp = build_environment(c.env, episodes, c.env_options) if c.env else default
        subject = Subject(agent_factory(c.agent), mdp, episodes, {"epsilon": 1.0, "delta": 1e-5}, name=c.name)
        result = check_releases(subject, WhiteBoxPlan(episodes, search_episodes, seed=seed, claim_epsilon=1.0))
        out.append(ThirdPartyOutcome(c, _whitebox_verdict(result.status), tuple(x.name for x in result.failures),
                                     tuple(x.name for x in result.not_run), time.perf_counter() - start))
    return out


def run_third_party_zoo(budget: str = "quick", env: str = "min2021", episodes: int = 1000,
                        env_options: Mapping[str, Any] | None = None, workers: int | None = None,
                        only: Sequence[str] | None = None) -> list[ThirdPartyOutcome]:
    """``dpverify verify`` on every case (or those named in ``only``), claim (1, 1e-5)."""

    out = []
    for c in CASES:
        if only is not None and c.name not in only:
            continue
        start = time.perf_counter()
        report = verify(c.agent, c.env or env, 1.0, 1e-5, episodes=episodes, budget=budget,
                        env_options=dict(c.env_options) if c.env else env_options, workers=workers)
        failed = tuple(x.name for x in report.whitebox.checks if x.status == "fail")
        not_run = tuple(x.name for x in report.whitebox.checks if x.status == "not run")
        out.append(ThirdPartyOutcome(c, report.verdict.verdict, failed, not_run, time.perf_counter() - start,
                                     report.verdict.reasons))
    return out
