"""Files of an agent audit: the result as JSON and a plot of the empirical trade-off against the claim.

The plot shows, in the (FPR, FNR) plane of tests between D and D′ (Dong, Roth & Su 2019, §2), the
claimed trade-off curve — G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) for a Gaussian (μ-GDP) claim, otherwise the
boundary of the (ε, δ) region f(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)} (Kairouz, Oh & Viswanath
2015) — and each tested point: the observed error rates and the box up to their one-sided upper confidence
bounds (the corner is what the bound uses). A box entirely below the curve refutes the claim; the further
above it, the more room the agent has. matplotlib is imported only here.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from dpverify.conversions import mu_for_epsilon_delta
from dpverify.jsonable import to_jsonable


def claimed_curve(alpha: Any, epsilon: float, delta: float, mu: float | None) -> np.ndarray:
    """The smallest FNR the claim allows at FPR = α: G_μ for a Gaussian claim (``mu`` finite), otherwise
    the boundary of the (ε, δ) region (module docstring)."""
    alpha = np.asarray(alpha, dtype=float)
    if mu is not None and math.isfinite(mu):
        from scipy import special

        return np.asarray(special.ndtr(special.ndtri(np.clip(1.0 - alpha, 0.0, 1.0)) - mu))
    e = math.exp(min(epsilon, 700.0))
    return np.maximum.reduce([np.zeros_like(alpha), 1.0 - delta - e * alpha, (1.0 - delta - alpha) / e])


def write_outputs(result: Any, out_dir: Path) -> dict[str, Path]:
    """Write ``result.json`` and ``tradeoff.png`` into ``out_dir`` (created if needed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"json": out_dir / "result.json", "plot": out_dir / "tradeoff.png"}
    paths["json"].write_text(json.dumps(to_jsonable(result.to_dict()), indent=2) + "\n", encoding="utf-8")
    _plot_tradeoff(result, paths["plot"])
    return paths


def _plot_tradeoff(result: Any, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    mu = None
    if result.gaussian_claim:

        mu = mu_for_epsilon_delta(result.claimed_epsilon, result.delta)
    alpha = np.concatenate([np.geomspace(1e-6, 1e-2, 200), np.linspace(1e-2, 1.0, 300)])
    fig, ax = plt.subplots(figsize=(5.5, 5.0))
    label = (f"claim: G_mu, mu = {mu:.3g}" if mu is not None
             else f"claim: ({result.claimed_epsilon:g}, {result.delta:g})-DP region")
    ax.plot(alpha, claimed_curve(alpha, result.claimed_epsilon, result.delta, mu), color="black", label=label)
    ax.fill_between(alpha, 0, claimed_curve(alpha, result.claimed_epsilon, result.delta, mu), color="0.9",
                    label="excluded by the claim")
    names = ["Clopper-Pearson test", "mu-GDP test"] if result.audit is not None else ["one-run guesses"]
    colours = ["tab:red", "tab:blue", "tab:green"]
    for (fpr, fnr, fpr_u, fnr_u), name, colour in zip(result.points, names, colours, strict=False):
        ax.add_patch(Rectangle((fpr, fnr), max(fpr_u - fpr, 1e-4), max(fnr_u - fnr, 1e-4), alpha=0.3,
                               color=colour))
        ax.plot([fpr], [fnr], "o", color=colour, label=f"{name}: observed")
        ax.plot([fpr_u], [fnr_u], "x", color=colour, label=f"{name}: upper confidence corner")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("false-positive rate (type I error)")
    ax.set_ylabel("false-negative rate (type II error)")
    spec = result.spec
    ax.set_title(f"{spec.agent.rsplit(':', 1)[-1]} ({spec.notion}, {spec.route}): {result.verdict}\n"
                 f"epsilon lower bound {result.epsilon_lower_bound:.3g} vs claimed {result.claimed_epsilon:g}",
                 fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
