"""The audit engine: validation, errors from mechanisms, determinism across executors, results."""

from __future__ import annotations

import io
import math
import os

import numpy as np
import pytest

from dpverify.audit import (
    NO_VIOLATION_FOUND,
    VIOLATION,
    AuditSpec,
    NeighbourPair,
    ProcessExecutor,
    ReleaseOf,
    SerialExecutor,
    audit_mechanism,
    run_audit,
    worst_case_pair,
)
from dpverify.audit.progress import ProgressBar
from dpverify.audit.result import NOT_A_CERTIFICATE, AuditResult
from dpverify.audit.trials import generator
from dpverify.conversions import mu_for_epsilon_delta
from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism

MU = mu_for_epsilon_delta(1.0, 1e-5)
GAUSS = GaussianMechanism(1.0, 1.0 / MU, dim=3)
SERIAL = SerialExecutor()


def spec(**kw):
    base = dict(epsilon=1.0, delta=1e-5, trials=4000, seed=3, gaussian_claim=True, chunk_size=700)
    base.update(kw)
    return AuditSpec(**base)


@pytest.mark.parametrize(
    "field, value",
    [("trials", 0), ("trials", 1), ("trials", 2.5), ("confidence", 0.0), ("confidence", 1.0), ("confidence", 1.5),
     ("delta", 1.0), ("delta", -0.1), ("epsilon", -1.0), ("epsilon", math.nan), ("selection_fraction", 1.0),
     ("seed", -1), ("chunk_size", 0)],
)
def test_spec_rejects_bad_values(field, value):
    with pytest.raises(InvalidParameterError) as info:
        spec(**{field: value})
    assert info.value.parameter == field


def test_gaussian_claim_needs_positive_delta():
    with pytest.raises(InvalidParameterError):
        spec(delta=0.0)
    assert spec(delta=0.0, gaussian_claim=False).delta == 0.0


def test_split_sizes():
    s = spec(trials=1000, selection_fraction=0.2)
    assert (s.selection_trials, s.evaluation_trials) == (200, 800)
    assert spec(trials=2).selection_trials == 1 and spec(trials=2).evaluation_trials == 1
    assert s.cp_alpha * 2 + s.gdp_alpha * 2 == pytest.approx(1 - s.confidence)


def wrong_length(dataset, n, rng):
    return rng.normal(size=n + 1)


def non_finite(dataset, n, rng):
    out = rng.normal(size=n)
    out[0] = np.nan
    return out


def shape_depends_on_dataset(dataset, n, rng):
    return rng.normal(size=(n, dataset))


def nan_after_probe(dataset, n, rng):
    return np.full(n, np.inf) if n > 2 else rng.normal(size=n)


@pytest.mark.parametrize(
    "mechanism, neighbours, rule",
    [
        (wrong_length, (0, 1), "leading dimension"),
        (non_finite, (0, 1), "finite"),
        (shape_depends_on_dataset, (1, 2), "same per-trial shape"),
        (nan_after_probe, (0, 1), "finite"),
        ("not callable", (0, 1), "callable"),
    ],
)
def test_bad_mechanisms_raise_clear_errors(mechanism, neighbours, rule):
    with pytest.raises(InvalidParameterError) as info:
        run_audit(mechanism, neighbours, spec(), executor=SERIAL)
    assert rule in str(info.value)


@pytest.mark.parametrize("adaptive", [False, True])
def test_error_inside_a_worker_process_is_reraised(adaptive):
    with ProcessExecutor(2, adaptive=adaptive) as ex, pytest.raises(InvalidParameterError, match="finite"):
        run_audit(nan_after_probe, (0, 1), spec(), executor=ex)


def test_unpicklable_mechanism_on_processes():
    with ProcessExecutor(2) as ex, pytest.raises(InvalidParameterError, match="picklable"):
        run_audit(lambda d, n, rng: rng.normal(size=n), (0, 1), spec(), executor=ex)


def test_bad_neighbours():
    for bad in ([], 5, [(1, 2, 3)]):
        with pytest.raises(InvalidParameterError):
            run_audit(ReleaseOf(GAUSS), bad, spec(), executor=SERIAL)
    with pytest.raises(InvalidParameterError, match="max_pairs"):
        run_audit(ReleaseOf(GAUSS), [worst_case_pair(GAUSS)] * 3, spec(max_pairs=2), executor=SERIAL)


