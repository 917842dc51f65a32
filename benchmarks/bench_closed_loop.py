"""Closed-loop code through dpverify: a switch, an episode, ``verify``, and two-world trials (prints figures).

    python benchmarks/bench_closed_loop.py switches [--round-trips 20000]
    python benchmarks/bench_closed_loop.py verify [--repeat 3] [--before REF]
    python benchmarks/bench_closed_loop.py trials --before REF [--repeat 3] [--workers 2] [--pool idle|always]
    python benchmarks/bench_closed_loop.py instructions [--before REF] [--trials 50]

* switches: how control passes between a user's loop and dpverify, three ways — an OS thread per loop with two
  one-slot queues (the adapter before greenlets), a generator (the floor, but only for a loop rewritten with
  ``yield``: code written against Gymnasium's ``env.step`` expects a plain call to return the next state) and a
  greenlet (:class:`dpverify.adapters.ClosedLoopAgent`) — in switches per second and per episode of H = 20 steps
  of an empty loop; then an episode of the closed-loop fixture (``audits/third_party/closed_loop_adapter.py``,
  min2021 H = 20, |A| = 10, K = 100) on the tapes of a two-world trial: the user's code alone on a plain
  environment, and through the adapter with its global-generator stream swapped at each stretch or once a run.
* verify: wall time of ``dpverify verify --budget quick`` for the README quick start (DP-LSVI-UCB++, K = 1000)
  and for the closed-loop fixture at H = 20, |A| = 10, K = 100 (also as git commit REF runs it), alternated in
  one run, each round's ratios and their medians; the sections' and audits' times (``--json``) of the last.
* trials: two-world agent trials per second (selection and evaluation, both sides, all pairs) of verify's quick
  two-world audit (min2021 H = 2, |A| = 10, K = 8, 400 trials per side) of the closed-loop fixture and of the
  step-level third-party LSVI, for the tree at git commit REF (its code extracted with ``git archive``) serially
  and with ``--workers`` processes, and for this tree the same; the ratios to REF's serial run, and the CPU
  time per trial (this process and its workers). The pool is the command line's adaptive one (which runs
  everything here while the load average leaves no CPU free), ``--pool idle`` the same judging every CPU free
  (to see it at work on a machine other jobs share), ``--pool always`` every chunk on the workers.

* instructions: machine instructions per two-world trial of the step-level third-party LSVI (its run and its view,
  as a selection chunk runs them), counted by valgrind's callgrind around the trials alone (started with
  instrumentation off, switched on by ``callgrind_control`` after a warm-up), for this tree and the tree at REF.
  A count does not drift with the machine's speed as times do (the same tree gives the same count to about 0.1%),
  so it tells a change of a few percent in the per-trial work apart; it counts no cache miss or system call, so
  times still decide. Needs valgrind.

Figures (medians of 3 runs for switches) depend on the machine and on what else runs on it: quote medians of
a few rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = "audits/third_party/closed_loop_adapter.py:make_agent"
STEP_LEVEL = "audits/third_party/step_level_lsvi.py:make_agent"
QUICK_START = ["--agent", "dp-lsvi-ucb++", "--env", "min2021", "--epsilon", "1", "--delta", "1e-5"]
CLOSED_LOOP = ["--agent", FIXTURE, "--env", "min2021", "--env-option", "num_actions=10", "--epsilon", "1",
               "--delta", "1e-5", "--episodes", "100"]
H = 20


# ---- switches ---------------------------------------------------------------------------------------------------

def _threads(round_trips: int) -> float:
    """The adapter before greenlets: the loop in a thread, a one-slot queue each way (seconds)."""
    to_user: queue.Queue[int] = queue.Queue(maxsize=1)
    to_main: queue.Queue[int] = queue.Queue(maxsize=1)

    def loop() -> None:
        for _ in range(round_trips):
            to_main.put(0)  # env.step(0): say the action, wait for the next state
            to_user.get()

    start = time.perf_counter()
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    for _ in range(round_trips):
        to_main.get(timeout=60)
        to_user.put(1)
    thread.join()
    return time.perf_counter() - start


def _generator(round_trips: int) -> float:
    """A loop rewritten as a generator (``state = yield action``)."""
    def loop() -> Iterator[int]:
        for _ in range(round_trips):
            yield 0

    start = time.perf_counter()
    steps = loop()
    next(steps)
    for _ in range(round_trips - 1):
        steps.send(1)
    return time.perf_counter() - start


def _greenlet(round_trips: int) -> float:
    """The loop in a greenlet, each step a switch to dpverify and back."""
    import greenlet

    main = greenlet.getcurrent()

    def loop(*started: int) -> None:
        for _ in range(round_trips):
            main.switch(0)

    start = time.perf_counter()
    user = greenlet.greenlet(loop)
    for _ in range(round_trips):
        user.switch(1)
    user.switch(1)
    return time.perf_counter() - start


def _fixture(mdp: Any, episodes: int, seed: int) -> Any:
    from dpverify.agents.registry import agent_factory

    return agent_factory(str(ROOT / FIXTURE))(mdp, episodes, np.random.default_rng(seed))


def _user_code_alone(mdp: Any, tapes: Any) -> float:
    """The fixture's own loop on a plain environment that follows the tapes, no dpverify in between."""
    from dpverify.audits.third_party.closed_loop_lsvi import ClosedLoopLsvi

    class TapeEnv:
        def __init__(self) -> None:
            self.k, self.h, self.state = -1, 0, 0

        def reset(self) -> tuple[int, dict[str, Any]]:
            self.k, self.h = self.k + 1, 0
            self.state = tapes[self.k].initial_state
            return self.state, {}

        def step(self, action: int) -> tuple[int, float, bool, bool, dict[str, Any]]:
            reward = float(mdp.rewards[self.h, self.state, action])
            self.state = int(tapes[self.k].next_states[self.h, self.state, action])
            self.h += 1
            return self.state, reward, self.h == mdp.horizon, False, {}

    state = np.random.get_state()  # noqa: NPY002 (the fixture seeds the global generator; the caller's is kept)
    try:
        code = ClosedLoopLsvi(mdp.features, mdp.rewards, len(tapes))
        start = time.perf_counter()
        code.run(TapeEnv())
        return time.perf_counter() - start
    finally:
        np.random.set_state(state)  # noqa: NPY002


