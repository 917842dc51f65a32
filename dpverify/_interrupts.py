"""Whether a ``KeyboardInterrupt`` came from a signal: the state a stop handler keeps for :mod:`dpverify.usercode`.

A command-line run installs its own handler for Ctrl-C (:mod:`dpverify.cli`), which marks :data:`signalled` before
it raises ``KeyboardInterrupt``. While such a handler is installed (:data:`tracked`), a ``KeyboardInterrupt`` that
arrives with no signal behind it was raised by the user's code itself, and is reported as that code's error. In a
library run nothing is tracked: every ``KeyboardInterrupt`` is taken as the user's Ctrl-C.
"""

from __future__ import annotations

#: A handler that marks signals is installed.
tracked = False
#: A stop signal arrived since it was installed.
signalled = False


def raised_by_code() -> bool:
    """Whether a ``KeyboardInterrupt`` caught now was raised by code rather than by a signal."""
    return tracked and not signalled
