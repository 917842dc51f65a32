"""The privacy–regret frontier on the Min et al. MDP: every JDP agent against ε, at two horizons K.

    .venv/bin/python docs/make_frontier.py run [--K 3000 10000] [--agents ...] [--epsilons 1 10 100 1000]
                                              [--seeds 10] [--workers 2]
    .venv/bin/python docs/make_frontier.py report

``run`` executes every (agent, K, ε) cell not already on disk, each through the runner
(:class:`dpverify.agents.runner.RunSpec`, seeds in parallel worker processes, seeding
``SeedSequence(BASE_SEED).spawn(num_seeds)`` as in docs/make_results.py, so seed i of every agent sees
the same environment randomness), and writes each finished cell at once to
``docs/results/frontier/runs/<agent>_K<K>_eps<ε>.json`` (so an interrupted run keeps what it finished
and a rerun resumes). ``report`` gathers the cells into ``docs/results/frontier/frontier.json``,
``docs/results/frontier/summary.md`` (the table quoted by docs/results.md) and the plot
``docs/results/frontier_min2021.png`` (final regret against ε, one panel per K, with the non-private
agents and the uniformly random policy as horizontal lines).

Agents (labels → registry name and options): LSVI-UCB and LSVI-UCB++ (non-private, one cell per K),
DP-LSVI-UCB++ ``fresh`` (Sahu 2025, Algorithm 1: fresh noise at each of the 4HK releases) and ``tree``
(``aggregation="tree"``: binary-tree counters, docs/private_agents.md), Luyo et al. 2021 and Ngo et al.
2022, all at δ = :data:`DELTA` with replace-one neighbours and their default multipliers. Regret is
exact (backward induction), never realised returns.
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
for path in (ROOT, ROOT / "docs"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from make_results import BASE_SEED, DELTA, MIN2021, source_state, summarise, uniform_policy_regret  # noqa: E402

from dpverify.agents.runner import RunSpec, package_versions, run  # noqa: E402

OUT = ROOT / "docs" / "results" / "frontier"
PLOT = ROOT / "docs" / "results" / "frontier_min2021.png"
EPSILONS = (1.0, 10.0, 100.0, 1000.0)
HORIZONS_K = (3000, 10000)
NUM_SEEDS = 10

#: label → (registry name, options besides epsilon and delta; None = non-private).
AGENT_TABLE: dict[str, tuple[str, dict[str, Any] | None]] = {
    "LSVI-UCB": ("lsvi-ucb", None),
    "LSVI-UCB++": ("lsvi-ucb++", None),
    "DP-LSVI-UCB++ fresh": ("dp-lsvi-ucb++", {"aggregation": "fresh"}),
    "DP-LSVI-UCB++ tree": ("dp-lsvi-ucb++", {"aggregation": "tree"}),
    "Luyo et al.": ("luyo", {}),
    "Ngo et al.": ("ngo", {}),
}
SLUGS = {"LSVI-UCB": "lsvi-ucb", "LSVI-UCB++": "lsvi-ucb-pp", "DP-LSVI-UCB++ fresh": "dp-fresh",
         "DP-LSVI-UCB++ tree": "dp-tree", "Luyo et al.": "luyo", "Ngo et al.": "ngo"}


def cell_path(label: str, K: int, epsilon: float | None) -> Path:
    eps = "none" if epsilon is None else f"{epsilon:g}"
    return OUT / "runs" / f"{SLUGS[label]}_K{K}_eps{eps}.json"


def cells(labels: list[str], horizons: list[int], epsilons: list[float]) -> list[tuple[str, int, float | None]]:
    """Every (label, K, ε) to run, K outermost (ε is None for the non-private agents)."""
    out: list[tuple[str, int, float | None]] = []
    for K in horizons:
        for label in labels:
            if AGENT_TABLE[label][1] is None:
                out.append((label, K, None))
            else:
                out.extend((label, K, eps) for eps in epsilons)
    return out


def run_cell(label: str, K: int, epsilon: float | None, seeds: int, workers: int) -> dict[str, Any]:
    agent, extra = AGENT_TABLE[label]
    options = {} if extra is None else {**extra, "epsilon": epsilon, "delta": DELTA}
    if extra is not None and agent == "dp-lsvi-ucb++" and extra.get("aggregation") == "fresh":
        options.pop("aggregation")  # the default; keeps the cell runnable on code without the option
    entry = {"figure": "frontier", "label": label, "agent": agent, "env": "min2021", "K": K,
             "agent_options": options, "env_options": MIN2021, "epsilon": epsilon}
    spec = RunSpec(agent, "min2021", K, num_seeds=seeds, base_seed=BASE_SEED, workers=workers,
                   agent_options=options, env_options=MIN2021)
    start = time.perf_counter()
    result = run(spec)
    summary = summarise(entry, result, time.perf_counter() - start)
    summary["num_seeds"] = seeds
    summary["source"] = source_state()
    summary["versions"] = package_versions()
    return summary


def command_run(args: argparse.Namespace) -> int:
    (OUT / "runs").mkdir(parents=True, exist_ok=True)
    for label, K, eps in cells(args.agents, args.K, args.epsilons):
        path = cell_path(label, K, eps)
        if path.exists() and not args.force:
            continue
        summary = run_cell(label, K, eps, args.seeds, args.workers)
        path.write_text(json.dumps(summary, indent=1, default=_default) + "\n")
        f = summary["final_cumulative_regret"]
        print(f"{label:<22} K={K:<6} ε={'-' if eps is None else f'{eps:g}':<6} regret {f['mean']:10.1f} ± "
              f"{f['sd']:8.1f}  {summary['mean_regret_first_fifth']:.2f} → {summary['mean_regret_last_fifth']:.2f}"
              f"  ({summary['wall_seconds']:.0f} s, {args.seeds} seeds)", flush=True)
    return 0


def load_cells() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((OUT / "runs").glob("*.json"))]


def markdown_table(runs: list[dict[str, Any]], references: dict[int, float]) -> str:
    order = list(AGENT_TABLE)
    runs = sorted(runs, key=lambda r: (r["K"], order.index(r["label"]), r.get("epsilon") or 0.0))
    lines = ["| K | agent | ε | seeds | final regret (mean ± sd) | regret/episode first 20% → last 20% | "
             "policy changes | wall s |", "|---|---|---|---|---|---|---|---|"]
    for K in sorted(references):
        lines.append(f"| {K} | uniformly random policy | – | – | {K * references[K]:.0f} | "
                     f"{references[K]:.2f} → {references[K]:.2f} | – | – |")
    for r in runs:
        f = r["final_cumulative_regret"]
        eps = "–" if r.get("epsilon") is None else f"{r['epsilon']:g}"
        lines.append(f"| {r['K']} | {r['label']} | {eps} | {r['num_seeds']} | {f['mean']:.0f} ± {f['sd']:.0f} | "
                     f"{r['mean_regret_first_fifth']:.2f} → {r['mean_regret_last_fifth']:.2f} | "
                     f"{r['policy_changes_mean']:.0f} | {r['wall_seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def plot(runs: list[dict[str, Any]], references: dict[int, float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    horizons = sorted({r["K"] for r in runs})
    fig, axes = plt.subplots(1, max(1, len(horizons)), figsize=(6.2 * max(1, len(horizons)), 4.6), squeeze=False)
    for ax, K in zip(axes[0], horizons, strict=False):
        here = [r for r in runs if r["K"] == K]
        for label in AGENT_TABLE:
            mine = sorted((r for r in here if r["label"] == label), key=lambda r: r.get("epsilon") or 0.0)
            if not mine:
                continue
            means = [r["final_cumulative_regret"]["mean"] for r in mine]
            sds = [r["final_cumulative_regret"]["sd"] for r in mine]
            seeds = min(r["num_seeds"] for r in mine)
            tag = f"{label} ({seeds} seeds)"
            if mine[0].get("epsilon") is None:
                ax.axhline(means[0], ls=":", lw=1.2, label=f"{tag}: {means[0]:.0f}",
                           color="tab:gray" if label == "LSVI-UCB" else "tab:olive")
            else:
                ax.errorbar([r["epsilon"] for r in mine], means, yerr=sds, marker="o", capsize=3, label=tag)
        if K in references:
            ax.axhline(K * references[K], color="k", ls="--", lw=0.8,
                       label=f"uniformly random: {K * references[K]:.0f}")
        ax.set_xscale("log")
        ax.set_xlabel("ε (δ = 1e-5, replace-one, JDP)")
        ax.set_ylabel("final cumulative regret (exact), mean ± sd")
        ax.set_title(f"Min et al. MDP (rescaled), H = 20, |A| = 100, K = {K}", fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def command_report(args: argparse.Namespace) -> int:
    runs = load_cells()
    horizons = sorted({r["K"] for r in runs})
    references = {K: uniform_policy_regret("min2021", MIN2021, K) for K in horizons}
    document = {"description": "docs/make_frontier.py: privacy–regret frontier on the Min et al. MDP (exact regret)",
                "base_seed": BASE_SEED, "delta": DELTA, "min2021": MIN2021,
                "uniform_policy_regret_per_episode": {str(K): v for K, v in references.items()},
                "runs": [{k: v for k, v in r.items() if k != "curve"} for r in runs]}
    (OUT / "frontier.json").write_text(json.dumps(document, indent=1, default=_default) + "\n")
    (OUT / "summary.md").write_text(markdown_table(runs, references))
    plot(runs, references, PLOT)
    print(markdown_table(runs, references))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help="run the missing (agent, K, ε) cells")
    run_parser.add_argument("--K", type=int, nargs="+", default=list(HORIZONS_K))
    run_parser.add_argument("--agents", nargs="+", default=list(AGENT_TABLE), choices=list(AGENT_TABLE))
    run_parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    run_parser.add_argument("--seeds", type=int, default=NUM_SEEDS)
    run_parser.add_argument("--workers", type=int, default=2)
    run_parser.add_argument("--force", action="store_true", help="rerun cells already on disk")
    sub.add_parser("report", help="gather the cells: table, JSON, plot")
    args = parser.parse_args(argv)
    return command_run(args) if args.command == "run" else command_report(args)


def _default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


if __name__ == "__main__":
    raise SystemExit(main())
