"""What the auditor of each notion sees: one audit output per run, a fixed function of that view, so a
lower bound on ε for it is a lower bound for the claim (post-processing).

* ``"billboard"`` — the published transcript. Two rows: the releases labelled with episode j (before user
  j's data is read) and the mean of those of episodes j + 1 … j + window (matrix releases as their upper
  triangle). Every later prefix release carries user j's term, so the mean keeps it while averaging fresh
  noise down, and the engine's "consecutive difference" feature isolates it exactly when noise is reused
  (Sahu 2025, Algorithm 1 line 1 as printed; Jagielski et al. 2020; Nasr et al. 2021).
* ``"jdp"`` — only the actions given to the *other* users (Kearns et al. 2014; Vietri et al. 2020): the
  deployed policies π_{j+1}, …, π_{j+window} (one-hot in (h, s, a)), i.e. the action every later user
  would get at every state and step. Joint DP requires exactly this to be (ε, δ)-DP in user j's tape.
* ``"ldp"`` — one user's outgoing messages (Liao et al. 2021): the releases published with
  ``users="current"`` at episode j.

:func:`observe` reads a run of the reference path, :func:`observe_batch` a batched run, in the same layout.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.agent_audit.notions import audit_notion


def _billboard_rows(rows: np.ndarray) -> np.ndarray:
    """The billboard view of episode rows j, j+1, …, j+w: (row j, mean of rows j+1..j+w) — every later
    prefix release carries user j's term, so averaging them keeps the term and shrinks fresh noise."""
    return np.stack([rows[..., 0, :], rows[..., 1:, :].mean(axis=-2)], axis=-2)


def _episode_rows(history: Sequence[Any], episodes: Sequence[int], width: int, users: str | None) -> np.ndarray:
    """One row per episode: that episode's releases (matrices as upper triangles) in publication order,
    zero-padded or truncated to ``width`` (a fixed post-processing of the transcript)."""
    rows = np.zeros((len(episodes), width))
    index = {e: i for i, e in enumerate(episodes)}
    filled = [0] * len(episodes)  # the next free column of each row
    for release in history:
        i = index.get(release.episode)
        if i is None or (users is not None and release.users != users) or filled[i] >= width:
            continue
        flat = _flat(np.asarray(release.value, dtype=float))
        start = filled[i]
        stop = min(start + flat.shape[0], width)
        rows[i, start:stop] = flat[: stop - start]
        filled[i] = start + flat.shape[0]
    return rows


@functools.lru_cache(maxsize=64)
def _upper(n: int) -> np.ndarray:
    """The flat indices of the upper triangle of an n × n matrix, row by row (read every release of every trial)."""
    rows, cols = np.triu_indices(n)
    return rows * n + cols


def _flat(value: np.ndarray, batch: int = 0) -> np.ndarray:
    """A release (a stack of ``batch`` releases) as a vector (a row each): a square matrix as its upper triangle."""
    if value.ndim == 2 + batch and value.shape[-1] == value.shape[-2]:
        return value.reshape(*value.shape[:batch], -1)[..., _upper(value.shape[-1])]
    return value.reshape(*value.shape[:batch], -1)


def _one_hot(policy: np.ndarray, num_actions: int) -> np.ndarray:
    return (policy[..., None] == np.arange(num_actions)).astype(float).reshape(*policy.shape[:-2], -1)


@dataclass(frozen=True)
class View:
    """What one audit output holds: the notion, the episodes read and the width of a row."""
    notion: str
    episodes: tuple[int, ...]
    width: int


def output_view(notion: str, position: int, window: int, episodes: int, width: int) -> View:
    """The episodes the notion reads (:meth:`~dpverify.agent_audit.notions.AuditNotion.episodes`): billboard,
    releases of episodes j … j + window (as two rows, :func:`_billboard_rows`); JDP, policies of users
    j + 1 … j + window; LDP, the messages of user j."""
    return View(notion, audit_notion(notion).episodes(position, window), width)


def observe(view: View, history: Sequence[Any] | None, policies: Sequence[np.ndarray], num_actions: int) -> np.ndarray:
    """The output (rows, width) of one run of the reference (non-batched) path."""
    notion = audit_notion(view.notion)
    if notion.reads_policies:
        rows = np.zeros((len(view.episodes), view.width))
        for i, e in enumerate(view.episodes):
            if 1 <= e <= len(policies):
                rows[i] = _one_hot(np.asarray(policies[e - 1]), num_actions)
        return rows
    if history is None:
        raise RuntimeError("a billboard view needs the run's published history")
    rows = _episode_rows(history, view.episodes, view.width, notion.users)
    return _billboard_rows(rows) if notion.summarises_window else rows


def observe_batch(view: View, agent: Any, policies: dict[int, np.ndarray], num_actions: int,
                  releases: Sequence[Any] | None = None) -> np.ndarray:
    """The outputs (n, rows, width) of a batched run (same layout as :func:`observe`); ``releases``: the run's
    releases of the view's episodes, in publication order (default: the agent's, read here).

    A release that only some trials made (``(family, episode, stage, value, made)``: a data-dependent update)
    takes its place in the rows of those trials only, as in their transcripts."""
    n = agent.n
    notion = audit_notion(view.notion)
    out = np.zeros((n, len(view.episodes), view.width))
    if notion.reads_policies:
        for i, e in enumerate(view.episodes):
            if e in policies:
                out[:, i] = _one_hot(policies[e], num_actions)
        return out
    row = {e: i for i, e in enumerate(view.episodes)}
    filled = np.zeros((n, len(view.episodes)), dtype=np.int64)  # next free column of each trial's row
    ragged = np.zeros(len(view.episodes), dtype=bool)  # whether a row's trials have filled different widths
    trials = np.arange(n)
    for release in agent.releases if releases is None else releases:
        episode, value = release[1], release[3]
        if episode not in row:
            continue
        flat = _flat(value, batch=1)
        i, width = row[episode], flat.shape[1]
        if len(release) < 5 and not ragged[i]:  # made by every trial, at one offset: a slice
            start = int(filled[0, i])
            stop = min(start + width, view.width)
            if stop > start:  # the row is zero-padded or truncated to the view's width
                out[:, i, start:stop] = flat[:, : stop - start]
            filled[:, i] += width
            continue
        made = np.ones(n, dtype=bool) if len(release) < 5 else np.asarray(release[4], dtype=bool)
        columns = filled[:, i, None] + np.arange(width)[None, :]
        keep = made[:, None] & (columns < view.width)
        out[np.broadcast_to(trials[:, None], columns.shape)[keep], i, columns[keep]] = flat[keep]
        filled[:, i] += np.where(made, width, 0)
        ragged[i] |= not bool(made.all())
    return _billboard_rows(out) if notion.summarises_window else out
