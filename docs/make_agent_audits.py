"""Audit every reference private agent at its default claim; write docs/results/agent_audits.json and its
results page docs/results/agent_audits.md.

    python docs/make_agent_audits.py [--quick] [--workers 2]
    python docs/make_agent_audits.py --render-only      # the page again from the JSON, running nothing

Claims: (ε, δ) = (1, 1e-5), the agents' own defaults otherwise. Sizes (``--quick`` divides the trials by
10): DP-LSVI-UCB++ on the Min et al. MDP (H = 2, K = 16, d = 10) through the batched agent, 10⁵ trials
per side (billboard) and 10⁴ (JDP); its one-run audit at H = 20, K = 1000 with 500 canary slots;
Luyo et al. and Ngo et al. (billboard, Min et al. H = 2, K = 8, A = 2) and LDP-UCRL-VTR (LDP, Zhou et al.
mixture MDP, H = 2, d = 3, K = 8) one run at a time, 2000 trials per side.
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

from dpverify.agent_audit import AgentAuditSpec, audit_agent  # noqa: E402
from dpverify.audit.executors import ProcessExecutor, SerialExecutor  # noqa: E402

OUT = DOCS / "results" / "agent_audits.json"
PAGE = DOCS / "results" / "agent_audits.md"


def specs(quick: bool) -> list[AgentAuditSpec]:
    f = 10 if quick else 1
    min2 = (("horizon", 2),)
    small = (("horizon", 2), ("num_actions", 2))
    return [
        AgentAuditSpec("dp-lsvi-ucb++", "min2021", 16, "billboard", 1.0, trials=100_000 // f, env_options=min2),
        AgentAuditSpec("dp-lsvi-ucb++", "min2021", 16, "jdp", 1.0, trials=10_000 // f, env_options=small),
        AgentAuditSpec("dp-lsvi-ucb++", "min2021", 1000 // f, "billboard", 1.0, route="one-run", trials=1,
                       canaries=500 // f, env_options=(("horizon", 20),)),
        AgentAuditSpec("luyo", "min2021", 8, "billboard", 1.0, trials=2000 // f, env_options=small),
        AgentAuditSpec("ngo", "min2021", 8, "billboard", 1.0, trials=2000 // f, env_options=small),
        AgentAuditSpec("ldp-ucrl-vtr", "zhou2021", 8, "ldp", 1.0, trials=2000 // f,
                       env_options=(("horizon", 2), ("dim", 3))),
    ]


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| agent | environment | notion | route | verdict | (ε, δ) lower bound | trials | wall time |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['agent']}{' (batched)' if r.get('batched') else ''} | {r['env']} | {r['notion']} | "
                     f"{r['route']} | {r['verdict']} | {r['epsilon_lower_bound']:.3f} | {r['trials']} | "
                     f"{r['seconds']:.0f} s |")
    return "\n".join(lines) + "\n"


def render(source: Path = OUT, page: Path | None = None) -> Path:
    """The results page of ``source`` (rows as a list, or under "rows" with the run's provenance)."""
    document = json.loads(source.read_text(encoding="utf-8"))
    rows = document["rows"] if isinstance(document, dict) else document
    body = ("Every reference private agent audited at (ε, δ) = (1, 1e-5), its other options at their defaults, "
            "seed 0 (docs/auditing.md, \"Auditing agents\"). A verdict of NO VIOLATION FOUND is not a "
            "certificate; a lower bound of 0 means the audit refuted nothing.\n\n" + table(rows))
    return write_page(page or PAGE, "Agent audits at the default claims", body,
                      reproduce="python docs/make_agent_audits.py", render="python docs/make_agent_audits.py "
                      "--render-only", figures=[source], runs=[recorded(document)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--render-only", action="store_true", help="write the page from the JSON, run nothing")
    args = parser.parse_args(argv)
    if args.render_only:
        print(render())
        return
    rows = []
    for spec in specs(args.quick):
        executor = SerialExecutor() if args.workers == 1 else ProcessExecutor(args.workers)
        try:
            result = audit_agent(spec, executor=executor, progress=False)
        finally:
            executor.close()
        env = ", ".join(f"{k}={v}" for k, v in spec.env_options)
        size = (f"{spec.trials} per side" if spec.route == "two-world"
                else f"{spec.trials} run, m = {result.canaries}")
        rows.append({"agent": spec.agent, "env": f"{spec.env} ({env}), K={spec.episodes}", "notion": spec.notion,
                     "route": spec.route, "claim": f"({spec.epsilon:g}, {spec.delta:g})", "verdict": result.verdict,
                     "epsilon_lower_bound": round(result.epsilon_lower_bound, 4), "method": result.method,
                     "mu_lower_bound": result.mu_lower_bound, "claimed_mu": result.claimed_mu,
                     "verdict_by": list(result.verdict_by),
                     "trials": size, "seconds": round(result.seconds, 1), "batched": result.batched})
        print(json.dumps(rows[-1]), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"provenance": provenance(argv), "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(render())


if __name__ == "__main__":
    main()
