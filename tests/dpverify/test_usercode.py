"""The boundary with the user's code (dpverify.usercode): guarded calls, wall-clock limits, guarded factories
and agents, importing a factory by path, the declared notion."""

from __future__ import annotations

import copy
import pickle
import sys
import threading
import time

import numpy as np
import pytest

from dpverify.errors import InvalidParameterError, NumericalError
from dpverify.usercode import (
    GuardedAgent,
    GuardedFactory,
    LimitExceeded,
    TimeLimitExceeded,
    UserCodeError,
    UserCodeTimeout,
    declared_notion,
    enforced,
    guard_stretch,
    guarded_call,
    guarded_factory,
    import_factory,
    is_factory_path,
    time_limit,
)


class Boom(Exception):
    pass


def _raise(exc: BaseException) -> None:
    raise exc


@pytest.mark.parametrize("exc, kind", [(RuntimeError("bad"), "RuntimeError"), (SystemExit(7), "SystemExit"),
                                       (MemoryError("oom"), "MemoryError"), (Boom(""), "Boom"),
                                       (NumericalError("epsilon < 0"), "NumericalError")])
def test_guarded_call_makes_any_failure_the_users(exc, kind):
    with pytest.raises(UserCodeError) as info:
        guarded_call("mine.py:make", "begin_episode", _raise, exc)
    error = info.value
    assert (error.agent, error.where, error.kind) == ("mine.py:make", "begin_episode", kind)
    assert str(error).startswith(f"the agent mine.py:make raised {kind}: ")
    assert str(error).endswith("(in begin_episode)")
    assert not isinstance(error, Exception)  # no section's `except Exception` turns it into a verdict


def test_guarded_call_lets_interrupts_limits_and_protocol_refusals_through():
    with pytest.raises(KeyboardInterrupt):
        guarded_call("a", "act", _raise, KeyboardInterrupt())
    refusal = InvalidParameterError("feature_norm_bound", "must be <= 1", 2.0)
    with pytest.raises(InvalidParameterError) as info:
        guarded_call("a", "factory", _raise, refusal)
    assert info.value is refusal
    nested = UserCodeError("a", "inner", "ValueError", "x")
    with pytest.raises(UserCodeError) as caught:
        guarded_call("b", "outer", _raise, nested)
    assert caught.value is nested


def test_guarded_call_returns_the_value_and_passes_arguments():
    assert guarded_call("a", "f", lambda x, *, y: x + y, 2, y=3) == 5


def test_messages_are_one_line_and_say_no_message():
    error = UserCodeError("a", "end_episode", "ValueError", "line one\n  line two")
    assert str(error) == "the agent a raised ValueError: line one line two (in end_episode)"
    assert "(no message)" in str(UserCodeError("a", "w", "Boom", ""))
    assert str(error.within("episode 3")).endswith("(in end_episode, episode 3)")


@pytest.mark.parametrize("error", [UserCodeError("a", "w", "K", "m"), UserCodeTimeout("a", "w", 2.5, "--call-timeout"),
                                   TimeLimitExceeded(9.0, "--timeout", "dpverify verify")])
def test_errors_cross_process_boundaries(error):
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)


@pytest.mark.skipif(not enforced(), reason="limits need SIGALRM in the main thread")
def test_a_call_past_its_limit_is_stopped_and_named():
    start = time.monotonic()
    with pytest.raises(UserCodeTimeout) as info:
        guarded_call("slow.py:make", "begin_episode", time.sleep, 30, limit=0.2)
    assert time.monotonic() - start < 5
    assert str(info.value) == ("the agent slow.py:make did not return from begin_episode within 0.2 s "
                               "(the --call-timeout limit)")
    assert isinstance(info.value, LimitExceeded)


@pytest.mark.skipif(not enforced(), reason="limits need SIGALRM in the main thread")
def test_a_limit_is_not_swallowed_by_the_users_broad_except():
    def stubborn() -> str:
        try:
            time.sleep(30)
        except Exception:  # what careless user code does
            return "swallowed"
        return "slept"

    with pytest.raises(UserCodeTimeout):
        guarded_call("a", "act", stubborn, limit=0.2)


