"""Sensitivity replay: how much did each release change when one user's data changed?

A fresh run R0 on users D and a replay of R0's transcript on the neighbouring users D′ (user j's tape
replaced, or the slot emptied for add/remove-one), with the same coins and the same noise seed
(:mod:`.runs`), give each raw statistic's change, the transcript held fixed: for a release the billboard
noised, the kept value minus its kept noise in each run; for a release the agent noised itself, the kept values'
difference, which is the raw change only where the same seed drew the same noise in both runs (the noise check
establishes that per family: :meth:`PairSummary.without` drops the others) — up to the rounding of
(raw′ + noise) − (raw + noise), which :func:`rounding_tolerance` bounds. Each release r is then judged against
its record:

* **pattern** — if r changed, its recorded user pattern (``users`` of the ledger: prefix, current, tree, an
  explicit set, …) must include user j; otherwise the ledger does not charge user j for a release that reads user j's
  data (a prefix release recorded as ``"current"``, a release labelled episode k that reads user k);
* **sensitivity** — ‖Δ_r‖ in the mechanism's norm (ℓ2, Frobenius, ℓ1) must not exceed the recorded
  sensitivity (relative slack 10⁻⁹ plus the rounding tolerance).

Either failure is a proof by example that the ledger under-accounts this pair: the records the claim rests on
are false. Whether the claim falls with them is the corrected accounting's question: the pair's
``corrected_rho`` is the agent's own accounting of user j with its records corrected where the replays show them
wrong: every release recorded as reading j that could read j (published after j's data reached the agent:
``reach_from``), and every release seen to change, each at its recorded noise and sensitivity — or at the change
seen where that is larger.
The realised fraction ‖Δ_r‖/Δ_r of each family is the tightness figure of the audit. The changes also give a
witnessed bound: μ² = Σ_r (‖Δ_r‖/σ_r)² over the Gaussian releases of the user (σ_r at the noise check's upper
confidence limit), and its exact μ-GDP ε(δ) rounded down (:class:`~dpverify.whitebox.result.PairWitness` says
under which condition it bounds the pair's ε).

Every release's change is computed at once per shape (a run publishes tens of thousands of releases).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dpverify.agents.core.billboard import PublishedRelease
from dpverify.conversions import epsilon_exact_gaussian_lower, epsilon_from_rho
from dpverify.ledger import ToeplitzFactor, UserSet, user_pattern
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
    dyadic-l node k reads (k − 2^l, k], an explicit set (``set:…``) its members."""
    k = np.asarray(episodes, dtype=np.int64)
    if kind.startswith("set:"):
        return np.full(k.shape, user in UserSet.parse(kind))
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
    #: Per release, whether its change exceeds what its record allows (a finding).
    contradicts: np.ndarray | None = None
    #: The position of the first release published after the user's data reached the agent.
    reach_from: int = 0

    def summary(self) -> PairSummary:
        """The compact result of this pair (findings, the largest fraction per family, the witnessed μ², the
        corrected charge)."""
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
        contradicts = np.zeros(len(self.releases), dtype=bool) if self.contradicts is None else self.contradicts
        mu2: dict[str, float] = {}
        corrected: dict[str, float] = {}
        rho_of: dict[int, float] = {}
        reachable = np.arange(len(self.releases)) >= self.reach_from
        for i in map(int, np.flatnonzero(self.changed | (self.reads & reachable))):
            release = self.releases[i]
            mechanism = release.mechanism
            if mechanism is None:
                continue
            if id(mechanism) not in rho_of:
                rho_of[id(mechanism)] = mechanism.rho
            # ρ of every mechanism here is quadratic in its sensitivity: the release's cost at another sensitivity
            scale = float(self.norms[i]) / float(self.recorded[i])
            # a release seen reading the user that its record says does not: charged at its whole sensitivity
            base = float(weights[i]) if self.reads[i] else 1.0
            charged = max(scale, base) if contradicts[i] else base
            corrected[release.family] = corrected.get(release.family, 0.0) + rho_of[id(mechanism)] * charged ** 2
            if self.changed[i] and mechanism.is_gaussian:  # μ of a Gaussian mechanism (GOE included) is √(2ρ)
                mu2[release.family] = mu2.get(release.family, 0.0) + 2.0 * rho_of[id(mechanism)] * scale * scale
        self_noised = tuple(dict.fromkeys(r.family for r in self.releases if r.noise is None))
        return PairSummary(self.environment, self.episodes, self.user, self.canaries, int(self.changed.sum()),
                           self.findings, tuple(best), mu2, corrected, self_noised)


