"""Adapters for agent code as people write it (docs/auditing.md, "Adapters for code as it is written").

The private-agent protocol (:mod:`dpverify.agents.core.tapes`, docs/auditing.md) asks for an object with
``begin_episode``/``end_episode`` (a policy table per episode) or ``act``/``observe``/``end_episode`` (step by
step). Code written without dpverify rarely looks like either; these adapters close the gap without
changing that code:

* :class:`ClosedLoopAgent` — code that owns its loop (``run(env)``, calling a Gymnasium-style
  ``env.reset()`` / ``env.step(action)``) becomes a step-level agent: its loop runs in a greenlet of its own
  and dpverify drives it one step at a time (:meth:`ClosedLoopAgent.bandit`: a bandit loop, ``context()``,
  ``arms()``, ``pull(arm)``);
* :class:`SeededGlobalRng` — code that draws from numpy's global generator (``np.random.normal``...) gets a
  global generator seeded from the run's own seeds while its code runs (and the caller's global state
  back afterwards), so that the auditor's levers reach it;
* :func:`watch_calls` — sees what opaque code computes: a function it calls through a module global
  (``np.linalg.solve`` inside a monolithic ``run()``) is replaced, in that module only, by one that reports
  its arguments first. With :meth:`~dpverify.agents.core.billboard.Billboard.publish_noised`, an adapter records
  the noisy statistics the code releases without editing it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dpverify.adapters.global_rng import SeededGlobalRng, uses_global_rng
from dpverify.adapters.watch import watch_calls

if TYPE_CHECKING:
    from dpverify.adapters.closed_loop import BanditLoopEnv, ClosedLoopAgent, LoopEnv, LoopProtocolError

#: The closed-loop names, imported when first asked for: only a closed loop needs greenlet, so the white-box
#: checks (which read :func:`uses_global_rng`) import this package without it.
_CLOSED_LOOP = ("BanditLoopEnv", "ClosedLoopAgent", "LoopEnv", "LoopProtocolError")


def __getattr__(name: str) -> Any:
    if name in _CLOSED_LOOP:
        from dpverify.adapters import closed_loop

        return getattr(closed_loop, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["BanditLoopEnv", "ClosedLoopAgent", "LoopEnv", "LoopProtocolError", "SeededGlobalRng", "uses_global_rng",
           "watch_calls"]