@pytest.mark.skipif(not enforced(), reason="limits need SIGALRM in the main thread")
def test_nested_limits_fire_earliest_first_and_are_cleared():
    class Outer(BaseException):
        pass

    class Inner(BaseException):
        pass

    with pytest.raises(Inner), time_limit(5.0, Outer), time_limit(0.1, Inner):
        time.sleep(10)
    with pytest.raises(Outer), time_limit(0.2, Outer), time_limit(5.0, Inner):
        time.sleep(10)
    with time_limit(0.2, Outer):  # a block that ends in time leaves no alarm behind
        pass
    time.sleep(0.4)


needs_alarms = pytest.mark.skipif(not enforced(), reason="limits need SIGALRM in the main thread")


def _timer() -> float:
    import signal

    return signal.getitimer(signal.ITIMER_REAL)[0]


@needs_alarms
def test_a_stretch_keeps_each_calls_own_limit_arming_the_timer_lazily():
    import signal

    with guard_stretch():
        assert guarded_call("a", "act", lambda: 1, limit=0.3) == 1
        assert 0 < _timer() <= 0.3  # left armed: the next call's deadline is later
        time.sleep(0.1)
        # the timer fires (at 0.3 s) while this call runs; its own deadline (0.7 s) has not passed: it runs on
        assert guarded_call("a", "act", time.sleep, 0.3, limit=0.6) is None
        guarded_call("a", "act", lambda: None, limit=30.0)
        with pytest.raises(UserCodeTimeout, match="within 0.2 s"):  # a shorter limit than the armed one re-arms
            guarded_call("a", "act", time.sleep, 5, limit=0.2)
        signal.raise_signal(signal.SIGALRM)  # an alarm between calls, no deadline passed: nothing happens


@needs_alarms
def test_a_stretch_restores_the_previous_handler_and_leaves_no_timer():
    import signal

    seen: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: seen.append(signum))
    try:
        with guard_stretch():
            guarded_call("a", "act", lambda: None, limit=5.0)
            assert signal.getsignal(signal.SIGALRM) is not previous
        assert _timer() == 0.0 and not seen
        signal.raise_signal(signal.SIGALRM)
        assert seen == [signal.SIGALRM]  # the user's own handler is back
        guarded_call("a", "act", lambda: None, limit=5.0)  # a call outside a stretch: the same at its end
        assert _timer() == 0.0 and signal.getsignal(signal.SIGALRM) is not None
        signal.raise_signal(signal.SIGALRM)
        assert seen == [signal.SIGALRM] * 2
    finally:
        signal.signal(signal.SIGALRM, previous)


@needs_alarms
def test_a_handler_the_users_code_replaces_is_reinstalled_by_the_next_call():
    import signal

    with guard_stretch():
        guarded_call("a", "act", signal.signal, signal.SIGALRM, signal.SIG_IGN)
        with pytest.raises(UserCodeTimeout):
            guarded_call("a", "act", time.sleep, 5, limit=0.2)


@needs_alarms
def test_a_process_forked_in_a_stretch_enforces_its_own_limits():
    import os

    with guard_stretch():
        guarded_call("a", "act", lambda: None, limit=60.0)  # armed in the parent (not inherited)
        pid = os.fork()
        if pid == 0:
            try:
                guarded_call("a", "act", time.sleep, 5, limit=0.2)
            except UserCodeTimeout:
                os._exit(3)
            os._exit(4)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 3


def test_os_exit_raises_in_a_stretchs_calls_only_and_the_real_one_comes_back():
    import os

    real = os._exit
    with guard_stretch():
        with pytest.raises(UserCodeError, match=r"os\._exit\(7\)"):
            guarded_call("a", "act", _exit_from_the_users_code)
        pid = os.fork()
        if pid == 0:  # between the stretch's calls os._exit ends the process, as it should
            os._exit(5)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 5
    assert os._exit is real


