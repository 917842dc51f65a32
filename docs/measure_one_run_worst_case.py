"""One-run audits of DP-LSVI-UCB++ at paper scale under both canary designs (docs/one_run_audits.md).

    python docs/measure_one_run_worst_case.py
    python docs/measure_one_run_worst_case.py --render-only      # the results page again from the JSON

The claim (1, 1e-5), Gaussian; H = 20, K = 1000, m = 500 canary slots, one run (and its pilot); the correct agent
and its halved-sensitivity twin (``audits/agent_zoo.py``), each with the Min et al. MDP's own canaries and with
the worst-case design (the audit linear MDP of its dimensions, every slot holding the measured pair of largest μ).
Prints one line per case (verdict, (ε, δ) and μ lower bounds, the pair's μ, seconds) and writes
docs/results/one_run_worst_case.json and its results page docs/results/one_run_worst_case.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "docs"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from results_page import provenance, recorded, write_page  # noqa: E402

from dpverify.agent_audit import AgentAuditSpec, audit_agent  # noqa: E402
from dpverify.audits.agent_zoo import BatchedVariant  # noqa: E402

OUT = ROOT / "docs" / "results" / "one_run_worst_case.json"
PAGE = ROOT / "docs" / "results" / "one_run_worst_case.md"


def case(variant: str, design: str) -> dict[str, Any]:
    spec = AgentAuditSpec("dp-lsvi-ucb++", "min2021", 1000, "billboard", 1.0, 1e-5, route="one-run", trials=1,
                          canaries=500, env_options=(("horizon", 20),), canary_design=design, gaussian_claim=True)
    start = time.perf_counter()
    result = audit_agent(spec, progress=False, batch_factory=BatchedVariant(variant))
    pair = result.measured_pairs[0].mu if result.measured_pairs else None
    return {"variant": variant, "design": design, "verdict": result.verdict,
            "epsilon_lower_bound": result.epsilon_lower_bound, "mu_lower_bound": result.mu_lower_bound or 0.0,
            "pair_mu": pair, "seconds": time.perf_counter() - start}


def render(source: Path = OUT, page: Path | None = None) -> Path:
    """The results page of ``source``."""
    document = json.loads(source.read_text(encoding="utf-8"))
    lines = ["| agent | canaries | verdict | (ε, δ) lower bound | μ lower bound | pair μ | s |",
             "|---|---|---|---|---|---|---|"]
    for r in document["rows"]:
        pair = "—" if r["pair_mu"] is None else f"{r['pair_mu']:.3f}"
        lines.append(f"| DP-LSVI-UCB++, {r['variant']} | {r['design']} | {r['verdict']} | "
                     f"{r['epsilon_lower_bound']:.3f} | {r['mu_lower_bound']:.3f} | {pair} | {r['seconds']:.0f} |")
    body = ("One-run audits (Steinke, Nasr & Jagielski 2023, with the f-DP reading of a Gaussian claim) of "
            "DP-LSVI-UCB++ at paper scale: the Min et al. MDP's dimensions, H = 20, K = 1000, m = 500 canary slots, "
            "claim (1, 1e-5), Gaussian (claimed μ = 0.268); the correct agent and its twin with noise for half the "
            "sensitivity, each with the environment's canaries and with the worst-case design, whose slots all "
            "hold the measured pair of largest μ (\"pair μ\"). Why neither design can refute the halved "
            "sensitivity in one run: docs/one_run_audits.md. The seconds are wall time, pilot run included.\n\n"
            + "\n".join(lines) + "\n")
    return write_page(page or PAGE, "One-run audits of DP-LSVI-UCB++ at paper scale, by canary design", body,
                      reproduce="python docs/measure_one_run_worst_case.py",
                      render="python docs/measure_one_run_worst_case.py --render-only", figures=[source],
                      runs=[recorded(document)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--render-only", action="store_true", help="write the page from the JSON, run nothing")
    args = parser.parse_args(argv)
    if args.render_only:
        print(render())
        return 0
    record = provenance(argv)
    rows = []
    for variant in ("correct", "half-sensitivity"):
        for design in ("environment", "worst-case"):
            rows.append(case(variant, design))
            r = rows[-1]
            pair = "-" if r["pair_mu"] is None else f"{r['pair_mu']:.3f}"
            print(f"{variant:17s} {design:12s} {r['verdict']:19s} eps_lb {r['epsilon_lower_bound']:.3f} "
                  f"mu_lb {r['mu_lower_bound']:.3f} pair mu {pair} {r['seconds']:.0f} s", flush=True)
    OUT.write_text(json.dumps({"provenance": record, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
