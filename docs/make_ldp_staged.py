"""LDP-UCRL-VTR under its two sensitivity models: the noise of every stage, and the exact regret
with the no-data controls (docs/private_baselines.md, "Stage by stage").

Run:  python docs/make_ldp_staged.py [--instance paper|small] [--episodes K] [--seeds 10]
      [--epsilons 1,10,1000,1e6] [--workers 1]
      python docs/make_ldp_staged.py --render-only      # the results page again from the JSON, running nothing

On the Zhou et al. 2021 instance of Liao, He & Gu 2021's experiment (``--instance paper``, the
default: d = 5, H = 6, the instance of K = 10⁴ episodes, δ = 1e-5, the registry's ``zhou2021``;
ε ∈ {1, 10, 10³, 10⁶}), or on the small instance of the test suite's learning test (``--instance
small``: d = 3, H = 3, the instance built for K = 1, whose gaps are wide; K = 400,
ε ∈ {10², 10³, 10⁴, 10⁵}), for each ε and each model ("standard": every stage calibrated for
F = H·L and targets in [0, H]; "staged": stage h for F_h = (H − h)·L and targets in [0, H − h],
nothing sent at stage H): the calibrated noise per stage (exact conversion), the server's shift per
stage after K messages, and the regret of the agent and of its no-data control
(:mod:`dpverify.agents.core.learning`: every user sends the messages of zero statistics) over the same
seeds (``SeedSequence(20250).spawn(seeds)``, the seeds of docs/results.md) — the per-seed final
cumulative regret, the regret per episode over the last 20% of the episodes, "learned from users"
(one-sided paired t-test against the control), and staged against standard (one-sided paired t-test
over the seeds that the staged model's regret is lower). Writes docs/results/ldp_staged.json
(docs/results/ldp_staged_small.json) and the results page of both, docs/results/ldp_staged.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "docs"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from results_page import provenance, recorded, write_page  # noqa: E402

from dpverify.agents.core import runner  # noqa: E402
from dpverify.agents.core.learning import compare_learning, paired_p_value  # noqa: E402
from dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr import (  # noqa: E402
    SENSITIVITY_MODELS,
    LdpUcrlVtr,
    LdpUcrlVtrConfig,
)

#: The seeds of docs/results.md: seed i = SeedSequence(20250).spawn(seeds)[i].
BASE_SEED = 20250
DELTA = 1e-5
#: Per instance: the environment's options, K, the ε grid and the output.
INSTANCES: dict[str, tuple[dict[str, Any], int, str, Path]] = {
    "paper": ({"dim": 5, "horizon": 6}, 10_000, "1,10,1000,1e6",
              ROOT / "docs" / "results" / "ldp_staged.json"),
    "small": ({"dim": 3, "horizon": 3, "num_episodes": 1}, 400, "100,1000,1e4,1e5",
              ROOT / "docs" / "results" / "ldp_staged_small.json"),
}
PAGE = ROOT / "docs" / "results" / "ldp_staged.md"


def noise(epsilon: float, episodes: int, env_options: dict[str, Any]) -> dict[str, Any]:
    """Per model and stage: the GOE entry std of the Gram message, the σ of the target message, and
    the server's shift after ``episodes`` messages (0 and None where nothing is sent)."""
    mdp = runner.build_environment(runner.RunSpec("ldp-ucrl-vtr", "zhou2021", episodes,
                                                  env_options=tuple(env_options.items())))
    out: dict[str, Any] = {}
    for model in SENSITIVITY_MODELS:
        config = LdpUcrlVtrConfig(episodes, epsilon=epsilon, delta=DELTA, sensitivity_model=model)
        agent = LdpUcrlVtr(mdp, config, np.random.default_rng(0))
        out[model] = {
            "rho0": agent.calibration.rho0,
            "messages_per_user": agent.calibration.releases_counted,
            "gram_entry_std": [None if m is None else m.entry_std for m in agent.gram_mechanisms],
            "target_sigma": [None if m is None else m.sigma for m in agent.target_mechanisms],
            "shift_at_K": agent.server.shift_for(episodes).tolist(),
        }
    return out