@needs_alarms
def test_a_limit_that_fires_leaves_the_enclosing_one_armed():
    class Outer(BaseException):
        pass

    with pytest.raises(Outer), time_limit(0.4, Outer):
        with pytest.raises(UserCodeTimeout):
            guarded_call("a", "act", time.sleep, 5, limit=0.1)
        time.sleep(5)


@needs_alarms
def test_the_limit_that_fires_first_is_the_one_said_while_its_error_unwinds():
    class Inner(BaseException):
        pass

    def body() -> None:
        with time_limit(0.3, Inner):  # its deadline is just after the call's
            try:
                time.sleep(5)
            finally:
                time.sleep(0.1)  # unwinding the call's error takes a while: the inner deadline passes meanwhile

    with pytest.raises(UserCodeTimeout, match="within 0.3 s"):
        guarded_call("a", "act", body, limit=0.3)
    assert _timer() == 0.0


def test_a_guarded_agent_takes_the_call_timeout_of_when_it_was_made(monkeypatch):
    monkeypatch.setenv("DPVERIFY_CALL_TIMEOUT", "7.5")
    assert GuardedAgent(_Agent(), "a")._limit == 7.5
    assert GuardedAgent(_Agent(), "a", limit=2.0)._limit == 2.0


def test_no_limit_for_none_or_infinity():
    with time_limit(None, TimeLimitExceeded), time_limit(float("inf"), TimeLimitExceeded):
        assert guarded_call("a", "f", lambda: 1, limit=float("inf")) == 1
    with pytest.raises(InvalidParameterError, match="limit"), time_limit(-1.0, TimeLimitExceeded):
        pass


class _Agent:
    name = "fine"

    def __init__(self) -> None:
        self.calls = 0

    def begin_episode(self) -> np.ndarray:
        self.calls += 1
        return np.zeros((1, 1), dtype=int)

    def end_episode(self, trajectory: object) -> None:
        raise ValueError("cannot read the trajectory")

    @property
    def ledger(self) -> object:
        raise RuntimeError("no ledger yet")


def test_guarded_agent_guards_protocol_methods_and_properties():
    agent = _Agent()
    guarded = GuardedAgent(agent, "mine.py:make")
    assert guarded.begin_episode().shape == (1, 1) and agent.calls == 1
    with pytest.raises(UserCodeError, match=r"raised ValueError: cannot read the trajectory \(in end_episode\)"):
        guarded.end_episode(None)
    with pytest.raises(UserCodeError, match=r"RuntimeError: no ledger yet \(in ledger\)"):
        guarded.ledger
    with pytest.raises(AttributeError):
        guarded.missing
    guarded.extra = 3
    assert agent.extra == 3 and guarded.unguarded is agent and guarded.name == "fine"


def test_a_guarded_agent_has_the_protocol_methods_its_agent_has():
    class StepLevel:
        def act(self, h: int, s: int) -> int:
            return h + s

        def end_episode(self, trajectory: object) -> None:
            raise KeyError("no trajectory")

    guarded = GuardedAgent(StepLevel(), "step.py:make")
    assert guarded.act(1, 2) == 3 and not hasattr(guarded, "observe") and not hasattr(guarded, "begin_episode")
    with pytest.raises(UserCodeError, match=r"raised KeyError: 'no trajectory' \(in end_episode\)"):
        guarded.end_episode(None)
    guarded.unguarded.observe = lambda *step: 7  # the agent's attributes are read at each call
    assert guarded.observe(0, 0, 0, 0.0, 0) == 7
    guarded.unguarded.reset = "not a method"  # a protocol name that is not callable is the agent's value
    assert guarded.reset == "not a method"
    copied = copy.copy(guarded)  # (a copy is made without the attribute lookups recursing)
    assert copied.act(1, 2) == 3


def test_is_factory_path():
    assert is_factory_path("pkg.mod:make") and is_factory_path("agent.py:make")
    assert not is_factory_path("dp-lsvi-ucb++")


