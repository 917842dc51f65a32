"""Do the bandit agents learn from their users? Each private bandit agent against its no-data control.

Run:  python docs/make_bandits.py [--seeds 8] [--max-rounds 1000000] [--epsilons 1,10,100] [--quick]
      python docs/make_bandits.py --render-only     # the results page again from bandits.json, running nothing

Writes docs/results/bandits.json and docs/results/bandits.md. For each private agent on its default
instance (``jdp-linucb`` and ``ldp-linucb`` on ``linear-bandit``: d = 5, 10 arms, 20 contexts, Bernoulli
rewards; ``dp-ucb`` on ``bernoulli-bandit``: 10 arms) with its default multipliers, each budget ε (δ = 1e-5),
and K = 10², 10³, 10⁴, 10⁵, 10⁶ rounds in turn until it learns and its regret is below the uniformly random
policy's (a bandit's data-free reference), the agent calibrated for that K is run with its
users and with none (the no-data control of dpverify.agents.core.learning: every round deployed as usual, no
user's data arriving), over the same seeds; "learns" is the one-sided paired t-test of
:func:`dpverify.agents.core.learning.compare_learning` on the regret per round over the last 20% of the
rounds, and "learns from K" counts with Holm's correction over the grid of K (and so does "below uniform"):
a search that tests K after K at 0.05 would let a false "learns" grow likelier with each K it tests
(:func:`dpverify.agents.core.learning.holm_adjusted`). The non-private counterpart (LinUCB, UCB1) runs next to
it. Regret is exact: the mean reward gap of
the arm deployed, averaged over the round's context law, never a realised reward.

The runs go through the agents' rules with a trial axis (the batched twins the audits use, with independent
fresh noise per trial: :class:`dpverify.agents.core.batching.BatchRandomness`), one trial per seed, so a
million rounds of eight seeds is one loop of a million rounds; seed i is trial i of
``SeedSequence(BASE_SEED)``. ``--quick`` runs ε = 10 at K = 10², 10³ and 10⁴ only.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dpverify.agents.bandits.linucb import LinUcbConfig, LinUcbRule
from dpverify.agents.bandits.rounds import Round
from dpverify.agents.bandits.ucb import UcbConfig, UcbRule
from dpverify.agents.core.batching import BatchRandomness
from dpverify.agents.core.learning import (
    LEVEL,
    compare_learning,
    exact_sign_flip_p_value,
    holm_adjusted,
    uniform_policy_regret,
)
from dpverify.agents.registry import AGENTS, build_environment

DOCS = Path(__file__).resolve().parent
if str(DOCS) not in sys.path:
    sys.path.insert(0, str(DOCS))

from results_page import provenance, recorded, write_page  # noqa: E402

BASE_SEED = 20260
DELTA = 1e-5
#: agent → (environment, its non-private counterpart's rule and config class)
SETUPS: dict[str, tuple[str, Any, Any]] = {
    "jdp-linucb": ("linear-bandit", LinUcbRule, LinUcbConfig),
    "ldp-linucb": ("linear-bandit", LinUcbRule, LinUcbConfig),
    "dp-ucb": ("bernoulli-bandit", UcbRule, UcbConfig),
}
ROUNDS = (100, 1_000, 10_000, 100_000, 1_000_000)
PAGE = DOCS / "results" / "bandits.md"
SOURCE = DOCS / "results" / "bandits.json"


class _Rule:
    """A non-private rule with the twin's interface (begin / end / no data)."""

    def __init__(self, rule: Any, bandit: Any) -> None:
        self.rule, self.bandit = rule, bandit

    def begin_episode(self) -> np.ndarray:
        return self.rule.deploy()

    def end_episode(self, states: np.ndarray, actions: np.ndarray) -> None:
        self.rule.learn(Round(states[:, 0], actions[:, 0], self.bandit.reward_of(states[:, 1])))

    def end_episode_without_data(self) -> None:
        self.rule.learn_without_data()


def play(agent: Any, bandit: Any, rounds: int, rng: np.random.Generator, users: bool) -> np.ndarray:
    """Run n trials for ``rounds`` rounds; the exact regret of every round, (n, rounds)."""
    n, C = agent.n if hasattr(agent, "n") else agent.rule.n, bandit.num_contexts
    gaps, contexts_law = bandit.gaps(), bandit.context_distribution
    cumulative = np.cumsum(bandit.outcome_probabilities, axis=-1)
    regret = np.empty((n, rounds))
    trials = np.arange(n)
    for t in range(rounds):
        policies = agent.begin_episode()
        arms = policies[:, 0, :C]
        regret[:, t] = (gaps[np.arange(C), arms] * contexts_law).sum(axis=1)
        if not users:
            agent.end_episode_without_data()
            continue
        contexts = rng.choice(C, size=n, p=contexts_law)
        pulled = arms[trials, contexts]
        outcome = (rng.random(n)[:, None] >= cumulative[contexts, pulled]).sum(axis=1)
        outcome = np.minimum(outcome, bandit.num_levels - 1)
        agent.end_episode(np.stack([contexts, C + outcome], axis=1), pulled[:, None])
    return regret


