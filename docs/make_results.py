"""Regenerate docs/results/: the experiments of Sahu 2025 (Figure 1a, 1b) and Liao et al. 2021 (LDP-UCRL-VTR).

    .venv/bin/python docs/make_results.py [--workers 2 | --scheduler tcp://host:port] [--quick]
    .venv/bin/python docs/make_results.py --controls [--workers 2]   # the no-data control of every private run
    .venv/bin/python docs/make_results.py --render-only               # the results page again, running nothing

Writes ``docs/results/results.json`` (settings, seeds, every agent's multipliers and derived radii,
package versions, the commit and machine, per-seed final cumulative regret, mean ± sd curves), the results
page ``docs/results/paper_experiments.md`` (the table docs/results.md reads) and three PNGs:

* ``fig1a_min2021_eps10.png`` — Sahu 2025 Figure 1(a): LSVI-UCB, Luyo et al., Ngo et al., LSVI-UCB++ and
  DP-LSVI-UCB++ (derived and paper sensitivities) on the Min et al. MDP (rescaled, ‖φ‖ = 1, H = 20,
  |A| = 100), one privacy budget (ε, δ) = (10, :data:`DELTA`), 10 seeds; the paper does not state its
  budget, and at ε = 10 no private agent learns within K, so ``fig1a_min2021_eps1000.png`` repeats the
  panel at ε = 1000 (:data:`FIG1A_EPSILONS`);
* ``fig1b_min2021_epsilons.png`` — Sahu 2025 Figure 1(b): DP-LSVI-UCB++ (derived) at several ε against
  LSVI-UCB++;
* ``liao2021_zhou2021.png`` — LDP-UCRL-VTR at ε ∈ {0.1, 1, 10} against UCRL-VTR on the Zhou et al. 2021
  linear mixture MDP (d = 5, H = 6), 10 seeds.

Every run goes through the runner (:class:`dpverify.agents.core.runner.RunSpec`,
:func:`dpverify.agents.core.runner.run`; seeds run
in parallel worker processes; seeding is ``SeedSequence(BASE_SEED).spawn(10)``, so seed i of every
agent sees the same environment randomness; ``--scheduler`` sends the seeds of every run to a Dask
cluster instead, through :mod:`dpverify.audit.executors`, with bit-identical results). Regret is exact
(backward induction), never realised returns. Agents that are not registered (:mod:`dpverify.agents.registry`)
are skipped and listed under ``"missing"`` in the JSON. K is chosen so that the whole script finishes in
well under 20 minutes on 2 cores (see ``"timing"`` in the JSON).

``--controls`` runs, for every private run of ``results.json``, the same agent, seeds and options with every
user slot empty (docs/no_data_controls.py; the agent is rerun with its users too, and the record says whether
that reproduced the documented per-seed regret) into ``docs/results/results_controls.json`` (one record per
run label; runs whose record matches their spec are kept).
"""

from __future__ import annotations

import argparse
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

from results_page import machine, provenance, recorded, write_page  # noqa: E402

from dpverify.agents.core.runner import RunResult, RunSpec, package_versions, result_payload, run  # noqa: E402
from dpverify.agents.registry import AGENTS  # noqa: E402

OUT = ROOT / "docs" / "results"
PAGE = OUT / "paper_experiments.md"
BASE_SEED = 20250  # entropy of the root SeedSequence of every run
NUM_SEEDS = 10
DELTA = 1e-5

K_SAHU2025 = 3000
FIG1A_EPSILONS = (10.0, 1000.0)
FIG1B_EPSILONS = (1.0, 10.0, 100.0, 1000.0, 1e4, 1e6, 1e9, 1e12)  # 1e6..1e12: towards the ε → ∞ limit (a sanity check)
MIN2021 = {"horizon": 20, "num_actions": 100}

K_LIAO2021 = 10000
LIAO2021_EPSILONS = (0.1, 1.0, 10.0)
ZHOU2021 = {"dim": 5, "horizon": 6}

CURVE_POINTS = 200  # the mean ± sd curves in the JSON are subsampled to this many episodes


def _run(
    figure: str, label: str, agent: str, env: str, k: int, agent_options: dict[str, Any], env_options: dict[str, Any]
) -> dict[str, Any]:
    """One run of a figure (the keys, in this order, are those of results.json)."""
    return {
        "figure": figure,
        "label": label,
        "agent": agent,
        "env": env,
        "K": k,
        "agent_options": agent_options,
        "env_options": env_options,
    }


