"""How often do the white-box release checks fail a correct agent? Write docs/results/whitebox_false_alarms.json.

    python docs/make_whitebox_false_alarms.py [--seeds 200] [--episodes 20] [--level 0.001]

Every correct agent — the registered private agents and the correct twins of the third-party zoo — is checked
with ``seeds`` independent seeds (users, coins and noise all change with the seed) on small environments
(Min et al. H = 3, A = 4; the Zhou et al. mixture MDP H = 3 for LDP-UCRL-VTR), the neighbour search at
K = 12. Only the noise check spends false-alarm level (α = ``level`` per run, split over its tests); every
other check is exact, so any failure of them on a correct agent is a defect of the check. The printed table
gives, per agent, the failures and the one-sided 95% Clopper–Pearson upper limit of the failure rate.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from scipy import stats

from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp
from dpverify.agents.registry import AGENTS, agent_factory
from dpverify.audits.third_party_zoo import CASES, CONSISTENT
from dpverify.whitebox import Subject, WhiteBoxPlan, check_releases

OUT = Path(__file__).resolve().parent / "results" / "whitebox_false_alarms.json"


def subjects(episodes: int) -> list[Subject]:
    linear, mixture = min2021_mdp(horizon=3, num_actions=4), zhou2021_mixture_mdp(horizon=3)
    out = [Subject(AGENTS[n].factory, mixture if n == "ldp-ucrl-vtr" else linear, episodes, {"epsilon": 1.0}, name=n)
           for n in ("dp-lsvi-ucb++", "luyo", "ngo", "ldp-ucrl-vtr")]
    out += [Subject(agent_factory(c.agent), linear, episodes, {"epsilon": 1.0}, name=c.name)
            for c in CASES if c.expected == CONSISTENT]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--level", type=float, default=1e-3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    rows = []
    for subject in subjects(args.episodes):
        start = time.perf_counter()
        failures: dict[str, int] = {}
        for seed in range(args.seeds):
            plan = WhiteBoxPlan(args.episodes, search_episodes=12, seed=seed, level=args.level, claim_epsilon=1.0)
            for check in check_releases(subject, plan).checks:
                if check.status != "pass":
                    failures[f"{check.name} ({check.status})"] = failures.get(f"{check.name} ({check.status})", 0) + 1
        total = sum(failures.values())
        upper = float(stats.beta.ppf(0.95, total + 1, args.seeds - total)) if total < args.seeds else 1.0
        rows.append({"agent": subject.name, "seeds": args.seeds, "level": args.level, "failures": failures,
                     "runs_with_any_failure_upper_95": round(upper, 4), "seconds": round(time.perf_counter() - start)})
        print(json.dumps(rows[-1]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    print("\n| agent | seeds | checks failed or not run | 95% upper limit of the rate |")
    print("|---|---|---|---|")
    for r in rows:
        failed = ", ".join(f"{k}: {v}" for k, v in r["failures"].items()) or "none"
        print(f"| {r['agent']} | {r['seeds']} | {failed} | {r['runs_with_any_failure_upper_95']:.3g} |")


if __name__ == "__main__":
    main()
