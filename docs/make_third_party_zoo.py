"""Run ``dpverify verify`` on every agent of the third-party zoo; write docs/results/third_party_zoo.json and its
results page docs/results/third_party_zoo.md.

    python docs/make_third_party_zoo.py [--budget quick] [--episodes 1000] [--env min2021] [--only NAME ...]
    python docs/make_third_party_zoo.py --render-only      # the page again from the JSON, running nothing

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
from typing import Any

DOCS = Path(__file__).resolve().parent
if str(DOCS) not in sys.path:
    sys.path.insert(0, str(DOCS))

from results_page import provenance, recorded, write_page  # noqa: E402

from dpverify.audits.third_party_zoo import CASES, run_third_party_zoo  # noqa: E402

OUT = DOCS / "results" / "third_party_zoo.json"
PAGE = DOCS / "results" / "third_party_zoo.md"


def table(rows: list[dict[str, Any]]) -> str:
    described = {case.name: case.description for case in CASES}
    lines = ["| case | kind | what it does | verdict (expected) | white-box checks that failed (or could not run) "
             "| s |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        found = (", ".join(r["white-box failed"]) or ", ".join(f"{n} (not run)" for n in r["white-box not run"])
                 or "—")
        mark = "" if r["as_expected"] else " **UNEXPECTED**"
        lines.append(f"| `{r['case']}` | {r['kind']} | {described.get(r['case'], '')} | {r['verdict']} "
                     f"({r['expected']}){mark} | {found} | {r['seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def render(source: Path = OUT, page: Path | None = None) -> Path:
    """The results page of ``source`` (rows as a list, or under "rows" with the run's provenance)."""
    document = json.loads(source.read_text(encoding="utf-8"))
    rows = document["rows"] if isinstance(document, dict) else document
    sizes = sorted({(r["budget"], r["episodes"], r["env"]) for r in rows})
    expected = sum(r["as_expected"] for r in rows)
    body = ("`dpverify verify` on every agent of `audits/third_party` (claim (1, 1e-5); "
            + "; ".join(f"budget `{b}`, K = {k}, `{e}`" for b, k, e in sizes)
            + f"): {expected} of {len(rows)} verdicts as expected. A bug is expected CLAIM REFUTED with the "
            "white-box checks it is listed with failing, a twin CLAIM CONSISTENT, and the two agents whose noise "
            "does not follow the auditor's seeds INCONCLUSIVE (docs/auditing.md, \"White-box release checks\"). "
            "The seconds are the wall time of the whole `verify` run of the case.\n\n" + table(rows))
    return write_page(page or PAGE, "The third-party zoo under `dpverify verify`", body,
                      reproduce="python docs/make_third_party_zoo.py",
                      render="python docs/make_third_party_zoo.py --render-only", figures=[source],
                      runs=[recorded(document)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--budget", default="quick")
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--env", default="min2021")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--render-only", action="store_true", help="write the page from the JSON, run nothing")
    args = parser.parse_args(argv)
    if args.render_only:
        print(render(args.out))
        return 0
    outcomes = run_third_party_zoo(args.budget, args.env, args.episodes, workers=args.workers, only=args.only)
    rows = []
    for outcome in outcomes:
        rows.append({**outcome.row(), "budget": args.budget, "episodes": args.episodes,
                     "env": outcome.case.env or args.env,
                     "reasons": list(outcome.reasons)})
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"provenance": provenance(argv), "rows": rows}, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    print(render(args.out, None if args.out == OUT else args.out.with_suffix(".md")))
    return 0 if all(r["as_expected"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