def experiments(k_sahu: int, k_liao: int) -> list[dict[str, Any]]:
    """Every run: figure, label, agent, environment, options."""
    priv = {"delta": DELTA}
    runs = [
        _run("fig1a", label, agent, "min2021", k_sahu, {}, MIN2021)
        for label, agent in (("LSVI-UCB", "lsvi-ucb"), ("LSVI-UCB++", "lsvi-ucb++"))
    ]
    for eps in FIG1A_EPSILONS:
        fig1a = [
            (f"Luyo et al. (ε={eps:g})", "luyo", {"epsilon": eps, **priv}),
            (f"Ngo et al. (ε={eps:g})", "ngo", {"epsilon": eps, **priv}),
            *(
                (f"DP-LSVI-UCB++ {m} (ε={eps:g})", "dp-lsvi-ucb++", {"epsilon": eps, "sensitivity_model": m, **priv})
                for m in ("derived", "paper")
            ),
        ]
        runs += [_run("fig1a", label, agent, "min2021", k_sahu, options, MIN2021) for label, agent, options in fig1a]
    for eps in FIG1B_EPSILONS:
        if eps in FIG1A_EPSILONS:
            continue  # shared with Figure 1(a)
        options = {"epsilon": eps, "sensitivity_model": "derived", **priv}
        label = f"DP-LSVI-UCB++ derived (ε={eps:g})"
        runs.append(_run("fig1b", label, "dp-lsvi-ucb++", "min2021", k_sahu, options, MIN2021))
    runs.append(_run("liao2021", "UCRL-VTR", "ucrl-vtr", "zhou2021", k_liao, {}, ZHOU2021))
    for eps in LIAO2021_EPSILONS:
        options = {"epsilon": eps, **priv}
        label = f"LDP-UCRL-VTR (ε={eps:g})"
        runs.append(_run("liao2021", label, "ldp-ucrl-vtr", "zhou2021", k_liao, options, ZHOU2021))
    return runs


FIGURES = {
    **{
        f"fig1a_eps{eps:g}": (
            f"fig1a_min2021_eps{eps:g}.png",
            f"Sahu 2025 Fig. 1(a): Min et al. MDP, H = 20, |A| = 100, private agents at ε = {eps:g}",
        )
        for eps in FIG1A_EPSILONS
    },
    "fig1b": ("fig1b_min2021_epsilons.png", "Sahu 2025 Fig. 1(b): DP-LSVI-UCB++ (derived) vs ε, H = 20"),
    "liao2021": ("liao2021_zhou2021.png", "Liao et al. 2021: Zhou et al. 2021 mixture MDP, d = 5, H = 6"),
}


