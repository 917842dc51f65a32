"""``dpverify calibrate``: the noise of every statistic of a schedule for a target (ε, δ)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dpverify import _validate
from dpverify.calibration import (
    SCHEDULES,
    SENSITIVITY_MODELS,
    Calibration,
    calibrate,
    check_printed_calibration,
    dp_lsvi_ucbpp_schedule,
    ldp_ucrl_vtr_schedule,
)
from dpverify.cli._args import count, number
from dpverify.cli._output import format_table, print_json
from dpverify.conversions import CONVERSIONS
from dpverify.errors import InvalidParameterError
from dpverify.ledger import ACCOUNTING_MODES
from dpverify.neighbouring import Neighbouring


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="noise calibration for a target (epsilon, delta) (default: DP-LSVI-UCB++ at the paper's settings)",
        description="Calibrate the noise of every statistic a private agent releases so that the whole run "
        "is (ε, δ)-DP (JDP via the billboard lemma for DP-LSVI-UCB++; per-user LDP for LDP-UCRL-VTR).",
    )
    p.add_argument("--epsilon", type=number, default=1.0, help="target ε > 0 (default 1)")
    p.add_argument("--delta", type=number, default=1e-5, help="target δ in (0, 1) (default 1e-5)")
    p.add_argument("--horizon", type=count, default=20, help="H, stages per episode (default 20, Sahu 2025 §4)")
    p.add_argument("--episodes", type=count, default=1000, help="K, episodes = users (default 1000)")
    p.add_argument("--dim", type=count, default=10, help="d, feature dimension (default 10)")
    p.add_argument("--schedule", default="dp-lsvi-ucb++", help=f"one of {', '.join(SCHEDULES)}")
    p.add_argument("--sensitivity", default=None,
                   help="paper or derived (dp-lsvi-ucb++ only; default derived). Both are always shown side by side.")
    p.add_argument("--conversion", default="exact", help=f"one of {', '.join(CONVERSIONS)} (default exact)")
    p.add_argument("--accounting", default="per-user", help="per-user (default) or naive (the papers' 4HK count)")
    p.add_argument("--relation", default="replace-one", help="replace-one (default; the JDP/LDP relation) or add-remove-one")
    p.add_argument("--write-ledger", metavar="PATH", default=None, help="also write the calibrated run's ledger as JSON")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def _validated(args: argparse.Namespace) -> dict[str, Any]:
    schedule = _validate.one_of("--schedule", args.schedule, SCHEDULES)
    if args.sensitivity is not None and schedule != "dp-lsvi-ucb++":
        raise InvalidParameterError("--sensitivity", "applies only to --schedule dp-lsvi-ucb++", args.sensitivity)
    return {
        "epsilon": _validate.positive("--epsilon", args.epsilon),
        "delta": _validate.open_unit("--delta", args.delta),
        "horizon": _validate.integer("--horizon", args.horizon, minimum=1),
        "episodes": _validate.integer("--episodes", args.episodes, minimum=1),
        "dim": _validate.integer("--dim", args.dim, minimum=1),
        "schedule": schedule,
        "sensitivity": _validate.one_of("--sensitivity", args.sensitivity or "derived", SENSITIVITY_MODELS),
        "conversion": _validate.one_of("--conversion", args.conversion, CONVERSIONS),
        "accounting": _validate.one_of("--accounting", args.accounting, ACCOUNTING_MODES),
        "relation": _relation(args.relation),
    }


def _relation(value: str) -> Neighbouring:
    try:
        return Neighbouring.parse(value)
    except InvalidParameterError as exc:
        raise InvalidParameterError("--relation", exc.rule, value) from None


def _calibration_dict(c: Calibration) -> dict[str, Any]:
    return {
        "schedule": c.schedule.name, "conversion": c.conversion, "accounting": c.accounting,
        "rho": c.rho, "rho0": c.rho0, "releases_counted": c.releases_counted, "total_releases": c.total_releases,
        "accounted_epsilon": c.accounted_epsilon,
        "statistics": [
            {"family": s.spec.family, "description": s.spec.description, "kind": s.spec.kind, "dim": s.spec.dim,
             "sensitivity": s.spec.sensitivity, "noise_std": s.noise_std, "mechanism": s.mechanism.to_dict()}
            for s in c.statistics
        ],
        "assumptions": list(c.schedule.assumptions),
    }


def run(args: argparse.Namespace) -> int:
    v = _validated(args)
    H, K, d = v["horizon"], v["episodes"], v["dim"]
    if v["schedule"] == "dp-lsvi-ucb++":
        schedules = {m: dp_lsvi_ucbpp_schedule(H, K, d, m, v["relation"]) for m in SENSITIVITY_MODELS}
        headline = v["sensitivity"]
    else:
        schedules = {"ldp": ldp_ucrl_vtr_schedule(H, K, d, v["relation"])}
        headline = "ldp"
    main = {c: calibrate(schedules[headline], v["epsilon"], v["delta"], c, v["accounting"]) for c in CONVERSIONS}
    chosen = {m: calibrate(s, v["epsilon"], v["delta"], v["conversion"], v["accounting"]) for m, s in schedules.items()}
    printed = (
        check_printed_calibration(H, K, d, v["epsilon"], v["delta"], v["relation"])
        if v["schedule"] == "dp-lsvi-ucb++" else None
    )
    if args.write_ledger:
        try:
            Path(args.write_ledger).write_text(chosen[headline].ledger().to_json(), encoding="utf-8")
        except OSError as exc:
            raise InvalidParameterError("--write-ledger", f"must be a writable path ({exc.strerror})", args.write_ledger) from None
    if args.json:
        payload: dict[str, Any] = {
            "settings": {k: (x.value if isinstance(x, Neighbouring) else x) for k, x in v.items()},
            "by_conversion": {c: _calibration_dict(cal) for c, cal in main.items()},
            "by_sensitivity_model": {m: _calibration_dict(cal) for m, cal in chosen.items()},
        }
        if printed is not None:
            payload["paper_printed_noise"] = {
                "relation": printed.relation.value, "rho0": printed.rho0, "noise_std": printed.printed_noise_std,
                "claimed_rho": printed.claimed_rho, "true_rho": printed.true_rho,
                "claimed_epsilon": printed.claimed_epsilon, "true_epsilon": printed.true_epsilon,
                "falls_short": printed.falls_short,
            }
        print_json(payload)
        return 0
    _print_text(v, main, chosen, printed, headline)
    return 0


def _print_text(v: dict[str, Any], main: dict[str, Calibration], chosen: dict[str, Calibration], printed: Any, headline: str) -> None:
    head = main[v["conversion"]]
    print(f"{head.schedule.name}: target (ε = {v['epsilon']:g}, δ = {v['delta']:g}), H = {v['horizon']}, "
          f"K = {v['episodes']}, d = {v['dim']}, relation {v['relation'].value}")
    print(f"{head.total_releases} releases; {v['accounting']} accounting counts {head.releases_counted} "
          f"(the releases touching the worst user)" if v["accounting"] == "per-user" else
          f"{head.total_releases} releases; naive accounting counts all of them")
    print()
    exact_sigma = main["exact"].statistics[0].noise_std
    print(format_table(
        ("conversion", "rho", "rho0", f"std of {main['exact'].statistics[0].spec.family}", "std / exact std", "accounted eps"),
        [(c, cal.rho, cal.rho0, cal.statistics[0].noise_std, cal.statistics[0].noise_std / exact_sigma, cal.accounted_epsilon)
         for c, cal in main.items()],
    ))
    print()
    if headline == "ldp":
        cal = chosen["ldp"]
        print(f"Per statistic ({v['conversion']} conversion):")
        print(format_table(("statistic", "kind", "sensitivity", "noise std"),
                           [(s.spec.family, s.spec.kind, s.spec.sensitivity, s.noise_std) for s in cal.statistics]))
    else:
        paper, derived = chosen["paper"], chosen["derived"]
        print(f"Per statistic ({v['conversion']} conversion), both sensitivity models; headline model: {headline}")
        rows = []
        for sp, sd in zip(paper.statistics, derived.statistics):
            rows.append((sp.spec.family, sp.spec.kind, sp.spec.sensitivity, sp.noise_std,
                         sd.spec.sensitivity, sd.noise_std, sp.noise_std / sd.noise_std))
        print(format_table(("statistic", "kind", "Δ paper", "std paper", "Δ derived", "std derived", "paper/derived"), rows))
        print("(vector std = σ per coordinate; symmetric-matrix std = s of Z in (Z + Zᵀ)/√2)")
    print()
    print("Assumptions:")
    for a in chosen[headline].schedule.assumptions:
        print(f"  - {a}")
    if printed is not None:
        print()
        verdict = "FALLS SHORT of its claim" if printed.falls_short else "meets its claim"
        print(f"Sahu 2025's printed noise (Alg. 1 line 1, ρ by Lemma 2.1, ρ0 = ρ/(4HK)) under {printed.relation.value}: {verdict}.")
        print(f"  claimed ρ = {printed.claimed_rho:.6g}; true worst-user ρ = {printed.true_rho:.6g} "
              f"(the GOE release costs ‖ΔG‖_F²·ρ0 with ‖ΔG‖_F = {chosen['paper'].statistics[3].spec.sensitivity:.4g})")
        print("  true ε of the printed noise: " + ", ".join(f"{c} {e:.4g}" for c, e in printed.true_epsilon.items())
              + f" (claimed {printed.claimed_epsilon:g})")
