"""The privacy–regret frontier on the Min et al. MDP: every JDP agent against ε, at two horizons K.

    .venv/bin/python docs/make_frontier.py all [--workers 2 | --scheduler tcp://host:port]   # everything below
                                              [--K ...] [--agents ...] [--epsilons ...]  # or a part of it
    .venv/bin/python docs/make_frontier.py --out /tmp/frontier all ...   # a scratch rerun beside the committed one
    .venv/bin/python docs/make_frontier.py run [--K 3000 10000] [--agents ...] [--epsilons 1 10 100 1000]
                                              [--seeds 10] [--workers 2 | --scheduler tcp://host:port]
    .venv/bin/python docs/make_frontier.py import     # reuse docs/make_results.py's K = 3000 cells
    .venv/bin/python docs/make_frontier.py control [--K ...] [--agents ...] [--epsilons ...] [--workers 2]
                                                  # the no-data control of every private cell
    .venv/bin/python docs/make_frontier.py noise      # signal against noise per statistic
    .venv/bin/python docs/make_frontier.py report
    .venv/bin/python docs/make_frontier.py --render-only   # the results page again from the JSON, running nothing

``run`` executes every (agent, K, ε) cell not already on disk, each through the runner
(:class:`dpverify.agents.core.runner.RunSpec`, seeds in parallel worker processes, seeding
``SeedSequence(BASE_SEED).spawn(num_seeds)`` as in docs/make_results.py, so seed i of every agent sees
the same environment randomness; ``--scheduler`` sends each cell's seeds to a Dask cluster instead, with
bit-identical results), and writes each finished cell at once to
``docs/results/frontier/runs/<agent>_K<K>_eps<ε>.json`` (so an interrupted run keeps what it finished
and a rerun resumes). ``control`` runs, for every private cell on disk, the same agent and seeds with every
user slot empty (docs/no_data_controls.py; it reruns the cell with its users too and records whether that
reproduced the cell) into ``docs/results/frontier/runs/controls/``. ``report`` gathers the cells into
``docs/results/frontier/frontier.json``, the plot ``docs/results/frontier_min2021.png`` (final regret against
ε, one panel per K, with the non-private agents and the uniformly random policy as horizontal lines) and the
results page ``docs/results/frontier.md`` (the tables docs/results.md reads), which ``--render-only`` writes
again from frontier.json and noise.json alone.

Agents (labels → registry name and options): LSVI-UCB and LSVI-UCB++ (non-private, one cell per K),
DP-LSVI-UCB++ ``fresh`` (Sahu 2025, Algorithm 1: fresh noise at each of the 4HK releases) and ``tree``
(``aggregation="tree"``: binary-tree counters, docs/private_agents.md), Luyo et al. 2021 and Ngo et al.
2022, all at δ = :data:`DELTA` with replace-one neighbours and their default multipliers. Regret is
exact (backward induction), never realised returns.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "docs"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from make_results import (  # noqa: E402
    BASE_SEED,
    DELTA,
    MIN2021,
    cluster_executor,
    json_default,
    source_state,
    summarise,
    uniform_policy_regret,
)
from no_data_controls import control_record, refresh_tests, same_run, verdict  # noqa: E402
from results_page import recorded, write_page  # noqa: E402

from dpverify.agents.core.learning import LEVEL  # noqa: E402
from dpverify.agents.core.runner import RunSpec, package_versions, run  # noqa: E402

OUT = ROOT / "docs" / "results" / "frontier"
CONTROLS = OUT / "runs" / "controls"
PLOT = ROOT / "docs" / "results" / "frontier_min2021.png"
PAGE = ROOT / "docs" / "results" / "frontier.md"
EPSILONS = (1.0, 10.0, 100.0, 1000.0)
HORIZONS_K = (3000, 10000)
NUM_SEEDS = 10

#: label → (registry name, options besides epsilon and delta; None = non-private).
AGENT_TABLE: dict[str, tuple[str, dict[str, Any] | None]] = {
    "LSVI-UCB": ("lsvi-ucb", None),
    "LSVI-UCB++": ("lsvi-ucb++", None),
    "DP-LSVI-UCB++ fresh": ("dp-lsvi-ucb++", {"aggregation": "fresh"}),
    "DP-LSVI-UCB++ tree": ("dp-lsvi-ucb++", {"aggregation": "tree"}),
    "DP-LSVI-UCB++ tree, c_Λ = 0.25": ("dp-lsvi-ucb++", {"aggregation": "tree", "shift_multiplier": 0.25}),
    "Luyo et al.": ("luyo", {}),
    "Ngo et al.": ("ngo", {}),
}
COLORS = {"LSVI-UCB": "tab:gray", "LSVI-UCB++": "tab:olive", "DP-LSVI-UCB++ fresh": "tab:blue",
          "DP-LSVI-UCB++ tree": "tab:red", "DP-LSVI-UCB++ tree, c_Λ = 0.25": "tab:orange", "Luyo et al.": "tab:green",
          "Ngo et al.": "tab:purple"}
SLUGS = {"LSVI-UCB": "lsvi-ucb", "LSVI-UCB++": "lsvi-ucb-pp", "DP-LSVI-UCB++ fresh": "dp-fresh",
         "DP-LSVI-UCB++ tree": "dp-tree", "DP-LSVI-UCB++ tree, c_Λ = 0.25": "dp-tree-shift0.25",
         "Luyo et al.": "luyo", "Ngo et al.": "ngo"}


def use_output(directory: Path) -> None:
    """Write (and read) the cells, controls, noise, table and plot under ``directory`` instead of
    docs/results/frontier (``--out``: a scratch rerun to compare with the committed one)."""
    global OUT, CONTROLS, PLOT, PAGE
    OUT = directory
    CONTROLS = OUT / "runs" / "controls"
    PLOT = OUT / "frontier_min2021.png"
    PAGE = OUT / "frontier.md"


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


def control_path(label: str, K: int, epsilon: float | None) -> Path:
    return CONTROLS / cell_path(label, K, epsilon).name


def cell_options(label: str, epsilon: float | None) -> dict[str, Any]:
    agent, extra = AGENT_TABLE[label]
    options = {} if extra is None else {**extra, "epsilon": epsilon, "delta": DELTA}
    if extra is not None and agent == "dp-lsvi-ucb++" and extra.get("aggregation") == "fresh":
        options.pop("aggregation")  # the default; keeps the cell runnable on code without the option
    return options


def cell_spec(label: str, K: int, epsilon: float | None, seeds: int, workers: int) -> RunSpec:
    return RunSpec(AGENT_TABLE[label][0], "min2021", K, num_seeds=seeds, base_seed=BASE_SEED, workers=workers,
                   agent_options=cell_options(label, epsilon), env_options=MIN2021)


def run_cell(label: str, K: int, epsilon: float | None, seeds: int, workers: int,
             executor: Any = None) -> dict[str, Any]:
    """One cell; its seeds on ``executor`` when given (a Dask cluster's), else ``workers`` local processes."""
    agent = AGENT_TABLE[label][0]
    options = cell_options(label, epsilon)
    entry = {"figure": "frontier", "label": label, "agent": agent, "env": "min2021", "K": K,
             "agent_options": options, "env_options": MIN2021, "epsilon": epsilon}
    spec = cell_spec(label, K, epsilon, seeds, workers)
    start = time.perf_counter()
    result = run(spec, executor=executor)
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
        summary = run_cell(label, K, eps, args.seeds, args.workers, args.executor)
        path.write_text(json.dumps(summary, indent=1, default=json_default) + "\n")
        f = summary["final_cumulative_regret"]
        print(f"{label:<22} K={K:<6} ε={'-' if eps is None else f'{eps:g}':<6} regret {f['mean']:10.1f} ± "
              f"{f['sd']:8.1f}  {summary['mean_regret_first_fifth']:.2f} → {summary['mean_regret_last_fifth']:.2f}"
              f"  ({summary['wall_seconds']:.0f} s, {args.seeds} seeds)", flush=True)
    return 0


def command_control(args: argparse.Namespace) -> int:
    """The no-data control of every private cell on disk that matches the filters and has none yet."""
    CONTROLS.mkdir(parents=True, exist_ok=True)
    for cell in sorted(load_cells(), key=lambda r: (r["K"], r.get("wall_seconds", 0.0))):
        label, K, eps = cell["label"], cell["K"], cell.get("epsilon")
        if (eps is None or label not in args.agents or K not in args.K
                or (args.epsilons is not None and eps not in args.epsilons)):
            continue
        path = control_path(label, K, eps)
        spec = cell_spec(label, K, eps, cell["num_seeds"], args.workers)
        if path.exists() and not args.force and same_run(json.loads(path.read_text()), spec):
            continue
        record = control_record(spec, cell["final_cumulative_regret"]["per_seed"], args.executor)
        record.update(label=label, epsilon=eps, source=source_state())
        path.write_text(json.dumps(record, indent=1, default=json_default) + "\n")
        c = record["comparison"]
        print(f"{label:<30} K={K:<6} ε={eps:<8g} last 20%: {np.mean(c['agent_last_per_episode']):.3f} with users, "
              f"{np.mean(c['control_last_per_episode']):.3f} without; learned {verdict(record)}; reproduced "
              f"{record['reproduces_documented_run']}  ({record['wall_seconds']:.0f} s)", flush=True)
    return 0


def load_controls() -> dict[tuple[str, int, float], dict[str, Any]]:
    """The control records on disk, by (label, K, ε); their tests recomputed from their per-seed values (and the
    file rewritten) when today's test gives a different figure."""
    records = {}
    for path in sorted(CONTROLS.glob("*.json")):
        record = json.loads(path.read_text())
        if refresh_tests(record):
            path.write_text(json.dumps(record, indent=1, default=json_default) + "\n")
        records[(record["label"], record["K"], record["epsilon"])] = record
    return records


def command_import(args: argparse.Namespace) -> int:
    """Reuse the K = 3000 cells docs/make_results.py already ran (same environment, seeds, δ and defaults:
    DP-LSVI-UCB++ ``derived`` is the fresh variant, including its sweep to ε = 10¹²) instead of rerunning
    them; each imported cell records where it came from. A cell already on disk is kept (and compared,
    when both exist)."""
    (OUT / "runs").mkdir(parents=True, exist_ok=True)
    document = json.loads((ROOT / "docs" / "results" / "results.json").read_text())
    labels = {"dp-lsvi-ucb++": "DP-LSVI-UCB++ fresh", "luyo": "Luyo et al.", "ngo": "Ngo et al."}
    wanted_K, wanted_labels = getattr(args, "K", None), getattr(args, "agents", None)
    wanted_epsilons = getattr(args, "epsilons", None)
    for r in document["runs"]:
        eps = r["agent_options"].get("epsilon")
        beyond = r["agent"] == "dp-lsvi-ucb++" and eps is not None and eps > max(EPSILONS)  # the ε → ∞ sweep
        if ((wanted_K is not None and r["K"] not in wanted_K)
                or (wanted_labels is not None and labels.get(r["agent"]) not in wanted_labels)
                or (wanted_epsilons is not None and eps not in wanted_epsilons)):
            continue
        if (r["env"] != "min2021" or r["env_options"] != MIN2021 or r["agent"] not in labels
                or (eps not in EPSILONS and not beyond)
                or r["agent_options"].get("sensitivity_model", "derived") != "derived"
                or document["settings"]["base_seed"] != BASE_SEED or r["agent_options"].get("delta") != DELTA):
            continue
        label = labels[r["agent"]]
        path = cell_path(label, r["K"], eps)
        if path.exists():
            mine = json.loads(path.read_text())["final_cumulative_regret"]["per_seed"]
            theirs = r["final_cumulative_regret"]["per_seed"]
            same = np.allclose(mine[:len(theirs)], theirs[:len(mine)], rtol=1e-9, atol=1e-6)
            verdict = "identical" if same else "DIFFERS"
            print(f"{label} K={r['K']} ε={eps:g}: on disk; results.json per-seed regret {verdict}")
            continue
        cell = {**{k: v for k, v in r.items() if k != "figure"}, "figure": "frontier", "label": label,
                "epsilon": eps, "num_seeds": len(r["seeds"]),
                "imported_from": {"file": "docs/results/results.json", "label": r["label"],
                                  "source": document.get("source")}}
        path.write_text(json.dumps(cell, indent=1, default=json_default) + "\n")
        print(f"imported {label} K={r['K']} ε={eps:g} from docs/results/results.json")
    return 0


def command_noise(args: argparse.Namespace) -> int:
    """Signal against noise per statistic, at every (K, ε), for the fresh and the tree variant.

    Signal: the weighted sums of a non-private LSVI-UCB++ run (seed 0 of the runner's seeding) after
    k = K users — the eigenvalues of G_h = Σ σ̄⁻² φφᵀ, and ‖M_h V*_{h+1}‖₂ (the ŵ sum for the optimal
    value), the median over stages h. Noise: what the planner reads — the operator-norm bound of the
    Gram noise (2√(2d)·s, s the GOE entry std of the read: one release for fresh, the worst prefix for
    the tree) and the shift 2λ̃_Λ added to it; the expected ℓ2 norm √d·σ̂ of the noise on the ŵ sum.
    """
    from dpverify.agents.core.base import run_episodes
    from dpverify.agents.core.runner import build_agent, build_environment

    horizons = sorted(args.K)
    spec = RunSpec("lsvi-ucb++", "min2021", max(horizons), num_seeds=1, base_seed=BASE_SEED, env_options=MIN2021)
    mdp = build_environment(spec)
    agent_seed, env_seed = np.random.SeedSequence(BASE_SEED).spawn(1)[0].spawn(2)
    agent = build_agent(spec, mdp, np.random.default_rng(agent_seed))
    finite = mdp.as_finite_mdp()
    H, d = mdp.horizon, mdp.dim
    v_star = np.zeros((H + 1, mdp.num_states))
    for h in range(H - 1, -1, -1):
        v_star[h] = (finite.rewards[h] + finite.transitions[h] @ v_star[h + 1]).max(axis=-1)
    signal: dict[int, dict[str, float]] = {}

    def snapshot(k: int) -> None:
        if k + 1 in horizons:
            stats = agent.statistics
            eig = np.linalg.eigvalsh(stats.gram - stats.regularization * np.eye(d))
            vec = np.linalg.norm(np.einsum("hds,hs->hd", stats.next_state_sums, v_star[1:]), axis=1)
            signal[k + 1] = {"gram_eig_min": float(np.median(eig[:, 0])), "gram_eig_median": float(np.median(
                np.median(eig, axis=1))), "gram_eig_max": float(np.median(eig[:, -1])),
                "w_hat_sum_norm": float(np.median(vec))}

    run_episodes(mdp, agent, max(horizons), np.random.default_rng(env_seed), snapshot)
    rows = []
    from dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp import DpLsviUcbPlusPlus, DpLsviUcbPlusPlusConfig

    for K in horizons:
        for eps in args.epsilons:
            for aggregation in ("fresh", "tree"):
                private = DpLsviUcbPlusPlus(mdp, DpLsviUcbPlusPlusConfig(K, epsilon=eps, delta=DELTA,
                                                                         aggregation=aggregation),
                                            np.random.default_rng(0))
                if aggregation == "tree":
                    from dpverify.agents.dp_lsvi_ucb_pp.tree import tree_noise_stds

                    s, sigma_hat = tree_noise_stds(private.calibration, H, mdp.num_states, K)
                else:
                    s = private.calibration.mechanism("gram").noise_scale
                    sigma_hat = private.calibration.mechanism("w_hat").noise_scale
                rows.append({"K": K, "epsilon": eps, "aggregation": aggregation, "rho": private.calibration.rho,
                             "releases_per_user": private.calibration.releases_counted,
                             "rho0": private.calibration.rho0, "gram_entry_std_read": s,
                             "gram_noise_norm_bound": 2 * math.sqrt(2 * d) * s, "shift": private.shift,
                             "w_hat_noise_std_read": sigma_hat, "w_hat_noise_norm": math.sqrt(d) * sigma_hat,
                             **signal[K]})
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "noise.json").write_text(json.dumps({"signal": signal, "rows": rows}, indent=1) + "\n")
    print(noise_table(rows))
    return 0


