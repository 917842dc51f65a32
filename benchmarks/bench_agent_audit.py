"""Benchmarks of whole-agent audits (prints figures; never asserts on time).

    python benchmarks/bench_agent_audit.py two-world [--trials 1e5] [--workers 2]
    python benchmarks/bench_agent_audit.py one-run [--episodes 1000] [--horizon 20] [--canaries 500]
    python benchmarks/bench_agent_audit.py zoo [--scale 1]
    python benchmarks/bench_agent_audit.py equivalence
    python benchmarks/bench_agent_audit.py twins [--trials 1e5] [--workers 2] [--reference-trials 400]

* two-world: DP-LSVI-UCB++ billboard audit on the Min et al. MDP (H = 2, K = 16, d = 10, A = 100) at its
  default claim (ε, δ) = (1, 1e-5), trials per side as given, three candidate positions, on local worker
  processes; prints the wall time and the agent trials per second (selection and evaluation, both sides).
* one-run: one-run billboard audit of DP-LSVI-UCB++ at H = 20, K = 1000 (the calibrate defaults) with m
  canary slots, one audited run plus one pilot run.
* zoo: the planted-bug zoo table (audits/agent_zoo.py).
* equivalence: batched vs reference DP-LSVI-UCB++, trials per second of each on one core.
* twins: for every private agent (and the tree-aggregated DP-LSVI-UCB++), a two-world billboard audit (LDP-UCRL-VTR:
  its LDP view) of the first user at (1, 1e-5) on the Min et al. MDP (H = 2, K = 16, d = 10, |A| = 100; Zhou et al.
  H = 2, d = 5 for LDP-UCRL-VTR) through its batched twin at ``--trials`` per side, and through the reference agent
  at ``--reference-trials`` per side; prints both wall times and the reference's time projected to ``--trials``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def two_world(trials: int, workers: int) -> None:
    from dpverify.agent_audit import AgentAuditSpec, audit_agent
    from dpverify.audit.executors import ProcessExecutor, SerialExecutor

    spec = AgentAuditSpec("dp-lsvi-ucb++", "min2021", 16, "billboard", 1.0, 1e-5, trials=trials,
                          env_options=(("horizon", 2),))
    executor = SerialExecutor() if workers == 1 else ProcessExecutor(workers)
    start = time.perf_counter()
    result = audit_agent(spec, executor=executor, progress=False)
    seconds = time.perf_counter() - start
    executor.close()
    assert result.audit is not None
    total = 2 * (result.audit.selection_trials * result.audit.pairs + result.audit.evaluation_trials)
    print(result.summary())
    print(f"two-world H=2 K=16 d=10: {trials} trials per side, {workers} worker(s): {seconds:.1f} s wall, "
          f"{total} agent runs, {total / seconds:.0f} runs/s")


def one_run(episodes: int, horizon: int, canaries: int) -> None:
    from dpverify.agent_audit import AgentAuditSpec, audit_agent

    spec = AgentAuditSpec("dp-lsvi-ucb++", "min2021", episodes, "billboard", 1.0, 1e-5, route="one-run", trials=1,
                          canaries=canaries, env_options=(("horizon", horizon),))
    start = time.perf_counter()
    result = audit_agent(spec, progress=False)
    seconds = time.perf_counter() - start
    print(result.summary())
    print(f"one-run H={horizon} K={episodes} m={result.canaries}: {seconds:.1f} s wall (pilot + audited run)")


def zoo(scale: float) -> None:
    from dpverify.audits.agent_zoo import run_agent_zoo

    start = time.perf_counter()
    rows = [o.row() for o in run_agent_zoo(scale=scale)]
    print(json.dumps(rows, indent=1))
    print(f"zoo: {len(rows)} audits, {sum(r['as_expected'] for r in rows)} as expected, "
          f"{time.perf_counter() - start:.1f} s")


def equivalence() -> None:
    from dpverify.agents.core.batching import BatchRandomness, run_batch
    from dpverify.agents.core.tapes import ordinary_tapes, run_on_tapes, tape_arrays
    from dpverify.agents.dp_lsvi_ucb_pp.batched import BatchedDpLsviUcbPlusPlus
    from dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp import DpLsviUcbPlusPlus, DpLsviUcbPlusPlusConfig
    from dpverify.agents.envs.min2021 import min2021_mdp

    mdp = min2021_mdp(horizon=2)
    config = DpLsviUcbPlusPlusConfig(16, epsilon=1.0)
    tapes = ordinary_tapes(mdp, 16, 0)
    start = time.perf_counter()
    for i in range(50):
        run_on_tapes(DpLsviUcbPlusPlus(mdp, config, np.random.default_rng(i)), mdp, tapes)
    reference = 50 / (time.perf_counter() - start)
    initial, table = tape_arrays(tapes)
    start = time.perf_counter()
    agent = BatchedDpLsviUcbPlusPlus(mdp, config, BatchRandomness(np.random.default_rng(0), 2048), record=())
    run_batch(agent, initial, table, keep_policies=())
    batched = 2048 / (time.perf_counter() - start)
    print(f"H=2 K=16 d=10 A=100, one core: reference {reference:.0f} runs/s, batched {batched:.0f} runs/s "
          f"({batched / reference:.0f}x)")


TWIN_CASES = (
    ("DP-LSVI-UCB++", "dp-lsvi-ucb++", "min2021", (("horizon", 2),), (), "billboard"),
    ("DP-LSVI-UCB++ tree", "dp-lsvi-ucb++", "min2021", (("horizon", 2),), (("aggregation", "tree"),), "billboard"),
    ("Luyo et al.", "luyo", "min2021", (("horizon", 2),), (), "billboard"),
    ("Ngo et al.", "ngo", "min2021", (("horizon", 2),), (), "billboard"),
    ("LDP-UCRL-VTR", "ldp-ucrl-vtr", "zhou2021", (("dim", 5), ("horizon", 2)), (), "ldp"),
)


def twins(trials: int, workers: int, reference_trials: int) -> None:
    from dpverify.agent_audit import AgentAuditSpec, audit_agent
    from dpverify.audit.executors import ProcessExecutor, SerialExecutor

    for label, agent, env, env_options, agent_options, notion in TWIN_CASES:
        seconds = {}
        for batched, n in ((True, trials), (False, reference_trials)):
            spec = AgentAuditSpec(agent, env, 16, notion, 1.0, 1e-5, trials=n, env_options=env_options,
                                  agent_options=agent_options, positions=("first",), batched=batched)
            executor = SerialExecutor() if workers == 1 else ProcessExecutor(workers)
            start = time.perf_counter()
            result = audit_agent(spec, executor=executor, progress=False)
            seconds[batched] = time.perf_counter() - start
            executor.close()
            if result.batched != batched:
                raise RuntimeError(f"{label}: expected batched={batched}, ran batched={result.batched}")
        projected = seconds[False] * trials / reference_trials
        print(f"{label:20s} batched {trials:.0e} trials/side {seconds[True]:7.1f} s | reference {reference_trials} "
              f"trials/side {seconds[False]:6.1f} s, projected to {trials:.0e}: {projected:8.0f} s "
              f"({projected / seconds[True]:.0f}x), {workers} worker(s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("two-world", "one-run", "zoo", "equivalence", "twins"))
    parser.add_argument("--reference-trials", type=int, default=400)
    parser.add_argument("--trials", type=float, default=1e5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--horizon", type=int, default=20)
    parser.add_argument("--canaries", type=int, default=500)
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    if args.what == "two-world":
        two_world(int(args.trials), args.workers)
    elif args.what == "one-run":
        one_run(args.episodes, args.horizon, args.canaries)
    elif args.what == "zoo":
        zoo(args.scale)
    elif args.what == "twins":
        twins(int(args.trials), args.workers, args.reference_trials)
    else:
        equivalence()


if __name__ == "__main__":
    main()
