"""``dpverify account LEDGER.json``: (ε, δ) of a recorded run by every route, per user and naive, per family;
with ``--claim``, whether the ledger meets a claim in its own measure (pure ε, (ε, δ), ρ-zCDP, μ-GDP).

Exit status: 0 (no claim, or the claim holds), 1 (the claim is refuted), 3 (undecided, or no route compares
the ledger with the claim), 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import TYPE_CHECKING

from dpverify import _validate
from dpverify._io import read_input_text
from dpverify.accounting import epsilon_routes, tightest
from dpverify.cli._args import number
from dpverify.cli._output import format_table, print_json
from dpverify.errors import InvalidParameterError
from dpverify.ledger import ACCOUNTING_MODES, NoUserTouchedWarning, PrivacyLedger

if TYPE_CHECKING:
    from dpverify.claims import ClaimComparison

EXIT_REFUTED = 1
EXIT_UNDECIDED = 3


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "account",
        help="account a ledger JSON file: rho naive and per user, epsilon by every route; check a claim",
        description="Account the releases recorded in a ledger (written by PrivacyLedger.to_json or "
        "`dpverify calibrate --write-ledger`). Exit 0: no claim, or it holds; 1: the claim is refuted; "
        "3: undecided or not comparable; 2: bad input.",
    )
    p.add_argument("ledger", help="path of a ledger JSON file")
    p.add_argument("--delta", type=number, default=None,
                   help="δ in (0, 1) (default: the claim's δ, else 1e-5)")
    p.add_argument("--accounting", default="per-user", help="per-user (default) or naive")
    p.add_argument("--claim", default=None,
                   help="a claim to check: epsilon=E (pure), epsilon=E,delta=D, rho=R (zCDP) or mu=M (GDP)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def _load_ledger(path: str) -> PrivacyLedger:
    """Read and validate a ledger file; any problem is an InvalidParameterError naming the file."""
    text = read_input_text("LEDGER", path)
    try:
        return PrivacyLedger.from_json(text)
    except InvalidParameterError as exc:
        # Name the file and the field: "LEDGER: block field 'note' is not a ledger field ...".
        raise InvalidParameterError("LEDGER", f"{path}: {exc.parameter} {exc.rule}", exc.value) from None


def run(args: argparse.Namespace) -> int:
    from dpverify.claims import PrivacyClaim

    claim = None
    if args.claim is not None:
        try:
            claim = PrivacyClaim.parse(args.claim)
        except InvalidParameterError as exc:
            raise InvalidParameterError("--claim", exc.rule, args.claim) from None
    default = claim.delta if claim is not None and claim.measure == "approximate" else 1e-5
    delta = _validate.open_unit("--delta", default if args.delta is None else args.delta)
    accounting = _validate.one_of("--accounting", args.accounting, ACCOUNTING_MODES)
    ledger = _load_ledger(args.ledger)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NoUserTouchedWarning)
        acc = ledger.account(delta, accounting)
        routes = epsilon_routes(ledger, delta, accounting)
        best = tightest(routes)
        comparison = claim.compare(ledger, accounting) if claim is not None else None
    for message in dict.fromkeys(str(w.message) for w in caught):
        print(f"dpverify account: warning: {message}", file=sys.stderr)
    code = 0 if comparison is None or comparison.status == "holds" else (
        EXIT_REFUTED if comparison.status == "refuted" else EXIT_UNDECIDED)
    if args.json:
        print_json({
            "relation": acc.relation.value, "n_releases": acc.n_releases, "n_users": acc.n_users,
            "naive_rho": acc.naive_rho, "worst_user_rho": acc.worst_user_rho, "worst_user": acc.worst_user,
            "delta": acc.delta, "accounting": acc.accounting, "epsilon": acc.epsilon,
            "routes": [vars(r) for r in routes], "tightest": vars(best),
            "families": [vars(f) for f in acc.families],
            **({"claim": _comparison_json(comparison)} if comparison is not None else {}),
        })
        return code
    print(f"{acc.n_releases} releases touching {acc.n_users} users, relation {acc.relation.value}")
    print(f"naive ρ = {acc.naive_rho:.6g}; worst user #{acc.worst_user} pays ρ = {acc.worst_user_rho:.6g}")
    print(format_table(("family", "releases", "naive rho", "worst-user rho", "mechanisms"),
                       [(f.family, f.n_releases, f.naive_rho, f.worst_user_rho, ",".join(f.mechanisms))
                        for f in acc.families]))
    print()
    print(f"(ε, δ = {delta:g}) of the published statistics, {accounting} accounting; by the billboard lemma "
          "(Sahu 2025 Lemma 2.4) also the JDP guarantee of actions computed from them:")
    rows = [(r.route, "—" if r.epsilon is None else r.epsilon, "yes" if r.exact else "",
             r.note if r.epsilon is not None else f"does not apply: {r.note}") for r in routes]
    print(format_table(("route", "epsilon", "exact", "how"), rows))
    print(f"ε = {best.epsilon:.6g} (route {best.route}, the least of those that apply)")
    if comparison is not None:
        print()
        print(comparison.summary)
    return code


def _comparison_json(comparison: ClaimComparison) -> dict[str, object]:
    return {"measure": comparison.claim.measure, "value": comparison.claim.value, "delta": comparison.claim.delta,
            "status": comparison.status, "route": comparison.route, "ledger_value": comparison.ledger_value,
            "lower": comparison.lower, "detail": comparison.detail}