def _write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_import_factory_names_what_does_not_import(tmp_path):
    with pytest.raises(InvalidParameterError, match="factory path does not import"):
        import_factory(str(tmp_path / "missing.py") + ":make")
    path = _write(tmp_path, "ok_agent.py", "def make(*a, **k):\n    return None\nvalue = 3\n")
    with pytest.raises(InvalidParameterError, match="factory path does not import"):
        import_factory(f"{path}:nothing")
    with pytest.raises(InvalidParameterError, match="callable"):
        import_factory(f"{path}:value")
    assert callable(import_factory(f"{path}:make"))
    needs = _write(tmp_path, "needs_other.py", "import dpverify_no_such_module\n")
    with pytest.raises(InvalidParameterError, match="dpverify_no_such_module"):
        import_factory(f"{needs}:make")


def test_a_module_that_fails_while_loading_is_not_left_half_made(tmp_path):
    path = _write(tmp_path, "broken_agent.py", "raise RuntimeError('at import')\n")
    with pytest.raises(UserCodeError, match="in importing its module"):
        guarded_factory(f"{path}:make")
    assert "dpverify_agent_broken_agent" not in sys.modules


FACTORY = '''
class Agent:
    def begin_episode(self):
        return None
    def end_episode(self, trajectory):
        pass
def make(mdp, num_episodes, rng, /, *, billboard=None, epsilon=1.0):
    return Agent()
def make_nothing(mdp, num_episodes, rng, /, **options):
    return None
'''


def test_guarded_factory_checks_its_result_and_its_arguments(tmp_path):
    path = _write(tmp_path, "factory_agent.py", FACTORY)
    factory = guarded_factory(f"{path}:make")
    agent = factory(None, 3, None, epsilon=0.5)
    assert isinstance(agent, GuardedAgent)
    with pytest.raises(TypeError):  # an option the factory does not take: the caller's mistake, said as such
        factory(None, 3, None, sigma=2.0)
    with pytest.raises(InvalidParameterError, match="must return an agent with begin_episode"):
        guarded_factory(f"{path}:make_nothing")(None, 3, None)
    copy = pickle.loads(pickle.dumps(factory))
    assert isinstance(copy, GuardedFactory) and copy.spec == factory.spec


def test_a_checked_factory_builds_its_agents_from_the_check_s_import(tmp_path):
    path = _write(tmp_path, "factory_once.py", FACTORY)
    resolved: list[str] = []

    def resolve(spec: str):
        resolved.append(spec)
        return import_factory(spec)

    factory = GuardedFactory(f"{path}:make", resolve).checked()
    assert isinstance(factory(None, 3, None), GuardedAgent) and len(resolved) == 1  # the check's import serves it
    assert isinstance(factory(None, 3, None), GuardedAgent) and len(resolved) == 1  # and every later call
    with pytest.raises(TypeError):  # the factory's signature (read once in this process) still refuses it
        factory(None, 3, None, sigma=2.0)
    with pytest.raises(TypeError):
        factory.checked()(None, 3, None, sigma=2.0)
    travelled = pickle.loads(pickle.dumps(guarded_factory(f"{path}:make")))
    assert travelled._resolved is None and not travelled._bindable  # the spec travels, not the import


def test_a_factory_path_is_resolved_once_per_process_and_working_directory(tmp_path, monkeypatch):
    path = _write(tmp_path, "factory_cached.py", FACTORY)
    first = guarded_factory(f"{path}:make")
    assert guarded_factory(f"{path}:make") is first  # a trial builds its agent from the path at every run
    assert guarded_factory(f"{path}:make", limit=3.0) is not first
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert guarded_factory(f"{path}:make") is not first  # a relative path would name another file here


class _Declares:
    def __init__(self, notion: object) -> None:
        self.privacy_notion = notion


def test_declared_notion():
    assert declared_notion(object()) is None
    assert declared_notion(_Declares("jdp")) == "jdp" and declared_notion(_Declares("ldp")) == "ldp"
    for bad in ("JDP", "private", 3, ""):
        with pytest.raises(InvalidParameterError, match="privacy_notion must be one of 'jdp', 'ldp'"):
            declared_notion(_Declares(bad))


def _exit_from_the_users_code() -> None:
    import os

    os._exit(7)


