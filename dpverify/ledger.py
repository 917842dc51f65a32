"""A per-release privacy ledger with per-user (individual) zCDP accounting.

A ledger records every noisy release of a private algorithm: its statistic family, its episode k and
stage h, its mechanism, and which users' data it touches. It answers

- the *naive* total ρ: Σ over all releases of ρ (the papers' "4HK releases × ρ0", Sahu 2025 §3);
- the *per-user* ρ: user u pays only for the releases that touch u, so the guarantee for neighbours
  differing in user u is Σ_{releases ∋ u} ρ (adaptive composition, Bun & Steinke 2016 Lemma 2.3,
  applied to the releases whose sensitivity w.r.t. u is non-zero; releases that do not read u's data
  are post-processing for that pair). The worst case over users is the guarantee of the whole run;
- a breakdown per statistic family; and (ε, δ) under any conversion of :mod:`dpverify.conversions`.
  With only Gaussian releases (GOE included) the ``exact`` conversion applies to the worst user's
  μ² = Σ (Δ/σ)² = 2ρ_u; any ledger — Laplace, randomized response, mixed — is accounted by every route of
  :mod:`dpverify.accounting` (:meth:`PrivacyLedger.account`), the least of which is its ε.

Scale: releases are stored as rectangular *blocks* (family × episode range × stage range, one
mechanism, one user pattern), so the DP-LSVI-UCB++ schedule at H = 20, K = 10⁵ (8×10⁶ releases) is four
blocks. :meth:`PrivacyLedger.record` and :meth:`~PrivacyLedger.record_releases` (a billboard's block) merge
releases into blocks as they arrive.

Which users a release touches is a :class:`UserPattern`:

- :class:`PrefixUsers` — the release at episode k reads users 1..k−1 (a prefix sum over past users,
  Sahu 2025 Algorithm 1 lines 6–8 and 26);
- :class:`CurrentUser` — the release at episode k reads only user k (a local release, Liao et al. 2021);
- :class:`BinaryTreeNode` — the release at episode k is the binary-mechanism node (k − lowbit(k), k]
  (Chan, Shi & Song 2011; Luyo et al. 2021): each user lies in at most ⌈log₂K⌉ + 1 released nodes;
- :class:`DyadicNode` — level l of the *full* dyadic tree (every node released once it is complete, the
  tree Honaker 2015's estimator needs): releases at the episodes k divisible by 2^l only (the pattern's
  ``step``), each reading users (k − 2^l, k]; a user lies in one node per level;
- :class:`ToeplitzFactor` — row k of C·x for a lower-triangular Toeplitz factor C of the prefix-sum matrix
  (the factorisation mechanism: release Cx + z, estimate the prefixes as A C⁻¹(Cx + z)): it reads users
  1..k, user u with weight c_(k−u), so its ρ for user u is c²_(k−u) times the release's (Denisov, McMahan,
  Rush, Smith & Thakurta 2022 show the per-release composition holds under adaptivity for lower-triangular C).

Per-user accounting never needs one number per user for prefix and current-user blocks (the worst
user is found among the blocks' breakpoints, so K = 10¹² costs what K = 10 does); binary-tree blocks
are summed in chunks of users, refused above the work limit of :mod:`dpverify.limits`.

The JSON layout (:meth:`PrivacyLedger.to_json`, schema version 1) is strict: a missing or unknown field
in the ledger or in a block is an error naming the field. A ledger whose releases touch no user at all
(e.g. only ``users="prefix"`` releases at episode 1, which read users 1..0) accounts to ε = 0 only
vacuously: accounting it warns with :class:`NoUserTouchedWarning` (a warning, not an error, because a
run stopped after its first episode is legitimate; ``dpverify account`` prints it).
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.conversions import (
    CONVERSION_REGISTRY,
    DPGuarantee,
    epsilon_from_rho,
    get_conversion,
    rho_for_epsilon_delta,
)
from dpverify.errors import InvalidParameterError
from dpverify.limits import MAX_COUNT, require_memory, require_work
from dpverify.mechanisms import Mechanism, mechanism_from_dict
from dpverify.neighbouring import Neighbouring
from dpverify.numerics import round_up

#: Version of the JSON layout written by :meth:`PrivacyLedger.to_json`.
SCHEMA_VERSION = 1
#: Elementary operations (:mod:`dpverify.limits`) reading and accounting one block of a ledger file costs (about
#: half a millisecond of Python, measured on one core).
BLOCK_OPERATIONS = 1e5

#: Users per chunk when per-user ρ must be computed user by user (binary-tree releases).
_USER_CHUNK = 1 << 20
#: The accounting modes (per-user: the worst user; naive: every release counted against one user).
ACCOUNTING_MODES: tuple[str, ...] = ("per-user", "naive")


class NoUserTouchedWarning(UserWarning):
    """A ledger with releases of which none touches any user's data: its ε = 0 holds only vacuously.

    Legitimate for a run that stopped after its first episode (prefix releases at episode 1 read no
    user), but most often a wrong ``users`` pattern; accounting such a ledger warns instead of
    returning ε = 0 silently.
    """


# --------------------------------------------------------------------------------------------
# Which users a release touches


@dataclass(frozen=True)
class PrefixUsers:
    """The release at episode k reads the data of users 1, …, k−1."""

    kind = "prefix"
    #: Releases occur at the episodes divisible by ``step`` (1: every episode).
    step = 1

    def max_user(self, last_episode: int) -> int:
        return last_episode - 1

    def counts_at(self, first: int, last: int, u: np.ndarray) -> np.ndarray:
        """Number of episodes in [first, last] whose release touches user u, for each of the users ``u`` (an int64
        array of user indices >= 1)."""
        return np.maximum(0, last - np.maximum(first, u + 1) + 1)

    def breakpoints(self, first: int, last: int) -> tuple[int, ...]:
        """Users where the count stops being linear in u (it is linear between consecutive ones)."""
        return (first - 1, first, last - 1, last)


@dataclass(frozen=True)
class CurrentUser:
    """The release at episode k reads only the data of user k (a local release)."""

    kind = "current"
    step = 1

    def max_user(self, last_episode: int) -> int:
        return last_episode

    def counts_at(self, first: int, last: int, u: np.ndarray) -> np.ndarray:
        return ((u >= first) & (u <= last)).astype(np.int64)

    def breakpoints(self, first: int, last: int) -> tuple[int, ...]:
        return (first - 1, first, last, last + 1)


class _CountedUserByUser:
    """What the patterns whose count is not piecewise linear in u share: a release at episode k reads no user
    after k, and per-user sums go user by user (no breakpoints)."""

    def max_user(self, last_episode: int) -> int:
        return last_episode

    def breakpoints(self, first: int, last: int) -> None:
        """None: the count is not piecewise linear in u (per-user sums go user by user)."""
        return None

    def counts_at(self, first: int, last: int, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError


@dataclass(frozen=True)
class BinaryTreeNode(_CountedUserByUser):
    """The release at episode k is the binary-mechanism node covering users (k − lowbit(k), k]."""

    kind = "tree"
    step = 1

    def counts_at(self, first: int, last: int, u: np.ndarray) -> np.ndarray:
        # At level l, user u lies in the dyadic block j = (u−1) >> l, i.e. users (j·2^l, (j+1)·2^l].
        # That block is a released node iff its right end k = (j+1)·2^l has lowbit exactly 2^l,
        # i.e. j is even, and it is in this block of episodes iff first ≤ k ≤ last.
        total = np.zeros(u.shape, dtype=np.int64)
        level = 0
        while (1 << level) <= max(last, 1):
            j = (u - 1) >> level
            k = (j + 1) << level
            total += ((j % 2 == 0) & (k >= first) & (k <= last)).astype(np.int64)
            level += 1
        return total


#: The deepest level of :class:`DyadicNode` (2^62 episodes, within int64).
MAX_DYADIC_LEVEL = 62


@dataclass(frozen=True)
class DyadicNode(_CountedUserByUser):
    """Level ``level`` of the full dyadic tree: the release at episode k (k divisible by 2^level) is the node
    covering users (k − 2^level, k]. Named ``"dyadic-<level>"``."""

    level: int

    def __post_init__(self) -> None:
        if type(self.level) is not int or not 0 <= self.level <= MAX_DYADIC_LEVEL:
            raise InvalidParameterError("level", f"must be an integer in [0, {MAX_DYADIC_LEVEL}]", self.level)

    @property
    def kind(self) -> str:
        return f"dyadic-{self.level}"

    @property
    def step(self) -> int:
        return 1 << self.level

    def counts_at(self, first: int, last: int, u: np.ndarray) -> np.ndarray:
        # User u lies in the level-l node (j·2^l, (j+1)·2^l] with j = (u − 1) >> l, released at its right end.
        k = (((u - 1) >> self.level) + 1) << self.level
        return ((k >= first) & (k <= last)).astype(np.int64)


#: The most buffers a :class:`ToeplitzFactor` may have.
MAX_TOEPLITZ_BUFFERS = 64


@dataclass(frozen=True)
class ToeplitzFactor(_CountedUserByUser):
    """Rows of the lower-triangular Toeplitz matrix C with c_0 = 1 and c_j = Σ_i θ_i ω_i^(j−1) for j ≥ 1 — a
    buffered linear Toeplitz (BLT) factor (McMahan, Dvijotham et al. 2024: Cx and C⁻¹y cost one update of
    each buffer per step). The release at episode k is row k of Cx (plus fresh noise): it reads users 1..k,
    user u with weight c_(k−u) — its sensitivity to user u is c_(k−u) times the recorded one, its ρ
    c²_(k−u) times the release's. Requires θ_i ≥ 0 and 0 ≤ ω_i < 1 (so c_j > 0, decreasing tails).

    Named ``"toeplitz:θ1/ω1,θ2/ω2,…"`` with every float in its shortest round-trip form (``repr``), so a
    ledger written to JSON and read back accounts exactly as the original.
    """

    thetas: tuple[float, ...]
    omegas: tuple[float, ...]

    def __post_init__(self) -> None:
        thetas = tuple(float(t) for t in self.thetas)
        omegas = tuple(float(w) for w in self.omegas)
        if not 1 <= len(thetas) == len(omegas) <= MAX_TOEPLITZ_BUFFERS:
            raise InvalidParameterError("thetas", f"must pair one θ with each ω, 1 to {MAX_TOEPLITZ_BUFFERS} of each",
                                        (len(thetas), len(omegas)))
        if not all(math.isfinite(t) and t >= 0.0 for t in thetas):
            raise InvalidParameterError("thetas", "must be finite and >= 0", thetas)
        if not all(math.isfinite(w) and 0.0 <= w < 1.0 for w in omegas):
            raise InvalidParameterError("omegas", "must lie in [0, 1)", omegas)
        object.__setattr__(self, "thetas", thetas)
        object.__setattr__(self, "omegas", omegas)

    step = 1

    @property
    def kind(self) -> str:
        return "toeplitz:" + ",".join(f"{t!r}/{w!r}" for t, w in zip(self.thetas, self.omegas, strict=True))

    @classmethod
    def parse(cls, kind: str) -> ToeplitzFactor:
        try:
            pairs = [pair.split("/") for pair in kind[len("toeplitz:"):].split(",")]
            return cls(tuple(float(t) for t, _ in pairs), tuple(float(w) for _, w in pairs))
        except ValueError as exc:
            raise InvalidParameterError("users", "must be toeplitz:θ1/ω1,θ2/ω2,… with θ ≥ 0, 0 ≤ ω < 1", kind) from exc

    def coefficients(self, n: int) -> np.ndarray:
        """c_0, …, c_(n−1)."""
        lags = np.arange(1, max(n, 1), dtype=float)
        c = np.zeros(max(n, 1))
        c[0] = 1.0
        for theta, omega in zip(self.thetas, self.omegas, strict=True):
            c[1:] += theta * omega ** (lags - 1.0)
        return c[:n]

    def weights_at(self, episodes: np.ndarray, user: int) -> np.ndarray:
        """c_(k−u) for the releases at ``episodes`` k (0 where k < u: the release does not read user u)."""
        k = np.asarray(episodes, dtype=np.int64)
        lags = k - user
        out = np.zeros(k.shape)
        read = lags >= 0
        if np.any(read):
            out[read] = self.coefficients(int(lags[read].max()) + 1)[lags[read]]
        return out

    def counts_at(self, first: int, last: int, u: np.ndarray) -> np.ndarray:
        """Σ over k in [max(first, u), last] of c²_(k−u), per user u: the user's ρ in units of one release's.

        Partial sums S(n) = Σ_(j ≤ n) c_j² by a cumulative sum, raised by 4(n + 1) ulps relative (more than the
        rounding of n + 1 positive terms and of each c_j), so a count is never below the exact one."""
        span = max(last - 1, 0)  # the largest lag k − u of any release in the block (u ≥ 1)
        squares = self.coefficients(span + 1) ** 2
        partial = np.cumsum(squares) * (1.0 + 4.0 * (np.arange(span + 1) + 1.0) * np.finfo(float).eps)
        high = last - u  # S(last − u)
        low = np.maximum(first, u) - u - 1  # S(max(first, u) − u − 1), S(−1) = 0
        upper = np.where(high >= 0, partial[np.clip(high, 0, span)], 0.0)
        lower = np.where(low >= 0, partial[np.clip(low, 0, span)], 0.0)
        return np.where(u <= last, upper - lower, 0.0)


_SET_ITEM = re.compile(r"(\d+)(?:-(\d+))?")


@dataclass(frozen=True, eq=False)
class UserSet:
    """An explicit set of users, whatever the episode: the users a release actually read, chosen by the agent from
    the data of the run or fixed in advance (a tree node's range). Built from user indices, ``range`` objects, (lo,
    hi) pairs (inclusive) or an (n, 2) array of them, and stored as ``ranges``: sorted, disjoint, non-adjacent
    inclusive ranges (an int64 array, read-only), so a range of a million users costs what one user does. Named
    ``"set:1-4,7,9-12"``. Every release of a block with this pattern reads the whole set; a release at episode k
    may read no user after k.

    >>> UserSet([7, (1, 3), 4, range(9, 13)]).kind
    'set:1-4,7,9-12'
    """

    ranges: Any

    def __post_init__(self) -> None:
        lo, hi = _set_bounds(self.ranges)
        if lo.size == 0:
            raise InvalidParameterError("users", "must contain at least one user", "an empty set")
        if not 1 <= lo[0] <= hi[-1] <= MAX_COUNT:
            raise InvalidParameterError("users", f"must be user indices in [1, 2^53 = {MAX_COUNT}]",
                                        int(lo[0]) if lo[0] < 1 else int(hi[-1]))
        ranges = np.empty((lo.size, 2), dtype=np.int64)
        ranges[:, 0], ranges[:, 1] = lo, hi
        ranges.setflags(write=False)
        object.__setattr__(self, "ranges", ranges)

    step = 1

    @property
    def kind(self) -> str:
        return "set:" + ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in self.ranges.tolist())

    @classmethod
    def parse(cls, kind: str) -> UserSet:
        items = [_SET_ITEM.fullmatch(item) for item in kind[len("set:"):].split(",")]
        if not all(items):
            raise InvalidParameterError("users", "must be set:<user or lo-hi>,… with user indices >= 1", kind[:80])
        pairs = [(int(m[1]), int(m[2] if m[2] is not None else m[1])) for m in items if m is not None]
        return cls(np.array(pairs, dtype=np.int64).reshape(-1, 2))

    @property
    def size(self) -> int:
        """The number of users in the set."""
        return int((self.ranges[:, 1] - self.ranges[:, 0] + 1).sum())

    def __contains__(self, user: object) -> bool:
        return bool(self.contains(np.array([user], dtype=np.int64))[0])

    def contains(self, u: np.ndarray) -> np.ndarray:
        """Whether each of the users ``u`` is in the set."""
        i = np.searchsorted(self.ranges[:, 0], u, side="right") - 1
        return (i >= 0) & (u <= self.ranges[np.maximum(i, 0), 1])

    def max_user(self, last_episode: int) -> int:
        return int(self.ranges[-1, 1])

    def counts_at(self, first: int, last: int, u: np.ndarray) -> np.ndarray:
        return self.contains(u).astype(np.int64) * (last - first + 1)

    def breakpoints(self, first: int, last: int) -> np.ndarray:
        """The count is constant on each range and between ranges: its ends and their neighbours."""
        return self.breakpoints_of(self.ranges)

    @staticmethod
    def breakpoints_of(ranges: np.ndarray) -> np.ndarray:
        """:meth:`breakpoints` of the ranges of one or several sets."""
        lo, hi = ranges[:, 0], ranges[:, 1]
        return np.concatenate([lo - 1, lo, hi, hi + 1])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UserSet) and (self is other or (
            self.ranges.shape == other.ranges.shape and self.ranges.tobytes() == other.ranges.tobytes()))

    def __hash__(self) -> int:
        return hash(self.ranges.tobytes())

    def __repr__(self) -> str:
        kind = self.kind
        return f"UserSet({kind[4:] if len(kind) <= 84 else kind[4:80] + '…'!r}, {self.size} users)"


def _set_pairs(value: object) -> np.ndarray:
    """A set given as indices, ranges, (lo, hi) pairs or an (n, 2) array, as an (n, 2) int64 array of pairs."""
    if isinstance(value, np.ndarray) and value.ndim in (1, 2) and value.shape[-1:] in ((2,), value.shape[:1]):
        pairs = value if value.ndim == 2 else np.stack([value, value], axis=1)
    elif isinstance(value, (list, tuple, range)):
        rows: list[tuple[Any, Any]] = []
        for item in [value] if isinstance(value, range) else value:
            if isinstance(item, range) and item.step == 1:
                rows += [(item.start, item.stop - 1)] if len(item) else []
            else:
                rows.append((item[0], item[1]) if isinstance(item, (tuple, list)) and len(item) == 2 else (item, item))
        pairs = np.array(rows, dtype=object).reshape(-1, 2)
    else:
        raise InvalidParameterError("users", "must be user indices, ranges or (lo, hi) pairs", type(value).__name__)
    if pairs.dtype == np.int64:
        return pairs
    entries = pairs.ravel().tolist()
    if not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in entries):
        raise InvalidParameterError("users", "must be integer user indices", entries[:4])
    if entries and not 0 <= min(entries) <= max(entries) <= MAX_COUNT:
        raise InvalidParameterError("users", f"must be user indices in [1, 2^53 = {MAX_COUNT}]",
                                    min(entries) if min(entries) < 0 else max(entries))
    return pairs.astype(np.int64)


def _indices(value: object) -> np.ndarray | None:
    """A set given as a flat sequence or 1-D array of integers as an int64 array (None for any other form)."""
    if isinstance(value, np.ndarray):
        return value.astype(np.int64, copy=False) if value.ndim == 1 and value.dtype.kind in "iu" else None
    if isinstance(value, (list, tuple)) and all(type(x) is int for x in value):
        if value and not 0 <= min(value) <= max(value) <= MAX_COUNT:
            raise InvalidParameterError("users", f"must be user indices in [1, 2^53 = {MAX_COUNT}]",
                                        min(value) if min(value) < 0 else max(value))
        return np.array(value, dtype=np.int64)
    return None


def _set_bounds(value: object) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of the normalised ranges (sorted, disjoint, non-adjacent) of a set (:func:`_set_pairs`)."""
    users = _indices(value)
    if users is not None and users.size:  # indices (the common form): runs of consecutive users
        steps = np.diff(users)
        if (steps <= 0).any():
            users = np.unique(users)
            steps = np.diff(users)
        cuts = np.flatnonzero(steps != 1)
        lo, hi = np.empty(cuts.size + 1, dtype=np.int64), np.empty(cuts.size + 1, dtype=np.int64)
        lo[0], lo[1:], hi[:-1], hi[-1] = users[0], users[cuts + 1], users[cuts], users[-1]
        return lo, hi
    pairs = _set_pairs(value)
    lo, hi = pairs[:, 0], pairs[:, 1]
    if np.any(hi < lo):
        raise InvalidParameterError("users", "must give ranges with lo <= hi", pairs[hi < lo][0].tolist())
    if lo.size == 0:
        return lo, hi
    order = np.lexsort((hi, lo))
    lo, hi = lo[order], hi[order]
    reach = np.maximum.accumulate(hi)
    starts = np.flatnonzero(np.concatenate([[True], lo[1:] > reach[:-1] + 1]))
    ends = np.concatenate([starts[1:] - 1, [lo.size - 1]])
    return lo[starts], reach[ends]