def switches(round_trips: int) -> None:
    for name, run in (("threads (two queues)", _threads), ("generator (loop rewritten)", _generator),
                      ("greenlet", _greenlet)):
        seconds = statistics.median(run(round_trips) for _ in range(3))
        per_switch = seconds / (2 * round_trips)
        print(f"{name:28s} {1 / per_switch:>12,.0f} switches/s  {per_switch * 1e6:7.2f} µs/switch  "
              f"{per_switch * 2 * (H + 1) * 1e6:8.1f} µs per empty episode of H = {H} (reset + {H} steps)")
    from dpverify.adapters.global_rng import keep_installed
    from dpverify.agents.core.tapes import ordinary_tapes, run_on_tapes
    from dpverify.agents.envs import min2021_mdp

    episodes = 100
    mdp = min2021_mdp(horizon=H, num_actions=10)
    tapes = ordinary_tapes(mdp, episodes, 0)
    alone = statistics.median(_user_code_alone(mdp, tapes) for _ in range(3))
    print(f"closed-loop fixture (min2021 H = {H}, |A| = 10, K = {episodes}), ms per episode:")
    print(f"  the user's loop alone on a plain environment          {alone / episodes * 1e3:7.2f}")
    for label, keep in (("through the adapter, stream swapped at each stretch", False),
                        ("through the adapter, stream swapped once per run   ", True)):
        times = []
        for _ in range(3):
            agent = _fixture(mdp, episodes, 0)
            start = time.perf_counter()
            if keep:
                with keep_installed():
                    run_on_tapes(agent, mdp, tapes)
            else:
                run_on_tapes(agent, mdp, tapes)
            times.append(time.perf_counter() - start)
        seconds = statistics.median(times)
        print(f"  {label}  {seconds / episodes * 1e3:7.2f}  (dpverify's share {1 - alone / seconds:.0%})")


# ---- verify -----------------------------------------------------------------------------------------------------

def _verify(arguments: list[str], tree: Path = ROOT) -> tuple[float, dict[str, Any]]:
    """``dpverify verify ... --budget quick --json`` run in ``tree``: (wall seconds, the JSON report)."""
    command = [sys.executable, "-m", "dpverify", "verify", *arguments, "--budget", "quick", "--json"]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True,
                          text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return seconds, dict(json.loads(done.stdout))


