"""Sensitivity replay: how much did each release change when one user's data changed?

A fresh run R0 on users D and a replay of R0's transcript on the neighbouring users D′ (user j's tape
replaced, or the slot emptied for add/remove-one), with the same coins and the same noise seed
(:mod:`.runs`), draw the same noise for every release: the kept values differ by exactly the change of
each raw statistic, the transcript held fixed — up to the rounding of (raw′ + noise) − (raw + noise),
which :func:`rounding_tolerance` bounds. Each release r is then judged against its record:

* **pattern** — if r changed, its recorded user pattern (``users`` of the ledger: prefix, current, tree)
  must include user j; otherwise the ledger does not charge user j for a release that reads user j's
  data (a prefix release recorded as ``"current"``, a release labelled episode k that reads user k);
* **sensitivity** — ‖Δ_r‖ in the mechanism's norm (ℓ2, Frobenius, ℓ1) must not exceed the recorded
  sensitivity (relative slack 10⁻⁹ plus the rounding tolerance).

Either failure is a proof by example that the ledger under-accounts this pair: the accounting that the
claim rests on is false. The realised fraction ‖Δ_r‖/Δ_r of each family is the tightness figure of the
audit. The changes also give a witnessed bound: μ² = Σ_r (‖Δ_r‖/σ_r)² over the Gaussian releases of the
user (σ_r at the noise check's upper confidence limit), and its exact μ-GDP ε(δ) rounded down
(:class:`~dpverify.whitebox.result.PairWitness` says under which condition it bounds the pair's ε).

Every release's change is computed at once per shape (a run publishes tens of thousands of releases).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpverify.agents.core.billboard import PublishedRelease
from dpverify.conversions import epsilon_exact_gaussian_lower
from dpverify.ledger import ToeplitzFactor, user_pattern
from dpverify.mechanisms import Mechanism
from dpverify.whitebox.result import FamilySensitivity, NoiseCheck, PairWitness, ReleaseFinding

#: Relative slack on a recorded sensitivity (floating-point rounding of the agent's own sums).
SENSITIVITY_REL_TOL = 1e-9
#: Rounding allowance per coordinate, in units of the largest published value of the release.
ROUNDING_ULPS = 16.0

_NORM_ORDER = {"l2": 2, "Frobenius": 2, "l1": 1}


def rounding_tolerance(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Per release (leading axis): a bound on |((raw′ + n) − (raw + n)) − (raw′ − raw)| per coordinate,
    16 ulps of the largest magnitude among both values (at least 1)."""
    axes = tuple(range(1, first.ndim))
    scale = np.maximum(1.0, np.maximum(np.abs(first).max(axis=axes), np.abs(second).max(axis=axes)))
    return ROUNDING_ULPS * np.finfo(float).eps * scale


def reads_user(kind: str, episodes: np.ndarray, user: int) -> np.ndarray:
    """Whether releases of user pattern ``kind`` at ``episodes`` read ``user`` (the ledger's patterns,
    :mod:`dpverify.ledger`): prefix k reads 1..k−1, current k reads k, tree node k reads (k − lowbit(k), k],
    dyadic-l node k reads (k − 2^l, k]."""
    k = np.asarray(episodes, dtype=np.int64)
    if kind.startswith("toeplitz:"):
        return user <= k
    if kind.startswith("dyadic-"):
        width = user_pattern(kind).step
        return (k - width < user) & (user <= k)
    if kind == "prefix":
        return user <= k - 1
    if kind == "current":
        return k == user
    if kind == "tree":
        return (k - (k & -k) < user) & (user <= k)
    return np.ones(k.shape, dtype=bool)  # an unknown pattern: assume it reads everyone (never a false finding)


def read_weights(kind: str, episodes: np.ndarray, user: int) -> np.ndarray:
    """The factor of the recorded sensitivity that applies to ``user`` in each release: 1 where the release reads the
    user and 0 where it does not, except for a Toeplitz factor (:class:`dpverify.ledger.ToeplitzFactor`), whose
    release k reads user u with weight c_(k−u)."""
    if kind.startswith("toeplitz:"):
        return ToeplitzFactor.parse(kind).weights_at(episodes, user)
    return reads_user(kind, episodes, user).astype(float)


@dataclass(frozen=True, eq=False)
class ReplayComparison:
    """A replayed pair: every release's change (arrays in publication order) and the findings."""

    environment: str
    episodes: int
    user: int
    canaries: str
    releases: tuple[PublishedRelease, ...]
    norms: np.ndarray
    changed: np.ndarray
    reads: np.ndarray
    recorded: np.ndarray
    findings: tuple[ReleaseFinding, ...]
    #: Per release, the factor of its recorded sensitivity that applies to this user (:func:`read_weights`).
    weights: np.ndarray | None = None

    def summary(self) -> PairSummary:
        """The compact result of this pair (findings, the largest fraction per family, the witnessed μ²)."""
        families = np.array([r.family for r in self.releases])
        weights = np.ones(len(self.releases)) if self.weights is None else self.weights
        applying = self.recorded * weights  # the sensitivity the ledger charges this user for
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(self.reads & (applying > 0), self.norms / applying, -1.0)
        best = []
        for family in dict.fromkeys(families.tolist()):
            where = np.flatnonzero(families == family)
            i = int(where[np.argmax(ratios[where])])
            if ratios[i] < 0:
                continue
            release = self.releases[i]
            norm = release.mechanism.sensitivity_norm if release.mechanism is not None else "l2"
            pair = (f"{self.environment}, {self.canaries} at user {self.user} (episode {release.episode}, "
                    f"stage {release.stage})")
            best.append(FamilySensitivity(family, norm, float(applying[i]), float(self.norms[i]),
                                          float(ratios[i]), pair, int(np.count_nonzero(self.reads[where]))))
        mu2: dict[str, float] = {}
        rho_of: dict[int, float] = {}
        for i in map(int, np.flatnonzero(self.changed)):
            release = self.releases[i]
            mechanism = release.mechanism
            if mechanism is None or not mechanism.is_gaussian:
                continue
            if id(mechanism) not in rho_of:
                rho_of[id(mechanism)] = mechanism.rho
            # μ of a Gaussian mechanism (GOE included) is √(2ρ), linear in the sensitivity
            mu_i = math.sqrt(2.0 * rho_of[id(mechanism)]) * float(self.norms[i]) / float(self.recorded[i])
            mu2[release.family] = mu2.get(release.family, 0.0) + mu_i * mu_i
        return PairSummary(self.environment, self.episodes, self.user, self.canaries, int(self.changed.sum()),
                           self.findings, tuple(best), mu2)