UserPattern = PrefixUsers | CurrentUser | BinaryTreeNode | DyadicNode | ToeplitzFactor | UserSet
_PATTERN_TYPES = (PrefixUsers, CurrentUser, BinaryTreeNode, DyadicNode, ToeplitzFactor, UserSet)
_PATTERNS: dict[str, UserPattern] = {"prefix": PrefixUsers(), "current": CurrentUser(), "tree": BinaryTreeNode()}


def user_pattern(kind: str | UserPattern) -> UserPattern:
    """The pattern of that name ("prefix", "current", "tree", "dyadic-<level>", "toeplitz:…", "set:…"), or the
    pattern itself."""
    if isinstance(kind, _PATTERN_TYPES):
        return kind
    named = _PATTERNS.get(kind) if type(kind) is str else None  # (the names agents give at every release)
    if named is not None:
        return named
    if isinstance(kind, str) and kind.startswith("dyadic-") and kind[7:].isdigit() and kind[7:] == str(int(kind[7:])):
        return DyadicNode(int(kind[7:]))
    if isinstance(kind, str) and kind.startswith("toeplitz:"):
        return ToeplitzFactor.parse(kind)
    if isinstance(kind, str) and kind.startswith("set:"):
        return UserSet.parse(kind)
    if not isinstance(kind, str) or kind not in _PATTERNS:
        raise InvalidParameterError("users", f"must be one of {', '.join(_PATTERNS)}, dyadic-<level>, "
                                    "toeplitz:θ1/ω1,…, set:1-4,7,… (or a UserSet)", kind)
    return _PATTERNS[kind]