def summarise(entry: dict[str, Any], result: RunResult, seconds: float) -> dict[str, Any]:
    payload = result_payload(result)
    cumulative = result.cumulative_regret()
    K = cumulative.shape[1]
    index = np.unique(np.linspace(0, K - 1, min(CURVE_POINTS, K)).round().astype(int))
    final = cumulative[:, -1]
    fifth = max(K // 5, 1)
    per_episode = result.regret
    return {
        **entry,
        "settings": payload["settings"],
        "seeds": [{k: v for k, v in s.items() if k != "regret"} for s in payload["seeds"]],
        "final_cumulative_regret": {
            "mean": float(final.mean()),
            "sd": float(final.std(ddof=1)),
            "per_seed": final.tolist(),
        },
        "mean_regret_first_fifth": float(per_episode[:, :fifth].mean()),
        "mean_regret_last_fifth": float(per_episode[:, -fifth:].mean()),
        "policy_changes_mean": float(np.mean([s.policy_changes for s in result.seeds])),
        "curve": {
            "episode": (index + 1).tolist(),
            "mean": cumulative.mean(axis=0)[index].tolist(),
            "sd": cumulative.std(axis=0, ddof=1)[index].tolist(),
        },
        "wall_seconds": seconds,
    }


def uniform_policy_regret(env: str, env_options: dict[str, Any], K: int) -> float:
    """Exact per-episode regret of the uniformly random policy (a reference line: "learns nothing")."""
    from dpverify.agents.core.runner import build_environment

    mdp = build_environment(
        RunSpec("lsvi-ucb" if env == "min2021" else "ucrl-vtr", env, K, num_seeds=1, env_options=env_options)
    ).as_finite_mdp()
    P, R = mdp.transitions, mdp.rewards
    v_star = np.zeros(P.shape[1])
    v_uniform = np.zeros(P.shape[1])
    for h in range(mdp.horizon - 1, -1, -1):
        v_star = (R[h] + P[h] @ v_star).max(axis=-1)
        v_uniform = (R[h] + P[h] @ v_uniform).mean(axis=-1)
    return float(mdp.initial_distribution @ (v_star - v_uniform))


def source_state() -> dict[str, Any]:
    """The git commit of the code that produced the results, any uncommitted changes to it, the command and the
    machine (docs/results_page.py)."""
    import subprocess

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return "unavailable"

    return {
        "commit": git("rev-parse", "HEAD"),
        "uncommitted_changes": git("status", "--porcelain", "--", "agents", "dpverify").splitlines(),
        "command": provenance()["command"],
        "machine": machine(),
    }


def belongs(figure: str, r: dict[str, Any]) -> bool:
    """Which runs a figure shows (non-private baselines appear in every Sahu 2025 panel they belong to)."""
    eps = r["agent_options"].get("epsilon")
    if figure.startswith("fig1a_eps"):
        return r["figure"] == "fig1a" and (eps is None or f"fig1a_eps{eps:g}" == figure)
    if figure == "fig1b":
        return r["agent"] == "lsvi-ucb++" or (
            r["agent"] == "dp-lsvi-ucb++"
            and r["env"] == "min2021"
            and r["agent_options"].get("sensitivity_model") == "derived"
        )
    return r["figure"] == figure


def plot(figure: str, runs: list[dict[str, Any]], path: Path, title: str, references: dict[str, float]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chosen = [r for r in runs if belongs(figure, r)]
    if figure == "fig1b":
        chosen.sort(key=lambda r: r["agent_options"].get("epsilon", float("inf")))
    fig, ax = plt.subplots(figsize=(7.2, 4.6))
    for r in chosen:
        x = np.array(r["curve"]["episode"])
        mean, sd = np.array(r["curve"]["mean"]), np.array(r["curve"]["sd"])
        final = r["final_cumulative_regret"]
        (line,) = ax.plot(x, mean, label=f"{r['label']}: {final['mean']:.0f} ± {final['sd']:.0f}")
        ax.fill_between(x, mean - sd, mean + sd, color=line.get_color(), alpha=0.15)
    env = "zhou2021" if figure == "liao2021" else "min2021"
    if chosen and env in references:
        K = max(r["K"] for r in chosen)
        ax.plot(
            [0, K], [0, K * references[env]], "k--", lw=0.8, label=f"uniformly random policy: {K * references[env]:.0f}"
        )
    ax.set_xlabel("episode k")
    ax.set_ylabel("cumulative regret (exact), mean ± sd over seeds")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def markdown_table(runs: list[dict[str, Any]], controls: dict[str, Any] | None = None) -> str:
    """The summary table; with ``controls`` (results_controls.json) each private run's no-data control beside it."""
    from no_data_controls import verdict

    controls = controls or {}
    lines = [
        "| figure | run | K | final cumulative regret (mean ± sd, 10 seeds) "
        "| mean regret/episode first 20% → last 20% | no-data control: last 20% | learned from users (p) "
        "| policy changes | wall s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        f = r["final_cumulative_regret"]
        record = controls.get(r["label"]) if is_private(r) else None
        control = ("–", "–") if not is_private(r) else (
            ("no control on disk", "–") if record is None
            else (f"{record['control_mean_regret_last_fifth']:.3f}", verdict(record)))
        lines.append(
            f"| {r['figure']} | {r['label']} | {r['K']} | {f['mean']:.1f} ± {f['sd']:.1f} | "
            f"{r['mean_regret_first_fifth']:.3f} → {r['mean_regret_last_fifth']:.3f} | {control[0]} | {control[1]} | "
            f"{r['policy_changes_mean']:.0f} | {r['wall_seconds']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def source_record(document: dict[str, Any]) -> dict[str, Any]:
    """The provenance a results.json (or a control record) names: its ``source`` commit, with the machine and
    command where the run recorded them (:func:`results_page.recorded` reads the commit and the versions)."""
    found = recorded(document)
    source = document.get("source") or {}
    if source.get("machine"):
        found["machine"] = source["machine"]
    if source.get("command"):
        found["command"] = source["command"]
    return found


def render(out: Path = OUT, page: Path | None = None) -> Path:
    """The results page of ``out``/results.json (and of the no-data controls beside it), running nothing."""
    document = json.loads((out / "results.json").read_text())
    controls_path = out / "results_controls.json"
    controls = json.loads(controls_path.read_text())["controls"] if controls_path.exists() else {}
    settings, reference = document["settings"], document["uniform_policy_regret_per_episode"]
    body = (f"Sahu 2025, Figure 1(a, b): the Min et al. 2021 linear MDP rescaled to ‖φ‖ = 1 "
            f"({', '.join(f'{k} = {v}' for k, v in settings['min2021'].items())}, d = 10), "
            f"K = {settings['K_sahu2025']}; Liao et al. 2021: the Zhou et al. 2021 mixture MDP "
            f"({', '.join(f'{k} = {v}' for k, v in settings['zhou2021'].items())}), K = {settings['K_liao2021']}. "
            f"{settings['num_seeds']} seeds (`SeedSequence({settings['base_seed']}).spawn({settings['num_seeds']})`, "
            f"seed i of every agent sees the same environment randomness), δ = {settings['delta']:g}, replace-one, "
            "exact conversion, per-user accounting, every agent at its defaults; exact regret (backward "
            "induction). The no-data control of a private run is the same agent, options and seeds with every "
            "user slot empty (`--controls`); \"learned from users\" is the one-sided paired t-test on the last "
            "20% of the episodes, level 0.05. The uniformly random policy's regret per episode: "
            + ", ".join(f"{env} {value:.4g}" for env, value in reference.items())
            + f". Wall time of the whole run: {document['timing']['total_wall_seconds']:.0f} s "
            f"({settings['workers']} worker processes).\n\n"
            + markdown_table(document["runs"], controls) + "\n"
            + "\n".join(f"![{title}]({name})\n" for name, title in FIGURES.values()))
    figures = [out / "results.json"] + ([controls_path] if controls else [])
    runs = [source_record(document)] + [source_record(c) for c in controls.values()]
    title = "The papers' experiments: Sahu 2025 and Liao et al. 2021"
    return write_page(page or (PAGE if out == OUT else out / PAGE.name), title, body,
                      reproduce=["python docs/make_results.py", "python docs/make_results.py --controls"]
                      [:len(figures)], render="python docs/make_results.py --render-only", figures=figures,
                      runs=runs)


CONTROLS = OUT / "results_controls.json"


def is_private(r: dict[str, Any]) -> bool:
    return "epsilon" in r["agent_options"]


def run_spec(r: dict[str, Any], seeds: int, workers: int) -> RunSpec:
    return RunSpec(r["agent"], r["env"], r["K"], num_seeds=seeds, base_seed=BASE_SEED, workers=workers,
                   agent_options=r["agent_options"], env_options=r["env_options"])


def command_controls(workers: int, executor: Any) -> int:
    """The no-data control of every private run of results.json (module docstring)."""
    from no_data_controls import control_record, same_run, verdict

    document = json.loads((OUT / "results.json").read_text())
    controls: dict[str, Any] = json.loads(CONTROLS.read_text())["controls"] if CONTROLS.exists() else {}
    for r in filter(is_private, document["runs"]):
        spec = run_spec(r, len(r["seeds"]), workers)
        if r["label"] in controls and same_run(controls[r["label"]], spec):
            continue
        record = control_record(spec, r["final_cumulative_regret"]["per_seed"], executor)
        record.update(label=r["label"], source=source_state())
        controls[r["label"]] = record
        CONTROLS.write_text(json.dumps({"description": "docs/make_results.py --controls: the no-data control of "
                                        "every private run of results.json", "controls": controls},
                                       indent=1, default=json_default) + "\n")
        print(f"{r['label']:<38} learned from users {verdict(record)}; reproduced "
              f"{record['reproduces_documented_run']}  ({record['wall_seconds']:.0f} s)", flush=True)
    print(render())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="K = 100, 2 seeds, into docs/results/quick (a smoke test)")
    parser.add_argument("--scheduler", default=None,
                        help="run the seeds of every run on a Dask cluster at this address (tcp://host:port)")
    parser.add_argument("--controls", action="store_true",
                        help="run the no-data control of every private run of results.json (results_controls.json)")
    parser.add_argument("--render-only", action="store_true", help="write the results page from the JSON, run nothing")
    args = parser.parse_args(argv)
    if args.render_only:
        print(render())
        return 0
    executor = cluster_executor(parser, args.scheduler)
    if args.controls:
        try:
            return command_controls(args.workers, executor)
        finally:
            if executor is not None:
                executor.close()
    k_sahu, k_liao, seeds, out = K_SAHU2025, K_LIAO2021, NUM_SEEDS, OUT
    if args.quick:
        k_sahu, k_liao, seeds, out = 100, 100, 2, OUT / "quick"
    out.mkdir(parents=True, exist_ok=True)
    done: list[dict[str, Any]] = []
    missing: list[str] = []
    start = time.perf_counter()
    settings = {
        "base_seed": BASE_SEED,
        "num_seeds": seeds,
        "delta": DELTA,
        "K_sahu2025": k_sahu,
        "K_liao2021": k_liao,
        "fig1a_epsilons": list(FIG1A_EPSILONS),
        "fig1b_epsilons": list(FIG1B_EPSILONS),
        "liao2021_epsilons": list(LIAO2021_EPSILONS),
        "min2021": MIN2021,
        "zhou2021": ZHOU2021,
        "workers": args.workers,
    }

    source = source_state()
    references = {
        "min2021": uniform_policy_regret("min2021", MIN2021, k_sahu),
        "zhou2021": uniform_policy_regret("zhou2021", ZHOU2021, k_liao),
    }

    def write(complete: bool) -> None:
        document = {
            "description": (
                "docs/make_results.py: Sahu 2025 Figure 1(a,b) and Liao et al. 2021 experiments (exact regret)"
            ),
            "complete": complete,
            "settings": settings,
            "versions": package_versions(),
            "source": source,
            "uniform_policy_regret_per_episode": references,
            "missing": missing,
            "timing": {"total_wall_seconds": time.perf_counter() - start},
            "runs": done,
        }
        (out / "results.json").write_text(json.dumps(document, indent=1, default=json_default) + "\n")
        render(out)

    for entry in experiments(k_sahu, k_liao):
        if entry["agent"] not in AGENTS:
            missing.append(entry["label"])
            print(f"skip {entry['label']}: agent {entry['agent']!r} is not registered", flush=True)
            continue
        spec = RunSpec(
            entry["agent"],
            entry["env"],
            entry["K"],
            num_seeds=seeds,
            base_seed=BASE_SEED,
            workers=args.workers,
            agent_options=entry["agent_options"],
            env_options=entry["env_options"],
        )
        t0 = time.perf_counter()
        result = run(spec, executor=executor)
        summary = summarise(entry, result, time.perf_counter() - t0)
        done.append(summary)
        write(False)  # partial results survive an interrupted run
        f = summary["final_cumulative_regret"]
        print(
            f"{entry['figure']:<9}{entry['label']:<38} K={entry['K']:<6} regret {f['mean']:10.1f} ± {f['sd']:8.1f}"
            f"  ({summary['wall_seconds']:.0f} s)",
            flush=True,
        )
    for figure, (name, title) in FIGURES.items():
        plot(figure, done, out / name, title, references)
    write(True)
    if executor is not None:
        executor.close()
    print(f"total {time.perf_counter() - start:.0f} s; missing: {missing or 'none'}")
    return 0


def cluster_executor(parser: argparse.ArgumentParser, scheduler: str | None) -> Any:
    """``None`` (the runner's local processes, ``--workers``) or a Dask executor connected to ``scheduler``
    (the address checked as ``dpverify run --scheduler`` checks it; a bad one is a one-line usage error)."""
    if scheduler is None:
        return None
    from dpverify.audit.executors import make_executor
    from dpverify.cli._checks import check_scheduler
    from dpverify.errors import InvalidParameterError

    try:
        check_scheduler("--scheduler", scheduler)
        return make_executor(scheduler=scheduler)
    except InvalidParameterError as exc:
        parser.error(str(exc).replace("scheduler", "--scheduler", 1) if exc.parameter == "scheduler" else str(exc))


def json_default(value: Any) -> Any:
    """``json.dumps`` ``default=``: numpy scalars and arrays as Python numbers and lists (make_frontier.py too)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


if __name__ == "__main__":
    raise SystemExit(main())
