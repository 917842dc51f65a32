"""Two-world trials of an agent without a batched twin, spread over worker processes and a Dask cluster: the
same seeds, and the serial run's results bit for bit.

The agent is the third-party closed loop (:mod:`dpverify.audits.third_party.closed_loop_adapter`): step level,
run one trial at a time, its loop in a greenlet and its noise from numpy's global generator — the hardest case
for a worker (a Dask worker's two threads share the one global generator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpverify.agent_audit import AgentAuditResult, AgentAuditSpec, audit_agent
from dpverify.agent_audit.two_world import TRIALS_PER_CHUNK
from dpverify.audit.executors import DaskExecutor, ProcessExecutor, SerialExecutor

ROOT = Path(__file__).resolve().parents[3]
AGENT = f"{ROOT / 'audits' / 'third_party' / 'closed_loop_adapter.py'}:make_agent"
#: 70 trials per side: 14 selection trials per side of each of the three pairs, 56 evaluation trials per side
#: (two chunks of TRIALS_PER_CHUNK each side).
SPEC = AgentAuditSpec(AGENT, "min2021", 4, "billboard", 1.0, trials=70, window=4,
                      env_options=(("horizon", 2), ("num_actions", 4)))


def _same(a: AgentAuditResult, b: AgentAuditResult) -> None:
    assert a.audit is not None and b.audit is not None
    assert a.audit == b.audit  # every count, threshold and bound: bit for bit, not merely close
    assert (a.verdict, a.epsilon_lower_bound, a.points) == (b.verdict, b.epsilon_lower_bound, b.points)
    assert [p.label for p in a.measured_pairs] == [p.label for p in b.measured_pairs]


@pytest.fixture(scope="module")
def serial() -> AgentAuditResult:
    result = audit_agent(SPEC, executor=SerialExecutor(), progress=False)
    assert not result.batched and result.audit is not None
    assert result.audit.evaluation_trials > TRIALS_PER_CHUNK  # several chunks per side to spread
    return result


def test_two_worker_processes_give_the_serial_results(serial: AgentAuditResult) -> None:
    with ProcessExecutor(2, adaptive=False) as executor:
        pooled = audit_agent(SPEC, executor=executor, progress=False)
        assert executor.items_pooled > 2 and executor.items_here == 0  # every chunk ran on a worker
    _same(serial, pooled)


def test_a_dask_cluster_gives_the_serial_results(serial: AgentAuditResult) -> None:
    distributed = pytest.importorskip("distributed")
    # In-process workers, two threads: chunks run side by side in one process, sharing its global generator.
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None,
                                       silence_logs=40)
    with cluster, distributed.Client(cluster) as client:
        on_dask = audit_agent(SPEC, executor=DaskExecutor(client=client), progress=False)
    _same(serial, on_dask)