# --------------------------------------------------------------------------------------------
# Blocks of releases


@dataclass(frozen=True)
class ReleaseBlock:
    """All releases of one statistic family for episodes first..last and stages first..last.

    Every (episode, stage) in the rectangle is one release by ``mechanism`` with fresh noise, touching
    the users given by ``users`` (the same users at every stage of an episode); for a pattern with
    ``step`` > 1 (:class:`DyadicNode`) the episodes are those of the range divisible by the step, and both
    ends of the range must be.
    """

    family: str
    episodes: tuple[int, int]
    stages: tuple[int, int]
    mechanism: Mechanism
    users: UserPattern

    def __post_init__(self) -> None:
        if not isinstance(self.family, str) or not self.family:
            raise InvalidParameterError("family", "must be a non-empty string", self.family)
        object.__setattr__(self, "episodes", _range("episodes", self.episodes))
        object.__setattr__(self, "stages", _range("stages", self.stages))
        object.__setattr__(self, "users", user_pattern(self.users))
        step = self.users.step
        if self.episodes[0] % step or self.episodes[1] % step:
            raise InvalidParameterError("episodes", f"must start and end at multiples of {step} for users "
                                        f"{self.users.kind!r} (its nodes are released there only)", self.episodes)
        if not isinstance(self.mechanism, Mechanism) and not hasattr(self.mechanism, "rho"):  # (hasattr evaluates ρ)
            raise InvalidParameterError("mechanism", "must be a dpverify mechanism", type(self.mechanism).__name__)
        _check_reads_past(self.users, self.episodes[0])

    @property
    def n_episodes(self) -> int:
        return (self.episodes[1] - self.episodes[0]) // self.users.step + 1

    @property
    def n_stages(self) -> int:
        return self.stages[1] - self.stages[0] + 1

    @property
    def n_releases(self) -> int:
        return self.n_episodes * self.n_stages

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "episodes": list(self.episodes),
            "stages": list(self.stages),
            "mechanism": self.mechanism.to_dict(),
            "users": self.users.kind,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReleaseBlock:
        if not isinstance(data, dict):
            raise InvalidParameterError("block", "must be a JSON object", type(data).__name__)
        missing = set(_BLOCK_FIELDS) - set(data)
        if missing:
            raise InvalidParameterError("block", f"is missing fields {sorted(missing)}", sorted(data))
        unknown = sorted(set(data) - set(_BLOCK_FIELDS))
        if unknown:
            raise InvalidParameterError(
                f"block field {unknown[0]!r}", f"is not a ledger field (fields: {', '.join(_BLOCK_FIELDS)})", unknown[0]
            )
        return cls(
            family=data["family"],
            episodes=tuple(data["episodes"]),
            stages=tuple(data["stages"]),
            mechanism=mechanism_from_dict(data["mechanism"]),
            users=user_pattern(data["users"]),
        )