def noise_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| K | ε | variant | releases/user | ρ0 | Gram noise ‖·‖ (read) | shift 2λ̃_Λ | "
             "Gram signal λ_min / median / λ_max | ŵ-sum noise √d·σ̂ (read) | ŵ-sum signal ‖M_h V*‖ |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['K']} | {r['epsilon']:g} | {r['aggregation']} | {r['releases_per_user']} | "
                     f"{r['rho0']:.3g} | "
                     f"{r['gram_noise_norm_bound']:.3g} | {r['shift']:.3g} | {r['gram_eig_min']:.3g} / "
                     f"{r['gram_eig_median']:.3g} / {r['gram_eig_max']:.3g} | {r['w_hat_noise_norm']:.3g} | "
                     f"{r['w_hat_sum_norm']:.3g} |")
    return "\n".join(lines) + "\n"


def load_cells() -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((OUT / "runs").glob("*.json"))]


def action_zero_regret() -> float:
    """Exact per-episode regret of the policy that always takes action 0 (where the private agents settle)."""
    from dpverify.agents.core.runner import build_environment

    mdp = build_environment(RunSpec("lsvi-ucb", "min2021", 1, num_seeds=1, env_options=MIN2021)).as_finite_mdp()
    P, R = mdp.transitions, mdp.rewards
    v_star = np.zeros(P.shape[1])
    v_zero = np.zeros(P.shape[1])
    for h in range(mdp.horizon - 1, -1, -1):
        v_star = (R[h] + P[h] @ v_star).max(axis=-1)
        v_zero = R[h][:, 0] + P[h][:, 0] @ v_zero
    return float(mdp.initial_distribution @ (v_star - v_zero))