@dataclass(frozen=True)
class PairSummary:
    """What one replayed pair found, without its releases (it crosses process boundaries): the findings, the
    largest realised fraction per family, per family the witnessed μ² and the corrected charge ρ (module
    docstring), and the families whose changes were read from values the agent noised itself."""

    environment: str
    episodes: int
    user: int
    canaries: str
    changed: int
    findings: tuple[ReleaseFinding, ...]
    best: tuple[FamilySensitivity, ...]
    mu2_by_family: dict[str, float]
    corrected_rho: dict[str, float] = field(default_factory=dict)
    self_noised: tuple[str, ...] = ()

    def without(self, families: set[str]) -> PairSummary:
        """The pair's findings and figures of every family but ``families``."""
        def keep(mapping: dict[str, float]) -> dict[str, float]:
            return {f: v for f, v in mapping.items() if f not in families}

        return PairSummary(self.environment, self.episodes, self.user, self.canaries, self.changed,
                           tuple(f for f in self.findings if f.family not in families),
                           tuple(b for b in self.best if b.family not in families), keep(self.mu2_by_family),
                           keep(self.corrected_rho), tuple(f for f in self.self_noised if f not in families))

    def witness(self, noise: NoiseCheck | None, delta: float) -> PairWitness:
        """The μ and ε the user's changes imply (module docstring), over the families whose noise scale the noise
        check measured, each family's μ² divided by the square of its upper confidence limit (dropping a family
        only lowers μ: a lower bound stays one); ``noise_verified`` says whether every changed family was one."""
        total, verified = 0.0, True
        for family, mu2 in self.mu2_by_family.items():
            factor = noise.scale_upper(family) if noise is not None else None
            if factor is None:
                verified = verified and mu2 == 0.0
                continue
            total += mu2 / (factor * factor)
        mu = math.sqrt(total)
        epsilon = epsilon_exact_gaussian_lower(mu, delta) if mu > 0 else 0.0
        return PairWitness(self.environment, self.episodes, self.user, self.canaries, self.changed, mu, epsilon,
                           verified)

    def corrected_epsilon(self, delta: float, conversion: str) -> float:
        """The ε of the corrected charge to this pair's user (module docstring), by the claim's conversion."""
        return epsilon_from_rho(sum(self.corrected_rho.values()), delta, conversion)


def _named(kind: str) -> str:
    """A pattern's name as a finding quotes it (an explicit set cut after 60 characters)."""
    return repr(kind if len(kind) <= 60 else kind[:60] + "…")


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


def _raw(releases: Sequence[PublishedRelease], index: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(the releases' raw statistics where the billboard kept their noise, else their values; the values)."""
    values = np.stack([releases[i].value for i in index]).astype(float)
    raw = values.copy()
    for row, i in enumerate(index):
        noise = releases[i].noise
        if noise is not None:
            raw[row] -= noise
    return raw, values


def compare_replay(recorded: Sequence[PublishedRelease], replayed: Sequence[PublishedRelease], *, user: int,
                   environment: str, canaries: str, episodes: int, reach_from: int = 0) -> ReplayComparison:
    """Judge every release of a neighbour replay against the recorded run (module docstring); ``reach_from`` is the
    position of the first release published after the user's data reached the agent."""
    n = len(recorded)
    norms, changed, reads = np.zeros(n), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    tolerance = np.zeros(n)
    sensitivity, order = _sensitivities(recorded)
    groups: dict[tuple[tuple[int, ...], int], list[int]] = {}
    for i, r in enumerate(recorded):
        groups.setdefault((np.shape(r.value), int(order[i])), []).append(i)
    for (_, norm_order), index in groups.items():
        first, first_values = _raw(recorded, index)
        second, second_values = _raw(replayed, index)
        difference = (second - first).reshape(len(index), -1)
        tol = 2.0 * rounding_tolerance(first_values, second_values)  # a raw is a value minus its noise: twice
        changed[index] = np.abs(difference).max(axis=1) > tol
        norms[index] = np.linalg.norm(difference, ord=norm_order, axis=1)
        tolerance[index] = tol * math.sqrt(max(difference.shape[1], 1))
    by_kind: dict[str, list[int]] = {}  # (a dict, not an array of strings: a set's name is as long as its ranges)
    for i, r in enumerate(recorded):
        by_kind.setdefault(r.users, []).append(i)
    labels = np.array([r.episode for r in recorded], dtype=np.int64)
    weights = np.zeros(n)
    for kind, where in by_kind.items():
        reads[where] = reads_user(kind, labels[where], user)
        weights[where] = read_weights(kind, labels[where], user)
    exceeds = norms > sensitivity * weights * (1.0 + SENSITIVITY_REL_TOL) + tolerance
    contradicts = (changed & ~reads) | (changed & exceeds)
    findings = []
    for i in map(int, np.flatnonzero(contradicts)):
        r, m = recorded[i], recorded[i].mechanism
        norm_name = m.sensitivity_norm if m is not None else "l2"
        ratio = float(norms[i] / (sensitivity[i] * weights[i])) if weights[i] > 0 else float(norms[i] / sensitivity[i])
        if not reads[i]:
            findings.append(ReleaseFinding(
                "pattern", r.family, r.episode, r.stage, user, environment,
                f"changed by {norms[i]:.4g} when user {user}'s data changed, but is recorded as "
                f"users={_named(r.users)}, which does not read user {user}: the ledger does not charge user {user} "
                "for it", ratio))
        else:
            findings.append(ReleaseFinding(
                "sensitivity", r.family, r.episode, r.stage, user, environment,
                f"changed by {norms[i]:.4g} ({norm_name}) when user {user}'s data changed, {ratio:.3g} × its "
                f"recorded sensitivity {sensitivity[i] * weights[i]:.4g} for user {user}", ratio))
    return ReplayComparison(environment, episodes, user, canaries, tuple(recorded), norms, changed, reads,
                            sensitivity, tuple(findings), weights, contradicts, reach_from)