def _check_reads_past(pattern: UserPattern, episode: int) -> None:
    """A release at episode k reads the users of episodes 1..k at most (an explicit set is the one pattern that could
    name later users)."""
    if pattern.max_user(episode) > episode:
        raise InvalidParameterError("users", f"must name no user after the release's episode {episode} (a release "
                                    "reads the data of the users who came before it, or its own)", repr(pattern))


_BLOCK_FIELDS: tuple[str, ...] = ("family", "episodes", "stages", "mechanism", "users")
_LEDGER_FIELDS: tuple[str, ...] = ("schema", "schema_version", "relation", "blocks")


def _range(name: str, value: object) -> tuple[int, int]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise InvalidParameterError(name, "must be a pair (first, last)", value)
    first = _validate.integer(f"{name}[0]", value[0], minimum=1)
    last = _validate.integer(f"{name}[1]", value[1], minimum=first)
    if last > MAX_COUNT:
        raise InvalidParameterError(f"{name}[1]", f"must be <= 2^53 = {MAX_COUNT} (larger counts are not exact in "
                                    "floating point)", last)
    return (first, last)


# --------------------------------------------------------------------------------------------
# Runs: releases gathered into blocks as they are recorded


@dataclass(slots=True)
class _Run:
    """Releases gathered into one block: each episode of ``episodes`` (those divisible by the step of ``users``)
    at each stage of ``stages``, by ``mechanism``; set aside and closed under its :attr:`key`. A family's current
    run grows in place; a closed run is never changed (a merge replaces it), so a copy of a list of them is a
    snapshot."""

    episodes: tuple[int, int]
    stages: tuple[int, int]
    mechanism: Mechanism
    users: UserPattern

    @property
    def key(self) -> tuple[tuple[int, int], Mechanism]:  # (the mechanism as a value, compared by equality)
        return (self.stages, self.mechanism)

    def made_by(self, mechanism: Mechanism, users: UserPattern) -> bool:
        return ((self.mechanism is mechanism or self.mechanism == mechanism)
                and (self.users is users or self.users == users))

    def grow(self, episode: int, stages: tuple[int, int]) -> bool:
        """Take in the releases of ``stages`` at ``episode`` if they border the run — its stages at its next episode,
        or one stage below or above its stages in its only episode — and say whether it did."""
        (k0, k1), (h0, h1), (first, last) = self.episodes, self.stages, stages
        if stages == self.stages and episode == k1 + self.users.step:
            self.episodes = (k0, episode)
            return True
        if first == last and k0 == k1 == episode and (first == h0 - 1 or first == h1 + 1):
            self.stages = (min(h0, first), max(h1, first))
            return True
        return False