def cell(name: str, epsilon: float, rounds: int, seeds: int) -> dict[str, Any]:
    """The agent at (ε, K) with its users and without (same seeds), and the comparison."""
    env = SETUPS[name][0]
    bandit = build_environment(env, rounds)
    twin = AGENTS[name].batched
    assert twin is not None
    options = {"epsilon": epsilon, "delta": DELTA}
    start = time.perf_counter()
    regrets = []
    for users in (True, False):
        agent_seed, env_seed = np.random.SeedSequence(BASE_SEED).spawn(2)
        agent = twin(bandit, rounds, options, BatchRandomness(np.random.default_rng(agent_seed), seeds), ())
        regrets.append(play(agent, bandit, rounds, np.random.default_rng(env_seed), users))
    comparison = compare_learning(regrets[0], regrets[1], bandit)
    settings = agent.reference.settings()
    return {"agent": name, "env": env, "epsilon": epsilon, "delta": DELTA, "rounds": rounds, "seeds": seeds,
            "total_with_users": float(regrets[0].sum(axis=1).mean()),
            "total_without_users": float(regrets[1].sum(axis=1).mean()),
            **comparison.to_dict(), "seconds": time.perf_counter() - start,
            "noise": {k: settings[k] for k in ("noise_std", "sensitivity", "claimed_epsilon", "rho")},
            "multipliers": {k: v for k, v in settings.items() if k.endswith("multiplier")}}


