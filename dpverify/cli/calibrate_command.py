"""``dpverify calibrate``: the noise of every statistic of a schedule for a target (ε, δ)."""

from __future__ import annotations

import argparse
from typing import Any

from dpverify.cli import calibrate_mechanism_command
from dpverify.cli._args import count, number
from dpverify.cli._output import format_table, print_json
from dpverify.cli.calibrate_mechanism_command import MECHANISMS
from dpverify.errors import InvalidParameterError

#: Names listed in --help without importing the library (checked against it by the tests).
_SCHEDULES = ("dp-lsvi-ucb++", "ldp-ucrl-vtr", "jdp-linucb", "ldp-linucb", "dp-ucb")
_CONVERSIONS = ("bun-steinke", "cks", "exact", "pure")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "calibrate",
        help="noise calibration for a target (epsilon, delta) (default: DP-LSVI-UCB++ at the paper's settings)",
        description="Calibrate the noise of every statistic a private agent releases so that the whole run "
        "is (ε, δ)-DP (JDP via the billboard lemma for DP-LSVI-UCB++; per-user LDP for LDP-UCRL-VTR).",
    )
    p.add_argument("--epsilon", type=number, default=1.0, help="target ε in [1e-6, 1e6] (default 1)")
    p.add_argument("--delta", type=number, default=1e-5, help="target δ in (0, 1) (default 1e-5)")
    p.add_argument("--horizon", type=count, default=None, help="H, stages per episode (default 20, Sahu 2025 §4)")
    p.add_argument("--episodes", type=count, default=None, help="K, episodes = users (default 1000)")
    p.add_argument("--dim", type=count, default=None,
                   help="d, feature dimension (default 10); with --mechanism, coordinates per release (default 1)")
    p.add_argument("--schedule", default=None,
                   help=f"one of {', '.join(_SCHEDULES)} (default dp-lsvi-ucb++; the bandit schedules: --dim is d, "
                        "or the arms for dp-ucb, whose Laplace releases take --conversion pure, cks or bun-steinke)")
    p.add_argument("--sensitivity", default=None,
                   help="the schedule's sensitivity model: paper, derived (default) or staged "
                        "for dp-lsvi-ucb++ (paper and derived are always shown side by side); "
                        "standard (default) or staged for ldp-ucrl-vtr; with --mechanism, the mechanism's "
                        "sensitivity (a number, default 1)")
    p.add_argument("--mechanism", default=None,
                   help=f"calibrate one mechanism instead of a schedule: one of {', '.join(MECHANISMS)}, over "
                        "--compositions releases of --dim coordinates")
    p.add_argument("--compositions", type=count, default=None, help="with --mechanism: releases composed (default 1)")
    p.add_argument("--categories", type=count, default=None,
                   help="with --mechanism randomized-response: k of k-ary randomized response (default 2)")
    p.add_argument("--conversion", default=None, help=f"one of {', '.join(_CONVERSIONS)} (default exact; "
                   "pure: a pure ε-DP target, Laplace releases only; with --mechanism, pure for Laplace and "
                   "randomized response)")
    p.add_argument("--accounting", default=None, help="per-user (default) or naive (the papers' 4HK count)")
    p.add_argument("--relation", default="replace-one",
                   help="replace-one (default; the JDP/LDP relation) or add-remove-one")
    p.add_argument("--write-ledger", metavar="PATH", default=None,
                   help="also write the calibrated run's ledger as JSON (written atomically; an existing PATH only "
                        "with --force)")
    p.add_argument("--force", action="store_true", help="replace an existing --write-ledger file")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def _calibration_dict(c: Any) -> dict[str, Any]:
    return {
        "schedule": c.schedule.name, "conversion": c.conversion, "accounting": c.accounting,
        "rho": c.rho, "rho0": c.rho0, "releases_counted": c.releases_counted, "total_releases": c.total_releases,
        "accounted_epsilon": c.accounted_epsilon,
        "statistics": [
            {"family": s.spec.family, "description": s.spec.description, "kind": s.spec.kind, "dim": s.spec.dim,
             "sensitivity": s.spec.sensitivity, "noise_std": s.noise_std, "mechanism": s.mechanism.to_dict(),
             **({} if s.spec.stages is None else {"stages": list(s.spec.stages)})}
            for s in c.statistics
        ],
        "assumptions": list(c.schedule.assumptions),
    }