def test_os_exit_in_a_guarded_call_raises_there_and_the_real_one_comes_back():
    import os

    real = os._exit
    with pytest.raises(UserCodeError, match=r"the agent a raised SystemExit: os\._exit\(7\) \(in act\)"):
        guarded_call("a", "act", _exit_from_the_users_code)
    assert os._exit is real


@needs_alarms
def test_calls_in_a_stretch_take_the_short_path_with_the_same_guards():
    import os

    from dpverify import usercode

    real = os._exit
    with guard_stretch(), guard_stretch():  # (nested stretches: the outer one's end ends the short path)
        assert usercode._Stretch.thread == threading.get_ident()
        with pytest.raises(UserCodeError, match=r"SystemExit: os\._exit\(7\) \(in act\)"):
            guarded_call("a", "act", _exit_from_the_users_code, limit=5.0)
        with pytest.raises(UserCodeTimeout, match="within 0.1 s"):
            guarded_call("a", "act", time.sleep, 5, limit=0.1)
        with pytest.raises(UserCodeError, match=r"raised Boom: inner \(in observe\)"):  # a call within a call
            guarded_call("a", "act", guarded_call, "a", "observe", _raise, Boom("inner"), limit=5.0)
        assert usercode._Stretch.calls == 0 and not usercode._guarded and not usercode._deadlines
        assert os._exit is not real  # replaced for the stretch: between calls _exit_or_raise exits for real
    assert usercode._Stretch.thread is None and os._exit is real and _timer() == 0.0


def _raise(exc: BaseException) -> None:
    raise exc


def test_os_exit_bound_at_import_still_raises_in_a_later_guarded_call(tmp_path):
    (tmp_path / "bound_exit.py").write_text("from os import _exit\n\ndef make():\n    _exit(3)\n")
    factory = guarded_call("m", "importing its module", import_factory, f"{tmp_path / 'bound_exit.py'}:make")
    with pytest.raises(UserCodeError, match=r"os\._exit\(3\)"):
        guarded_call("m", "its factory", factory)


def test_os_exit_outside_the_guarded_thread_or_process_exits_for_real():
    import os
    import threading

    def fork_and_exit() -> int:
        pid = os.fork()
        if pid == 0:  # a process forked during the call ends as it asks (a pool worker does)
            os._exit(5)
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])

    assert guarded_call("a", "act", fork_and_exit) == 5
    seen: list[str] = []

    def other_thread() -> None:  # not the guarded call's thread: the replacement is not meant for it
        from dpverify import usercode

        seen.append("guarded" if usercode._guarded.get((os.getpid(), threading.get_ident())) else "free")

    def call() -> None:
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()

    guarded_call("a", "act", call)
    assert seen == ["free"]


def test_a_factory_path_needs_a_module_and_a_factory():
    for text in (":make_agent", "x.py:", " :f"):
        with pytest.raises(InvalidParameterError, match="must name a module and a factory around the colon"):
            import_factory(text)


def test_a_keyboard_interrupt_the_code_raises_is_its_error_where_a_stop_handler_tells_them_apart(monkeypatch):
    """With a stop handler tracking signals (the command line's), a KeyboardInterrupt with no signal behind it is the
    user's code's error; one after a signal, or with no tracking (a library run, a pytest session), is Ctrl-C."""
    from dpverify import _interrupts
    from dpverify.usercode import UserCodeError, guarded_call

    def interrupts():
        raise KeyboardInterrupt("its own")

    monkeypatch.setattr(_interrupts, "tracked", True)
    monkeypatch.setattr(_interrupts, "signalled", False)
    with pytest.raises(UserCodeError, match="raised KeyboardInterrupt: its own"):
        guarded_call("agent.py:make", "act", interrupts)
    monkeypatch.setattr(_interrupts, "signalled", True)
    with pytest.raises(KeyboardInterrupt):
        guarded_call("agent.py:make", "act", interrupts)
    monkeypatch.setattr(_interrupts, "tracked", False)
    monkeypatch.setattr(_interrupts, "signalled", False)
    with pytest.raises(KeyboardInterrupt):
        guarded_call("agent.py:make", "act", interrupts)