def cell(epsilon: float, episodes: int, seeds: int, workers: int,
         env_options: dict[str, Any]) -> dict[str, Any]:
    """Both models at one ε, each with its no-data control, over the same seeds."""
    row: dict[str, Any] = {"epsilon": epsilon, "episodes": episodes, "seeds": seeds}
    regrets = {}
    for model in SENSITIVITY_MODELS:
        spec = runner.RunSpec("ldp-ucrl-vtr", "zhou2021", episodes, seeds, BASE_SEED, workers,
                              agent_options=(("epsilon", epsilon), ("delta", DELTA),
                                             ("sensitivity_model", model)),
                              env_options=tuple(env_options.items()))
        start = time.perf_counter()
        mdp = runner.build_environment(spec)
        with_users = runner.run(spec)
        without = runner.run(dataclasses.replace(spec, users=False))
        comparison = compare_learning(with_users.regret, without.regret, mdp)
        regrets[model] = with_users.regret
        row[model] = {
            "final": with_users.cumulative_regret()[:, -1].tolist(),
            "final_control": without.cumulative_regret()[:, -1].tolist(),
            "first_fifth_per_episode": with_users.regret[:, : episodes // 5].mean(axis=1).tolist(),
            **comparison.to_dict(),
            "line": comparison.line(),
            "seconds": time.perf_counter() - start,
        }
    staged, standard = regrets["staged"], regrets["standard"]
    fifth = episodes // 5
    row["staged_below_standard_p"] = {
        "final": paired_p_value(staged.sum(axis=1), standard.sum(axis=1)),
        "last_fifth": paired_p_value(staged[:, -fifth:].mean(axis=1),
                                     standard[:, -fifth:].mean(axis=1)),
    }
    return row


def _mean_sd(values: list[float]) -> str:
    sd = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return f"{float(np.mean(values)):.1f} ± {sd:.1f}"


def noise_table(table: dict[str, Any]) -> str:
    lines = ["| stage h | Gram entry std: standard | staged | ratio | target σ: standard | "
             "staged | shift at K: standard | staged |", "|---|---|---|---|---|---|---|---|"]
    std, stg = table["standard"], table["staged"]
    for h in range(len(std["gram_entry_std"])):
        g0, g1 = std["gram_entry_std"][h], stg["gram_entry_std"][h]
        t0, t1 = std["target_sigma"][h], stg["target_sigma"][h]
        ratio = "—" if g1 is None else f"{g1 / g0:.4f}"
        gram = "—" if g1 is None else f"{g1:.1f}"
        target = "—" if t1 is None else f"{t1:.1f}"
        lines.append(f"| {h + 1} | {g0:.1f} | {gram} | {ratio} | {t0:.1f} | {target} | "
                     f"{std['shift_at_K'][h]:.3g} | {stg['shift_at_K'][h]:.3g} |")
    return "\n".join(lines) + "\n"


def regret_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| ε | model | final regret (mean ± sd) | control's final | per episode, first 20% "
             "→ last 20% | control, last 20% | learned from users (p) | staged below standard (p: "
             "final, last 20%) | s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for model in SENSITIVITY_MODELS:
            m = r[model]
            first = float(np.mean(m["first_fifth_per_episode"]))
            last = float(np.mean(m["agent_last_per_episode"]))
            control = float(np.mean(m["control_last_per_episode"]))
            answer = {True: "yes", False: "no", None: "cannot tell"}[m["learned"]]
            p = r["staged_below_standard_p"]
            vs = "" if model == "standard" else f"{p['final']:.2g}, {p['last_fifth']:.2g}"
            lines.append(f"| {r['epsilon']:g} | {model} | {_mean_sd(m['final'])} | "
                         f"{_mean_sd(m['final_control'])} | {first:.4f} → {last:.4f} | "
                         f"{control:.4f} | {answer} ({m['p_value']:.2g}) | {vs} | "
                         f"{m['seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def instance_section(name: str, document: dict[str, Any]) -> str:
    rows = document["rows"]
    env = ", ".join(f"{k} = {v}" for k, v in document["env_options"].items())
    seeds = sorted({r["seeds"] for r in rows})
    episodes = sorted({r["episodes"] for r in rows})
    return (f"### Instance `{name}`: the Zhou et al. mixture MDP ({env}), K = {', '.join(map(str, episodes))}, "
            f"{', '.join(map(str, seeds))} seeds\n\nReference policies, exact: uniformly random "
            f"{document['uniform_per_episode']:.4f} per episode, known-reward greedy "
            f"{document['known_reward_greedy_per_episode']:.4f}. \"learned from users\": one-sided paired t-test of "
            "the last 20% against the no-data control; \"staged below standard\": one-sided paired t-test over the "
            "seeds (final regret, last 20%); s: seconds for the agent and its control.\n\n"
            + regret_table(rows) + "\nNoise per stage at ε = 1 (ρ0 "
            + ", ".join(f"{m} {document['noise_at_epsilon_1'][m]['rho0']:.3g}" for m in SENSITIVITY_MODELS)
            + "; messages per user "
            + ", ".join(f"{m} {document['noise_at_epsilon_1'][m]['messages_per_user']}" for m in SENSITIVITY_MODELS)
            + "):\n\n" + noise_table(document["noise_at_epsilon_1"]))


def render(page: Path | None = None) -> Path:
    """The results page of every instance whose JSON exists."""
    found = [(name, out, json.loads(out.read_text(encoding="utf-8"))) for name, (_, _, _, out) in INSTANCES.items()
             if out.exists()]
    body = ("LDP-UCRL-VTR under its two sensitivity models (docs/private_baselines.md, \"LDP-UCRL-VTR\"): "
            "`standard` calibrates every stage for F = H·L and targets in [0, H], `staged` stage h for "
            "F_h = (H − h)·L and targets in [0, H − h], sending nothing at stage H. Each model runs with its "
            "no-data control (every user sends the messages of zero statistics) over the same seeds, "
            "`SeedSequence(20250).spawn(seeds)`; δ = 1e-5, exact conversion, exact regret.\n\n")
    body += "\n".join(instance_section(name, document) for name, _, document in found)
    return write_page(page or PAGE, "LDP-UCRL-VTR: standard against staged sensitivities", body,
                      reproduce=[f"python docs/make_ldp_staged.py --instance {name}" for name, _, _ in found],
                      render="python docs/make_ldp_staged.py --render-only", figures=[out for _, out, _ in found],
                      runs=[recorded(document) for _, _, document in found])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instance", choices=sorted(INSTANCES), default="paper")
    parser.add_argument("--episodes", type=int, default=None, help="K (default: the instance's)")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--epsilons", default=None,
                        help="comma-separated ε (default: the instance's)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", default=None, help="the JSON written (default: the instance's)")
    parser.add_argument("--render-only", action="store_true", help="write the page from the JSON, run nothing")
    args = parser.parse_args(argv)
    if args.render_only:
        print(render())
        return 0
    env_options, episodes, epsilons, out = INSTANCES[args.instance]
    args.episodes = args.episodes or episodes
    args.epsilons = args.epsilons or epsilons
    args.out = args.out or str(out)
    table = noise(1.0, args.episodes, env_options)
    print(noise_table(table), flush=True)
    rows = []
    for epsilon in (float(e) for e in args.epsilons.split(",")):
        rows.append(cell(epsilon, args.episodes, args.seeds, args.workers, env_options))
        print("\n".join(regret_table(rows[-1:]).splitlines()[-2:]), flush=True)
    first = rows[0]
    uniform = first["standard"]["uniform_per_episode"]
    greedy = first["standard"]["known_reward_greedy_per_episode"]
    payload = {"description": __doc__.splitlines()[0], "provenance": provenance(argv),
               "env_options": env_options, "delta": DELTA,
               "base_seed": BASE_SEED, "noise_at_epsilon_1": table, "uniform_per_episode": uniform,
               "known_reward_greedy_per_episode": greedy, "rows": rows}
    Path(args.out).write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    print(regret_table(rows))
    print(f"uniformly random policy: {uniform:.5f} per episode; known-reward greedy: {greedy:.5f}")
    if Path(args.out).resolve() in {out.resolve() for *_, out in INSTANCES.values()}:
        print(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