def _parts(report: dict[str, Any]) -> str:
    """The sections' times, and each audit's, of a JSON report."""
    parts = [f"{k} {v:.1f} s" for k, v in report.get("timings", {}).items()]
    parts += [f"  audit {r.get('notion')} {r.get('route')} {r.get('seconds', 0.0):.1f} s"
              for r in report.get("audits", {}).get("runs", ())]
    return "\n  ".join(parts)


def verify(repeat: int, before: str | None) -> None:
    ratios: dict[str, list[float]] = {}
    with _tree(before) as old:
        for round_ in range(1, repeat + 1):
            quick, _ = _verify(QUICK_START)
            runs = {"this tree": _verify(CLOSED_LOOP)}
            if old is not None:
                runs[f"{before} (before)"] = _verify(CLOSED_LOOP, old)
            line = f"round {round_}: README quick start {quick:6.1f} s; closed-loop fixture K = 100"
            for label, (seconds, report) in runs.items():
                ratios.setdefault(label, []).append(seconds / quick)
                verdict = report.get("verdict", {}).get("verdict", "?")
                line += f", {label} {seconds:6.1f} s ({verdict}, ratio {seconds / quick:.2f})"
            print(line, flush=True)
    for label, values in ratios.items():
        print(f"closed-loop fixture / README quick start, {label}: median ratio {statistics.median(values):.2f} "
              f"over {repeat} round(s)")
    print("closed-loop fixture (this tree), last round's sections:\n  " + _parts(runs["this tree"][1]))


@contextlib.contextmanager
def _tree(commit: str | None) -> Iterator[Path | None]:
    """The code of git commit ``commit`` extracted to a temporary folder (None: none)."""
    if commit is None:
        yield None
        return
    with tempfile.TemporaryDirectory() as extracted:
        archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", extracted], input=archive, check=True)
        yield Path(extracted)


# ---- trials -----------------------------------------------------------------------------------------------------

def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _trials_per_second(agent: str, workers: int, pool: str) -> str:
    """(Run in the tree measured.) One two-world audit as verify's quick budget runs it: a JSON line."""
    from dpverify.agent_audit import AgentAuditSpec, audit_agent
    from dpverify.audit.executors import ProcessExecutor, SerialExecutor

    spec = AgentAuditSpec(agent, "min2021", 8, "billboard", 1.0, 1e-5, trials=400, window=8,
                          env_options=(("horizon", 2), ("num_actions", 10)))
    if pool == "idle":  # the adaptive pool judging every CPU free: how it works on a machine others share
        from dpverify.audit import executors

        executors._free_cpus = lambda: float(os.cpu_count() or 1)
        executors._cpu_times = lambda: None  # (the idle time read, too: the load average's answer decides)
    executor = SerialExecutor() if workers == 1 else ProcessExecutor(workers, adaptive=pool != "always")
    start, cpu = time.perf_counter(), _cpu_seconds()
    result = audit_agent(spec, executor=executor, progress=False)
    executor.close()
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    audit = result.audit
    assert audit is not None
    runs = 2 * (audit.selection_trials * audit.pairs + audit.evaluation_trials)
    return json.dumps({"runs": runs, "seconds": seconds, "cpu": cpu, "pooled": getattr(executor, "items_pooled", 0),
                       "epsilon": result.epsilon_lower_bound})