#: Options of one mode and their defaults: refused in the other mode, never silently ignored.
_SCHEDULE_OPTIONS = {"schedule": "dp-lsvi-ucb++", "horizon": 20, "episodes": 1000, "accounting": "per-user",
                     "write_ledger": None, "dim": 10}
_MECHANISM_OPTIONS = {"compositions": 1, "categories": 2, "dim": 1}


def _resolve_mode(args: argparse.Namespace) -> None:
    """Fill the defaults of the mode asked for (a schedule, or ``--mechanism``); an option of the other mode
    given on the command line is an error naming it."""
    mine, other = ((_MECHANISM_OPTIONS, _SCHEDULE_OPTIONS) if args.mechanism is not None
                   else (_SCHEDULE_OPTIONS, _MECHANISM_OPTIONS))
    for name in other.keys() - mine.keys():
        if getattr(args, name) is not None:
            option = "--" + name.replace("_", "-")
            where = "a schedule's" if args.mechanism is not None else "--mechanism's"
            raise InvalidParameterError(option, f"is {where} option (not accepted "
                                        f"{'with' if args.mechanism is not None else 'without'} --mechanism)",
                                        getattr(args, name))
    for name, default in mine.items():
        if getattr(args, name) is None:
            setattr(args, name, default)


def run(args: argparse.Namespace) -> int:
    from dpverify._io import atomic_write_text, check_output_file
    from dpverify.agents.registry import named_schedule
    from dpverify.calibration_report import calibration_report, validate_settings

    _resolve_mode(args)
    if args.mechanism is not None:
        return calibrate_mechanism_command.run(args)
    schedule = named_schedule(args.schedule, parameter="--schedule")
    settings = validate_settings(args.epsilon, args.delta, args.horizon, args.episodes, args.dim, schedule,
                                 args.sensitivity, args.conversion, args.accounting, args.relation)
    ledger_path = (check_output_file("--write-ledger", args.write_ledger, force=args.force) if args.write_ledger
                   else None)
    report = calibration_report(settings)
    if ledger_path is not None:
        atomic_write_text(ledger_path, report.headline.ledger().to_json())
    if args.json:
        payload: dict[str, Any] = {
            "settings": report.settings.to_dict(),
            "by_conversion": {c: _calibration_dict(cal) for c, cal in report.by_conversion.items()},
            "by_sensitivity_model": {m: _calibration_dict(cal) for m, cal in report.by_sensitivity_model.items()},
        }
        if report.printed is not None:
            check = report.printed.check
            payload["paper_printed_noise"] = {
                "relation": check.relation.value, "rho0": check.rho0, "noise_std": check.printed_noise_std,
                "claimed_rho": check.claimed_rho, "true_rho": check.true_rho,
                "claimed_epsilon": check.claimed_epsilon, "true_epsilon": check.true_epsilon,
                "falls_short": check.falls_short,
                "falls_short_means": "by the paper's own route: its sensitivities and the Bun-Steinke conversion",
                "accounts": [vars(a) for a in report.printed.accounts],
                "printed_algorithm_failures": list(report.printed.algorithm_failures),
            }
        print_json(payload)
        return 0
    _print_text(report)
    return 0