#: The table cell of a private cell whose no-data control is not on disk (tests/docs fail on it).
NO_CONTROL = "no control on disk"


def control_cells(r: dict[str, Any], controls: dict[tuple[str, int, float], dict[str, Any]]) -> str:
    """The control columns of one row: its control's final regret and last-20% regret, the two tests."""
    if r.get("epsilon") is None:
        return "– | – | –"
    record = controls.get((r["label"], r["K"], r["epsilon"]))
    if record is None or record["num_seeds"] != r["num_seeds"]:
        return f"{NO_CONTROL} | – | –"
    final = np.asarray(record["final_without_users_per_seed"])
    p_final = record["final_p_value"]
    total = "cannot tell" if p_final is None else f"{'yes' if p_final < LEVEL else 'no'} ({p_final:.2g})"
    return (f"{final.mean():.0f} ± {final.std(ddof=1):.0f}, {record['control_mean_regret_last_fifth']:.2f} | "
            f"{total} | {verdict(record)}")


def markdown_table(runs: list[dict[str, Any]], references: dict[int, float], zero: float,
                   controls: dict[tuple[str, int, float], dict[str, Any]]) -> str:
    order = list(AGENT_TABLE)
    runs = sorted(runs, key=lambda r: (r["K"], order.index(r["label"]), r.get("epsilon") or 0.0))
    lines = ["| K | agent | ε | seeds | final regret (mean ± sd) | regret/episode first 20% → last 20% | "
             "no-data control: final regret, last 20% | total below control (p) | "
             "last 20% below control: learned from users (p) | policy changes | wall s | commit |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for K in sorted(references):
        lines.append(f"| {K} | uniformly random policy | – | – | {K * references[K]:.0f} | "
                     f"{references[K]:.2f} → {references[K]:.2f} | – | – | – | – | – | – |")
        lines.append(f"| {K} | always a = 0 (the known-reward greedy policy) | – | – | {K * zero:.0f} | "
                     f"{zero:.2f} → {zero:.2f} | – | – | – | – | – | – |")
    for r in runs:
        f = r["final_cumulative_regret"]
        eps = "–" if r.get("epsilon") is None else f"{r['epsilon']:g}"
        lines.append(f"| {r['K']} | {r['label']} | {eps} | {r['num_seeds']} | {f['mean']:.0f} ± {f['sd']:.0f} | "
                     f"{r['mean_regret_first_fifth']:.2f} → {r['mean_regret_last_fifth']:.2f} | "
                     f"{control_cells(r, controls)} | {r['policy_changes_mean']:.0f} | {r['wall_seconds']:.0f} | "
                     f"{cell_record(r).get('commit', 'not recorded')} |")
    return "\n".join(lines) + "\n"


def cell_record(cell: dict[str, Any]) -> dict[str, Any]:
    """The provenance of a cell: its own ``source`` (and versions), or that of the file it was imported from."""
    imported = cell.get("imported_from") or {}
    source = cell.get("source") or imported.get("source") or {}
    found = recorded({"source": source, "versions": cell.get("versions") or cell.get("settings", {}).get("versions")})
    found.update({k: source[k] for k in ("machine", "command") if source.get(k)})
    return found


def plot(runs: list[dict[str, Any]], references: dict[int, float], zero: float, path: Path,
         controls: dict[tuple[str, int, float], dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    horizons = sorted({r["K"] for r in runs})
    fig, axes = plt.subplots(1, max(1, len(horizons)), figsize=(6.2 * max(1, len(horizons)), 6.0), squeeze=False)
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
                ax.axhline(means[0], ls=":", lw=1.2, label=f"{tag}: {means[0]:.0f}", color=COLORS[label])
            else:
                ax.errorbar([r["epsilon"] for r in mine], means, yerr=sds, marker="o", capsize=3, label=tag,
                            color=COLORS[label])
                paired = [(r["epsilon"], controls[(label, K, r["epsilon"])]) for r in mine
                          if (label, K, r["epsilon"]) in controls]
                if paired:
                    ax.plot([e for e, _ in paired], [np.mean(c["final_without_users_per_seed"]) for _, c in paired],
                            ls=":", marker="x", color=COLORS[label], label=f"{label}: its no-data control")
        if K in references:
            ax.axhline(K * references[K], color="k", ls="--", lw=0.8,
                       label=f"uniformly random: {K * references[K]:.0f}")
        ax.axhline(K * zero, color="k", ls="-.", lw=0.8, label=f"always a = 0: {K * zero:.0f}")
        ax.set_xscale("log")
        ax.set_xlabel("ε (δ = 1e-5, replace-one, JDP)")
        ax.set_ylabel("final cumulative regret (exact), mean ± sd")
        ax.set_title(f"Min et al. MDP (rescaled), H = 20, |A| = 100, K = {K}", fontsize=10)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def command_report(args: argparse.Namespace) -> int:
    runs = load_cells()
    horizons = sorted({r["K"] for r in runs})
    references = {K: uniform_policy_regret("min2021", MIN2021, K) for K in horizons}
    zero = action_zero_regret()
    controls = load_controls()
    document = {"description": "docs/make_frontier.py: privacy–regret frontier on the Min et al. MDP (exact regret)",
                "base_seed": BASE_SEED, "delta": DELTA, "min2021": MIN2021,
                "uniform_policy_regret_per_episode": {str(K): v for K, v in references.items()},
                "action_zero_regret_per_episode": zero,
                "runs": [{k: v for k, v in r.items() if k != "curve"} for r in runs],
                "no_data_controls": [controls[key] for key in sorted(controls, key=str)]}
    (OUT / "frontier.json").write_text(json.dumps(document, indent=1, default=json_default) + "\n")
    plot(runs, references, zero, PLOT, controls)
    print(render())
    return 0


def render(page: Path | None = None) -> Path:
    """The results page from frontier.json and noise.json alone (written by ``report`` and ``noise``)."""
    document = json.loads((OUT / "frontier.json").read_text())
    runs = document["runs"]
    references = {int(K): v for K, v in document["uniform_policy_regret_per_episode"].items()}
    controls = {(c["label"], c["K"], c["epsilon"]): c for c in document["no_data_controls"]}
    figures = [OUT / "frontier.json"]
    body = ("The Min et al. MDP rescaled to ‖φ‖ = 1 (H = 20, |A| = 100, d = 10), δ = 1e-5, replace-one, exact "
            "conversion, per-user accounting, every agent at its defaults; seed i = "
            f"`SeedSequence({document['base_seed']}).spawn(n)[i]` for every agent; exact regret. \"tree, c_Λ = "
            "0.25\" is the tree variant with `shift_multiplier=0.25`. The K = 3000 cells of fresh DP-LSVI-UCB++, "
            "Luyo et al. and Ngo et al. that docs/make_results.py ran are imported from "
            "`docs/results/results.json` (the commit column names the run that produced each cell). The no-data "
            "control of a private cell is the same agent, options and seeds with every user slot empty: \"total "
            "below control\" is the one-sided paired t-test on the per-seed final regret, \"learned from users\" "
            "the same test on the last 20% of the episodes (docs/results.md, \"The privacy–regret frontier\")."
            "\n\n" + markdown_table(runs, references, document["action_zero_regret_per_episode"], controls)
            + f"\n![Final regret against ε]({PLOT.name})\n")
    noise = OUT / "noise.json"
    if noise.exists():
        figures.append(noise)
        body += ("\n### Signal against noise per statistic\n\nSignal: the sums of a non-private LSVI-UCB++ run "
                 "after K users, median over the stages; noise: what the planner reads — for the Gram matrix the "
                 "operator-norm scale 2√(2d)·s of the read noise and the shift 2λ̃_Λ added on top (c_Λ = 1), for the "
                 "ŵ sum the expected norm √d·σ̂ of its noise (σ̂ = σ·√popcount·H√S for the tree).\n\n"
                 + noise_table(json.loads(noise.read_text())["rows"]))
    return write_page(page or PAGE, "The privacy–regret frontier on the Min et al. MDP", body,
                      reproduce="python docs/make_frontier.py all", render="python docs/make_frontier.py --render-only",
                      figures=figures, runs=[cell_record(r) for r in runs] + [recorded(c) for c in controls.values()])


def command_all(args: argparse.Namespace) -> int:
    """The whole frontier from one command: every step, over the same (K, agents, ε) selection (the defaults:
    all of it); cells and controls already on disk are kept."""
    selection = argparse.Namespace(K=list(args.K), agents=list(args.agents), epsilons=args.epsilons,
                                   seeds=args.seeds, workers=args.workers, force=False, executor=args.executor)
    grid = argparse.Namespace(**{**vars(selection), "epsilons": args.epsilons or list(EPSILONS)})
    # import and control take every ε of the selection on disk (None: the imported ε → ∞ sweep included)
    for step, namespace in ((command_import, selection), (command_run, grid), (command_control, selection),
                            (command_noise, grid), (command_report, selection)):
        step(namespace)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render-only", action="store_true",
                        help="write the results page from frontier.json and noise.json, run nothing")
    sub = parser.add_subparsers(dest="command")
    run_parser = sub.add_parser("run", help="run the missing (agent, K, ε) cells")
    run_parser.add_argument("--K", type=int, nargs="+", default=list(HORIZONS_K))
    run_parser.add_argument("--agents", nargs="+", default=list(AGENT_TABLE), choices=list(AGENT_TABLE))
    run_parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    run_parser.add_argument("--seeds", type=int, default=NUM_SEEDS)
    run_parser.add_argument("--workers", type=int, default=2)
    run_parser.add_argument("--force", action="store_true", help="rerun cells already on disk")
    run_parser.add_argument("--scheduler", default=None,
                            help="run each cell's seeds on a Dask cluster at this address (tcp://host:port)")
    control_parser = sub.add_parser("control", help="the no-data control of every private cell on disk")
    control_parser.add_argument("--K", type=int, nargs="+", default=list(HORIZONS_K))
    control_parser.add_argument("--agents", nargs="+", default=list(AGENT_TABLE), choices=list(AGENT_TABLE))
    control_parser.add_argument("--epsilons", type=float, nargs="+", default=None,
                                help="only these ε (default: every ε on disk)")
    control_parser.add_argument("--workers", type=int, default=2)
    control_parser.add_argument("--force", action="store_true", help="rerun controls already on disk")
    control_parser.add_argument("--scheduler", default=None,
                                help="run the seeds on a Dask cluster at this address (tcp://host:port)")
    all_parser = sub.add_parser("all", help="import, run, control, noise and report, in that order (resumable)")
    all_parser.add_argument("--K", type=int, nargs="+", default=list(HORIZONS_K))
    all_parser.add_argument("--agents", nargs="+", default=list(AGENT_TABLE), choices=list(AGENT_TABLE))
    all_parser.add_argument("--epsilons", type=float, nargs="+", default=None,
                            help="only these ε (default: the grid, and every ε imported or on disk)")
    all_parser.add_argument("--seeds", type=int, default=NUM_SEEDS)
    all_parser.add_argument("--workers", type=int, default=2)
    all_parser.add_argument("--scheduler", default=None,
                            help="run the seeds on a Dask cluster at this address (tcp://host:port)")
    sub.add_parser("report", help="gather the cells: table, JSON, plot")
    sub.add_parser("import", help="reuse the K = 3000 cells of docs/results/results.json (docs/make_results.py)")
    noise_parser = sub.add_parser("noise", help="signal against noise per statistic (noise.json)")
    noise_parser.add_argument("--K", type=int, nargs="+", default=list(HORIZONS_K))
    noise_parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--out", type=Path, default=None,
                        help="read and write under this directory instead of docs/results/frontier")
    args = parser.parse_args(argv)
    if args.out is not None:
        use_output(args.out)
    if args.render_only:
        print(render())
        return 0
    if args.command is None:
        parser.error("a command is required (or --render-only)")
    args.executor = cluster_executor(run_parser, getattr(args, "scheduler", None))
    commands = {"run": command_run, "control": command_control, "report": command_report, "import": command_import,
                "noise": command_noise, "all": command_all}
    try:
        return commands[args.command](args)
    finally:
        if args.executor is not None:
            args.executor.close()


if __name__ == "__main__":
    raise SystemExit(main())