@dataclass(slots=True)
class _FamilyRecord:
    """One family's releases as recorded: the run being extended, runs set aside (one per key: a family released by
    one mechanism per stage resumes each stage's run episode after episode), closed runs, and the position in
    ``closed`` of the last run of each key (where a closed run that continues it is merged).

    ``sweep``: the stages recorded so far, one at a time, of the current run's next episode (an agent's stage-by-stage
    sweep, from one end of the run's stages); a sweep that covers the run's stages joins the run when the next one
    begins. Until then they are the run that :meth:`start` would have begun at the sweep's first stage;
    :meth:`settle` begins it, as every path but the sweep's own does first, so that the blocks are those of recording
    without it (with fewer runs made and closed on the way)."""

    current: _Run | None = None
    set_aside: dict[tuple[tuple[int, int], Mechanism], _Run] = field(default_factory=dict)
    closed: list[_Run] = field(default_factory=list)
    tails: dict[tuple[tuple[int, int], Mechanism], int] = field(default_factory=dict)
    sweep: _Run | None = None

    def extend(self, episode: int, stages: tuple[int, int], mechanism: Mechanism, users: UserPattern) -> bool:
        """Add releases to the current run if they border it, else (one stage) to the set-aside run of its stage and
        mechanism whose next episode it is, which becomes the current run; False when no run takes them."""
        current = self.current
        if current is not None and current.made_by(mechanism, users):
            sweep = self.sweep
            if sweep is None:
                if current.grow(episode, stages):
                    return True
                if self._opens_sweep(current, current.episodes[1], episode, stages, mechanism, users):
                    self.sweep = _Run((episode, episode), stages, mechanism, users)
                    return True
            elif self._continues_sweep(current, sweep, episode, stages):
                return True
            elif sweep.stages == current.stages and self._opens_sweep(current, sweep.episodes[0], episode, stages,
                                                                      mechanism, users):
                current.episodes = (current.episodes[0], sweep.episodes[0])  # the finished sweep joins the run
                self.sweep = _Run((episode, episode), stages, mechanism, users)
                return True
        if self.sweep is not None:  # (the run the sweep becomes may take the release)
            self.settle()
            current = self.current
            if current is not None and current.made_by(mechanism, users) and current.grow(episode, stages):
                return True
        earlier = self._resumable(episode, stages, mechanism, users)
        if earlier is None:
            return False
        del self.set_aside[earlier.key]
        self.start(earlier)
        earlier.episodes = (earlier.episodes[0], episode)
        return True

    def _opens_sweep(self, current: _Run, after: int, episode: int, stages: tuple[int, int], mechanism: Mechanism,
                     users: UserPattern) -> bool:
        """Whether one stage at an end of the current run's stages, in the episode after episode ``after``, begins a
        sweep: the run spans several stages and no set-aside run of that stage takes the release first."""
        (h0, h1), (first, last) = current.stages, stages
        if first != last or h0 == h1 or (first != h0 and first != h1) or episode != after + users.step:
            return False
        return self._resumable(episode, stages, mechanism, users) is None

    def _resumable(self, episode: int, stages: tuple[int, int], mechanism: Mechanism,
                   users: UserPattern) -> _Run | None:
        """The set-aside run of one stage whose next episode ``episode`` is, by the same mechanism and users."""
        earlier = self.set_aside.get((stages, mechanism)) if self.set_aside and stages[0] == stages[1] else None
        if earlier is None or episode != earlier.episodes[1] + users.step or not earlier.made_by(mechanism, users):
            return None
        return earlier

    @staticmethod
    def _continues_sweep(current: _Run, sweep: _Run, episode: int, stages: tuple[int, int]) -> bool:
        """Take one stage of the sweep's episode next to the sweep's stages and within the current run's. (A finished
        sweep joins the run when the next one begins: a stage beyond the run's would extend it as a run of its own.)"""
        (h0, h1), (s0, s1), (first, last) = current.stages, sweep.stages, stages
        if first != last or episode != sweep.episodes[0] or not (first == s0 - 1 >= h0 or first == s1 + 1 <= h1):
            return False
        sweep.stages = (min(s0, first), max(s1, first))
        return True

    def settle(self) -> None:
        """Begin the sweep in progress as a run of its own (:meth:`start`), as recording it stage by stage does."""
        if self.sweep is not None:
            sweep, self.sweep = self.sweep, None
            self.start(sweep)

    def stretch(self, episode: int, first: int, last: int) -> bool:
        """Extend the current run from stage ``first`` on to ``last`` (either way) when its only episode is
        ``episode`` and it ends at ``first`` on that side: what recording the stages in between one by one does."""
        self.settle()
        run = self.current
        if run is None or run.episodes != (episode, episode) or run.stages[last > first] != first:
            return False
        run.stages = (run.stages[0], last) if last > first else (last, run.stages[1])
        return True

    def start(self, run: _Run) -> None:
        """Make ``run`` the current run; set the current one aside (closing the set-aside run of its key)."""
        self.settle()
        if self.current is not None:
            earlier = self.set_aside.pop(self.current.key, None)
            if earlier is not None:
                self.close(earlier)
            self.set_aside[self.current.key] = self.current
        self.current = run

    def close(self, run: _Run, merge: bool = True) -> None:
        """Add a finished run to the closed ones, merged into the last closed run of its key (its stages and
        mechanism) when it continues it: the same users, in the episodes right after."""
        i = self.tails.get(run.key, -1)
        tail = self.closed[i] if merge and i >= 0 else None
        if tail is not None and tail.users == run.users and tail.episodes[1] + run.users.step == run.episodes[0]:
            self.closed[i] = _Run((tail.episodes[0], run.episodes[1]), tail.stages, tail.mechanism, tail.users)
        else:
            self.tails[run.key] = len(self.closed)
            self.closed.append(run)

    def pending(self) -> list[_Run]:  # the set-aside runs, in the order they were set aside, then the current one
        self.settle()
        return [*self.set_aside.values(), *([] if self.current is None else [self.current])]

    def blocks(self, family: str) -> list[ReleaseBlock]:
        """The family's blocks, its pending runs closed in a copy, in a canonical order (stages, then episodes)."""
        self.settle()  # (before the closed runs are copied: beginning the sweep may close one)
        view = _FamilyRecord(closed=list(self.closed), tails=dict(self.tails))
        for run in self.pending():
            view.close(run)
        blocks = [ReleaseBlock(family, r.episodes, r.stages, r.mechanism, r.users) for r in view.closed]
        return sorted(blocks, key=lambda b: (b.stages, b.episodes))


def _stage_runs(releases: Sequence[tuple[str, int, Mechanism]]) -> list[tuple[str, int, int, Mechanism]]:
    """(family, first, last, mechanism) of each run of releases one family makes at consecutive stages by one
    mechanism, ascending (first ≤ last) or descending, family by family in the order of their first release."""
    if releases:  # (most often one run: one family's stages at once)
        family, first, mechanism = releases[0]
        if type(first) is int and first >= 1 and all(
                r[0] == family and r[1] == first + i and r[2] is mechanism for i, r in enumerate(releases)):
            return [(family, first, first + len(releases) - 1, mechanism)]
    runs: dict[str, list[tuple[int, int, Mechanism]]] = {}
    for family, stage, mechanism in releases:
        if type(stage) is not int or stage < 1:
            stage = _validate.integer("stage", stage, minimum=1)
        family_runs = runs.setdefault(family, [])
        first, last, previous = family_runs[-1] if family_runs else (0, 0, None)
        if ((stage == last + 1 and first <= last) or (stage == last - 1 and first >= last)) and (
                previous is mechanism or previous == mechanism):
            family_runs[-1] = (first, stage, mechanism)
        else:
            family_runs.append((stage, stage, mechanism))
    return [(family, *run) for family, family_runs in runs.items() for run in family_runs]


