"""How often do the white-box release checks fail a correct agent? Write docs/results/whitebox_false_alarms.json
and the results page docs/results/whitebox_false_alarms.md.

    python docs/make_whitebox_false_alarms.py [--seeds 200] [--episodes 20] [--level 0.001]
    python docs/make_whitebox_false_alarms.py --seeds 200 --level 0.05 \
        --out docs/results/whitebox_false_alarms_level005.json
    python docs/make_whitebox_false_alarms.py --render-only      # the page again from both JSON files

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
import sys
import time
from pathlib import Path
from typing import Any

from scipy import stats

DOCS = Path(__file__).resolve().parent
if str(DOCS) not in sys.path:
    sys.path.insert(0, str(DOCS))

from results_page import provenance, recorded, write_page  # noqa: E402

from dpverify.agents.envs.min2021 import min2021_mdp  # noqa: E402
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp  # noqa: E402
from dpverify.agents.registry import AGENTS, agent_factory  # noqa: E402
from dpverify.audits.third_party_zoo import CASES, CONSISTENT  # noqa: E402
from dpverify.whitebox import Subject, WhiteBoxPlan, check_releases  # noqa: E402

OUT = DOCS / "results" / "whitebox_false_alarms.json"
#: Every run the page shows: the default level, and level 0.05 where the noise check's statistics show.
SOURCES = (OUT, DOCS / "results" / "whitebox_false_alarms_level005.json")
PAGE = DOCS / "results" / "whitebox_false_alarms.md"


def subjects(episodes: int) -> list[Subject]:
    linear, mixture = min2021_mdp(horizon=3, num_actions=4), zhou2021_mixture_mdp(horizon=3)
    out = [Subject(AGENTS[n].factory, mixture if n == "ldp-ucrl-vtr" else linear, episodes, {"epsilon": 1.0}, name=n)
           for n in ("dp-lsvi-ucb++", "luyo", "ngo", "ldp-ucrl-vtr")]
    out += [Subject(agent_factory(c.agent), linear, episodes, {"epsilon": 1.0}, name=c.name)
            for c in CASES if c.expected == CONSISTENT]
    return out


def upper_95(failures: int, runs: int) -> float:
    """One-sided 95% Clopper–Pearson upper limit of a rate with ``failures`` in ``runs``."""
    return float(stats.beta.ppf(0.95, failures + 1, runs - failures)) if failures < runs else 1.0


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| agent | seeds | checks failed or not run (runs) | 95% upper limit of the rate | s |",
             "|---|---|---|---|---|"]
    for r in rows:
        failed = ", ".join(f"{k}: {v}" for k, v in r["failures"].items()) or "none"
        lines.append(f"| {r['agent']} | {r['seeds']} | {failed} | {r['runs_with_any_failure_upper_95']:.3g} | "
                     f"{r['seconds']} |")
    return "\n".join(lines) + "\n"


def section(rows: list[dict[str, Any]]) -> str:
    levels = sorted({r["level"] for r in rows})
    failures = sum(sum(r["failures"].values()) for r in rows)
    runs = sum(r["seeds"] for r in rows)
    return (f"### Level {', '.join(f'{v:g}' for v in levels)}\n\n{len(rows)} correct agents, {runs} runs: "
            f"{failures} runs with a check that failed or did not run ({failures / runs:.1%}; 95% upper limit "
            f"of the rate {upper_95(failures, runs):.2g}).\n\n" + table(rows))


def render(sources: tuple[Path, ...] = SOURCES, page: Path | None = None) -> Path:
    """The results page of every JSON of ``sources`` that exists (rows as a list, or under "rows" with the
    run's provenance)."""
    documents = [(p, json.loads(p.read_text(encoding="utf-8"))) for p in sources if p.exists()]
    body = ("Every correct agent — the registered private agents and the correct twins of the third-party zoo — "
            "checked with independent seeds (users, coins and noise all change with the seed) on small "
            "environments (Min et al. H = 3, A = 4, K = 20; the Zhou et al. mixture MDP at H = 3 for "
            "LDP-UCRL-VTR), the neighbour search at K = 12. Only the noise check spends false-alarm level; every "
            "other check is exact, so a failure of one of them on a correct agent would be a defect of the "
            "check (docs/auditing.md, \"White-box release checks\").\n\n")
    body += "\n".join(section(d["rows"] if isinstance(d, dict) else d) for _, d in documents)
    return write_page(page or PAGE, "White-box release checks: false alarms on correct agents", body,
                      reproduce=["python docs/make_whitebox_false_alarms.py --seeds 200",
                                 "python docs/make_whitebox_false_alarms.py --seeds 200 --level 0.05 "
                                 "--out docs/results/whitebox_false_alarms_level005.json"][:len(documents)],
                      render="python docs/make_whitebox_false_alarms.py --render-only",
                      figures=[p for p, _ in documents], runs=[recorded(d) for _, d in documents])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--level", type=float, default=1e-3)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--render-only", action="store_true", help="write the page from the JSON, run nothing")
    args = parser.parse_args(argv)
    if args.render_only:
        print(render())
        return
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
        rows.append({"agent": subject.name, "seeds": args.seeds, "level": args.level, "failures": failures,
                     "runs_with_any_failure_upper_95": round(upper_95(total, args.seeds), 4),
                     "seconds": round(time.perf_counter() - start)})
        print(json.dumps(rows[-1]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"provenance": provenance(argv), "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(render(SOURCES if args.out in SOURCES else (args.out,),
                 None if args.out in SOURCES else args.out.with_suffix(".md")))


if __name__ == "__main__":
    main()
