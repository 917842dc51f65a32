"""The third-party zoo: agents written outside dpverify with real implementers' bugs, and what ``verify`` must say.

Every case is a factory of :mod:`dpverify.audits.third_party`, loaded by file path as a user's agent would be
(``dpverify verify --agent <path>:<factory>``), with the verdict ``dpverify verify`` must reach and the checks
that must catch it: the white-box checks (:mod:`dpverify.whitebox`) and the contract's billboard isolation
(``billboard structure``). Each bug has a correct twin: the same code without the bug, which must come out
CLAIM CONSISTENT — one whose records are wrong while its claim holds (``swapped-labels``) with its failed
record check listed among the reasons, never refuted. Four cases cannot be audited from behaviour (their noise,
or their coins, do not follow the seeds the auditor passes) and must come out INCONCLUSIVE, never CONSISTENT,
never REFUTED.

The cases planted for the verdict rules (docs/whitebox.md, "What a verdict rests on") pair, for each finding: a
planner that averages the published values with noisy copies of the raw ones (``raw-average``, table and
step-level), noise shared between two families of different shapes (``generator-per-family``), noise seeded from
public quantities (``episode-seeded``, ``closed-loop-ucbvi-episode-seeded``), a closed loop whose first action
reads a raw running mean (``closed-loop-ucbvi-root-means``), research code whose coins and noise share numpy's
global stream (``closed-loop-ucbvi-shared``), an agent that publishes nothing (``silent``), records with episode
and stage swapped (``swapped-labels``) and a mechanism subclass that changes ``release`` (``tuned-mechanism``).

:func:`run_third_party_zoo` runs :func:`dpverify.verify.verify` on every case (``docs/make_third_party_zoo.py``
at ``--budget quick``, K = 1000); :func:`whitebox_outcomes` runs the white-box checks and the contract alone, at
a size the test suite affords.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpverify.agents.registry import agent_factory, build_environment
from dpverify.checks import FAIL, NOT_RUN, UNDECIDED, CheckResult
from dpverify.errors import InvalidParameterError
from dpverify.testing import check_private_agent
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
    #: The environment options of the small run of :func:`whitebox_outcomes` when not its default (a leak that
    #: flips a choice only where there are enough choices to flip).
    small: tuple[tuple[str, Any], ...] = ()
    #: The number of episodes of that run when not its default (a noise scale measured on a few nodes per round).
    small_episodes: int = 0

    @property
    def agent(self) -> str:
        """The ``--agent`` argument: ``<file path>:<factory>``."""
        module, _, factory = self.target.partition(":")
        return f"{HERE / (module + '.py')}:{factory}"


def _bug(name: str, target: str, description: str, *caught_by: str) -> ThirdPartyCase:
    return ThirdPartyCase(name, target, True, description, REFUTED, caught_by)


def _twin(name: str, target: str, description: str) -> ThirdPartyCase:
    return ThirdPartyCase(name, target, False, description, CONSISTENT)


PATTERN, SENSITIVITY, NOISE, STRUCTURE, WITNESSED, REPRODUCIBLE, ISOLATION = (
    "release pattern as recorded", "sensitivity within the record", "noise as recorded", "published structure",
    "witnessed pairs within the claim", "reproducible from the seeds", "billboard structure")


def _unauditable(name: str, target: str, description: str, *not_run: str) -> ThirdPartyCase:
    return ThirdPartyCase(name, target, False, description, INCONCLUSIVE, not_run)

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
    _unauditable("global-rng-noise", "self_noised_lsvi:make_global_rng_noise",
                 "noise from numpy's global generator: not reproducible from any seed", REPRODUCIBLE),
    _unauditable("own-rng-noise", "self_noised_lsvi:make_own_rng_noise",
                 "correct noise from the agent's own generator, not billboard.noise_source()", NOISE),
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
    *(dataclasses.replace(c, env="bernoulli-bandit", env_options=(("num_arms", 3),), small_episodes=128) for c in (
        _twin("tree-ucb-bandit", "tree_ucb_adapter:make_agent", "a pure ε-DP UCB bandit on per-arm Laplace tree "
              "counters, each node recorded with the rounds that pulled its arm in its block (correct)"),
        _bug("tree-ucb-half-scale", "tree_ucb_adapter:make_half_scale", "the tree counters draw half the recorded "
             "Laplace scale", NOISE),
        _bug("tree-ucb-round-ranges", "tree_ucb_adapter:make_round_ranges", "each node recorded as reading the "
             "node's range of rounds, not the rounds that pulled its arm", PATTERN))),
    _twin("laplace-counts", "laplace_counts:make_agent", "pure-DP visit counts, Laplace noise for ℓ1 (correct)"),
    _bug("laplace-l2-scale", "laplace_counts:make_l2_scale", "Laplace scale from the ℓ2 sensitivity",
         SENSITIVITY),
    # the verdict rules' planted set: one finding per pair
    _twin("published-average", "noisy_lsvi:make_published_average",
          "averages each published value with a second noisy copy of it (post-processing)"),
    _bug("raw-average", "noisy_lsvi:make_raw_average",
         "averages each published value with a noisy copy of the raw statistic, drawn outside the billboard",
         ISOLATION),
    dataclasses.replace(_twin("step-level-published-average", "step_level_lsvi:make_published_average",
                              "published-average, acting step by step"), small=(("horizon", 4), ("num_actions", 8))),
    dataclasses.replace(_bug("step-level-raw-average", "step_level_lsvi:make_raw_average",
                             "raw-average, acting step by step", ISOLATION),
                        small=(("horizon", 4), ("num_actions", 8))),
    _twin("generator-per-episode", "self_noised_lsvi:make_generator_per_episode",
          "one generator per episode, seeded from noise_source(), both families drawing from it"),
    _bug("generator-per-family", "self_noised_lsvi:make_generator_per_family",
         "each family rebuilds its generator from the episode's seed: Gram and target share normals", NOISE),
    _twin("step-level-generator-per-episode", "step_level_lsvi:make_generator_per_episode",
          "generator-per-episode, acting step by step"),
    _bug("step-level-generator-per-family", "step_level_lsvi:make_generator_per_family",
         "generator-per-family, acting step by step", NOISE),
    _bug("episode-seeded", "noisy_lsvi:make_episode_seeded",
         "the billboard draws each release's noise from a generator seeded with (episode, stage)", NOISE),
    _twin("closed-loop-ucbvi", "closed_loop_ucbvi_adapter:make_separated",
          "research-style private UCB-VI in a closed loop; its adapter gives its coins a stream of their own"),
    _bug("closed-loop-ucbvi-episode-seeded", "closed_loop_ucbvi_adapter:make_episode_seeded",
         "the closed loop seeds numpy's global generator with the episode index", NOISE),
    _bug("closed-loop-ucbvi-root-means", "closed_loop_ucbvi_adapter:make_root_means",
         "the closed loop's first action also reads the raw running mean of returns", ISOLATION),
    _bug("closed-loop-ucbvi-half-noise", "closed_loop_ucbvi_adapter:make_half_noise",
         "the closed loop adds half the noise its calibration asks for", NOISE),
    _unauditable("closed-loop-ucbvi-shared", "closed_loop_ucbvi_adapter:make_agent",
                 "private UCB-VI whose tie-breaking coins and noise share numpy's one global stream", NOISE, PATTERN,
                 SENSITIVITY, WITNESSED),
    _unauditable("closed-loop-ucbvi-choice", "closed_loop_ucbvi_adapter:make_choice_coins",
                 "private UCB-VI whose coins are drawn only at a tie: their order follows the users", ISOLATION),
    _twin("silent", "silent:make_agent", "publishes nothing, plays a random policy from its coins (ε = 0)"),
    _bug("silent-raw-explorer", "silent:make_raw_explorer",
         "publishes nothing, plays the least-tried action on raw counts", ISOLATION),
    ThirdPartyCase("swapped-labels", "noisy_lsvi:make_swapped_labels", False,
                   "episode and stage labels swapped: records wrong, noise right, claim true", CONSISTENT, (PATTERN,)),
    _bug("swapped-calibrated", "noisy_lsvi:make_swapped_calibrated",
         "labels swapped and the noise calibrated to the swapped ledger's worst user", PATTERN),
    _twin("logged-mechanism", "noisy_lsvi:make_logged_mechanism",
          "target noise through a GaussianMechanism subclass that only logs its releases"),
    _bug("tuned-mechanism", "noisy_lsvi:make_tuned_mechanism",
         "target noise through a GaussianMechanism subclass whose release adds half its σ", NOISE),
)


def case(name: str) -> ThirdPartyCase:
    for c in CASES:
        if c.name == name:
            return c
    raise InvalidParameterError("case", f"must be one of {', '.join(c.name for c in CASES)}", name)


@dataclass(frozen=True)
class ThirdPartyOutcome:
    """A case and what was found: the verdict (of ``verify``, or of the white-box checks and the contract), the
    checks (white-box and contract) that failed and did not run, and the seconds it took."""

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
        found = self.not_run if self.case.expected == INCONCLUSIVE else self.failed
        return set(self.case.caught_by) <= set(found)

    def row(self) -> dict[str, Any]:
        return {"case": self.case.name, "kind": "bug" if self.case.bug else "twin", "agent": self.case.target,
                "verdict": self.verdict, "expected": self.case.expected, "as_expected": self.as_expected,
                "white-box failed": list(self.failed), "white-box not run": list(self.not_run),
                "seconds": round(self.seconds, 1)}


def _verdict(checks: Sequence[CheckResult]) -> str:
    """The verdict of checks alone, by :func:`dpverify.verify.result.decide`'s rules."""
    if any(c.refutes for c in checks):
        return REFUTED
    undecided = any(c.status == FAIL and c.claim == UNDECIDED for c in checks)
    return INCONCLUSIVE if undecided or any(c.status == NOT_RUN for c in checks) else CONSISTENT