# --------------------------------------------------------------------------------------------
# Per-user counts


def release_counts(blocks: Sequence[ReleaseBlock], users: np.ndarray) -> list[tuple[Mechanism, bool, np.ndarray]]:
    """(mechanism, weighted, count) per block: how many of its releases read each of ``users`` (float; for a
    Toeplitz factor, ``weighted``, the users' weights Σc²). The blocks of explicit user sets come summed per
    mechanism, by difference arrays over their ranges: O((ranges + users)·log ranges) in all, never blocks × users;
    their counts are integers, exact."""
    out: list[tuple[Mechanism, bool, np.ndarray]] = []
    sets: dict[Mechanism, list[tuple[UserSet, int]]] = {}
    for b in blocks:
        if isinstance(b.users, UserSet):
            sets.setdefault(b.mechanism, []).append((b.users, b.n_releases))
        else:
            count = b.users.counts_at(b.episodes[0], b.episodes[1], users) * float(b.n_stages)
            out.append((b.mechanism, isinstance(b.users, ToeplitzFactor), count))
    for mechanism, group in sets.items():
        out.append((mechanism, False, _set_counts(group, users)))
    return out


def _set_counts(sets: Sequence[tuple[UserSet, int]], users: np.ndarray) -> np.ndarray:
    """Σ over ``sets`` (a set and its number of releases) of the number of releases that read each of ``users``: the
    weights of the ranges that start at or before u minus those of the ranges that end before u."""
    releases = [n for _, n in sets]
    if sum(releases) > MAX_COUNT:
        raise InvalidParameterError("ledger", f"must hold at most 2^53 = {MAX_COUNT} releases of explicit user sets "
                                    "(larger counts are not exact in floating point)", sum(releases))
    ranges = np.concatenate([s.ranges for s, _ in sets])
    weights = np.repeat(np.array(releases, dtype=np.int64), [s.ranges.shape[0] for s, _ in sets])
    started, ended = (_weight_up_to(ranges[:, 0], weights, users, "right"),
                      _weight_up_to(ranges[:, 1], weights, users, "left"))
    return (started - ended).astype(float)


def _weight_up_to(points: np.ndarray, weights: np.ndarray, users: np.ndarray, side: str) -> np.ndarray:
    """Σ weights of the points ≤ u (``side="right"``) or < u (``"left"``), for each of ``users``."""
    order = np.argsort(points, kind="stable")
    cumulative = np.concatenate([[0], np.cumsum(weights[order])])
    return cumulative[np.searchsorted(points[order], users, side=side)]  # type: ignore[call-overload]


def require_per_user_work(blocks: Sequence[ReleaseBlock], n: int) -> None:
    """Refuse (:mod:`dpverify.limits`) accounting ``n`` users one by one when it would exceed the work limit: every
    block but the explicit sets costs one count per user and level, the sets a search per user and a sort."""
    ranges = others = 0
    for b in blocks:
        if isinstance(b.users, UserSet):
            ranges += b.users.ranges.shape[0]
        else:
            others += 1
    levels = max(1, int(n).bit_length())
    require_work("ledger", f"{n} users", float(n) * (others * levels + max(1, ranges).bit_length()) + 4.0 * ranges,
                 f"per-user accounting of {n} users with binary-tree releases")


# --------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class FamilySummary:
    """Accounting of one statistic family."""

    family: str
    n_releases: int
    naive_rho: float
    worst_user_rho: float
    mechanisms: tuple[str, ...]


@dataclass(frozen=True)
class LedgerAccount:
    """What a ledger answers at one δ: ρ (naive and worst user) and ε under each conversion.

    ``epsilon`` maps a conversion name to ε (``exact`` is present only when every release is
    Gaussian); every route of a mixed ledger, and the least ε among them, is
    :func:`dpverify.accounting.epsilon_routes`'s to answer. The ε are for the *published
    statistics* (the billboard); by the billboard lemma (Hsu et al. 2014; Sahu 2025 Lemma 2.4) the same
    (ε, δ) holds as joint DP for actions computed from the billboard and each user's own data only.
    """

    relation: Neighbouring
    n_releases: int
    n_users: int
    naive_rho: float
    worst_user_rho: float
    worst_user: int
    delta: float
    accounting: str
    epsilon: dict[str, float]
    families: tuple[FamilySummary, ...]


# --------------------------------------------------------------------------------------------
# The ledger


