"""Rerun a slice of the frontier end to end, serially and on a Dask LocalCluster, and compare.

    .venv/bin/python docs/rerun_frontier_slice.py [--K 3000] [--epsilons 1000] [--seeds 2] [--workers 2]

Runs ``docs/make_frontier.py --out <scratch> all`` (import, run, control, noise, report) twice over the same
selection — once with local worker processes, once on a LocalCluster of ``--workers`` processes reached
over tcp — and checks that

* both write the same files, with every cell's per-seed regret, curve and policy changes bit-identical and
  every no-data control's per-seed regret bit-identical;
* each cell equals the committed cell in docs/results/frontier/runs on the seeds both hold (seed i of a
  run of n seeds is ``SeedSequence(BASE_SEED).spawn(n)[i]``, the same for every n);
* each control reproduced its cell.

It prints one line per file and exits 1 if anything differs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "docs") not in sys.path:
    sys.path.insert(0, str(ROOT / "docs"))

import make_frontier  # noqa: E402

COMMITTED = ROOT / "docs" / "results" / "frontier"


def rerun(out: Path, argv: list[str]) -> float:
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = make_frontier.main(["--out", str(out), *argv])
    if code != 0:
        raise SystemExit(f"make_frontier.py all exited {code} for {out}")
    return time.perf_counter() - start


def cell_facts(cell: dict[str, Any]) -> dict[str, Any]:
    return {"per_seed": cell["final_cumulative_regret"]["per_seed"], "curve": cell.get("curve"),
            "policy_changes": [s.get("policy_changes") for s in cell.get("seeds", [])]}


def compare(serial: Path, dask: Path) -> list[str]:
    problems = []
    names = sorted(str(p.relative_to(serial)) for p in serial.rglob("*.json"))
    if names != sorted(str(p.relative_to(dask)) for p in dask.rglob("*.json")):
        return ["the two reruns wrote different files"]
    for name in names:
        a, b = (json.loads((root / name).read_text()) for root in (serial, dask))
        if name.startswith("runs/controls/"):
            same = a["final_without_users_per_seed"] == b["final_without_users_per_seed"]
            ok = same and a["reproduces_documented_run"] and b["reproduces_documented_run"]
            print(f"{name:<44} control: serial = dask {same}; reproduced its cell {a['reproduces_documented_run']}")
        elif name.startswith("runs/"):
            same = cell_facts(a) == cell_facts(b)
            committed_path = COMMITTED / name
            committed = "not committed"
            ok = same
            if committed_path.exists():
                theirs = json.loads(committed_path.read_text())["final_cumulative_regret"]["per_seed"]
                mine = a["final_cumulative_regret"]["per_seed"]
                n = min(len(mine), len(theirs))
                equal = mine[:n] == theirs[:n]
                committed = f"committed cell equal on its first {n} seeds: {equal}"
                ok = ok and equal
            print(f"{name:<44} cell: serial = dask {same}; {committed}")
        else:
            ok = True
        if not ok:
            problems.append(name)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--K", type=int, nargs="+", default=[3000])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1000.0])
    parser.add_argument("--agents", nargs="+", default=list(make_frontier.AGENT_TABLE),
                        choices=list(make_frontier.AGENT_TABLE))
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    import distributed

    selection = ["all", "--K", *map(str, args.K), "--epsilons", *map(str, args.epsilons),
                 "--agents", *args.agents, "--seeds", str(args.seeds)]
    with tempfile.TemporaryDirectory() as scratch:
        serial, dask = Path(scratch) / "serial", Path(scratch) / "dask"
        serial_seconds = rerun(serial, [*selection, "--workers", str(args.workers)])
        with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, protocol="tcp://",
                                      host="127.0.0.1", dashboard_address=":0", silence_logs=40) as cluster:
            dask_seconds = rerun(dask, [*selection, "--scheduler", cluster.scheduler_address])
        make_frontier.use_output(COMMITTED)
        print(f"serial (local processes): {serial_seconds:.0f} s; LocalCluster of {args.workers} processes: "
              f"{dask_seconds:.0f} s")
        problems = compare(serial, dask)
    print("all identical" if not problems else f"DIFFERENT: {', '.join(problems)}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
