"""What an agent audit or a verification will hold and do, estimated before any agent is built or run.

An agent command's size follows from its options: K (``--episodes``), the trials or runs, the canaries and
the window, and the environment's sizes (H stages, S states, A actions, d feature coordinates). These
estimates refuse a command that cannot fit through :mod:`dpverify.limits` — the option named, the estimate
and the limit said — instead of allocating until the kernel kills the process or looping for days.

The estimates (upper bounds of the dominant arrays and loops, :mod:`dpverify.limits`):

* **memory of K users**: each user's tape holds ``next_states[h, s, a]`` (8·H·S·A bytes as int64,
  :class:`~dpverify.agents.core.tapes.UserTape`), and per-user accounting holds 24 bytes a user;
* **work of one run of K episodes**: a linear learner's Gram and target updates (H·d² a user) and its
  planning (the H·S·A·d values of φᵀw per episode); an agent that does more per episode takes longer than
  estimated, never less — the wall-clock limits (``--timeout``, ``--call-timeout``) bound the rest;
* **memory of the audit's outputs**: two-world trials keep each view (``width`` numbers, measured on the
  agent's first episodes) for the selection share of the trials; a one-run audit keeps one view row per
  canary, ``window`` episodes wide;
* **a mechanism's audit** (:func:`require_mechanism_audit`, which :func:`dpverify.audit.run_audit` checks after
  its probe and :func:`dpverify.audit.audit_mechanism` before it): each worker holds one chunk of trials of
  both sides and their temporaries, and the selection split's outputs are kept; drawing them is the work.
"""

from __future__ import annotations

from typing import Any

from dpverify.limits import require_memory, require_work

#: Bytes of per-user accounting a user (:mod:`dpverify.ledger`).
LEDGER_BYTES_PER_USER = 24.0
#: Bytes of a user tape's Python objects beside its table.
TAPE_OVERHEAD_BYTES = 200.0
#: Share of two-world trials whose outputs are kept for selecting the test (both sides).
SELECTION_KEPT = 0.4
#: The white-box checks' runs at their K, an upper bound (the recorded run, its replays, the noise runs:
#: :mod:`dpverify.whitebox.check`).
WHITEBOX_RUNS_AT_K = 16.0


def _sizes(mdp: Any) -> tuple[int, int, int, int]:
    """(H, S, A, d) of an environment (d = 1 for one without features)."""
    return (int(mdp.horizon), int(mdp.num_states), int(mdp.num_actions), int(getattr(mdp, "dim", 1) or 1))


def users_memory(mdp: Any, episodes: int) -> float:
    """Bytes of K users' tapes and their per-user accounting."""
    H, S, A, _ = _sizes(mdp)
    return float(episodes) * (8.0 * H * S * A + TAPE_OVERHEAD_BYTES + LEDGER_BYTES_PER_USER)


def run_operations(mdp: Any, episodes: int) -> float:
    """Elementary operations of one run of K episodes of a linear learner (module docstring)."""
    H, S, A, d = _sizes(mdp)
    return float(episodes) * H * (d * d + S * A * d)


def require_episodes(option: str, value: object, mdp: Any, episodes: int, runs: float, what: str) -> None:
    """Refuse ``runs`` runs of K = ``episodes`` (one held at a time) that do not fit, naming ``option``."""
    require_memory(option, value, users_memory(mdp, episodes), f"{what}: {episodes} users' tapes and accounts")
    require_work(option, value, runs * run_operations(mdp, episodes),
                 f"{what}: {runs:.3g} run(s) of {episodes} episodes")


def require_two_world(spec: Any, mdp: Any, width: int) -> None:
    """A two-world audit's trials: 2 × trials runs of K episodes, the selection share of the views kept."""
    require_episodes("--trials", spec.trials, mdp, spec.episodes, 2.0 * spec.trials, "the two-world audit")
    require_memory("--trials", spec.trials, SELECTION_KEPT * 2.0 * spec.trials * width * 8.0,
                   f"the two-world audit's kept outputs ({width} numbers a trial)")


def require_one_run(spec: Any, mdp: Any, width: int) -> None:
    """A one-run audit: its runs (a pilot and the audited run each) and one view row per canary slot."""
    runs = float(spec.trials)
    require_episodes("--trials", spec.trials, mdp, spec.episodes, 2.0 * runs, "the one-run audit")
    canaries = int(spec.canaries or max(1, spec.episodes // 2))
    window = max(1, int(getattr(spec, "window", 1) or 1))
    require_memory("--canaries", canaries, 2.0 * canaries * window * width * 8.0,
                   f"the one-run audit's canary views ({canaries} canaries × {window} episodes × {width} numbers)")


#: Trials per chunk the audit engine holds at once per worker (:class:`~dpverify.audit.spec.AuditSpec`'s default).
AUDIT_CHUNK = 1 << 17
#: Arrays of one chunk alive at once per worker (outputs of both sides, features, temporaries).
AUDIT_ARRAYS_PER_CHUNK = 6


def require_mechanism_audit(trials: int, numbers_per_trial: int, workers: int = 1, pairs: int = 1,
                            dim: int | None = None) -> None:
    """Refuse a mechanism audit whose trials × outputs cannot fit in memory or time, naming ``dim`` when one
    trial at that dimension is already too large, else ``trials``."""
    parallel = max(1, workers)
    smallest = 8.0 * numbers_per_trial * 2 * AUDIT_ARRAYS_PER_CHUNK * parallel
    if dim is not None:
        require_memory("dim", dim, smallest, f"one trial at dimension {dim} ({numbers_per_trial} numbers)")
    per_chunk = 8.0 * numbers_per_trial * min(trials, AUDIT_CHUNK) * AUDIT_ARRAYS_PER_CHUNK * parallel
    total = per_chunk + 8.0 * numbers_per_trial * SELECTION_KEPT * trials
    what = f"an audit of {trials} trials per side with {numbers_per_trial} numbers per trial"
    require_memory("trials", trials, total, what)
    require_work("trials", trials, 2.0 * trials * numbers_per_trial * max(1, pairs), what)
