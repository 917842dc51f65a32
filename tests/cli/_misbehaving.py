"""Misbehaving third-party agents for the CLI's fault tests: one small correct self-noising agent (the
third-party protocol of docs/auditing.md) with one planted fault, written to a file per case.

A fault is ``kind:where``: ``raise``, ``exit`` (``sys.exit(7)``), ``sleep`` (longer than any limit the tests
set) or ``memory`` (``MemoryError``) at ``import``, ``factory``, ``begin_episode``, ``end_episode``,
``claimed_guarantee`` or ``settings``; or a malformed output: ``policy:shape|float|range|none``,
``claim:str|dict|negative``, ``factory:none|int``, ``notion:word|number``. ``none`` is the correct agent.

:data:`CONTAINED` are faults against the process itself, which the command line contains
(tests/cli/test_bad_inputs.py): ``osexit`` (``os._exit(7)``), ``thread`` (a non-daemon thread left sleeping,
then ``RuntimeError``), ``threadexit`` (a thread of its own calls ``os._exit(9)`` a moment later), ``kill``
(SIGKILL to its own process), ``stray`` (a non-daemon thread left running, the agent otherwise correct),
``child`` (a process of its own left running, otherwise correct), ``interrupt`` (the code raises
``KeyboardInterrupt`` itself), ``unraisable`` (an object whose ``__del__`` raises, otherwise correct) and
``closeout`` (the code closes ``sys.stdout``); and
records that do not describe the run:
``laplace:releases`` (Laplace releases, for a Gaussian claim) and ``beyond:releases`` (releases recorded 5
episodes late, past K).
"""

from __future__ import annotations

from pathlib import Path

PLACES = ("import", "factory", "begin_episode", "end_episode", "claimed_guarantee", "settings")
RAISING = tuple(f"{kind}:{where}" for kind in ("raise", "exit", "memory") for where in PLACES)
SLOW = tuple(f"sleep:{where}" for where in ("import", "factory", "begin_episode"))
MALFORMED = ("policy:shape", "policy:float", "policy:range", "policy:none", "claim:str", "claim:dict",
             "claim:negative", "factory:none", "factory:int", "notion:word", "notion:number")
FAULTS = RAISING + SLOW + MALFORMED
CONTAINED = ("osexit:import", "osexit:factory", "osexit:begin_episode", "osexit:end_episode", "thread:factory",
             "thread:begin_episode", "threadexit:factory", "kill:begin_episode", "stray:import", "child:import",
             "laplace:releases", "beyond:releases", "interrupt:factory", "interrupt:begin_episode",
             "unraisable:end_episode", "closeout:factory")

#: What the one stderr line must contain for each kind of fault (the user's fault, said in one line).
EXPECTED = {
    "raise": "raised RuntimeError: planted failure (in ",
    "exit": "raised SystemExit: 7 (in ",
    "memory": "raised MemoryError: planted (in ",
    "sleep": "(the --call-timeout limit)",
    "policy": "policy",
    "claim": "claimed_guarantee",
    "factory": "the factory",
    "notion": "privacy_notion must be one of 'jdp', 'ldp'",
    "osexit": "raised SystemExit: os._exit(7) (in ",
    "thread": "raised RuntimeError: planted failure (in ",
    "threadexit": "ended dpverify's work process abruptly (exit status 9",
    "kill": "ended dpverify's work process abruptly (killed by SIGKILL)",
    "stray": "left 1 thread(s) running (stray); they were stopped when the command ended",
    "laplace": "--gaussian-claim must be no for an agent whose ledger records laplace releases",
    "beyond": "releases are recorded at episodes up to 9, beyond the run's K = 4",
    "interrupt": "raised KeyboardInterrupt: planted (in ",
    "closeout": "'s code closed sys.stdout, so the command could not write its answer",
    "unraisable": "exception(s) that Python ignores (in __del__, a finalizer or a callback; the first: "
                  "ValueError: planted in __del__",
}

