"""Where learning starts: K* for the private agents, predicted from a signal/noise account, then measured.

    python docs/make_kstar.py predict [--epsilons 1 10 100 1000] [--grid 1000 10000 100000 1000000]
    python docs/make_kstar.py measure [--max-K 100000] [--seeds 5] [--workers 2 | --scheduler tcp://host:port]
                                      [--only LABEL] [--epsilons ...]
    python docs/make_kstar.py plot
    python docs/make_kstar.py --render-only      # the results page again from kstar.json, running nothing

K* is the smallest K on the log grid at which an agent's regret per episode over the last 20% of the episodes
is significantly below its no-data control's (one-sided paired t-test over ≥ 5 seeds;
:mod:`dpverify.agents.core.learning`) with Holm's correction over the grid's four steps, so that the claim
"learned at K*" keeps a family-wise error of 0.05 however many steps the search tested
(:func:`dpverify.agents.core.learning.holm_first_step`; the steps not run count as p = 1), on the paper's
benchmark (min2021: H = 20, d = 10, |A| = 100, δ = 1e-5, replace-one). The exact paired sign-flip p-value over
the 2⁵ seed assignments is reported beside the t-test.

**The account** (``predict``; docs/results.md, "Where learning starts"). The planner regresses on a noisy
target sum: for DP-LSVI-UCB++ the ŵ sum Σ_τ w_τ φ_τ V(s'_τ), for Luyo et al. and Ngo et al. Σ_τ φ_τ (r_τ + V(s'_τ)).
Before an agent learns, its users play its data-free policy — uniformly random actions for every agent here
(their no-data controls sit at the uniform policy's 12.14 per episode) — so the data's part of the target after K
users is K·m_h, with m_h the exact expectation of one user's term under the uniform policy for V = V* (computed
from the finite MDP, weights at their cap w = 1/H² for DP-LSVI-UCB++, 1 for the others). The noise the planner
reads on the target is Gaussian with a per-coordinate std σ_read(K, ε) that the calibration fixes: fresh noise
σ̂ on each release (fresh DP-LSVI-UCB++), σ·√c·‖V*‖ for a tree prefix of c nodes (c = the worst popcount;
Honaker's estimator: the worst Σ r_l), √c·(σ_M²‖V*‖² + σ_r²)^½ for Luyo et al.'s two trees, one release σ_u for
Ngo et al.'s per-batch target. The signal-to-noise ratio of stage h is

    SNR_h(K, ε) = K·‖m_h‖₂ / (√d · σ_read,h(K, ε)),

its median over h is the account's SNR, and the prediction is **K*_pred = the smallest grid K with SNR ≥ 1**:
the data's part of the target as large as the expected norm of its noise. The threshold is 1 by construction,
not fitted. ``predict`` writes ``docs/results/kstar/prediction.json``.

**The measurement** (``measure``): for every agent and ε, walk up the grid from 10³ until the agent beats its
control (or ``--max-K``), one file per (agent, ε, K) in ``docs/results/kstar/`` (a rerun skips what is on disk);
the cells docs/make_learning_controls.py already measured at 10³ and 10⁴ (same seeds, 5 of them) are reused.
``plot`` draws ``docs/results/kstar.png``: measured and predicted K* against ε, and the SNR of every agent
against K, gathers ``docs/results/kstar/kstar.json`` and writes the results page ``docs/results/kstar.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

DOCS = Path(__file__).resolve().parent
if str(DOCS) not in sys.path:
    sys.path.insert(0, str(DOCS))

from make_learning_controls import BASE_SEED, VARIANTS, cell  # noqa: E402
from make_results import cluster_executor  # noqa: E402
from results_page import provenance, recorded, write_page  # noqa: E402

from dpverify.agents.core import runner  # noqa: E402
from dpverify.agents.core.dyadic_tree import max_prefix_variance_factor  # noqa: E402
from dpverify.agents.core.factorised_sum import max_prefix_noise_factor, square_root_blt  # noqa: E402
from dpverify.agents.core.learning import LEVEL, exact_sign_flip_p_value, holm_adjusted, holm_first_step  # noqa: E402
from dpverify.agents.dp_lsvi_ucb_pp.tree import max_prefix_nodes  # noqa: E402

OUT = DOCS / "results" / "kstar"
PLOT = DOCS / "results" / "kstar.png"
PAGE = DOCS / "results" / "kstar.md"
EPSILONS = (1.0, 10.0, 100.0, 1000.0)
GRID = (1000, 10_000, 100_000, 1_000_000)
AGENTS = ("DP-LSVI-UCB++ (fresh)", "DP-LSVI-UCB++ tree", "DP-LSVI-UCB++ Honaker", "DP-LSVI-UCB++ factorised",
          "Luyo et al.", "Ngo et al.")
MIN2021 = {"horizon": 20, "num_actions": 100}
SEEDS = 5
#: Earlier measurements (docs/make_learning_controls.py --kstar) reused by ``measure``.
EARLIER = ("learning_controls_k1000.json", "learning_controls_k10000.json")


def environment() -> Any:
    return runner.build_environment(runner.RunSpec("lsvi-ucb", "min2021", 1, num_seeds=1, env_options=MIN2021))


def per_user_moments(mdp: Any, with_reward: bool, weight: float) -> dict[str, np.ndarray]:
    """One user's expected terms under the uniformly random policy, exactly, per stage h (state distribution by
    forward recursion, V* by backward induction): ``m`` = E[w·φ_h(s, a)(r·[with_reward] + V*_{h+1}(s'))] (H, d),
    ``gram`` = E[w·φφᵀ] (H, d, d), ``value_norm`` = ‖V*_{h+1}‖₂ (H,), and ``advantage`` = φ_h(0, 0) − the mean of
    φ_h(0, a ≠ 0) (H, d): the feature direction of the only decision that matters on this MDP ("a = 0 in state
    0", :mod:`dpverify.agents.envs.min2021`)."""
    finite = mdp.as_finite_mdp()
    P, R, H = finite.transitions, finite.rewards, mdp.horizon
    v_star = np.zeros((H + 1, mdp.num_states))
    for h in range(H - 1, -1, -1):
        v_star[h] = (R[h] + P[h] @ v_star[h + 1]).max(axis=-1)
    occupancy = np.asarray(finite.initial_distribution, dtype=float)
    d = mdp.dim
    out = {"m": np.zeros((H, d)), "gram": np.zeros((H, d, d)), "value_norm": np.zeros(H),
           "advantage": np.zeros((H, d))}
    for h in range(H):
        target = P[h] @ v_star[h + 1] + (R[h] if with_reward else 0.0)  # (S, A): E[r + V*(s') | s, a]
        joint = occupancy[:, None] / mdp.num_actions  # P(s_h = s, a_h = a) under the uniform policy
        phi = mdp.features[h]
        out["m"][h] = weight * np.einsum("sa,sad,sa->d", joint, phi, target)
        out["gram"][h] = weight * np.einsum("sa,sad,sae->de", joint, phi, phi)
        out["value_norm"][h] = np.linalg.norm(v_star[h + 1])
        out["advantage"][h] = phi[0, 0] - phi[0, 1:].mean(axis=0)
        occupancy = np.einsum("sa,sat->t", joint, P[h])
    return out


def account(moments: dict[str, np.ndarray], K: int, sigma: np.ndarray, gram_std: float,
            ridge: float) -> dict[str, float]:
    """The signal/noise ratios at K users (module docstring), medians over the stages whose data part is non-zero:
    ``target`` = K‖m_h‖/(√d σ_h), and ``decision``: the z-score of the data's part of the estimated advantage of
    a = 0 in state 0, uᵀΛ⁻¹Km_h with Λ = K·E[wφφᵀ] + ridge·I, against the noise the planner reads on it — the
    target noise (std σ_h‖a‖, a = Λ⁻¹u) and, to first order, the Gram noise E (GOE, entry std ``gram_std``):
    −aᵀEb with b = Λ⁻¹Km_h, of variance gram_std²(‖a‖²‖b‖² + (aᵀb)²)."""
    m, gram, u = moments["m"], moments["gram"], moments["advantage"]
    d = m.shape[1]
    live = np.linalg.norm(m, axis=1) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        target = K * np.linalg.norm(m, axis=1) / (math.sqrt(d) * sigma)
    Lambda = K * gram + ridge * np.eye(d)
    a = np.linalg.solve(Lambda, u[:, :, None])[:, :, 0]  # Λ⁻¹u (Λ symmetric)
    b = np.linalg.solve(Lambda, K * m[:, :, None])[:, :, 0]
    ab = np.einsum("hd,hd->h", a, b)
    norm_a, norm_b = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    noise = np.sqrt((sigma * norm_a) ** 2 + gram_std**2 * (norm_a**2 * norm_b**2 + ab**2))
    decision = np.abs(np.einsum("hd,hd->h", a, K * m)) / noise
    return {"target": float(np.median(target[live])), "decision": float(np.median(decision[live]))}


def read_noise(label: str, K: int, epsilon: float, mdp: Any,
               value_norms: np.ndarray) -> tuple[np.ndarray, float, float]:
    """(σ_read,h per coordinate of the target noise, the GOE entry std of the Gram noise read, the ridge λ + shift
    of the agent's Gram) (module docstring), from the agent's own calibration and settings at K."""
    agent_name, options = VARIANTS[label]
    spec = runner.RunSpec(agent_name, "min2021", K, num_seeds=1, base_seed=BASE_SEED, env_options=MIN2021,
                          agent_options={**options, "epsilon": epsilon, "delta": 1e-5})
    agent = runner.build_agent(spec, mdp, np.random.default_rng(0))
    cal, settings = agent.calibration, agent.settings()
    aggregation = options.get("aggregation", "fresh")
    if agent_name == "dp-lsvi-ucb++":
        ridge = settings["regularization_used"] + agent.shift
        if aggregation == "fresh":
            return (np.full(len(value_norms), cal.mechanism("w_hat").noise_scale), cal.mechanism("gram").noise_scale,
                    ridge)
        suffix, c = {"tree": ("", max_prefix_nodes(K)), "honaker": ("_l0", max_prefix_variance_factor(K)),
                     "factorised": ("", max_prefix_noise_factor(square_root_blt(K), K))}[aggregation]
        return (cal.mechanism("next_state" + suffix).noise_scale * math.sqrt(c) * value_norms,
                cal.mechanism("gram" + suffix).noise_scale * math.sqrt(c), ridge)
    ridge = settings["regularization"] + settings["gram_shift"]
    gram_std = cal.mechanism("gram").noise_scale * math.sqrt(max_prefix_nodes(K))
    if agent_name == "luyo":
        sigma_m, sigma_r = cal.mechanism("next_state").noise_scale, cal.mechanism("reward").noise_scale
        return (math.sqrt(max_prefix_nodes(K)) * np.sqrt((sigma_m * value_norms) ** 2 + sigma_r**2), gram_std,
                ridge)
    if agent_name == "ngo":
        return np.full(len(value_norms), cal.mechanism("target").noise_scale), gram_std, ridge
    raise ValueError(f"no account for {label!r}")


def command_predict(args: argparse.Namespace) -> int:
    mdp = environment()
    rows = []
    for label in args.agents:
        agent_name = VARIANTS[label][0]
        private_lsvi = agent_name == "dp-lsvi-ucb++"
        moments = per_user_moments(mdp, not private_lsvi, 1.0 / mdp.horizon**2 if private_lsvi else 1.0)
        for epsilon in args.epsilons:
            ratios = {}
            for K in args.grid:
                sigma, gram_std, ridge = read_noise(label, K, epsilon, mdp, moments["value_norm"])
                ratios[K] = {**account(moments, K, sigma, gram_std, ridge),
                             "sigma_read_median": float(np.median(sigma)), "gram_std_read": gram_std, "ridge": ridge}
            predicted = next((K for K in args.grid if ratios[K]["decision"] >= 1.0), None)
            rows.append({"agent": label, "epsilon": epsilon, "snr": {str(K): v["decision"] for K, v in ratios.items()},
                         "account": {str(K): v for K, v in ratios.items()}, "predicted_kstar": predicted,
                         "predicted_at": source_commit()})
            shown = "  ".join(f"{K:.0e}: {v['decision']:7.3g} ({v['target']:.3g})" for K, v in ratios.items())
            print(f"{label:<24} ε={epsilon:<6g} z (target SNR) {shown}  → K*_pred "
                  f"{predicted or f'> {max(args.grid):.0e}'}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "prediction.json"
    if path.exists():  # keep the rows of agents not predicted now (each row says when it was predicted)
        mine = {(r["agent"], r["epsilon"]) for r in rows}
        rows = [r for r in json.loads(path.read_text())["rows"] if (r["agent"], r["epsilon"]) not in mine] + rows
    path.write_text(json.dumps(
        {"description": "docs/make_kstar.py predict: the signal/noise account of K* (threshold z = 1)",
         "grid": list(args.grid), "rows": rows}, indent=1) + "\n")
    return 0


def source_commit() -> str:
    """The commit the prediction was made on (with "+changes" when the tree was dirty)."""
    import subprocess

    def git(*argv: str) -> str:
        return subprocess.run(["git", *argv], cwd=DOCS.parent, capture_output=True, text=True).stdout.strip()

    return git("rev-parse", "--short", "HEAD") + ("+changes" if git("status", "--porcelain", "--untracked-files=no")
                                                  else "")


def cell_path(label: str, epsilon: float, K: int) -> Path:
    slug = label.lower().replace("dp-lsvi-ucb++", "dp").replace(" ", "-").replace("(", "").replace(")", "")
    return OUT / f"{slug.replace('.', '')}_eps{epsilon:g}_K{K}.json"


def earlier_rows() -> dict[tuple[str, float, int], dict[str, Any]]:
    rows = {}
    for name in EARLIER:
        path = DOCS / "results" / name
        if path.exists():
            for r in json.loads(path.read_text())["rows"]:
                rows[(r["variant"], r["epsilon"], r["episodes"])] = r
    return rows


def measured(label: str, epsilon: float, K: int, seeds: int) -> dict[str, Any] | None:
    path = cell_path(label, epsilon, K)
    if path.exists():
        return json.loads(path.read_text())
    row = earlier_rows().get((label, epsilon, K))
    return row if row is not None and row["seeds"] >= seeds else None


def command_measure(args: argparse.Namespace) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    labels = [args.only] if args.only else list(args.agents)
    for label in labels:
        for epsilon in args.epsilons:
            p_values: list[float | None] = []
            for K in (k for k in GRID if k <= args.max_K):
                row = measured(label, epsilon, K, args.seeds)
                if row is None:
                    row = {**cell(label, epsilon, K, args.seeds, args.workers, args.executor),
                           "provenance": provenance()}
                    cell_path(label, epsilon, K).write_text(json.dumps(row, indent=1) + "\n")
                a, c = np.mean(row["agent_last_per_episode"]), np.mean(row["control_last_per_episode"])
                print(f"{label:<24} ε={epsilon:<6g} K={K:<8} {a:.3f} vs control {c:.3f}: learned {row['learned']} "
                      f"(p = {row['p_value']:.2g}, {row['seconds']:.0f} s)", flush=True)
                p_values.append(row["p_value"])
                if holm_first_step(p_values, len(GRID)) is not None:  # learned, corrected over the grid
                    break
    return 0


def kstar_table() -> list[dict[str, Any]]:
    """Measured and predicted K* per (agent, ε): the first grid K that learned, or "> the largest measured"."""
    prediction = {(r["agent"], r["epsilon"]): r for r in json.loads((OUT / "prediction.json").read_text())["rows"]}
    table = []
    for (label, epsilon), predicted in prediction.items():
        steps = [(K, measured(label, epsilon, K, SEEDS)) for K in GRID]
        steps = [(K, r) for K, r in steps if r is not None]
        adjusted = holm_adjusted([r["p_value"] for _, r in steps], len(GRID))
        first = holm_first_step([r["p_value"] for _, r in steps], len(GRID), LEVEL)
        table.append({"agent": label, "epsilon": epsilon, "predicted": predicted["predicted_kstar"],
                      "predicted_at": predicted.get("predicted_at"),
                      "measured": None if first is None else steps[first][0],
                      "measured_uncorrected": next((K for K, r in steps if r["p_value"] < LEVEL), None),
                      "measured_up_to": max((K for K, _ in steps), default=None),
                      "snr": predicted["snr"], "provenance": {str(K): recorded(r) for K, r in steps},
                      "last_20": {str(K): [float(np.mean(r["agent_last_per_episode"])),
                                           float(np.mean(r["control_last_per_episode"])), r["p_value"], holm,
                                           exact_sign_flip_p_value(r["agent_last_per_episode"],
                                                                   r["control_last_per_episode"])]
                                  for (K, r), holm in zip(steps, adjusted, strict=True)}})
    return table


def command_plot(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = kstar_table()
    (OUT / "kstar.json").write_text(json.dumps({"grid": list(GRID), "rows": table}, indent=1) + "\n")
    colors = dict(zip(AGENTS, ("tab:blue", "tab:red", "tab:orange", "tab:brown", "tab:green", "tab:purple"),
                      strict=True))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.2))
    for i, label in enumerate(AGENTS):
        rows = [r for r in table if r["agent"] == label]
        if not rows:
            continue
        jitter = 1.0 + 0.06 * (i - 2.5)
        eps = [r["epsilon"] * jitter for r in rows]
        run = [(e, r) for e, r in zip(eps, rows, strict=True) if r["measured_up_to"] is not None]
        meas = [r["measured"] or 2.0 * r["measured_up_to"] for _, r in run]
        if run:
            left.plot([e for e, _ in run], meas, "o-", color=colors[label],
                      label=f"{label}: measured (↑: not by the largest K run)")
        for (e, r), m in zip(run, meas, strict=True):
            if r["measured"] is None:
                left.annotate("↑", (e, m), ha="center", va="bottom", color=colors[label])
        pred = [r["predicted"] or 2.0 * GRID[-1] for r in rows]
        left.plot(eps, pred, "s--", mfc="none", color=colors[label], label=f"{label}: predicted (z ≥ 1)")
        for r in rows:
            Ks = sorted(int(k) for k in r["snr"])
            right.plot(Ks, [r["snr"][str(k)] for k in Ks], "-", color=colors[label],
                       alpha=0.35 + 0.15 * EPSILONS.index(r["epsilon"]) if r["epsilon"] in EPSILONS else 0.5,
                       label=label if r["epsilon"] == rows[0]["epsilon"] else None)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("ε (δ = 1e-5, replace-one)")
    left.set_ylabel("K* (smallest grid K beating the no-data control)")
    left.set_yticks(GRID)
    left.legend(fontsize=6.5, loc="upper right")
    left.set_title("Where learning starts (min2021, H = 20, |A| = 100; 5 seeds)", fontsize=10)
    right.axhline(1.0, color="k", lw=0.8, ls="--", label="z = 1 (the prediction's threshold)")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("K")
    right.set_ylabel("z: the data's part of the estimated advantage / its noise (median over stages)")
    right.set_title("The account, ε = 1, 10, 100, 1000 (darker = larger ε)", fontsize=9)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(PLOT, dpi=110)
    plt.close(fig)
    print(render())
    return 0


def cells_table(table: list[dict[str, Any]]) -> str:
    """Every measured cell: the last 20% with and without users, and the tests."""
    lines = ["| agent | ε | K | last 20% per episode: with users | with no user data | t-test p | "
             "Holm-adjusted p | exact sign-flip p | learned from users |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in table:
        for K, (agent, control, p, holm, exact) in sorted(r["last_20"].items(), key=lambda item: int(item[0])):
            lines.append(f"| {r['agent']} | {r['epsilon']:g} | {_grid(int(K))} | {agent:.3f} | {control:.3f} | "
                         f"{p:.2g} | {holm:.2g} | {exact:.2g} | {'yes' if holm < LEVEL else 'no'} |")
    return "\n".join(lines) + "\n"


def render(page: Path | None = None) -> Path:
    """The results page from kstar.json alone (written by ``plot``)."""
    table = json.loads((OUT / "kstar.json").read_text())["rows"]
    figures = [OUT / "kstar.json"]
    predictions = OUT / "prediction.json"
    made = sorted({r["predicted_at"] for r in table if r.get("predicted_at")})
    if predictions.exists():
        figures.append(predictions)
        made = sorted({r["predicted_at"] for r in json.loads(predictions.read_text())["rows"] if r.get("predicted_at")})
    body = ("K* is the smallest K of the grid 10³, 10⁴, 10⁵, 10⁶ at which an agent's regret per episode over the "
            "last 20% of the episodes is significantly below its no-data control's (one-sided paired t-test over "
            f"{SEEDS} seeds; seeds `SeedSequence({BASE_SEED}).spawn({SEEDS})`), with Holm's correction over the "
            "grid's four steps: a search that tests step after step at 0.05 would let the chance of a false "
            "\"learned\" grow with the steps it tested, so a step counts when its Holm-adjusted p-value (the "
            "steps not run counting as p = 1) is below 0.05, and the family-wise error of \"learned at K*\" is "
            "0.05. Where the correction moves K*, the cell says what the uncorrected search said. Beside the "
            f"t-test, the exact paired sign-flip p-value over the 2^{SEEDS} seed assignments (no normality "
            f"assumed; it cannot go below 2^-{SEEDS} = {2.0**-SEEDS:.3g}, so with {SEEDS} seeds it could not pass "
            "the correction's 0.05/4 at any step). The benchmark: min2021 (H = 20, "
            "|A| = 100, δ = 1e-5, replace-one). In each cell the measured K*, and in brackets the signal/noise "
            "account's prediction (the smallest grid K with z ≥ 1; docs/results.md, \"Where learning starts\"); "
            "\"> 10ⁿ\": not learned at any grid K up to 10ⁿ, the largest run. The cells at 10³ and 10⁴ of the "
            "fresh and tree variants, Luyo et al. and Ngo et al. are those of docs/results/learning_controls.md. "
            + (f"The predictions were made at {', '.join(f'`{c}`' for c in made)} (`prediction.json`), before the "
               "cells at K = 10⁵ and the Honaker and factorised cells were run." if made else "").rstrip()
            + "\n\n" + markdown_table(table)
            + f"\n![K* against ε, measured and predicted; the account's z against K]({PLOT.name})\n\n"
            "### Every measured cell\n\n" + cells_table(table))
    runs = [rec for r in table for rec in (r.get("provenance") or {}).values()] or [{}]
    return write_page(page or PAGE, "Where learning starts: K*, predicted and measured", body,
                      reproduce=["python docs/make_kstar.py predict", "python docs/make_kstar.py measure",
                                 "python docs/make_kstar.py plot"],
                      render="python docs/make_kstar.py --render-only", figures=figures, runs=runs)


SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _grid(K: int | None) -> str:
    """10³, 10⁴, … for a grid K."""
    return "–" if K is None else "10" + str(int(round(math.log10(K)))).translate(SUPERSCRIPTS)


def markdown_table(table: list[dict[str, Any]]) -> str:
    """K* measured (and predicted) per agent and ε: "10⁴ (pred. 10⁵)"; "> 10⁴" where no measured K learned."""
    epsilons = sorted({r["epsilon"] for r in table})
    lines = ["| agent | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |", "|---" * (len(epsilons) + 1) + "|"]
    for label in AGENTS:
        rows = {r["epsilon"]: r for r in table if r["agent"] == label}
        if not rows:
            continue
        cells = []
        for e in epsilons:
            r = rows.get(e)
            if r is None:
                cells.append("–")
                continue
            measured = (_grid(r["measured"]) if r["measured"] is not None
                        else f"> {_grid(r['measured_up_to'])}" if r["measured_up_to"] else "not run")
            predicted = _grid(r["predicted"]) if r["predicted"] is not None else f"> {_grid(GRID[-1])}"
            moved = r.get("measured_uncorrected") not in (None, r["measured"])
            cells.append(f"{measured} (pred. {predicted})"
                         + (f"; uncorrected {_grid(r['measured_uncorrected'])}" if moved else ""))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render-only", action="store_true", help="write the results page from kstar.json only")
    sub = parser.add_subparsers(dest="command")
    predict = sub.add_parser("predict", help="the signal/noise account and its K* (prediction.json)")
    predict.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    predict.add_argument("--grid", type=int, nargs="+", default=list(GRID))
    predict.add_argument("--agents", nargs="+", default=list(AGENTS), choices=list(AGENTS))
    measure = sub.add_parser("measure", help="walk up the grid until the agent beats its no-data control")
    measure.add_argument("--max-K", dest="max_K", type=int, default=100_000)
    measure.add_argument("--seeds", type=int, default=SEEDS)
    measure.add_argument("--workers", type=int, default=2)
    measure.add_argument("--only", default=None, choices=list(AGENTS))
    measure.add_argument("--agents", nargs="+", default=list(AGENTS), choices=list(AGENTS))
    measure.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    measure.add_argument("--scheduler", default=None,
                         help="run the seeds on a Dask cluster at this address (tcp://host:port)")
    sub.add_parser("plot", help="kstar.json and docs/results/kstar.png")
    args = parser.parse_args(argv)
    if args.render_only:
        print(render())
        return 0
    if args.command is None:
        parser.error("a command is required (or --render-only)")
    args.executor = cluster_executor(measure, getattr(args, "scheduler", None))
    try:
        return {"predict": command_predict, "measure": command_measure, "plot": command_plot}[args.command](args)
    finally:
        if args.executor is not None:
            args.executor.close()


if __name__ == "__main__":
    raise SystemExit(main())
