"""Log-log plots of registered bounds against K (matplotlib, Agg backend, written to a file).

Each bound is drawn as a thick translucent line (the whole bound, hidden constants taken as 1,
T = K·H; dash-dotted for lower bounds); in the same colour its privacy-cost term — the part
containing ε (see :func:`dpverify.bounds.rates.split`) — is drawn dashed and its non-private term
dotted, so where the privacy term dominates is visible at a glance.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import sympy

from dpverify._validate import integer, positive
from dpverify.bounds.evaluation import resolve
from dpverify.bounds.rates import split
from dpverify.bounds.registry import BoundEntry, get
from dpverify.bounds.symbols import VARIABLES, in_episodes
from dpverify.errors import InvalidParameterError, NumericalError


def _curve(expr: sympy.Expr, fixed: Mapping[str, float], ks: np.ndarray) -> np.ndarray:
    expr = in_episodes(expr).subs({VARIABLES[n]: v for n, v in fixed.items()})
    f = sympy.lambdify(VARIABLES["K"], expr, modules="numpy")
    with np.errstate(all="ignore"):
        return np.broadcast_to(np.asarray(f(ks), dtype=float), ks.shape)


def plot_bounds(
    names: Sequence[BoundEntry | str],
    out: str | os.PathLike[str],
    *,
    values: Mapping[str, float],
    k_range: tuple[float, float] = (1e2, 1e8),
    points: int = 200,
    title: str | None = None,
) -> str:
    """Plot the bounds ``names`` against K at the fixed ``values`` and save the figure to ``out``.

    Args:
        names: registered entries or machine names (at least one).
        out: the output file (its extension picks the format, e.g. ``.png`` or ``.pdf``).
        values: the variables other than K (d, H, ε, δ, S, A as the bounds need them).
        k_range: the K axis; ``points`` log-spaced values.

    Returns:
        The path written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    entries = [get(n) if isinstance(n, str) else n for n in names]
    if not entries:
        raise InvalidParameterError("names", "must list at least one bound", names)
    lo, hi = (positive("k_range", v) for v in k_range)
    if not lo < hi:
        raise InvalidParameterError("k_range", "must be (low, high) with low < high", k_range)
    n = integer("points", points, minimum=2)
    given = {k: v for k, v in values.items() if k not in ("K", "T")}
    ks = np.geomspace(lo, hi, n)
    fig, ax = plt.subplots(figsize=(10.5, 5.0))
    try:
        for i, entry in enumerate(entries):
            needed = tuple(s for s in entry.symbols if s not in ("K", "T"))
            if "T" in entry.symbols and "H" not in needed:
                needed = needed + ("H",)
            fixed = resolve(needed, given, entry_name=f"bound {entry.name}")
            total = _curve(entry.expression, fixed, ks)
            if not np.all(np.isfinite(total) & (total > 0)):
                raise NumericalError(f"bound {entry.name} is not finite and positive on the K range")
            color = f"C{i % 10}"
            style = "-" if entry.kind == "upper" else "-."
            ax.loglog(ks, total, style, color=color, lw=3, alpha=0.45, label=f"{entry.name} ({entry.notation})")
            parts = split(entry)
            if parts.privacy != 0:
                ax.loglog(ks, _curve(parts.privacy, fixed, ks), "--", color=color, lw=1.4, zorder=3)
            if parts.privacy != 0 and parts.non_private != 0:
                ax.loglog(ks, _curve(parts.non_private, fixed, ks), ":", color=color, lw=1.4, zorder=3)
        key = [
            Line2D([], [], color="0.4", lw=3, alpha=0.45, label="whole bound (lower bounds dash-dotted)"),
            Line2D([], [], color="0.4", ls="--", lw=1.4, label="privacy-cost term (with ε)"),
            Line2D([], [], color="0.4", ls=":", lw=1.4, label="non-private term"),
        ]
        handles, _ = ax.get_legend_handles_labels()
        fixed_text = ", ".join(
            f"{'ε' if k == 'epsilon' else ('δ' if k == 'delta' else k)}={v:g}" for k, v in given.items()
        )
        ax.set_xlabel("K (episodes)")
        ax.set_ylabel("bound (hidden constants = 1)")
        ax.set_title(title or f"Regret bounds vs K ({fixed_text})", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(handles=handles + key, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
        fig.tight_layout()
        fig.savefig(out, dpi=120)
    finally:
        plt.close(fig)
    return os.fspath(out)