def _child(tree: Path, agent: str, workers: int, pool: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, str(Path(__file__).resolve()), "trials-child", agent, str(workers), pool]
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the trials of {agent} in {tree} failed: {done.stderr.strip()[-600:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def trials(before: str, repeat: int, workers: int, pool: str) -> None:
    with _tree(before) as old:
        assert old is not None
        trees: dict[str, Path] = {f"{before} (before)": old, "this tree": ROOT}
        for agent in (FIXTURE, STEP_LEVEL):
            got: dict[tuple[str, int], list[dict[str, Any]]] = {}
            for _ in range(repeat):
                for label, tree in trees.items():
                    for w in (1, workers):
                        got.setdefault((label, w), []).append(_child(tree, agent, w, pool))
            base = statistics.median(g["runs"] / g["seconds"] for g in got[(f"{before} (before)", 1)])
            print(f"{agent} (median of {repeat}; --workers {workers} with the pool {pool}):")
            for (label, w), runs in got.items():
                rate = statistics.median(g["runs"] / g["seconds"] for g in runs)
                cpu = statistics.median(g["cpu"] / g["runs"] * 1e3 for g in runs)
                print(f"  {label:22s} {'serial' if w == 1 else f'{w} workers':10s} {rate:7.1f} trials/s "
                      f"({rate / base:.2f}× the serial run before), {cpu:5.2f} CPU ms per trial; chunks on the "
                      f"pool {[g['pooled'] for g in runs]}")


# ---- instructions -----------------------------------------------------------------------------------------------

def _instructions_child(trials: int) -> None:
    """(Run in the tree measured, under callgrind.) Warm up, then count ``trials`` step-level trials alone."""
    from dpverify.agent_audit.runs import agent_setup
    from dpverify.agent_audit.spec import AgentAuditSpec
    from dpverify.agent_audit.two_world import AgentWorld, neighbour_pairs
    from dpverify.agent_audit.views import output_view

    spec = AgentAuditSpec(STEP_LEVEL, "min2021", 8, "billboard", 1.0, 1e-5, trials=400, window=8,
                          env_options=(("horizon", 2), ("num_actions", 10)))
    setup = agent_setup(spec)
    mdp = setup.environment()
    world = AgentWorld(setup, output_view(spec.notion, 1, spec.window, spec.episodes, 44))
    tapes = neighbour_pairs(spec, mdp)[0].first
    world(tapes, 8, np.random.default_rng(0))
    switch = ["callgrind_control", "-i"]
    subprocess.run([*switch, "on", str(os.getpid())], capture_output=True, check=True)
    world(tapes, trials, np.random.default_rng(1))
    subprocess.run([*switch, "off", str(os.getpid())], capture_output=True, check=True)


def _instructions(tree: Path, trials: int) -> float:
    """Instructions per trial in ``tree`` (callgrind's total over the trials, divided by their number)."""
    with tempfile.TemporaryDirectory() as out:
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}/cg.out",
                   sys.executable, str(Path(__file__).resolve()), "instructions-child", str(trials)]
        done = subprocess.run(command, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True,
                              text=True, check=False)
    counted = [line.split()[-1] for line in done.stderr.splitlines() if "Collected :" in line]
    if done.returncode != 0 or not counted:
        raise SystemExit(f"callgrind in {tree} failed: {done.stderr.strip()[-600:]}")
    return int(counted[-1]) / trials


def instructions(before: str | None, trials: int) -> None:
    with _tree(before) as old:
        trees = {"this tree": ROOT, **({f"{before} (before)": old} if old is not None else {})}
        counts = {label: _instructions(tree, trials) for label, tree in trees.items()}
    for label, count in counts.items():
        print(f"{label:22s} {count / 1e6:7.2f} M instructions per step-level trial ({trials} trials)")
    if old is not None:
        print(f"this tree / before: {counts['this tree'] / counts[f'{before} (before)']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("switches").add_argument("--round-trips", type=int, default=20_000)
    v = sub.add_parser("verify")
    v.add_argument("--repeat", type=int, default=3)
    v.add_argument("--before", default=None, help="git commit whose closed-loop run to time as well")
    t = sub.add_parser("trials")
    t.add_argument("--before", required=True, help="git commit of the tree to compare with")
    t.add_argument("--repeat", type=int, default=3)
    t.add_argument("--workers", type=int, default=2)
    t.add_argument("--pool", choices=("adaptive", "idle", "always"), default="adaptive",
                   help="adaptive: as the command line decides (no pool while the machine is busy); idle: the same, "
                   "judging every CPU free (the load average ignored); always: every chunk to the pool")
    n = sub.add_parser("instructions")
    n.add_argument("--before", default=None, help="git commit of the tree to compare with")
    n.add_argument("--trials", type=int, default=50)
    sub.add_parser("instructions-child").add_argument("trials", type=int)
    child = sub.add_parser("trials-child")
    child.add_argument("agent")
    child.add_argument("workers", type=int)
    child.add_argument("pool")
    args = parser.parse_args()
    run: dict[str, Callable[[], None]] = {
        "switches": lambda: switches(args.round_trips),
        "verify": lambda: verify(args.repeat, args.before),
        "trials": lambda: trials(args.before, args.repeat, args.workers, args.pool),
        "trials-child": lambda: print(_trials_per_second(args.agent, args.workers, args.pool)),
        "instructions": lambda: instructions(args.before, args.trials),
        "instructions-child": lambda: _instructions_child(args.trials),
    }
    run[args.what]()


if __name__ == "__main__":
    main()
