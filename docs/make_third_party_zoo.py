"""Run ``dpverify verify`` on every agent of the third-party zoo; write docs/results/third_party_zoo.json and print
the Markdown table of docs/auditing.md ("White-box release checks").

    python docs/make_third_party_zoo.py [--budget quick] [--episodes 1000] [--env min2021] [--only NAME ...]

Every case is a file-path agent of ``audits/third_party`` (:mod:`dpverify.audits.third_party_zoo`), claim
(ε, δ) = (1, 1e-5). A bug must come out CLAIM REFUTED with the white-box checks it is listed with failing; its
twin CLAIM CONSISTENT; the two agents whose noise does not follow the auditor's seeds INCONCLUSIVE. The exit
status is 1 when a verdict differs from the expected one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dpverify.audits.third_party_zoo import run_third_party_zoo

OUT = Path(__file__).resolve().parent / "results" / "third_party_zoo.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--budget", default="quick")
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--env", default="min2021")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    outcomes = run_third_party_zoo(args.budget, args.env, args.episodes, workers=args.workers, only=args.only)
    rows = []
    for outcome in outcomes:
        rows.append({**outcome.row(), "budget": args.budget, "episodes": args.episodes, "env": args.env,
                     "reasons": list(outcome.reasons)})
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print("\n| case | kind | verdict (expected) | white-box checks that failed / could not run | seconds |")
    print("|---|---|---|---|---|")
    for r in rows:
        found = ", ".join(r["white-box failed"]) or ", ".join(f"{n} (not run)" for n in r["white-box not run"]) or "—"
        mark = "" if r["as_expected"] else " **UNEXPECTED**"
        print(f"| `{r['case']}` | {r['kind']} | {r['verdict']} ({r['expected']}){mark} | {found} | "
              f"{r['seconds']:.0f} |")
    return 0 if all(r["as_expected"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
