"""``dpverify convert``: one ρ-zCDP (or μ-GDP) budget converted to (ε, δ) by every route."""

from __future__ import annotations

import argparse
import math

from dpverify import _validate
from dpverify.cli._args import number
from dpverify.cli._output import format_table, print_json
from dpverify.conversions import CONVERSION_REGISTRY, epsilon_from_rho
from dpverify.errors import InvalidParameterError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "convert",
        help="convert a zCDP (or GDP) budget to (epsilon, delta) by every conversion",
        description="Convert ρ-zCDP (or μ-GDP via --mu) to (ε, δ)-DP by Bun–Steinke, CKS and the exact Gaussian "
                    "profile.",
    )
    budget = p.add_mutually_exclusive_group(required=True)
    budget.add_argument("--rho", type=number, help="ρ of ρ-zCDP (>= 0)")
    budget.add_argument("--mu", type=number, help="μ of μ-GDP (>= 0); ρ = μ²/2")
    p.add_argument("--delta", type=number, default=1e-5, help="δ in (0, 1) (default 1e-5)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.rho is not None:
        rho = _validate.non_negative("--rho", args.rho)
    else:
        mu = _validate.non_negative("--mu", args.mu)
        rho = mu * mu / 2.0
        if math.isinf(rho):
            raise InvalidParameterError("--mu", "is too large (μ²/2 overflows)", args.mu)
    delta = _validate.open_unit("--delta", args.delta)
    notes = {name: route.source for name, route in CONVERSION_REGISTRY.items()}  # every registered conversion
    rows = [(c, epsilon_from_rho(rho, delta, c), note) for c, note in notes.items()]
    if args.json:
        print_json({"rho": rho, "mu": math.sqrt(2) * math.sqrt(rho), "delta": delta,
                    "epsilon": {c: e for c, e, _ in rows}, "notes": notes})
        return 0
    print(f"ρ = {rho:.6g} (μ = {math.sqrt(2) * math.sqrt(rho):.6g}), δ = {delta:g}")
    print(format_table(("conversion", "epsilon", "source"), rows))
    return 0
