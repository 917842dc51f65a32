"""``dpverify account LEDGER.json``: (ε, δ) of a recorded run, per user and naive, per family."""

from __future__ import annotations

import argparse
import sys
import warnings

from dpverify import _validate
from dpverify._io import read_input_text
from dpverify.cli._args import number
from dpverify.cli._output import format_table, print_json
from dpverify.errors import InvalidParameterError
from dpverify.ledger import ACCOUNTING_MODES, NoUserTouchedWarning, PrivacyLedger


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "account",
        help="account a ledger JSON file: rho naive and per user, epsilon by every conversion",
        description="Account the releases recorded in a ledger (written by PrivacyLedger.to_json or "
        "`dpverify calibrate --write-ledger`).",
    )
    p.add_argument("ledger", help="path of a ledger JSON file")
    p.add_argument("--delta", type=number, default=1e-5, help="δ in (0, 1) (default 1e-5)")
    p.add_argument("--accounting", default="per-user", help="per-user (default) or naive")
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
    delta = _validate.open_unit("--delta", args.delta)
    accounting = _validate.one_of("--accounting", args.accounting, ACCOUNTING_MODES)
    ledger = _load_ledger(args.ledger)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NoUserTouchedWarning)
        acc = ledger.account(delta, accounting)
    for message in dict.fromkeys(str(w.message) for w in caught):
        print(f"dpverify account: warning: {message}", file=sys.stderr)
    if args.json:
        print_json({
            "relation": acc.relation.value, "n_releases": acc.n_releases, "n_users": acc.n_users,
            "naive_rho": acc.naive_rho, "worst_user_rho": acc.worst_user_rho, "worst_user": acc.worst_user,
            "delta": acc.delta, "accounting": acc.accounting, "epsilon": acc.epsilon,
            "families": [vars(f) for f in acc.families],
        })
        return 0
    print(f"{acc.n_releases} releases touching {acc.n_users} users, relation {acc.relation.value}")
    print(f"naive ρ = {acc.naive_rho:.6g}; worst user #{acc.worst_user} pays ρ = {acc.worst_user_rho:.6g}")
    print(format_table(("family", "releases", "naive rho", "worst-user rho", "mechanisms"),
                       [(f.family, f.n_releases, f.naive_rho, f.worst_user_rho, ",".join(f.mechanisms))
                        for f in acc.families]))
    print()
    print(f"(ε, δ = {delta:g}) of the published statistics, {accounting} accounting; by the billboard lemma "
          "(Sahu 2025 Lemma 2.4) also the JDP guarantee of actions computed from them:")
    print(format_table(("conversion", "epsilon"), list(acc.epsilon.items())))
    return 0