def counterpart(name: str, rounds: int, seeds: int) -> dict[str, Any]:
    """The non-private counterpart's regret at K (same seeds)."""
    env, rule_class, config_class = SETUPS[name]
    bandit = build_environment(env, rounds)
    agent_seed, env_seed = np.random.SeedSequence(BASE_SEED).spawn(2)
    rule = rule_class(bandit, config_class(rounds), BatchRandomness(np.random.default_rng(agent_seed), seeds))
    regret = play(_Rule(rule, bandit), bandit, rounds, np.random.default_rng(env_seed), True)
    return {"agent": AGENTS[name].counterpart, "env": env, "rounds": rounds, "seeds": seeds,
            "total": float(regret.sum(axis=1).mean()),
            "last_per_round": float(regret[:, -max(1, rounds // 5):].mean())}


def _where(learned_at: int | None, below_at: int | None, largest: int) -> str:
    """The summary line of one (agent, ε): where it first beats its no-data control, and the uniform policy."""
    if learned_at is None:
        return f"does not beat its no-data control at any K up to {largest:,} rounds"
    text = f"beats its no-data control from K = {learned_at:,} rounds (the smallest K tried at which it does)"
    if below_at is None:
        return text + f", but its regret is not below the uniform policy's at any K up to {largest:,}"
    if below_at == learned_at:
        return text + ", and is below the uniform policy's there"
    return text + f"; its regret is below the uniform policy's from K = {below_at:,}"


def corrected(steps: list[dict[str, Any]], grid_size: int) -> tuple[list[float | None], list[float | None]]:
    """Holm-adjusted p-values over the grid (``grid_size`` steps; those not run count as p = 1) of the cells of
    one (agent, ε) in K order: (against the no-data control, below the uniform policy)."""
    return (holm_adjusted([c["p_value"] for c in steps], grid_size),
            holm_adjusted([c["greedy_p_value"] for c in steps], grid_size))


def search_result(steps: list[dict[str, Any]], grid_size: int) -> tuple[int | None, int | None]:
    """(the first K that learns, the first K from it on that is below the uniform policy), both corrected."""
    learned, below = corrected(steps, grid_size)
    learned_at = next((c["rounds"] for c, p in zip(steps, learned, strict=True) if p is not None and p < LEVEL), None)
    if learned_at is None:
        return None, None
    below_at = next((c["rounds"] for c, q in zip(steps, below, strict=True)
                     if c["rounds"] >= learned_at and q is not None and q < LEVEL), None)
    return learned_at, below_at


def summary(payload: dict[str, Any]) -> list[str]:
    """One line per (agent, ε): where it learns, with Holm's correction over the grid."""
    lines = []
    grid_size = len(payload["rounds_grid"])
    for key in dict.fromkeys((c["agent"], c["epsilon"]) for c in payload["cells"]):
        steps = sorted((c for c in payload["cells"] if (c["agent"], c["epsilon"]) == key), key=lambda c: c["rounds"])
        learned_at, below_at = search_result(steps, grid_size)
        uncorrected = next((c["rounds"] for c in steps if c["p_value"] < LEVEL), None)
        moved = "" if uncorrected == learned_at else (
            f" (uncorrected: from K = {uncorrected:,})" if uncorrected is not None else "")
        lines.append(f"{key[0]} at ε = {key[1]:g}: " + _where(learned_at, below_at, steps[-1]["rounds"]) + moved)
    return lines


def markdown(payload: dict[str, Any]) -> str:
    """The results page's body."""
    lines = [f"{payload['seeds']} seeds, δ = {DELTA:g}, default instances and multipliers. Regret is exact (the mean "
             "reward gap of the arm deployed); \"p\" is the one-sided paired t-test of the regret per round over the "
             "last 20% of the rounds, the agent with its users against its no-data control over the same seeds, "
             "and \"exact p\" the exact paired sign-flip p-value over all 2ⁿ sign assignments of the seeds "
             "(no normality assumed; it cannot go below 2⁻ⁿ). K runs up the grid "
             f"{', '.join(f'{k:,}' for k in payload['rounds_grid'])} until the agent learns and is below the "
             "uniform policy, and a search that tests K after K at 0.05 would let a false \"learned\" grow "
             "likelier with each K it tests: \"learned\" is decided on the Holm-adjusted p-value over the grid "
             "(the K not run count as p = 1), which keeps the family-wise error of the search's claim at 0.05.", "",
             "The uniformly random policy is the data-free reference of a bandit (no policy knows the means "
             "without data): \"below uniform\" is the same one-sided test against its exact regret per round, "
             "Holm-adjusted over the grid too. The counterpart (LinUCB, UCB1) ran at the same K over the same seeds.",
             "",
             "| agent | ε | K | regret / round (last 20%), users | no data | p | Holm-adjusted p | exact p | learned | "
             "below uniform (Holm-adjusted p) | uniform policy | counterpart / round |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    base = {(c["agent"], c["rounds"]): c for c in payload["counterparts"]}
    grid_size = len(payload["rounds_grid"])
    for key in dict.fromkeys((c["agent"], c["epsilon"]) for c in payload["cells"]):
        steps = sorted((c for c in payload["cells"] if (c["agent"], c["epsilon"]) == key), key=lambda c: c["rounds"])
        for c, p, q in zip(steps, *corrected(steps, grid_size), strict=True):
            other = base.get((AGENTS[c["agent"]].counterpart, c["rounds"]))
            exact = exact_sign_flip_p_value(c["agent_last_per_episode"], c["control_last_per_episode"])
            lines.append(
                f"| {c['agent']} | {c['epsilon']:g} | {c['rounds']:,} | {np.mean(c['agent_last_per_episode']):.4f} | "
                f"{np.mean(c['control_last_per_episode']):.4f} | {c['p_value']:.2g} | {p:.2g} | {exact:.2g} | "
                f"{'yes' if p < LEVEL else 'no'} | {'yes' if q < LEVEL else 'no'} ({q:.2g}) | "
                f"{c['uniform_per_episode']:.4f} | "
                f"{'—' if other is None else format(other['last_per_round'], '.4f')} |")
    lines += ["", "## Where learning starts", ""]
    for line in summary(payload):
        lines.append(f"- {line}")
    return "\n".join(lines) + "\n"


def render(page: Path | None = None) -> Path:
    """The results page from bandits.json alone."""
    payload = json.loads(SOURCE.read_text())
    return write_page(page or PAGE, "Do the bandit agents learn?", markdown(payload),
                      reproduce="python docs/make_bandits.py", render="python docs/make_bandits.py --render-only",
                      figures=[SOURCE], runs=[recorded(payload)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--render-only", action="store_true", help="write the results page from bandits.json only")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--max-rounds", type=int, default=1_000_000)
    parser.add_argument("--epsilons", default="1,10,100")
    parser.add_argument("--agents", default="jdp-linucb,ldp-linucb,dp-ucb")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.render_only:
        print(render())
        return 0
    epsilons = (10.0,) if args.quick else tuple(float(e) for e in args.epsilons.split(","))
    grid = tuple(k for k in ROUNDS if k <= (10_000 if args.quick else args.max_rounds))
    cells: list[dict[str, Any]] = []
    counterparts = []
    for name in args.agents.split(","):
        for epsilon in epsilons:
            steps: list[dict[str, Any]] = []
            for rounds in grid:
                row = cell(name, epsilon, rounds, args.seeds)
                steps.append(row)
                print(f"{name} eps={epsilon:g} K={rounds}: users {np.mean(row['agent_last_per_episode']):.4f} vs "
                      f"no data {np.mean(row['control_last_per_episode']):.4f}, p = {row['p_value']:.3g}, "
                      f"below uniform p = {row['greedy_p_value']:.3g} ({row['seconds']:.0f} s)", flush=True)
                if search_result(steps, len(grid))[1] is not None:
                    break  # it learns and does better than the data-free policy (corrected): the larger K need not run
            cells += steps
        for rounds in sorted({c["rounds"] for c in cells if c["agent"] == name}):  # the counterpart at the same K
            counterparts.append(counterpart(name, rounds, args.seeds))
    payload = {"seeds": args.seeds, "base_seed": BASE_SEED, "rounds_grid": list(grid), "cells": cells,
               "counterparts": counterparts,
               "versions": {"python": platform.python_version(), "numpy": np.__version__},
               "provenance": provenance(argv),
               "uniform_per_round": {name: uniform_policy_regret(build_environment(SETUPS[name][0], 10))
                                     for name in args.agents.split(",")}}
    SOURCE.write_text(json.dumps(payload, indent=1) + "\n")
    print(render())
    print("\n".join(summary(payload)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
