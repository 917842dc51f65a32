"""Figures for dpverify.testing: the time of each assertion at its defaults, and the power of the audit assertion.

Run: ``python benchmarks/bench_testing.py`` (a few minutes; ``--seeds N`` changes the 100 seeds of
the power table, ``--skip-agent-audits`` leaves out the whole-agent audits). Times are medians of
``--repeats`` runs (default 5) on this machine; they are noisy when other jobs share it.

Power: a scalar Gaussian mechanism calibrated to exactly (1, 1e-5) (``calibrate_gaussian``) and copies
with σ × 0.95, 0.9, 0.8 and 0.5, each audited by ``assert_audit_passes`` at its defaults (200 000 trials per
side, confidence 0.99, worst-case neighbours) with seeds 0..N−1: the share of seeds at which the
assertion fails (for the correct mechanism: the false-alarm rate). With ``gaussian_claim`` left at its
default (True for a dpverify Gaussian mechanism) and, for contrast, with ``gaussian_claim=False`` (the
Clopper–Pearson test alone).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp
from dpverify.agents.registry import AGENTS, private_agents
from dpverify.audit import VIOLATION
from dpverify.audits.agent_zoo import luyo_vector_noise_never_added
from dpverify.calibrate_mechanism import calibrate_gaussian, calibrate_goe, calibrate_laplace, composition_ledger
from dpverify.mechanisms import GaussianMechanism
from dpverify.testing import (
    assert_audit_passes,
    assert_audit_refutes,
    assert_fresh_noise,
    assert_ledger_meets,
    audits,
    check_private_agent,
)

EPSILON, DELTA = 1.0, 1e-5


def median_seconds(call: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def noisy_sum(noise_factor: float, sigma: float) -> Callable[[Any, int, np.random.Generator], np.ndarray]:
    def mechanism(dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return float(np.sum(np.clip(dataset, 0.0, 1.0))) + rng.normal(0.0, noise_factor * sigma, size=n)

    return mechanism


def timings(repeats: int, agent_audits: bool = True) -> list[tuple[str, float]]:
    gaussian = calibrate_gaussian(EPSILON, DELTA, 1.0)
    pair = (np.array([0.0, 0.3, 0.9]), np.array([1.0, 0.3, 0.9]))
    ledger = composition_ledger(calibrate_gaussian(EPSILON, DELTA, 1.0, compositions=1000), 1000)
    noises = list(np.random.default_rng(0).normal(size=(10_000, 4)))
    linear, mixture = min2021_mdp(horizon=4, num_actions=5), zhou2021_mixture_mdp(horizon=3)
    rows: list[tuple[str, Callable[[], Any]]] = [
        ("calibrate_gaussian(1, 1e-5, 1)", lambda: calibrate_gaussian(EPSILON, DELTA, 1.0)),
        ("calibrate_gaussian(..., compositions=1000)",
         lambda: calibrate_gaussian(EPSILON, DELTA, 1.0, compositions=1000)),
        ("calibrate_goe(1, 1e-5, 1, dim=4)", lambda: calibrate_goe(EPSILON, DELTA, 1.0, 4)),
        ("calibrate_laplace(1, 1)", lambda: calibrate_laplace(EPSILON, 1.0)),
        ("assert_ledger_meets (1000 releases)", lambda: assert_ledger_meets(ledger, EPSILON, DELTA)),
        ("assert_fresh_noise (10 000 releases)", lambda: assert_fresh_noise(noises)),
        ("assert_audit_passes: GaussianMechanism", lambda: assert_audit_passes(gaussian)),
        ("assert_audit_passes: home-made noisy sum",
         lambda: assert_audit_passes(noisy_sum(1.0, gaussian.sigma), pair, EPSILON, DELTA, gaussian_claim=True)),
        ("assert_audit_refutes: half-noise noisy sum",
         lambda: assert_audit_refutes(noisy_sum(0.5, gaussian.sigma), pair, EPSILON, DELTA, gaussian_claim=True)),
        ("assert_audit_passes: Gaussian, dim 8",
         lambda: assert_audit_passes(calibrate_gaussian(EPSILON, DELTA, 1.0, dim=8))),
        ("assert_audit_passes: GOE, 4 x 4", lambda: assert_audit_passes(calibrate_goe(EPSILON, DELTA, 1.0, 4))),
    ]
    agent_rows: list[tuple[str, Callable[[], Any]]] = [
        ("assert_audit_passes: agent luyo, billboard", lambda: assert_audit_passes("luyo", notion="billboard",
                                                                                  epsilon=EPSILON)),
        ("assert_audit_passes: agent dp-lsvi-ucb++, jdp",
         lambda: assert_audit_passes("dp-lsvi-ucb++", notion="jdp", epsilon=EPSILON)),
        ("assert_audit_refutes: luyo without vector noise",
         lambda: assert_audit_refutes(luyo_vector_noise_never_added, notion="billboard", epsilon=EPSILON)),
    ]
    if agent_audits:
        rows += agent_rows
    for name in private_agents():
        entry = AGENTS[name]
        env = linear if entry.env_kind == "linear" else mixture
        options = {"epsilon": 100.0, "max_updates": 2} if name == "ngo" else {"epsilon": EPSILON}
        rows.append((f"check_private_agent: {name} (K = 20)",
                     lambda f=entry.factory, e=env, o=options: check_private_agent(f, e, options=o)))
    return [(label, median_seconds(call, repeats)) for label, call in rows]


def power(seeds: int) -> list[tuple[float, bool, float]]:
    sigma = calibrate_gaussian(EPSILON, DELTA, 1.0).sigma
    out = []
    for factor in (1.0, 0.95, 0.9, 0.8, 0.5):
        mechanism = GaussianMechanism(1.0, factor * sigma)
        for gaussian_claim in (True, False):
            caught = sum(
                audits.audit_for_test(mechanism, epsilon=EPSILON, delta=DELTA, gaussian_claim=gaussian_claim,
                                      seed=seed).verdict == VIOLATION
                for seed in range(seeds)
            )
            out.append((factor, gaussian_claim, caught / seeds))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-agent-audits", action="store_true", help="time the mechanism assertions only")
    args = parser.parse_args()
    print(f"defaults: {audits.DEFAULT_TRIALS} trials per side (mechanisms), {audits.DEFAULT_AGENT_TRIALS} "
          f"(agents), confidence {audits.DEFAULT_CONFIDENCE}")
    print("\n| assertion (defaults) | median seconds |\n|---|---|")
    for label, seconds in timings(args.repeats, not args.skip_agent_audits):
        print(f"| {label} | {seconds:.3f} |")
    print(f"\n| noise std | gaussian_claim | share of {args.seeds} seeds failing assert_audit_passes |\n|---|---|---|")
    for factor, gaussian_claim, share in power(args.seeds):
        kind = "false alarms" if factor == 1.0 else "caught"
        print(f"| σ × {factor:g} | {gaussian_claim} | {share:.2f} ({kind}) |")


if __name__ == "__main__":
    main()