SOURCE = '''
import math
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np

from dpverify.agents.core.billboard import Billboard
from dpverify.calibrate_mechanism import calibrate_gaussian
from dpverify.mechanisms import LaplaceMechanism
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError

FAULT = {fault!r}
KIND, _, PART = FAULT.partition(":")


def planted(where):
    if PART != where:
        return
    if KIND == "raise":
        raise RuntimeError("planted failure")
    if KIND == "exit":
        sys.exit(7)
    if KIND == "memory":
        raise MemoryError("planted")
    if KIND == "sleep":
        time.sleep(120)
    if KIND == "osexit":
        os._exit(7)
    if KIND in ("thread", "stray"):
        threading.Thread(target=time.sleep, args=(3600,), name="stray").start()
        if KIND == "thread":
            raise RuntimeError("planted failure")
    if KIND == "threadexit":
        threading.Thread(target=lambda: (time.sleep(0.3), os._exit(9))).start()
    if KIND == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if KIND == "child":
        subprocess.Popen(["sleep", "3600"])
    if KIND == "interrupt":
        raise KeyboardInterrupt("planted")
    if KIND == "unraisable":
        Unraisable()
    if KIND == "closeout":
        sys.stdout.close()


class Unraisable:
    def __del__(self):
        raise ValueError("planted in __del__")


planted("import")


class Config:
    def __init__(self, num_episodes, epsilon, delta, relation):
        self.num_episodes, self.epsilon, self.delta, self.relation = num_episodes, epsilon, delta, relation


class Counts:
    name = "counts"
    privacy_notion = {{"word": "private", "number": 3}}.get(PART, "jdp") if KIND == "notion" else "jdp"

    def __init__(self, mdp, num_episodes, rng, billboard, epsilon, delta, relation):
        self.config = Config(num_episodes, epsilon, delta, relation)
        self.horizon, self.num_states, self.num_actions = mdp.horizon, mdp.num_states, mdp.num_actions
        self.coins, noise = rng.spawn(2)
        self.billboard = billboard if billboard is not None else Billboard(relation, noise_rng=noise)
        self.counts = np.zeros((self.horizon, self.num_states))
        self.episode = 0
        self.mechanism = calibrate_gaussian(epsilon, delta, math.sqrt(2 * self.horizon), max(num_episodes - 1, 1),
                                            self.horizon * self.num_states, relation)
        if KIND == "laplace":  # l1 sensitivity 2H, scale for epsilon over the K - 1 releases a user is in
            self.mechanism = LaplaceMechanism(2.0 * self.horizon, 2.0 * self.horizon * max(num_episodes - 1, 1)
                                              / epsilon, self.horizon * self.num_states, relation)

    @property
    def ledger(self):
        return self.billboard.ledger

    def claimed_guarantee(self):
        planted("claimed_guarantee")
        if KIND == "claim":
            return {{"str": "epsilon=1", "dict": {{"epsilon": 1.0}}}}.get(PART) or DPGuarantee(-1.0, 1e-5, "exact", 0.0)
        return DPGuarantee(self.config.epsilon, self.config.delta, "exact", 0.0)

    def settings(self):
        planted("settings")
        claim = self.claimed_guarantee()
        accounted = self.ledger.guarantee(claim.delta, claim.conversion, "per-user")
        return {{"claimed_epsilon": claim.epsilon, "claimed_delta": claim.delta,
                "accounted_epsilon": accounted.epsilon, "accounted_delta": accounted.delta}}

    def begin_episode(self):
        planted("begin_episode")
        if self.episode >= self.config.num_episodes:
            raise InvalidParameterError("episode", "must be <= num_episodes", self.episode + 1)
        self.episode += 1
        if self.episode > 1:
            draw = self.billboard.noise_source()
            scale = self.mechanism.noise_scale
            noise = draw.laplace(0.0, scale, self.counts.size) if KIND == "laplace" else draw.normal(
                0.0, scale, self.counts.size)
            recorded_at = self.episode + 5 if KIND == "beyond" else self.episode
            self.billboard.publish_noised("counts", recorded_at, 1, self.mechanism, self.counts.ravel() + noise,
                                          "prefix")
        policy = self.coins.integers(0, self.num_actions, (self.horizon, self.num_states))
        if KIND == "policy":
            return {{"shape": policy[:, :-1], "float": policy + 0.5, "range": policy - self.num_actions,
                    "none": None}}[PART]
        return policy

    def end_episode(self, trajectory):
        planted("end_episode")
        if trajectory is not None:
            self.counts[np.arange(self.horizon), trajectory.states[1:]] += 1.0


def make_agent(mdp, num_episodes, rng, /, *, billboard=None, epsilon=1.0, delta=1e-5, relation="replace-one"):
    planted("factory")
    if KIND == "factory":
        return None if PART == "none" else 3
    return Counts(mdp, num_episodes, rng, billboard, epsilon, delta, relation)
'''


def write_agent(directory: Path, fault: str) -> str:
    """The agent with ``fault`` as a file in ``directory``; returns its factory path (``file.py:make_agent``)."""
    if fault != "none" and fault not in FAULTS + CONTAINED:
        raise ValueError(f"unknown fault {fault!r}")
    path = directory / f"agent_{fault.replace(':', '_')}.py"
    path.write_text(SOURCE.format(fault=fault), encoding="utf-8")
    return f"{path}:make_agent"


def expected_fragment(fault: str) -> str:
    return EXPECTED[fault.partition(":")[0]]


#: A closed loop (dpverify.adapters.ClosedLoopAgent) that spins after its first reset: a busy thread of the
#: adapter's, which a call limit stops waiting for and the work process's end stops running.
SPINNING_LOOP = '''
from types import SimpleNamespace

from dpverify.adapters import ClosedLoopAgent
from dpverify.agents.core.billboard import Billboard
from dpverify.conversions import DPGuarantee


def make_agent(mdp, num_episodes, rng, /, *, billboard=None, epsilon=1.0, delta=1e-5):
    board = billboard if billboard is not None else Billboard("replace-one", noise_rng=rng.spawn(1)[0])

    def loop(env):
        env.reset()
        while True:
            pass

    config = SimpleNamespace(num_episodes=num_episodes, epsilon=epsilon, delta=delta, relation="replace-one")
    protocol = SimpleNamespace(billboard=board, ledger=board.ledger, privacy_notion="jdp", config=config,
                               claimed_guarantee=lambda: DPGuarantee(epsilon, delta, "exact", 0.0))
    return ClosedLoopAgent(loop, mdp, name="spinning loop", protocol=protocol)
'''


def write_spinning_loop(directory: Path) -> str:
    path = directory / "spinning_loop.py"
    path.write_text(SPINNING_LOOP, encoding="utf-8")
    return f"{path}:make_agent"
