r"""``dpverify bounds``: the registry of published regret bounds — list, show, evaluate, compare,
check for consistency, plot.

Examples::

    dpverify bounds list
    dpverify bounds show dp-lsvi-ucb++/theorem-3.2
    dpverify bounds eval ngo-2022/linear-mdp --d 10 --H 20 --K 1e5 --epsilon 1
    dpverify bounds compare luyo-2021/linear-mdp dp-lsvi-ucb++/theorem-3.2 --d 10 --H 20 --epsilon 1 --delta 1e-5
    dpverify bounds check
    dpverify bounds plot ngo-2022/linear-mdp dp-lsvi-ucb++/theorem-3.2 --d 10 --H 20 --epsilon 1 --delta 1e-5 \
        --out fig.png
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from dpverify.cli._args import number
from dpverify.cli._output import format_table, print_json
from dpverify.errors import InvalidParameterError

if TYPE_CHECKING:  # the bounds modules import sympy: loaded only by the sub-commands that need them
    from dpverify.bounds.comparison import Comparison, Region

_VARIABLE_HELP = {
    "d": "feature dimension (>= 1)",
    "H": "horizon (>= 1)",
    "K": "number of episodes (>= 1)",
    "T": "number of steps (>= 1); defaults to K*H and must equal it if K and H are given",
    "epsilon": "privacy ε (> 0)",
    "delta": "privacy δ in (0, 1) (the failure probability where an entry's note says so)",
    "S": "number of states (>= 1, tabular bounds)",
    "A": "number of actions (>= 1, tabular bounds)",
}


def _add_variables(p: argparse.ArgumentParser, skip: tuple[str, ...] = ()) -> None:
    group = p.add_argument_group("bound variables")
    for name, text in _VARIABLE_HELP.items():
        if name in skip:
            continue
        flags = [f"--{name}"] + (["--eps"] if name == "epsilon" else [])
        group.add_argument(*flags, dest=name, type=number, default=None, metavar="X", help=text)


def _values(args: argparse.Namespace) -> dict[str, float]:
    return {name: getattr(args, name) for name in _VARIABLE_HELP if getattr(args, name, None) is not None}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bounds",
        help="published regret bounds: list, show, eval, compare, check, plot",
        description="The registry of regret bounds for private RL as sympy expressions "
        "(hidden constants of Õ/Ω taken as 1, T = K*H).",
    )
    actions = p.add_subparsers(dest="bounds_action", metavar="ACTION")
    actions.required = True

    q = actions.add_parser("list", help="list the registered bounds", description="List the registered bounds.")
    q.add_argument("--setting", help="only this setting (e.g. 'linear MDP')")
    q.add_argument("--privacy", help="only this privacy model (none, JDP, LDP)")
    q.add_argument("--kind", help="only upper or lower bounds")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(handler=_run_list)

    q = actions.add_parser("show", help="show one bound in full",
                           description="Show one bound: expression, source, rates, terms.")
    q.add_argument("name", help="machine name, e.g. dp-lsvi-ucb++/theorem-3.2")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(handler=_run_show)

    q = actions.add_parser("eval", help="evaluate a bound at numbers",
                           description="Evaluate a bound (hidden constants = 1).")
    q.add_argument("name", help="machine name")
    _add_variables(q)
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(handler=_run_eval)

    q = actions.add_parser(
        "compare", help="ratio and crossovers of two bounds",
        description="Ratio of bound A to bound B, where they cross in one variable (symbolic when sympy "
        "can, numeric otherwise, verified by substitution), and optionally the (K, ε) region where A < B.",
    )
    q.add_argument("a", help="machine name of bound A")
    q.add_argument("b", help="machine name of bound B")
    q.add_argument("--over", default="K", help="variable to find crossovers in: K (default), epsilon, d, H, S, A")
    q.add_argument("--search", nargs=2, type=number, metavar=("LOW", "HIGH"), help="interval searched for crossovers")
    q.add_argument("--region", action="store_true", help="also report the (K, ε) grid region where A < B")
    _add_variables(q)
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(handler=_run_compare)

    q = actions.add_parser("check", help="run every consistency check",
                           description="Run every consistency check of the registry.")
    q.add_argument("--strict", action="store_true", help="exit with status 1 if any check is inconsistent or flagged")
    q.add_argument("--json", action="store_true", help="print JSON")
    q.set_defaults(handler=_run_check)

    q = actions.add_parser(
        "plot", help="log-log plot of bounds against K",
        description="Plot bounds against K (log-log); the privacy-cost term dashed, the non-private term dotted.",
    )
    q.add_argument("names", nargs="+", help="machine names")
    q.add_argument("--out", required=True, help="output image file (e.g. fig.png; an existing file only with --force)")
    q.add_argument("--force", action="store_true", help="replace an existing --out file")
    q.add_argument("--k-min", type=number, default=1e2, help="smallest K (default 1e2)")
    q.add_argument("--k-max", type=number, default=1e8, help="largest K (default 1e8)")
    _add_variables(q, skip=("K", "T"))
    q.set_defaults(handler=_run_plot)


def _entry_dict(entry) -> dict[str, object]:
    from dpverify.bounds.formatting import expression_text
    from dpverify.bounds.rates import entry_rates, split

    parts = split(entry)
    return {
        "name": entry.name,
        "algorithm": entry.algorithm,
        "reference": entry.reference,
        "setting": entry.setting,
        "privacy": entry.privacy,
        "privacy_definition": entry.privacy_definition,
        "kind": entry.kind,
        "notation": entry.notation,
        "expression": str(entry.expression),
        "text": f"{entry.notation}({expression_text(entry.expression)})",
        "stated": entry.stated,
        "source": {
            "document": entry.source.document,
            "location": entry.source.location,
            "text": entry.source.text,
            "lines": list(entry.source.lines),
            "quote": entry.source.quote,
        },
        "variables": list(entry.symbols),
        "rates": {k: str(v) for k, v in entry_rates(entry).items()},
        "rates_in_K": {k: str(v) for k, v in entry_rates(entry, in_k=True).items()},
        "non_private_term": str(parts.non_private),
        "privacy_term": str(parts.privacy),
        "combine": parts.combine,
        "base": entry.base,
        "note": entry.note,
    }


def _run_list(args: argparse.Namespace) -> int:
    from dpverify.bounds.formatting import expression_text
    from dpverify.bounds.registry import entries

    found = entries(setting=args.setting, privacy=args.privacy, kind=args.kind)
    if args.json:
        print_json([_entry_dict(e) for e in found])
        return 0
    rows = [(e.name, e.setting, e.privacy, e.kind, f"{e.notation}({expression_text(e.expression)})") for e in found]
    print(format_table(("name", "setting", "privacy", "kind", "bound"), rows))
    return 0


def _run_show(args: argparse.Namespace) -> int:
    from dpverify.bounds.formatting import expression_text, rates_text
    from dpverify.bounds.rates import entry_rates, split
    from dpverify.bounds.registry import get

    entry = get(args.name)
    if args.json:
        print_json(_entry_dict(entry))
        return 0
    parts = split(entry)
    src = entry.source
    lines_text = ", ".join(map(str, src.lines))
    where = f"line {lines_text} of the text of {src.document}" if src.text else "not checked against a paper text"
    lines = [
        entry.name,
        f"  algorithm:  {entry.algorithm} ({entry.reference})",
        f"  setting:    {entry.setting}; privacy: {entry.privacy} ({entry.privacy_definition}); {entry.kind} bound",
        f"  bound:      {entry.notation}({expression_text(entry.expression)})",
        f"  as printed: {entry.stated}",
        f"  source:     {src.document}, {src.location} ({where})",
        f"  rates:      {rates_text(entry_rates(entry))}",
        f"  rates in K: {rates_text(entry_rates(entry, in_k=True))} (T = KH; ε → 0)",
        f"  non-private term: {expression_text(parts.non_private)}",
        f"  privacy term:     {expression_text(parts.privacy)} (combined by {parts.combine})",
    ]
    if entry.base:
        lines.append(f"  base algorithm:   {entry.base}")
    if entry.note:
        lines.append(f"  note: {entry.note}")
    print("\n".join(lines))
    return 0


def _run_eval(args: argparse.Namespace) -> int:
    from dpverify.bounds.evaluation import evaluate

    result = evaluate(args.name, **_values(args))
    if args.json:
        print_json(result.as_dict())
        return 0
    fixed = ", ".join(f"{k}={v:g}" for k, v in result.values.items())
    print(f"{result.name} at {fixed}")
    print(format_table(
        ("quantity", "value"),
        [("bound", result.value), ("non-private term", result.non_private),
         (f"privacy term (combined by {result.combine})", result.privacy)],
    ))
    return 0


def _run_compare(args: argparse.Namespace) -> int:
    from dpverify.bounds.comparison import compare, improvement_region

    if args.a == args.b:
        raise InvalidParameterError(
            "B", "must be a different bound from A (a bound compared with itself has no crossover)", args.b)
    values = _values(args)
    search = tuple(args.search) if args.search else None
    result = compare(args.a, args.b, over=args.over, values=values, search=search)
    region = None
    if args.region:
        if args.over != "K":
            raise InvalidParameterError("--region", "needs --over K (the region is in K and ε)", args.over)
        region = improvement_region(args.a, args.b, values=values)
    if args.json:
        payload = result.as_dict()
        if region is not None:
            payload["region"] = region.as_dict()
        print_json(payload)
    else:
        _print_comparison(result, region)
    return 0


def _print_comparison(result: Comparison, region: Region | None) -> None:
    """The text output of ``bounds compare``: ratio, growth, crossovers (closed form and numeric), region."""
    from dpverify.bounds.formatting import expression_text

    var = "ε" if result.over == "epsilon" else result.over
    print(f"A = {result.a}\nB = {result.b}")
    print(f"A/B = {expression_text(result.ratio)}")
    limit = "0" if result.over == "epsilon" else "∞"
    print(f"A/B grows like {var}^{{{result.asymptotic_exponent}}} as {var} → {limit}")
    if result.symbolic_crossovers is None:
        print(f"crossover in {var}: no closed form (numeric root finding)")
    elif not result.symbolic_crossovers:
        print(f"crossover in {var}: none (A − B never changes sign in {var})")
    else:
        for root in result.symbolic_crossovers:
            print(f"crossover in {var} (closed form, where real and positive): {expression_text(root)}")
    if result.missing:
        print(f"give {', '.join('--' + m for m in result.missing)} for numeric crossovers")
        return
    fixed = ", ".join(f"{k}={v:g}" for k, v in result.values.items())
    print(f"at {fixed}, {var} in [{result.search[0]:g}, {result.search[1]:g}]:")
    if not result.crossovers:
        print("  no crossover")
    for c in result.crossovers:
        print(f"  crossover {var} = {c.value:.6g} ({c.method}; verified by substitution)")
    for s in result.segments:
        print(f"  {s.low:.3g} < {var} < {s.high:.3g}: lower is {s.lower}")
    if region is not None:
        print(f"region where A < B: {region.summary()}")


def _run_check(args: argparse.Namespace) -> int:
    from dpverify.bounds.consistency import DEFAULT_REGION, run_all

    findings = run_all()
    problems = sum(f.is_problem for f in findings)
    if args.json:
        print_json({"region": DEFAULT_REGION.describe(), "findings": [f.as_dict() for f in findings],
                    "problems": problems})
    else:
        print(f"region of the numerical checks: {DEFAULT_REGION.describe()}")
        for f in findings:
            print(f"[{f.status}] {f.check}: {f.message}")
        print(f"{len(findings)} checks, {problems} inconsistent or flagged")
    return 1 if (args.strict and problems) else 0


#: Image formats the plot can be written in (matplotlib's common back-ends), chosen by the suffix.
_PLOT_FORMATS = (".png", ".pdf", ".svg", ".eps", ".ps", ".jpg", ".jpeg", ".tif", ".tiff", ".webp")


def _run_plot(args: argparse.Namespace) -> int:
    from pathlib import Path

    from dpverify._io import FileSet, check_output_file

    out = Path(args.out)
    if out.suffix == "":
        out = out.with_name(out.name + ".png")  # what matplotlib would write; said explicitly
    if out.suffix.lower() not in _PLOT_FORMATS:
        raise InvalidParameterError("--out", f"must end in one of {', '.join(_PLOT_FORMATS)}", args.out)
    out = check_output_file("--out", out, force=args.force)
    from dpverify.bounds.plot import plot_bounds

    with FileSet(out.parent) as files:
        written = files.write_with(out.name, lambda tmp: plot_bounds(
            args.names, tmp, values=_values(args), k_range=(args.k_min, args.k_max)))
    print(f"wrote {written.resolve()}")
    return 0