def _print_text(report: Any) -> None:
    from dpverify.calibration_report import ratio_text

    v, lead = report.settings, report.lead_family
    head = report.by_conversion[v.conversion]
    print(f"{head.schedule.name}: target (ε = {v.epsilon:g}, δ = {v.delta:g}), H = {head.schedule.stages}, "
          f"K = {v.episodes}, d = {v.dim}, relation {v.relation.value}")
    print(f"{head.total_releases} releases; {v.accounting} accounting counts {head.releases_counted} "
          f"(the releases touching the worst user)" if v.accounting == "per-user" else
          f"{head.total_releases} releases; naive accounting counts all of them")
    print()
    reference = "exact" if "exact" in report.by_conversion else v.conversion  # exact applies to Gaussians only
    reference_sigma = report.statistic(report.by_conversion[reference], lead).noise_std
    rows = []
    for c, cal in report.by_conversion.items():
        std = report.statistic(cal, lead).noise_std
        rows.append((c, cal.rho, cal.rho0, std, std / reference_sigma, cal.accounted_epsilon))
    print(f"Sensitivity model {report.headline_model}, every conversion:")
    print(format_table(("conversion", "rho", "rho0", f"std of {lead}", f"std / {reference} std", "accounted eps"),
                       rows))
    print()
    if report.headline_model not in ("paper", "derived"):
        cal = report.by_sensitivity_model[report.headline_model]
        print(f"Per statistic ({v.conversion} conversion):")
        print(format_table(("statistic", "kind", "sensitivity", "noise std"),
                           [(s.spec.key, s.spec.kind, s.spec.sensitivity, s.noise_std) for s in cal.statistics]))
    else:
        paper, derived = report.by_sensitivity_model["paper"], report.by_sensitivity_model["derived"]
        print(f"Per statistic ({v.conversion} conversion), both sensitivity models; "
              f"headline model: {report.headline_model}")
        model_rows = []
        for sp in paper.statistics:
            sd = report.statistic(derived, sp.spec.family)
            model_rows.append((sp.spec.family, sp.spec.kind, sp.spec.sensitivity, sp.noise_std,
                               sd.spec.sensitivity, sd.noise_std, sp.noise_std / sd.noise_std))
        print(format_table(("statistic", "kind", "Δ paper", "std paper", "Δ derived", "std derived", "paper/derived"),
                           model_rows))
        print("(vector std = σ per coordinate; symmetric-matrix std = s of Z in (Z + Zᵀ)/√2)")
    print()
    print("Assumptions:")
    for a in report.headline.schedule.assumptions:
        print(f"  - {a}")
    printed = report.printed
    if printed is None:
        return
    check = printed.check
    route = printed.papers_route
    gram = report.statistic(report.by_sensitivity_model["paper"], "gram").spec.sensitivity
    print()
    print(f"Sahu 2025's printed noise (Alg. 1 line 1: ρ by Lemma 2.1, ρ0 = ρ/(4HK)), per-user accounting, "
          f"relation {check.relation.value}, claimed ε = {check.claimed_epsilon:g}:")
    verdict = "FALLS SHORT of its claim" if not route.meets_claim else "meets its claim"
    print(f"  by the paper's own route (its sensitivities + Bun-Steinke): {verdict}: ε = {route.epsilon:.4g}")
    print(f"  (claimed ρ = {check.claimed_rho:.6g}; true worst-user ρ = {check.true_rho:.6g}: the Gram release "
          f"costs ‖ΔG‖_F²·ρ0 with ‖ΔG‖_F = {gram:.4g})")
    print("  Each (sensitivity model, conversion):")
    print(format_table(
        ("sensitivity model", "conversion", "epsilon", "against the claim"),
        [(a.sensitivity_model, a.conversion, a.epsilon, ratio_text(a.epsilon, check.claimed_epsilon))
         for a in printed.accounts],
    ))
    print("  Whatever the row, the algorithm as printed is not private (the rows assume fresh noise per release "
          "and targets clipped to [0, H]):")
    for failure in printed.algorithm_failures:
        print(f"  - {failure}")