def test_identical_results_serial_and_processes():
    mech, pair = ReleaseOf(GAUSS), worst_case_pair(GAUSS)
    serial = run_audit(mech, pair, spec(), executor=SERIAL)
    with ProcessExecutor(2, adaptive=False) as ex:
        procs = run_audit(mech, pair, spec(), executor=ex)
        assert ex.items_pooled > 0 and ex.items_here == 0  # every chunk ran on a worker
        again = run_audit(mech, pair, spec(), executor=ex)  # the same pool serves a second audit
    with ProcessExecutor(2) as ex:
        adaptive = run_audit(mech, pair, spec(), executor=ex)
        assert ex.items_here > 0  # small work stays in this process
    assert serial == procs == again == adaptive
    assert serial.to_dict() == procs.to_dict()
    assert run_audit(mech, pair, spec(seed=4), executor=SERIAL) != serial  # the seed matters


class _Recording(SerialExecutor):
    """A serial executor that notes each map's function and number of items."""

    def __init__(self) -> None:
        self.maps: list[tuple[str, int]] = []
        self.estimates: list[float | None] = []

    def map(self, fn, items, on_done=None, seconds_each=None):
        self.maps.append((fn.__name__, len(items)))
        self.estimates.append(seconds_each)
        return super().map(fn, items, on_done, seconds_each)


def _two_milliseconds_a_trial(dataset, n, rng):
    import time

    time.sleep(0.002 * n)
    return rng.normal(float(dataset), 1.0, size=n)


def test_the_probe_estimates_a_selection_chunk_only_where_a_trial_is_work():
    fast = _Recording()
    run_audit(ReleaseOf(GAUSS), worst_case_pair(GAUSS), spec(), executor=fast)
    assert fast.estimates[0] is None  # a vectorised release: the probe's time is call overhead
    slow = _Recording()
    run_audit(_two_milliseconds_a_trial, (0, 1), spec(trials=40, chunk_size=8), executor=slow)
    assert 0.002 * 4 <= slow.estimates[0] < 0.02 * 8 and slow.estimates[1:] == [None]  # (chunks of 4 to 8 trials)


def test_each_candidate_pairs_choice_is_an_item_of_the_executor():
    mech, pairs = ReleaseOf(GAUSS), [worst_case_pair(GAUSS)] * 3
    recording = _Recording()
    serial = run_audit(mech, pairs, spec(max_pairs=3), executor=recording)
    assert [name for name, _ in recording.maps] == ["run_chunk", "_choose", "run_chunk"] and recording.maps[1][1] == 3
    with ProcessExecutor(2, adaptive=False) as ex:  # the choices made on the workers: the same result
        assert run_audit(mech, pairs, spec(max_pairs=3), executor=ex) == serial
        assert ex.items_here == 0
    one = _Recording()
    run_audit(mech, pairs[0], spec(), executor=one)
    assert [name for name, _ in one.maps] == ["run_chunk", "run_chunk"]  # a single pair's choice is made here


def test_adaptive_executor_cost_model():
    ex = ProcessExecutor(2)
    big = np.zeros(131072)
    assert not ex._worth_a_pool(0.001, big, 10, free=2.0)      # cheap chunks: start-up and transfer dominate
    assert not ex._worth_a_pool(0.05, big, 1, free=2.0)        # one item left: nothing to split
    assert ex._worth_a_pool(0.5, np.zeros(2), 20, free=2.0)    # costly chunks, small results: use the workers
    assert not ex._worth_a_pool(0.5, np.zeros(2), 20, free=1.0)  # the other CPU is busy: no gain
    assert isinstance(ex._worth_a_pool(0.5, np.zeros(2), 20), bool)  # measured load
    with pytest.raises(InvalidParameterError):
        ProcessExecutor(2, adaptive="yes")  # type: ignore[arg-type]


