"""Does the one-run route's slot score overfit its pilot, and would choosing it on held-out slots help?

    .venv/bin/python docs/measure_one_run_scores.py [--seeds 3]

For three one-run agent audits (K = 400, m = 200 canary slots, billboard, window 1: the visit-count example's
bug, DP-LSVI-UCB++ with reused noise, the correct DP-LSVI-UCB++), per seed: the pilot run and the audited run
(independent coins, as ``dpverify.agent_audit.one_run`` draws them), then the rank statistic (AUC) of

* the route's rule (the candidate feature with the best AUC on the whole pilot): on the pilot itself, and on
  the audited run;
* a cross-fitted rule (candidates fitted on one half of the pilot's slots, chosen by their AUC on the other
  half, both ways): on the audited run.

It prints one line per case; the figures are quoted in docs/auditing.md ("One-run agent audits").
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from dpverify.agent_audit import one_run as route
from dpverify.agent_audit.runs import agent_setup, probe_agent
from dpverify.agent_audit.spec import AgentAuditSpec
from dpverify.audit import one_run
from dpverify.audit.distinguishers import propose_features
from dpverify.audits.agent_zoo import BatchedVariant

EXAMPLE = Path(__file__).resolve().parent / "examples" / "visit_count_agent.py"
LINEAR = (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))


def _best(fit: np.ndarray, fit_in: np.ndarray, test: np.ndarray, test_in: np.ndarray) -> tuple[float, Any, float]:
    best: tuple[float, Any, float] = (-1.0, None, 1.0)
    for feature in propose_features(fit[~fit_in], fit[fit_in]):
        scores = np.asarray(feature.scores(test), dtype=float)
        if np.all(np.isfinite(scores)):
            auc = route._auc(scores, test_in)
            if abs(auc - 0.5) > best[0]:
                best = (abs(auc - 0.5), feature, 1.0 if auc >= 0.5 else -1.0)
    return best


def cross_fitted(pilot: np.ndarray, inclusion: np.ndarray) -> route.SlotScorer:
    halves = np.arange(len(pilot)) % 2 == 0
    one = _best(pilot[halves], inclusion[halves], pilot[~halves], inclusion[~halves])
    two = _best(pilot[~halves], inclusion[~halves], pilot[halves], inclusion[halves])
    _, feature, sign = max(one, two, key=lambda c: c[0])
    return route.SlotScorer(feature, sign)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    common = {"route": "one-run", "trials": 1, "canaries": 200, "window": 1}
    cases = {
        "visit-count example, bug": (AgentAuditSpec(f"{EXAMPLE}:make_agent", "min2021", 400, "billboard", 1.0,
                                                    env_options=(("horizon", 2), ("num_actions", 2)), **common), None),
        "DP-LSVI-UCB++, reused noise": (AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 400, "billboard", 1.0,
                                                       env_options=LINEAR, **common), BatchedVariant("noise-reused")),
        "DP-LSVI-UCB++, correct": (AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 400, "billboard", 1.0,
                                                  env_options=LINEAR, **common), None),
    }
    for name, (spec, batch) in cases.items():
        setup = agent_setup(spec)
        _, width, mdp = probe_agent(spec, setup)
        slots = route.canary_slots(spec.episodes, spec.canary_count)
        rows = []
        for seed in range(args.seeds):
            pilot_seq, audit_seq = np.random.SeedSequence(seed).spawn(2)
            runs = []
            for seq in (pilot_seq, audit_seq):
                coins, noise = (np.random.default_rng(s) for s in seq.spawn(2))
                inclusion = one_run.draw_inclusion(len(slots), coins)
                features = route._one_run_features(spec, setup, mdp, width, slots, inclusion, noise, batch)
                runs.append((features, inclusion))
            (pilot, pilot_in), (audited, audited_in) = runs
            chosen = route.learn_scorer(pilot, pilot_in)
            rows.append((route._auc(chosen(pilot), pilot_in), route._auc(chosen(audited), audited_in),
                         route._auc(cross_fitted(pilot, pilot_in)(audited), audited_in)))
        r = np.array(rows)
        print(f"{name}: route's rule AUC on its pilot {np.round(r[:, 0], 3).tolist()}, on the audited run "
              f"{np.round(r[:, 1], 3).tolist()}; cross-fitted rule on the audited run {np.round(r[:, 2], 3).tolist()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