def whitebox_outcomes(env: str = "min2021", episodes: int = 16, env_options: Mapping[str, Any] | None = None,
                      search_episodes: int = 12, only: Sequence[str] | None = None, seed: int = 0
                      ) -> list[ThirdPartyOutcome]:
    """The white-box checks and the contract (its properties named as ``verify`` names them) on every case (or
    those named in ``only``), at a small size; the verdict is theirs, by ``verify``'s rules."""

    default = tuple(dict(env_options or {"horizon": 3, "num_actions": 4}).items())
    out = []
    options = {"epsilon": 1.0, "delta": 1e-5}
    for c in CASES:
        if only is not None and c.name not in only:
            continue
        start = time.perf_counter()
        k = c.small_episodes or episodes
        if c.env:  # a case of its own environment (a bandit loop needs a bandit)
            mdp = build_environment(c.env, k, c.env_options)
        else:
            mdp = build_environment(env, k, c.small if c.small and env_options is None else default)
        factory = agent_factory(c.agent)
        result = check_releases(Subject(factory, mdp, k, options, name=c.name),
                                WhiteBoxPlan(k, search_episodes, seed=seed, claim_epsilon=1.0))
        contract = check_private_agent(factory, mdp, num_episodes=k, options=options, seed=seed,
                                       whitebox=False, name=c.name)
        checks = [*result.checks, *(dataclasses.replace(p, name=p.name.replace("_", " ")) for p in contract.properties)]
        out.append(ThirdPartyOutcome(c, _verdict(checks), tuple(x.name for x in checks if x.status == FAIL),
                                     tuple(x.name for x in checks if x.status == NOT_RUN),
                                     time.perf_counter() - start))
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
        checks = (*report.whitebox.checks, *report.structure.checks)
        failed = tuple(x.name for x in checks if x.status == FAIL)
        not_run = tuple(x.name for x in checks if x.status == NOT_RUN)
        out.append(ThirdPartyOutcome(c, report.verdict.verdict, failed, not_run, time.perf_counter() - start,
                                     report.verdict.reasons))
    return out
