"""One-run audits of DP-LSVI-UCB++ at paper scale under both canary designs (docs/auditing.md, "One-run audits").

    python docs/measure_one_run_worst_case.py

The claim (1, 1e-5), Gaussian; H = 20, K = 1000, m = 500 canary slots, one run (and its pilot); the correct agent
and its halved-sensitivity twin (``audits/agent_zoo.py``), each with the Min et al. MDP's own canaries and with
the worst-case design (the audit linear MDP of its dimensions, every slot holding the measured pair of largest μ).
Prints one line per case: verdict, (ε, δ) and μ lower bounds, the pair's μ, seconds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dpverify.agent_audit import AgentAuditSpec, audit_agent  # noqa: E402
from dpverify.audits.agent_zoo import BatchedVariant  # noqa: E402


def main() -> int:
    for variant in ("correct", "half-sensitivity"):
        for design in ("environment", "worst-case"):
            spec = AgentAuditSpec("dp-lsvi-ucb++", "min2021", 1000, "billboard", 1.0, 1e-5, route="one-run", trials=1,
                                  canaries=500, env_options=(("horizon", 20),), canary_design=design,
                                  gaussian_claim=True)
            start = time.perf_counter()
            result = audit_agent(spec, progress=False, batch_factory=BatchedVariant(variant))
            pair = result.measured_pairs[0].mu if result.measured_pairs else None
            print(f"{variant:17s} {design:12s} {result.verdict:19s} eps_lb {result.epsilon_lower_bound:.3f} "
                  f"mu_lb {result.mu_lower_bound or 0:.3f} pair mu {'-' if pair is None else f'{pair:.3f}'} "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
