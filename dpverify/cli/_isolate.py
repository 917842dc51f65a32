"""The user's code in a process of its own: what it does to its process ends with that process.

``dpverify verify|run|audit agent --agent module.path:factory`` handle the command in a forked *work process*,
leader of a process group of its own, while the command's process waits for it:

* ``os._exit``, a crash or a signal the user's code sends its own process ends the work process only: the
  command says so in one line (exit status 2) — ``os._exit`` within a protocol call is already said precisely
  by :mod:`dpverify.usercode`;
* threads the user's code leaves running end with the work process, which ends as soon as the command is
  done (a note on stderr says so when the command otherwise answered);
* a stop signal (Ctrl-C, SIGTERM, SIGHUP), an enclosing time limit or the command's ``--timeout`` (a margin
  past it, should the work process not stop itself) kill the whole group — the work process, its workers and
  whatever the user's code started — so nothing is left behind.

The work process writes to the command's stdout and stderr; where those are not files (a caller's
``io.StringIO``, a test's capture), to temporary files copied to them when it ends. Where there is no
``fork`` (Windows) the command runs in its own process, as every other command does.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import IO, Any, NoReturn

from dpverify.errors import DpverifyError

#: Seconds past the command's own ``--timeout`` after which the work process is killed from outside.
MARGIN_SECONDS = 30.0
#: The work process's status when its own reporting failed (it never returns otherwise).
_UNREPORTED = 70


def run_isolated(work: Callable[[], int], agent: str, timeout: float | None = None) -> int:
    """``work()`` (the command, reporting its own errors: it returns the exit status) in a work process
    (module docstring); ``agent`` names the user's code in the one line said when the process ends abruptly."""
    from dpverify.usercode import TimeLimitExceeded, time_limit

    if not hasattr(os, "fork"):  # pragma: no cover - Windows: the user's code runs in the command's process
        return work()
    streams = (sys.stdout, sys.stderr)
    for stream in streams:
        stream.flush()
    spools = tuple(None if _has_file(stream) else tempfile.TemporaryFile() for stream in streams)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the work process (its outcome is the command's, tested through it)
        os.close(read_end)
        _work_process(work, write_end, spools)
    os.close(write_end)
    with contextlib.suppress(OSError):  # the child does it too (whichever runs first)
        os.setpgid(pid, pid)
    ended = False
    limit = None if timeout is None else timeout + MARGIN_SECONDS
    try:
        with time_limit(limit, lambda: TimeLimitExceeded(float(timeout or 0.0), "--timeout", "the command")):
            _, wait_status = os.waitpid(pid, 0)
        ended = True
        os.set_blocking(read_end, False)
        try:
            said = os.read(read_end, 32)
        except BlockingIOError:
            said = b""
    finally:
        os.close(read_end)
        _end_group(pid, reap=not ended)
        _copy(spools, streams)
    if said:
        return int(said)
    raise DpverifyError(f"the agent {agent} ended dpverify's work process abruptly ({_how(wait_status)}); an "
                        "agent must return or raise, never end its process")


def _has_file(stream: IO[str]) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError and a ValueError
        return False
    return True


def _work_process(work: Callable[[], int], write_end: int, spools: tuple[Any, ...]) -> NoReturn:
    status = _UNREPORTED
    try:
        parent = os.getppid()
        os.setpgid(0, 0)
        _die_with(parent)
        for name in ("SIGTTOU", "SIGTTIN"):  # a background group may still write to the terminal
            signal.signal(getattr(signal, name), signal.SIG_IGN)
        for name, spool in zip(("stdout", "stderr"), spools, strict=True):
            if spool is not None:
                setattr(sys, name, io.TextIOWrapper(os.fdopen(os.dup(spool.fileno()), "wb"), encoding="utf-8",
                                                    line_buffering=True))
        ignored = _IgnoredExceptions()
        sys.unraisablehook = ignored
        status = work()
        for step in (lambda: _note_threads(status), lambda: ignored.note(status), sys.stdout.flush,
                     sys.stderr.flush):
            with contextlib.suppress(OSError, ValueError):  # a stream the command closed (its reader went away)
                step()
        os.write(write_end, str(status).encode())
    finally:
        os._exit(status)


def _end_own_group(signum: int, frame: object) -> None:
    os.killpg(0, signal.SIGKILL)


def _die_with(parent: int) -> None:
    """Where the system offers it (Linux ``PR_SET_PDEATHSIG``), the work process's group ends when the command's
    process dies, even by SIGKILL, which it cannot answer: SIGTERM then kills the group."""
    signal.signal(signal.SIGTERM, _end_own_group)
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # 1: PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before the request took effect
        _end_own_group(signal.SIGTERM, None)


class _IgnoredExceptions:
    """``sys.unraisablehook`` of the work process: the exceptions Python ignores (raised in a ``__del__``, a
    finalizer, a callback) are counted, not printed with a traceback each; a note says so when the command
    answered."""

    def __init__(self) -> None:
        self.count, self.first = 0, ""

    def __call__(self, unraisable: Any) -> None:
        self.count += 1
        if not self.first:
            where = f" in {unraisable.object!r:.80}" if unraisable.object is not None else ""
            self.first = f"{type(unraisable.exc_value).__name__}: {unraisable.exc_value}"[:200] + where

    def note(self, status: int) -> None:
        if self.count and status in (0, 1):
            print(f"note: the agent's code raised {self.count} exception(s) that Python ignores (in __del__, a "
                  f"finalizer or a callback; the first: {self.first})", file=sys.stderr)


def _note_threads(status: int) -> None:
    """Say which threads are left running (they end with the work process) when the command answered."""
    left = [t.name for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon
            and t.is_alive()]
    if left and status in (0, 1):
        print(f"note: the agent's code left {len(left)} thread(s) running ({', '.join(left[:3])}); they were "
              "stopped when the command ended", file=sys.stderr)


def _end_group(pid: int, reap: bool) -> None:
    """Kill whatever is left of the work process's group (the process itself when it has not ended)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    if reap:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _copy(spools: tuple[Any, ...], streams: tuple[IO[str], ...]) -> None:
    for spool, stream in zip(spools, streams, strict=True):
        if spool is not None:
            spool.seek(0)
            stream.write(spool.read().decode("utf-8", errors="replace"))
            spool.close()


def _how(wait_status: int) -> str:
    code = os.waitstatus_to_exitcode(wait_status)
    if code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}: os._exit or a crash in its code"