def test_free_cpus_are_read_from_the_machines_idle_time_while_the_first_item_ran(monkeypatch):
    from dpverify.audit import executors

    monkeypatch.setattr(executors.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(executors, "_free_cpus", lambda: 1.5)  # the load average's answer
    after = {"now": (300.0, 1400.0)}
    monkeypatch.setattr(executors, "_cpu_times", lambda: after["now"])
    assert executors._free_cpus_since((100.0, 1000.0)) == 3.0  # half of 4 CPUs idle, and this process's own
    after["now"] = (100.0, 1400.0)
    assert executors._free_cpus_since((100.0, 1000.0)) == 1.0  # none idle: only this process's CPU
    after["now"] = (100.0, 1002.0)
    assert executors._free_cpus_since((100.0, 1000.0)) == 1.5  # under a tick per CPU: the load average
    assert executors._free_cpus_since(None) == 1.5  # no /proc/stat
    monkeypatch.undo()
    assert 1.0 <= executors._free_cpus_since(executors._cpu_times()) <= (os.cpu_count() or 1)


def test_adaptive_executor_maps_like_serial():
    with ProcessExecutor(2) as ex:
        assert ex.map(abs, [-1, 2, -3]) == [1, 2, 3] and ex._pool is None
        assert ex.map(abs, []) == []
    with ProcessExecutor(2, adaptive=False) as ex:
        assert ex.map(abs, [-1, 2, -3]) == [1, 2, 3] and ex.items_pooled == 3
    with ProcessExecutor(1) as ex:  # one worker can never beat this process
        assert ex.map(abs, [-1, 2, -3]) == [1, 2, 3] and ex._pool is None


def _slow_square(x: int) -> int:
    import time

    time.sleep(0.02)
    return x * x


def _fails_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three")
    return x


def test_a_running_pool_shares_a_map_with_this_process():
    with ProcessExecutor(2) as ex:
        assert ex.map(abs, [0], adaptive=False) == [0] and ex.items_pooled == 1  # a pool runs: a map starts on it
        assert ex.map(_slow_square, range(12)) == [x * x for x in range(12)]  # in order, wherever each ran
        assert ex.items_here > 0 and ex.items_pooled > 1 and ex.items_here + ex.items_pooled == 13
        with pytest.raises(ValueError, match="three"):  # a failure (here or on a worker) abandons the pool
            ex.map(_fails_on_three, range(8))
        assert ex._pool is None
        assert ex.map(_slow_square, [1, 2]) == [1, 4]  # the first item timed here, the other too small to ship


def _slow_abs(x: int, seconds: float = 0.05) -> int:
    import time

    time.sleep(seconds)
    return abs(x)


_TEST_PROCESS = os.getpid()


def _abs_in_a_millisecond(x: int) -> int:
    """A millisecond in this process, 20 on a worker: workers that raced ahead of the first timed item (this process
    descheduled on a loaded machine) cannot take half the items before the estimate is taken back."""
    return _slow_abs(x, 0.001 if os.getpid() == _TEST_PROCESS else 0.02)


def test_an_estimate_starts_the_pool_at_once_and_a_wrong_one_is_taken_back(monkeypatch):
    from dpverify.audit import executors

    monkeypatch.setattr(executors, "_free_cpus", lambda: 2.0)  # (the machine's load does not decide here)
    with ProcessExecutor(2) as ex:  # costly items, as estimated: every item but one to the pool at once
        assert ex.map(_slow_abs, [-1, 2, -3, 4, -5, 6], seconds_each=0.2) == [1, 2, 3, 4, 5, 6]
        assert ex.items_pooled >= 3 and ex.items_here + ex.items_pooled == 6
    items = list(range(-150, 150))
    with ProcessExecutor(2) as ex:  # cheap items estimated costly: the workers take no more once one is timed
        assert ex.map(_abs_in_a_millisecond, items, seconds_each=0.5) == [abs(x) for x in items]
        assert ex.items_here > 150 and ex.items_here + ex.items_pooled == 300  # each item once
        assert ex.items_pooled <= 8  # (shared without the take-back, the workers would run about 30 of them)
    with ProcessExecutor(2) as ex:  # no estimate: the first item is timed before any pool starts
        assert ex.map(abs, items) == [abs(x) for x in items] and ex._pool is None


def test_default_executor_is_local_processes():
    mech, pair = ReleaseOf(GaussianMechanism(1.0, 1.0 / MU)), worst_case_pair(GaussianMechanism(1.0, 1.0 / MU))
    assert run_audit(mech, pair, spec(trials=2000)) == run_audit(mech, pair, spec(trials=2000), executor=SERIAL)


def test_result_is_never_a_certificate():
    r = audit_mechanism(GaussianMechanism(1.0, 1.0 / MU), epsilon=1.0, trials=3000, executor=SERIAL)
    assert r.verdict == NO_VIOLATION_FOUND and r.violated_by == ()
    assert NOT_A_CERTIFICATE in r.notes and "private" not in r.verdict.lower()
    assert r.epsilon_lower_bound == r.clopper_pearson.epsilon_lower <= r.ceiling
    assert "Bonferroni" in r.correction and "selection split" in r.correction
    with pytest.raises(AttributeError):
        r.verdict = VIOLATION  # frozen
    fields = {**r.__dict__, "verdict": VIOLATION}
    with pytest.raises(InvalidParameterError):
        AuditResult(**fields)  # VIOLATION without a violating bound
    fields = {**r.__dict__, "notes": ()}
    with pytest.raises(InvalidParameterError):
        AuditResult(**fields)


def test_broken_mechanisms_are_flagged():
    halved = GaussianMechanism(1.0, 0.5 / MU)
    r = audit_mechanism(halved, epsilon=1.0, trials=20_000, executor=SERIAL)
    assert r.verdict == VIOLATION and "gaussian-dp" in r.violated_by
    lap = LaplaceMechanism(1.0, 0.25)  # pure epsilon 4, claimed 1
    r = audit_mechanism(lap, epsilon=1.0, trials=20_000, executor=SERIAL)
    assert r.verdict == VIOLATION and r.violated_by == ("clopper-pearson",) and not r.gaussian_claim


def test_goe_mechanism_audit_runs():
    goe = GOEMechanism(1.0, 1.0 / (math.sqrt(2) * MU), 3)
    r = audit_mechanism(goe, trials=4000, executor=SERIAL)
    assert r.verdict == NO_VIOLATION_FOUND and r.claimed_epsilon <= 1.0 + 1e-9


@pytest.mark.parametrize("as_generator", [False, True])
def test_candidate_pairs_choose_the_leaking_one(as_generator):
    def reuse(dataset, n, rng):
        z = rng.normal(0, 5.0, size=n)
        a, b = dataset
        return np.stack([a + z, a + b + z], axis=1)

    pairs = [NeighbourPair((0.0, 0.0), (1.0, 0.0), "first"), NeighbourPair((0.0, 0.0), (0.0, 1.0), "second")]
    neighbours = (p for p in pairs) if as_generator else pairs
    r = run_audit(reuse, neighbours, spec(trials=3000), executor=SERIAL)
    assert r.pairs == 2 and r.pair_label == "second" and r.verdict == VIOLATION


def test_progress_bar_quiet_unless_terminal():
    quiet = io.StringIO()
    bar = ProgressBar(3, stream=quiet)
    bar.advance()
    bar.close()
    assert quiet.getvalue() == ""
    loud = io.StringIO()
    bar = ProgressBar(2, stream=loud, enabled=True)
    bar.advance()
    bar.advance()
    bar.close()
    assert "2/2 chunks" in loud.getvalue() and loud.getvalue().endswith("\n")


@pytest.mark.parametrize("trials", [2, 3, 5, 9])
def test_tiny_budgets_run_cleanly(trials):
    import warnings

    from dpverify.audits.zoo import cases

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for case in cases():
            r = run_audit(case.mechanism, case.neighbours, case.spec(trials, 0, 0.95), executor=SERIAL)
            assert r.evaluation_trials == trials - r.selection_trials >= 1


def test_chunk_generators_are_independent_of_order():
    a = generator(5, (1, 0, 1, 3)).normal(size=4)
    generator(5, (1, 0, 1, 2)).normal(size=100)
    assert np.array_equal(a, generator(5, (1, 0, 1, 3)).normal(size=4))
    assert not np.array_equal(a, generator(5, (1, 0, 0, 3)).normal(size=4))