class PrivacyLedger:
    """An append-only record of releases under one neighbouring relation.

    >>> from dpverify.mechanisms import GaussianMechanism
    >>> ledger = PrivacyLedger("replace-one")
    >>> m = GaussianMechanism(sensitivity=1.0, sigma=10.0, dim=3)
    >>> for k in (1, 2, 3):
    ...     for h in (2, 1):
    ...         ledger.record("sum", episode=k, stage=h, mechanism=m, users="prefix")
    >>> len(ledger.blocks), ledger.n_releases
    (1, 6)
    >>> round(ledger.naive_rho(), 6), round(ledger.worst_user_rho(), 6)   # user 1 is in 4 releases
    (0.03, 0.02)
    """

    def __init__(self, relation: Neighbouring | str = Neighbouring.REPLACE_ONE) -> None:
        self.relation = Neighbouring.parse(relation)
        # Each family's record, in the order of the family's first release (the order of :attr:`blocks`).
        self._families: dict[str, _FamilyRecord] = {}
        self._blocks: tuple[ReleaseBlock, ...] | None = None  # :attr:`blocks`, until the next record

    # ---- recording ---------------------------------------------------------------------------

    @property
    def blocks(self) -> tuple[ReleaseBlock, ...]:
        """Every block, grouped by family in the order families first appeared (runs merged), a family's blocks
        by stages, then episodes."""
        if self._blocks is None:
            self._blocks = tuple(block for family, record in self._families.items() for block in record.blocks(family))
        return self._blocks

    def _check_relation(self, mechanism: Mechanism) -> None:
        relation = getattr(mechanism, "relation", None)
        if relation is not self.relation:
            raise InvalidParameterError(
                "mechanism.relation",
                f"must equal the ledger's relation {self.relation.value!r} (one relation per ledger)",
                getattr(relation, "value", relation),  # the relation's name, not the enum's repr
            )

    def record_block(self, family: str, episodes: tuple[int, int], stages: tuple[int, int], mechanism: Mechanism,
                     users: str | UserPattern) -> ReleaseBlock:
        """Record a whole rectangle of releases at once (used by schedules). For a pattern with ``step`` > 1 the
        rectangle is that of the episodes in ``episodes`` divisible by the step (at least one)."""
        pattern = user_pattern(users)
        first, last = _range("episodes", episodes)
        step = pattern.step
        first, last = -(-first // step) * step, last // step * step
        if first > last:
            raise InvalidParameterError("episodes", f"must contain a multiple of {step} for users {pattern.kind!r}",
                                        episodes)
        block = ReleaseBlock(family, (first, last), stages, mechanism, pattern)
        self._check_relation(block.mechanism)
        self._blocks = None
        record = self._families.setdefault(family, _FamilyRecord())
        for run in record.pending():  # the block starts no run: the family's runs are closed first
            record.close(run)
        record.current, record.set_aside = None, {}
        record.close(_Run(block.episodes, block.stages, block.mechanism, block.users), merge=False)
        return block

    def record(self, family: str, episode: int, stage: int, mechanism: Mechanism, users: str | UserPattern) -> None:
        """Record one release, merged into a block with the family's releases it borders: agents record stage by
        stage (any order of stages within an episode, one episode after the other); a release that extends neither
        the family's current run nor a set-aside run of its stage starts a new one, so the ledger is exact whatever
        the order — merging only saves memory."""
        if type(episode) is not int or episode < 1:
            episode = _validate.integer("episode", episode, minimum=1)
        if type(stage) is not int or stage < 1:
            stage = _validate.integer("stage", stage, minimum=1)
        pattern = users if isinstance(users, _PATTERN_TYPES) else user_pattern(users)
        self._blocks = None
        record = self._families.get(family)
        if record is not None and record.extend(episode, (stage, stage), mechanism, pattern):
            return
        if episode % pattern.step:
            raise InvalidParameterError("episode", f"must be a multiple of {pattern.step} for users {pattern.kind!r}",
                                        episode)
        if not isinstance(family, str) or not family:
            raise InvalidParameterError("family", "must be a non-empty string", family)
        _check_reads_past(pattern, episode)
        if not isinstance(mechanism, Mechanism) and not hasattr(mechanism, "rho"):  # (hasattr evaluates ρ)
            raise InvalidParameterError("mechanism", "must be a dpverify mechanism", type(mechanism).__name__)
        self._check_relation(mechanism)
        self._families.setdefault(family, _FamilyRecord()).start(_Run((episode, episode), (stage, stage), mechanism,
                                                                      pattern))

    def record_releases(self, episode: int, releases: Sequence[tuple[str, int, Mechanism]],
                        users: str | UserPattern) -> None:
        """Record releases of one episode, ``releases[i]`` = (family, stage, mechanism) (a billboard's block), family
        by family: a run of consecutive stages by one mechanism extends the family's current run at once when it is
        its next episode, else is recorded as by :meth:`record` stage by stage (the same releases and accounting;
        the same blocks for the orders agents record in: each episode's stages in a sweep, episode after episode)."""
        if type(episode) is not int or episode < 1:
            episode = _validate.integer("episode", episode, minimum=1)
        pattern = users if isinstance(users, _PATTERN_TYPES) else user_pattern(users)
        self._blocks = None
        for family, first, last, mechanism in _stage_runs(releases):
            record = self._families.get(family)
            if first < last and record is not None and record.extend(episode, (first, last), mechanism, pattern):
                continue  # the next episode of the current run's stages
            self.record(family, episode, first, mechanism, pattern)
            if first != last and not self._families[family].stretch(episode, first, last):
                step = 1 if last > first else -1
                for stage in range(first + step, last + step, step):
                    self.record(family, episode, stage, mechanism, pattern)

    # ---- queries -----------------------------------------------------------------------------

    @property
    def n_releases(self) -> int:
        return sum(b.n_releases for b in self.blocks)

    @property
    def n_users(self) -> int:
        """The largest user index any release touches (users are numbered from 1)."""
        return max((b.users.max_user(b.episodes[1]) for b in self.blocks), default=0)

    @property
    def all_gaussian(self) -> bool:
        """True when every release is Gaussian (GOE included): the exact conversion applies."""
        return all(b.mechanism.is_gaussian for b in self.blocks)

    def families(self) -> tuple[str, ...]:
        return tuple(self._families)

    def naive_rho(self, family: str | None = None) -> float:
        """Σ ρ over all releases (of one family), rounded up: what "number of releases × ρ0" gives."""
        terms = [b.n_releases * b.mechanism.rho for b in self.blocks if family in (None, b.family)]
        return round_up(math.fsum(terms), 2) if terms else 0.0

    def per_user_rho(self, family: str | None = None) -> np.ndarray:
        """ρ paid by each user u = 1..n_users (index u−1), over all releases (of one family).

        Allocates one float per user (refused above the memory limit, :mod:`dpverify.limits`);
        :meth:`worst_user` needs no such array.
        """
        n = self.n_users
        require_memory("ledger", f"{n} users", 24.0 * n, f"per-user accounting of {n} users")
        return self._rho_at(np.arange(1, n + 1, dtype=np.int64), family)

    def _rho_at(self, users: np.ndarray, family: str | None) -> np.ndarray:
        """ρ paid by each of ``users`` (1-based), summed block by block (:func:`release_counts`)."""
        total = np.zeros(users.shape, dtype=float)
        for mechanism, _, count in release_counts([b for b in self.blocks if family in (None, b.family)], users):
            total += count * mechanism.rho
        return total

    def _candidate_users(self, family: str | None) -> np.ndarray | None:
        """Users among whom the worst one lies, when every block's count is piecewise linear in u.

        Per-user ρ is then a sum of piecewise-linear functions of u, linear between consecutive
        breakpoints, so its maximum is attained at a breakpoint or at either end: a handful of users
        instead of all of them. None when a block (binary tree) is not piecewise linear.
        """
        n = self.n_users
        points, ranges = [np.array([1, n], dtype=np.int64)], []
        for b in self.blocks:
            if family not in (None, b.family):
                continue
            if isinstance(b.users, UserSet):  # (their breakpoints at once, below)
                ranges.append(b.users.ranges)
                continue
            cuts = b.users.breakpoints(b.episodes[0], b.episodes[1])
            if cuts is None:
                return None
            points.append(np.asarray(cuts, dtype=np.int64))
        if ranges:
            points.append(UserSet.breakpoints_of(np.concatenate(ranges)))
        candidates = np.unique(np.concatenate(points))
        return candidates[(candidates >= 1) & (candidates <= n)]

    def worst_user(self, family: str | None = None) -> tuple[int, float]:
        """(u, ρ_u) for the user who pays most (u = 0 and ρ = 0 for an empty ledger).

        Exact without visiting every user when every block is prefix or current-user (the schedules
        of the built-in agents: any number of users at the cost of a few); binary-tree blocks are
        summed in chunks of users, refused above the work limit (:mod:`dpverify.limits`).
        """
        n = self.n_users
        if n == 0:
            return 0, 0.0
        candidates = self._candidate_users(family)
        if candidates is not None:
            rho = self._rho_at(candidates, family)
            i = int(np.argmax(rho))
            best_user, best = int(candidates[i]), float(rho[i])
        else:
            require_per_user_work(self.blocks, n)
            best_user, best = 0, -math.inf
            for start in range(1, n + 1, _USER_CHUNK):
                users = np.arange(start, min(n, start + _USER_CHUNK - 1) + 1, dtype=np.int64)
                rho = self._rho_at(users, family)
                i = int(np.argmax(rho))
                if rho[i] > best:
                    best_user, best = int(users[i]), float(rho[i])
        # Each block adds at most one float per user; a few ulps per block cover the rounding of the sum.
        return best_user, round_up(best, 2 * len(self.blocks) + 2)

    def worst_user_rho(self, family: str | None = None) -> float:
        return self.worst_user(family)[1]

    def guarantee(self, delta: float, conversion: str = "exact", accounting: str = "per-user") -> DPGuarantee:
        """The (ε, δ)-DP guarantee of the published statistics under one conversion.

        ``accounting="per-user"`` uses the worst user's ρ (the truth for this release pattern);
        ``"naive"`` the total over all releases (what the papers compute; never smaller).
        """
        delta = _validate.open_unit("delta", delta)
        route = get_conversion(conversion)
        accounting = _validate.one_of("accounting", accounting, ACCOUNTING_MODES)
        if route.gaussian_only and not self.all_gaussian:
            raise InvalidParameterError(
                "conversion",
                f"'{conversion}' needs every release to be Gaussian (this ledger has non-Gaussian releases)",
                conversion,
            )
        rho = self.worst_user_rho() if accounting == "per-user" else self.naive_rho()
        self._warn_if_untouched()
        return DPGuarantee(epsilon_from_rho(rho, delta, conversion), delta, conversion, rho)

    def account(self, delta: float, accounting: str = "per-user") -> LedgerAccount:
        """Everything at once: ρ naive and per user, ε under every applicable conversion and by every route of
        :mod:`dpverify.accounting` (the least of which is the ledger's ε), per family."""
        delta = _validate.open_unit("delta", delta)
        accounting = _validate.one_of("accounting", accounting, ACCOUNTING_MODES)
        conversions = [c.name for c in CONVERSION_REGISTRY.values() if not c.gaussian_only or self.all_gaussian]
        eps = {c: self.guarantee(delta, c, accounting).epsilon for c in conversions}
        worst_u, worst_rho = self.worst_user()
        families = tuple(
            FamilySummary(
                family=f,
                n_releases=sum(b.n_releases for b in self.blocks if b.family == f),
                naive_rho=self.naive_rho(f),
                worst_user_rho=self.worst_user_rho(f),
                mechanisms=tuple(dict.fromkeys(b.mechanism.kind for b in self.blocks if b.family == f)),
            )
            for f in self.families()
        )
        return LedgerAccount(
            relation=self.relation,
            n_releases=self.n_releases,
            n_users=self.n_users,
            naive_rho=self.naive_rho(),
            worst_user_rho=worst_rho,
            worst_user=worst_u,
            delta=delta,
            accounting=accounting,
            epsilon=eps,
            families=families,
        )

    def _warn_if_untouched(self) -> None:
        if self.n_users == 0 and self._families:
            warnings.warn(
                f"no release of this ledger touches any user's data ({self.n_releases} releases, all "
                "'prefix' at episode 1?): epsilon = 0 holds only vacuously; check each release's users pattern",
                NoUserTouchedWarning,
                stacklevel=3,
            )

    # ---- serialization -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "dpverify.ledger",
            "schema_version": SCHEMA_VERSION,
            "relation": self.relation.value,
            "blocks": [b.to_dict() for b in self.blocks],
        }

    def to_json(self) -> str:
        """JSON text; floats are written with repr, so the round trip is exact."""
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, data: Any) -> PrivacyLedger:
        if not isinstance(data, dict):
            raise InvalidParameterError("ledger", "must be a JSON object", type(data).__name__)
        if data.get("schema") != "dpverify.ledger":
            raise InvalidParameterError("ledger.schema", "must be 'dpverify.ledger'", data.get("schema"))
        if data.get("schema_version") != SCHEMA_VERSION:
            raise InvalidParameterError("ledger.schema_version", f"must be {SCHEMA_VERSION}",
                                        data.get("schema_version"))
        unknown = sorted(set(data) - set(_LEDGER_FIELDS))
        if unknown:
            raise InvalidParameterError(
                f"ledger field {unknown[0]!r}", f"is not a ledger field (fields: {', '.join(_LEDGER_FIELDS)})",
                unknown[0],
            )
        blocks = data.get("blocks")
        if not isinstance(blocks, list):
            raise InvalidParameterError("ledger.blocks", "must be a list", type(blocks).__name__)
        require_work("ledger", f"{len(blocks)} blocks", BLOCK_OPERATIONS * len(blocks),
                     f"reading and accounting {len(blocks)} blocks")
        ledger = cls(data.get("relation", ""))
        for raw in blocks:
            block = ReleaseBlock.from_dict(raw)
            ledger.record_block(block.family, block.episodes, block.stages, block.mechanism, block.users)
        return ledger

    @classmethod
    def from_json(cls, text: str) -> PrivacyLedger:
        if not isinstance(text, (str, bytes, bytearray)):
            raise InvalidParameterError("ledger", "must be JSON text (a str)", type(text).__name__)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParameterError("ledger", f"must be valid JSON ({exc.msg} at line {exc.lineno})", "…") from None
        except RecursionError:
            raise InvalidParameterError("ledger", "must not nest arrays or objects that deep (a ledger nests three "
                                        "levels)", "…") from None
        except ValueError as exc:  # a number of thousands of digits: Python refuses to read it
            raise InvalidParameterError("ledger", f"must hold numbers of at most a few hundred digits ({exc})",
                                        "…") from None
        return cls.from_dict(data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PrivacyLedger) and self.relation == other.relation and self.blocks == other.blocks

    def __repr__(self) -> str:
        return f"PrivacyLedger(relation={self.relation.value!r}, blocks={len(self.blocks)}, releases={self.n_releases})"


def noise_room(ledger: PrivacyLedger, epsilon: float, delta: float, conversion: str = "exact",
               accounting: str = "per-user") -> float | None:
    """By how much every release's noise could shrink with the ledger still (ε, δ)-DP by ``conversion``:
    √(ρ_allowed/ρ), ρ_allowed the largest budget the conversion allows at (ε, δ) and ρ what the worst user
    (per-user accounting) or all releases (naive) pay — every ρ scales as 1/noise². None when it cannot be
    computed (nothing spent, the conversion does not apply to the ledger, or it has no inverse at (ε, δ)); a
    value ≤ 1 means no room."""
    if get_conversion(conversion).gaussian_only and not ledger.all_gaussian:
        return None
    rho = ledger.worst_user_rho() if accounting == "per-user" else ledger.naive_rho()
    if not rho > 0:
        return None
    try:
        allowed = rho_for_epsilon_delta(epsilon, delta, conversion)
    except (InvalidParameterError, ArithmeticError):
        return None
    return math.sqrt(allowed / rho) if allowed > 0 else None
