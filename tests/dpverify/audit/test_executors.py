"""The same audit on a Dask LocalCluster gives exactly the result of the serial executor."""

from __future__ import annotations

import pytest

distributed = pytest.importorskip("distributed")

from dpverify.audit import AuditSpec, DaskExecutor, SerialExecutor, run_audit  # noqa: E402
from dpverify.audit.executors import make_executor  # noqa: E402
from dpverify.errors import InvalidParameterError  # noqa: E402


def _zoo_case(name: str, broken: bool):
    from dpverify.audits.zoo import cases

    return next(c for c in cases() if c.name == name and c.broken == broken)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None, silence_logs=40
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.mark.parametrize("name, broken", [("noise-reused", True), ("goe-relation", False)])
def test_dask_matches_serial(client, name, broken):
    case = _zoo_case(name, broken)
    spec = AuditSpec(epsilon=case.epsilon, delta=case.delta, trials=6000, seed=7, gaussian_claim=case.gaussian_claim,
                     chunk_size=1000)
    serial = run_audit(case.mechanism, case.neighbours, spec, executor=SerialExecutor())
    dask = run_audit(case.mechanism, case.neighbours, spec, executor=DaskExecutor(client=client))
    assert dask == serial
    assert dask.to_dict() == serial.to_dict()


def test_dask_executor_by_address(client):
    with make_executor(scheduler=client.scheduler.address) as ex:
        assert isinstance(ex, DaskExecutor)
        assert ex.map(abs, [-1, 2, -3]) == [1, 2, 3]


def test_bad_scheduler_address():
    with pytest.raises(InvalidParameterError, match="tcp://host:port"):
        DaskExecutor(address="not-an-address")
    with pytest.raises(InvalidParameterError):
        DaskExecutor()