@dataclass(frozen=True)
class PairSummary:
    """What one replayed pair found, without its releases (it crosses process boundaries)."""

    environment: str
    episodes: int
    user: int
    canaries: str
    changed: int
    findings: tuple[ReleaseFinding, ...]
    best: tuple[FamilySensitivity, ...]
    mu2_by_family: dict[str, float]

    def witness(self, noise: NoiseCheck | None, delta: float) -> PairWitness:
        """The μ and ε the user's changes imply (module docstring): each family's μ² divided by the square of
        its verified noise factor (the upper confidence limit of its measured scale ratio)."""
        total, verified = 0.0, True
        for family, mu2 in self.mu2_by_family.items():
            factor = noise.scale_upper(family) if noise is not None else None
            verified = verified and factor is not None
            total += mu2 / (factor * factor if factor else 1.0)
        mu = math.sqrt(total)
        epsilon = epsilon_exact_gaussian_lower(mu, delta) if mu > 0 else 0.0
        return PairWitness(self.environment, self.episodes, self.user, self.canaries, self.changed, mu, epsilon,
                           verified)


def _sensitivities(releases: Sequence[PublishedRelease]) -> tuple[np.ndarray, np.ndarray]:
    """(recorded sensitivity, norm order) of every release (1.0 and 2 for a release without a mechanism)."""
    cache: dict[int, tuple[float, int]] = {}
    values = np.empty((2, len(releases)))
    for i, r in enumerate(releases):
        m: Mechanism | None = r.mechanism
        key = id(m)
        if key not in cache:
            cache[key] = (1.0, 2) if m is None else (m.sensitivity_value, _NORM_ORDER.get(m.sensitivity_norm, 2))
        values[:, i] = cache[key]
    return values[0], values[1].astype(int)


def compare_replay(recorded: Sequence[PublishedRelease], replayed: Sequence[PublishedRelease], *, user: int,
                   environment: str, canaries: str, episodes: int) -> ReplayComparison:
    """Judge every release of a neighbour replay against the recorded run (module docstring)."""
    n = len(recorded)
    norms, changed, reads = np.zeros(n), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    tolerance = np.zeros(n)
    sensitivity, order = _sensitivities(recorded)
    groups: dict[tuple[tuple[int, ...], int], list[int]] = {}
    for i, r in enumerate(recorded):
        groups.setdefault((np.shape(r.value), int(order[i])), []).append(i)
    for (_, norm_order), index in groups.items():
        first = np.stack([recorded[i].value for i in index]).astype(float)
        second = np.stack([replayed[i].value for i in index]).astype(float)
        difference = (second - first).reshape(len(index), -1)
        tol = rounding_tolerance(first, second)
        changed[index] = np.abs(difference).max(axis=1) > tol
        norms[index] = np.linalg.norm(difference, ord=norm_order, axis=1)
        tolerance[index] = tol * math.sqrt(max(difference.shape[1], 1))
    kinds = np.array([r.users for r in recorded])
    labels = np.array([r.episode for r in recorded], dtype=np.int64)
    weights = np.zeros(n)
    for kind in set(kinds.tolist()):
        where = kinds == kind
        reads[where] = reads_user(kind, labels[where], user)
        weights[where] = read_weights(kind, labels[where], user)
    exceeds = norms > sensitivity * weights * (1.0 + SENSITIVITY_REL_TOL) + tolerance
    findings = []
    for i in map(int, np.flatnonzero((changed & ~reads) | (changed & exceeds))):
        r, m = recorded[i], recorded[i].mechanism
        norm_name = m.sensitivity_norm if m is not None else "l2"
        ratio = float(norms[i] / (sensitivity[i] * weights[i])) if weights[i] > 0 else float(norms[i] / sensitivity[i])
        if not reads[i]:
            findings.append(ReleaseFinding(
                "pattern", r.family, r.episode, r.stage, user, environment,
                f"changed by {norms[i]:.4g} when user {user}'s data changed, but is recorded as users={r.users!r}, "
                f"which does not read user {user}: the ledger does not charge user {user} for it", ratio))
        else:
            findings.append(ReleaseFinding(
                "sensitivity", r.family, r.episode, r.stage, user, environment,
                f"changed by {norms[i]:.4g} ({norm_name}) when user {user}'s data changed, {ratio:.3g} × its "
                f"recorded sensitivity {sensitivity[i] * weights[i]:.4g} for user {user}", ratio))
    return ReplayComparison(environment, episodes, user, canaries, tuple(recorded), norms, changed, reads,
                            sensitivity, tuple(findings), weights)
