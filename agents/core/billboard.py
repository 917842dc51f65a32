"""The billboard: the public record of every privatised statistic a private agent releases.

Joint DP by the billboard lemma (Hsu et al. 2014; Sahu 2025 Lemma 2.4) needs two things of the code:

1. every statistic computed from users' data leaves the learner only through a DP mechanism — here,
   :meth:`Billboard.publish` (one release) or :meth:`Billboard.publish_block` (several releases of one
   episode whose values are known together), which draw fresh noise from a dpverify mechanism with an
   explicit ``numpy.random.Generator`` *and* record each release (family, episode, stage, mechanism, users
   it touches) in a :class:`~dpverify.ledger.PrivacyLedger`, so the (ε, δ) accounted after a run is the
   (ε, δ) of exactly what was published;
2. the action given to user k is a function of the published statistics and user k's own state only.

Private agents therefore read other users' data exclusively through values returned by the billboard.
With ``keep_history=True`` it keeps every published value (and, with ``keep_noise=True``, the noise that
was added), so audits can read what was published and tests can check that no two releases share a noise
draw. Memory is O(number of releases × statistic size) then; off by default.

Agents that add their noise themselves (code written without dpverify) record each already-noised value
with :meth:`Billboard.publish_noised`, naming the mechanism they claim to have used, and draw that noise
from the billboard's own generator, :meth:`Billboard.noise_source` (``noise_rng``, given when the billboard
is created: by the agent from its own seed, or by the auditor). That generator is the auditor's lever on
such noise: rerunning the agent with the same users and coins and another ``noise_rng`` changes the noise
and nothing else (:mod:`dpverify.whitebox`).

For local DP (Liao et al. 2021) the same class records each user's outgoing messages: the "users" of a
local release is ``"current"`` (the release at episode k reads user k only) and
:meth:`Billboard.messages_of` returns what user k sent.

A :class:`ReplayBillboard` hands back another run's values instead of the fresh ones; it overrides the two
recording calls, :meth:`~Billboard.publish_block` (which :meth:`~Billboard.publish` goes through) and
:meth:`~Billboard.publish_noised`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple, cast

import numpy as np

from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger, UserPattern, user_pattern
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism, Mechanism
from dpverify.neighbouring import Neighbouring


def _finite_and_symmetric(mechanism: Mechanism, raw: np.ndarray) -> np.ndarray:
    """``raw`` (…, *output_shape) after the checks every value gets, alone or in a stack: finite entries and, for the
    GOE mechanism, matrices symmetric up to rounding (the tolerance of
    :meth:`~dpverify.mechanisms.GOEMechanism.release`), whose symmetric part is released as that mechanism does, so
    that no rounding asymmetry of the raw sums reaches the public record un-noised (``raw`` itself when symmetric
    bit for bit)."""
    if not np.isfinite(raw).all():
        raise InvalidParameterError("value", "must be finite (no NaN or inf)", "non-finite entries")
    if not isinstance(mechanism, GOEMechanism):
        return raw
    transposed = raw.swapaxes(-1, -2)  # (a stack symmetric bit for bit, or exactly, needs no tolerance computation)
    if raw.tobytes() != transposed.tobytes() and not np.array_equal(raw, transposed):
        asymmetry = np.abs(raw - transposed).max(axis=(-2, -1))
        scale = np.maximum(1.0, np.abs(raw).max(axis=(-2, -1)))
        if np.any(asymmetry > 1e-12 * scale):
            raise InvalidParameterError("value", "must be a symmetric matrix", "asymmetric")
        raw = 0.5 * (raw + transposed)
    return raw


def _checked_value(mechanism: Mechanism, value: object) -> np.ndarray:
    """``value`` as a float array of the mechanism's output shape, checked (:func:`_finite_and_symmetric`)."""
    raw = np.asarray(value, dtype=float)
    if raw.shape != mechanism.output_shape:
        raise InvalidParameterError("value", f"must have shape {mechanism.output_shape}", raw.shape)
    return _finite_and_symmetric(mechanism, raw)


def _checked_stack(mechanism: Mechanism, values: object) -> np.ndarray:
    """``values`` as an (n, *output_shape) float array, each value checked (:func:`_finite_and_symmetric`)."""
    raw = np.asarray(values, dtype=float)
    shape = mechanism.output_shape
    if raw.ndim != len(shape) + 1 or raw.shape[1:] != shape or raw.shape[0] < 1:
        raise InvalidParameterError("value", f"must be a stack of values of shape {shape}", raw.shape)
    return _finite_and_symmetric(mechanism, raw)


def stages(family: str, mechanism: Mechanism, n: int) -> list[tuple[str, int, Mechanism]]:
    """The labels of one family's releases at stages 1..n by one mechanism, for :meth:`Billboard.publish_block`."""
    return [(family, h, mechanism) for h in range(1, n + 1)]


def _runs_of_one_mechanism(mechanisms: Sequence[Mechanism]) -> list[tuple[int, int]]:
    """(start, stop) of every run of consecutive releases by one mechanism (the same object or an equal one)."""
    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(mechanisms) + 1):
        if i == len(mechanisms) or not (mechanisms[i] is mechanisms[start] or mechanisms[i] == mechanisms[start]):
            runs.append((start, i))
            start = i
    return runs


def _stacked_noise(mechanisms: Sequence[Mechanism], groups: list[list[int]], rng: np.random.Generator,
                   shape: tuple[int, ...]) -> np.ndarray:
    """The noise of a block of releases of one output shape, ``shape`` = (n, *output shape), in publication order: the
    draws of each run of releases by one mechanism drawn by its :meth:`~dpverify.mechanisms.NoiseMechanism.noise` in
    turn. Gaussian and GOE releases take their standard normals from one call of the generator, each mechanism's
    releases (``groups``: :func:`_positions_by_mechanism`) transformed at once (the generator's normals do not depend
    on how the draws are grouped)."""
    if not all(isinstance(mechanisms[positions[0]], (GaussianMechanism, GOEMechanism)) for positions in groups):
        return np.concatenate([mechanisms[start].noise(rng, stop - start)
                               for start, stop in _runs_of_one_mechanism(mechanisms)])
    normals = rng.standard_normal(shape)
    if len(groups) == 1:
        return cast("GaussianMechanism | GOEMechanism", mechanisms[0]).noise_from_normals(normals)
    noise = np.empty(shape)
    for positions in groups:
        # (evenly spaced positions, as one family's in a block of several, are a slice: no index array to gather by)
        step = positions[1] - positions[0] if len(positions) > 1 else 1
        evenly = positions == list(range(positions[0], positions[-1] + 1, step))
        at = slice(positions[0], positions[-1] + 1, step) if evenly else np.array(positions)
        noise[at] = cast("GaussianMechanism | GOEMechanism", mechanisms[positions[0]]).noise_from_normals(normals[at])
    return noise


def _checked_values(mechanisms: Sequence[Mechanism], groups: list[list[int]],
                    raw_values: Sequence[np.ndarray] | np.ndarray) -> np.ndarray | list[np.ndarray]:
    """Every value of a block checked as its mechanism requires (:func:`_checked_stack`), before any is released:
    one stacked array when all share a mechanism kind and output shape, else one array per release."""
    first = mechanisms[0]
    kind = (type(first), first.output_shape)
    if all((type(m), m.output_shape) == kind for m in (mechanisms[positions[0]] for positions in groups)):
        return _checked_stack(first, raw_values)
    kinds = [(type(m), m.output_shape) for m in mechanisms]
    checked: list[np.ndarray] = [np.empty(0)] * len(mechanisms)
    for kind in dict.fromkeys(kinds):
        indices = [i for i, other in enumerate(kinds) if other == kind]
        stack = _checked_stack(mechanisms[indices[0]], [raw_values[i] for i in indices])
        for i, value in zip(indices, stack, strict=True):
            checked[i] = value
    return checked


def _block_noise(mechanisms: Sequence[Mechanism], groups: list[list[int]], rng: np.random.Generator
                 ) -> list[np.ndarray]:
    """The noise of each release of a block of several output shapes, drawn in publication order: the same draws
    as each mechanism's :meth:`~dpverify.mechanisms.NoiseMechanism.noise` in turn. Gaussian and GOE releases take
    their standard normals from one call of the generator, each mechanism's releases transformed at once."""
    if not all(isinstance(mechanisms[positions[0]], (GaussianMechanism, GOEMechanism)) for positions in groups):
        return [m.noise(rng, 1)[0] for m in mechanisms]
    sizes = [math.prod(m.output_shape) for m in mechanisms]
    starts = np.cumsum([0, *sizes[:-1]])
    normals = rng.standard_normal(sum(sizes))
    noise: list[np.ndarray] = [normals[:0]] * len(mechanisms)
    for indices in groups:
        m = cast("GaussianMechanism | GOEMechanism", mechanisms[indices[0]])
        gathered = normals[starts[indices][:, None] + np.arange(sizes[indices[0]])]
        for i, value in zip(indices, m.noise_from_normals(gathered.reshape(len(indices), *m.output_shape)),
                            strict=True):
            noise[i] = value
    return noise


#: The mechanism classes whose noise the billboard draws itself (their ``noise``/``noise_from_normals`` draw exactly
#: what their ``release`` adds). A release by any other class — a subclass of one of them included — goes through
#: that mechanism's own ``release``, so that a subclass that changes the noise is never silently replaced.
_DRAWN_HERE = (GaussianMechanism, GOEMechanism, LaplaceMechanism)


def _own_releases(mechanisms: Sequence[Mechanism], checked: np.ndarray | list[np.ndarray], rng: np.random.Generator
                  ) -> np.ndarray | list[np.ndarray]:
    """Each value released by its mechanism's own ``release(value, rng)``, in publication order; a release that is
    not a finite value of the mechanism's output shape is refused, naming the mechanism's class."""
    out = []
    for mechanism, raw in zip(mechanisms, checked, strict=True):
        noisy = np.asarray(mechanism.release(raw, rng), dtype=float)
        if noisy.shape != mechanism.output_shape or not np.isfinite(noisy).all():
            raise InvalidParameterError(f"{type(mechanism).__name__}.release",
                                        f"must return a finite value of shape {mechanism.output_shape}", noisy.shape)
        out.append(noisy)
    return np.stack(out) if isinstance(checked, np.ndarray) else out


def _positions_by_mechanism(mechanisms: Sequence[Mechanism]) -> list[list[int]]:
    """The positions of each mechanism's releases in a block (the same object), in order of first appearance."""
    if all(m is mechanisms[0] for m in mechanisms):
        return [list(range(len(mechanisms)))]
    positions: dict[int, list[int]] = {}
    for i, m in enumerate(mechanisms):
        positions.setdefault(id(m), []).append(i)
    return list(positions.values())


def _published_value(mechanism: Mechanism, value: object) -> np.ndarray:
    """An already-noised value as it is recorded (:meth:`Billboard.publish_noised`): a float array of the
    mechanism's output shape with finite entries. Nothing else is checked or changed here: whether it
    carries the structure and the noise the mechanism promises is what :mod:`dpverify.whitebox` checks."""
    if not isinstance(mechanism, Mechanism):
        raise InvalidParameterError("mechanism", "must be a dpverify mechanism (dpverify.mechanisms)",
                                    type(mechanism).__name__)
    try:
        noisy = np.array(value, dtype=float, copy=True)
    except (TypeError, ValueError):
        raise InvalidParameterError("value", "must be an array of real numbers", type(value).__name__) from None
    if noisy.shape != mechanism.output_shape:
        raise InvalidParameterError("value", f"must have the mechanism's output shape {mechanism.output_shape}",
                                    noisy.shape)
    if not np.all(np.isfinite(noisy)):
        raise InvalidParameterError("value", "must be finite (no NaN or inf)", "non-finite entries")
    return noisy


#: The spawn key under which :func:`derived_noise_generator` derives a billboard's noise generator.
NOISE_SPAWN_KEY = 0x6E6F697365  # "noise": far beyond the children an agent spawns (0, 1, 2, …)


def derived_noise_generator(rng: np.random.Generator) -> np.random.Generator:
    """A generator for a billboard's ``noise_rng``, derived from an agent's generator ``rng`` without drawing from
    it or advancing its ``SeedSequence``: the child of that sequence under the spawn key
    :data:`NOISE_SPAWN_KEY`. An auditor who builds the billboard of each run from the run's own seed gives
    self-noising agents fresh, reproducible noise without changing any other agent's streams."""
    seq = cast(np.random.SeedSequence, _seeded_generator("rng", rng).bit_generator.seed_seq)
    return np.random.default_rng(np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, NOISE_SPAWN_KEY),
                                                        pool_size=seq.pool_size))


def _generator(name: str, rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError(name, "must be a numpy.random.Generator", type(rng).__name__)
    return rng


def _seeded_generator(name: str, rng: object) -> np.random.Generator:
    """``rng``, a generator seeded from a ``numpy.random.SeedSequence`` (what :func:`derived_noise_generator` reads)."""
    generator = _generator(name, rng)
    seq = generator.bit_generator.seed_seq
    if not isinstance(seq, np.random.SeedSequence):
        raise InvalidParameterError(name, "must be seeded from a numpy.random.SeedSequence", type(seq).__name__)
    return generator


class PublishedRelease(NamedTuple):
    """One published statistic: its label, the users it read, its value (and the noise, if kept), and the
    mechanism recorded for it. Immutable (a named tuple: runs keep tens of thousands of them, so it is
    cheap to make), its arrays read-only."""

    family: str
    episode: int
    stage: int
    users: str
    value: np.ndarray
    noise: np.ndarray | None
    mechanism: Mechanism | None = None


class Billboard:
    """Publishes noisy statistics through dpverify mechanisms and records each release in a ledger.

    Args:
        relation: the neighbouring relation of the ledger (and of every mechanism recorded in it).
        keep_history: keep every published value (:meth:`history`).
        keep_noise: also keep the noise added to each value (releases drawn by the billboard only).
        noise_rng: the generator :meth:`noise_source` hands to agents that add their noise themselves
            (module docstring); ``None``: the billboard has none, and such agents cannot publish on it.
        noise_from: instead of ``noise_rng``, an agent's generator whose :func:`derived_noise_generator` is the
            billboard's ``noise_rng``, derived when first asked for (the same generator: the derivation reads only
            the generator's seed sequence, which never changes), so that a run whose agent adds no noise itself
            does not pay for it.
    """

    def __init__(
        self,
        relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
        keep_history: bool = False,
        keep_noise: bool = False,
        noise_rng: np.random.Generator | None = None,
        *,
        noise_from: np.random.Generator | None = None,
    ) -> None:
        self.ledger = PrivacyLedger(relation)
        self.keep_history = bool(keep_history)
        self.keep_noise = bool(keep_noise)
        if noise_rng is not None and noise_from is not None:
            raise InvalidParameterError("noise_from", "must not be given with noise_rng (it derives one)", "both")
        self._noise_rng = None if noise_rng is None else _generator("noise_rng", noise_rng)
        self._noise_from = None if noise_from is None else _seeded_generator("noise_from", noise_from)
        self._history: list[PublishedRelease] = []
        self.n_published = 0

    @property
    def noise_rng(self) -> np.random.Generator | None:
        """The generator :meth:`noise_source` hands out (class docstring), None when the billboard has none."""
        if self._noise_rng is None and self._noise_from is not None:
            self._noise_rng = derived_noise_generator(self._noise_from)
        return self._noise_rng

    @property
    def relation(self) -> Neighbouring:
        return self.ledger.relation

    def noise_source(self) -> np.random.Generator:
        """The generator an agent that adds its noise itself must draw every release's noise from (then it
        records the release with :meth:`publish_noised`): the billboard's ``noise_rng``."""
        if self.noise_rng is None:
            raise InvalidParameterError(
                "noise_rng", "must be given to the billboard whose noise_source() an agent draws from "
                "(Billboard(relation, noise_rng=numpy.random.default_rng(seed)))", None)
        return self.noise_rng

    def publish(
        self,
        family: str,
        episode: int,
        stage: int,
        mechanism: Mechanism,
        raw_value: np.ndarray,
        users: str | UserPattern,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Release ``raw_value`` through ``mechanism`` with fresh noise; record it; return the noisy value.

        ``episode`` and ``stage`` are 1-based labels (paper notation: k ∈ [K], h ∈ [H]). The same release as
        :meth:`publish_block` of this one value.
        """
        if type(mechanism) in _DRAWN_HERE and type(self).publish_block is Billboard.publish_block:  # (not replayed)
            checked = _checked_value(mechanism, raw_value)
            return self._publish_one(family, episode, stage, mechanism, checked, user_pattern(users),
                                     _generator("rng", rng))
        return self.publish_block(episode, [(family, stage, mechanism)], [raw_value], users, rng)[0]

    def publish_block(
        self,
        episode: int,
        releases: Sequence[tuple[str, int, Mechanism]],
        raw_values: Sequence[np.ndarray] | np.ndarray,
        users: str | UserPattern,
        rng: np.random.Generator,
    ) -> np.ndarray | list[np.ndarray]:
        """Release ``raw_values[i]`` as ``releases[i]`` = (family, stage, mechanism) of ``episode``, in that order,
        each with fresh noise; record them; return the noisy values: an (n, *shape) array when every release has
        one output shape, else a list.

        The same releases as :meth:`publish` of each in turn — the same checks, the same noise draws from
        ``rng`` in the same order, the same records — made at once: every value is checked before any is
        released (shape, finiteness and, for the GOE mechanism, symmetry up to rounding: its symmetric part is
        what is released), and the standard normals of Gaussian and GOE releases come from one call of the generator
        (its normals do not depend on how the draws are grouped); the block is recorded in the ledger at once. A
        mechanism of another class than dpverify's own three (a subclass of one included) releases each of its
        values with its own ``release``: its noise is what the billboard adds and keeps.
        """
        rng = _generator("rng", rng)
        pattern = user_pattern(users)
        n = len(releases)
        if len(raw_values) != n or not releases:
            raise InvalidParameterError("raw_values", f"must hold one value per release ({n})", len(raw_values))
        if n == 1 and type(releases[0][2]) in _DRAWN_HERE:
            family, stage, mechanism = releases[0]
            checked = _checked_stack(mechanism, raw_values)[0]
            return self._publish_one(family, episode, stage, mechanism, checked, pattern, rng)[None]
        mechanisms = [mechanism for _, _, mechanism in releases]
        groups = _positions_by_mechanism(mechanisms)
        checked = _checked_values(mechanisms, groups, raw_values)
        if any(type(m) not in _DRAWN_HERE for m in mechanisms):
            noisy: np.ndarray | list[np.ndarray] = _own_releases(mechanisms, checked, rng)
        elif isinstance(checked, np.ndarray):  # one output shape
            noisy = checked + _stacked_noise(mechanisms, groups, rng, checked.shape)
        else:
            noisy = [raw + noise for raw, noise in zip(checked, _block_noise(mechanisms, groups, rng), strict=True)]
        if self.keep_history:
            values = noisy if isinstance(noisy, np.ndarray) else None
            for i, (family, stage, mechanism) in enumerate(releases):
                noise = noisy[i] - checked[i] if self.keep_noise else None
                self._keep(episode, pattern, [(family, stage, mechanism)],
                           noisy[i][None] if values is None else values[i:i + 1],
                           None if noise is None else noise[None])
        self.ledger.record_releases(episode, releases, pattern)
        self.n_published += n
        return noisy

    def _publish_one(self, family: str, episode: int, stage: int, mechanism: Mechanism, checked: np.ndarray,
                     pattern: UserPattern, rng: np.random.Generator) -> np.ndarray:
        """One release of a value already checked (:func:`_checked_value`) by one of dpverify's own mechanisms (what
        agents publish most, stage by stage): the same draws and record as :meth:`publish_block`, without the
        grouping of a block (a value's normals, or Laplace draws, are the same numbers as those of a stack of one)."""
        if type(mechanism) is LaplaceMechanism:
            noise = mechanism.noise(rng, 1)[0]
        else:
            noise = mechanism.noise_from_normals(rng.standard_normal(checked.shape))  # type: ignore[attr-defined]
        noisy = checked + noise
        self.ledger.record(family, episode, stage, mechanism, pattern)
        if self.keep_history:
            kept = noisy.copy()
            kept.setflags(write=False)
            added = None
            if self.keep_noise:
                added = noisy - checked
                added.setflags(write=False)
            self._history.append(PublishedRelease(family, int(episode), int(stage), pattern.kind, kept, added,
                                                  mechanism))
        self.n_published += 1
        return noisy

    def publish_noised(
        self,
        family: str,
        episode: int,
        stage: int,
        mechanism: Mechanism,
        value: np.ndarray,
        users: str | UserPattern,
    ) -> np.ndarray:
        """Record a release whose noise the agent added itself, with the mechanism it claims to have used;
        return the value the agent must use as published (the same value, except on a
        :class:`ReplayBillboard`, which returns the recorded run's).

        The claim is the agent's: ``value`` must be the raw statistic plus noise drawn as ``mechanism``
        draws it, from :meth:`noise_source` (fresh for every release). The billboard checks only the shape
        and finiteness; :mod:`dpverify.whitebox` checks the claim against the agent's behaviour. Nothing is
        kept as "noise" (the raw value is not known here).
        """
        pattern = user_pattern(users)
        noisy = _published_value(mechanism, value)
        self.ledger.record(family, episode, stage, mechanism, pattern)
        self.n_published += 1
        if self.keep_history:
            self._keep(episode, pattern, [(family, stage, mechanism)], noisy[None], None)
        return noisy

    def _keep(self, episode: int, pattern: UserPattern, releases: Sequence[tuple[str, int, Mechanism]],
              values: np.ndarray, noises: np.ndarray | None) -> None:
        """Keep releases as read-only rows of one copy of their values (and of their noise)."""
        values = np.array(values, dtype=float, copy=True)
        values.setflags(write=False)
        if noises is not None:
            noises = np.array(noises, dtype=float, copy=True)
            noises.setflags(write=False)
        self._history.extend(
            PublishedRelease(family, int(episode), int(stage), pattern.kind, values[i],
                             None if noises is None else noises[i], mechanism)
            for i, (family, stage, mechanism) in enumerate(releases))

    def history(self, family: str | None = None) -> tuple[PublishedRelease, ...]:
        """Every published release (of one family), in publication order; needs ``keep_history``."""
        if not self.keep_history:
            raise InvalidParameterError("keep_history", "must be True to read the billboard's history", False)
        return tuple(r for r in self._history if family in (None, r.family))

    def messages_of(self, user: int) -> tuple[PublishedRelease, ...]:
        """The local releases (``users="current"``) that user ``user`` sent; needs ``keep_history``."""
        return tuple(r for r in self.history() if r.users == "current" and r.episode == user)


class ReplayBillboard(Billboard):
    """A billboard held fixed: it hands back the values another run published, whatever the raw data.

    The tool for testing the JDP structure (billboard lemma): rerun an agent on altered data of some
    user j with a ``ReplayBillboard`` of the original run's history; if every other user's actions are
    unchanged, those actions depend on the published statistics and their own data only. Each release is
    still recorded in the ledger, and its label (family, episode, stage) must match the recorded one —
    a mismatch means the agent's release pattern itself depends on the raw data.

    Each release is still made — its noise drawn and added — and with ``keep_history`` the billboard keeps
    what the agent *would* have published (its :meth:`history`), while the agent is handed the recorded
    value. With the same users, coins and noise seeds this reproduces the recorded run; with another
    ``noise_rng`` the values of :meth:`publish_noised` releases minus the recorded ones are pure noise; with
    the same seeds and one user replaced every kept value minus the recorded one is that user's effect on
    the raw statistic, the transcript held fixed (:mod:`dpverify.whitebox`).
    """

    def __init__(self, recorded: tuple[PublishedRelease, ...] | list[PublishedRelease],
                 relation: Neighbouring | str = Neighbouring.REPLACE_ONE, *, keep_history: bool = False,
                 keep_noise: bool = False, noise_rng: np.random.Generator | None = None) -> None:
        super().__init__(relation, keep_history=keep_history, keep_noise=keep_noise, noise_rng=noise_rng)
        self._recorded = list(recorded)
        self.n_replayed = 0

    def _replay(self, family: str, episode: int, stage: int) -> np.ndarray:
        """The next recorded value, checked to carry the label (family, episode, stage)."""
        if self.n_replayed >= len(self._recorded):
            raise InvalidParameterError("recorded", "has fewer releases than this run makes", len(self._recorded))
        expected = self._recorded[self.n_replayed]
        if (expected.family, expected.episode, expected.stage) != (family, episode, stage):
            raise InvalidParameterError(
                "release", f"must match the recorded label {(expected.family, expected.episode, expected.stage)}",
                (family, episode, stage),
            )
        self.n_replayed += 1
        return np.array(expected.value)

    def publish_block(self, episode: int, releases: Sequence[tuple[str, int, Mechanism]],
                      raw_values: Sequence[np.ndarray] | np.ndarray, users: str | UserPattern,
                      rng: np.random.Generator) -> np.ndarray | list[np.ndarray]:
        """The releases made as :meth:`Billboard.publish_block` makes them; the recorded values handed back."""
        made = super().publish_block(episode, releases, raw_values, users, rng)
        recorded = [self._replay(family, episode, stage) for family, stage, _ in releases]
        return np.stack(recorded) if isinstance(made, np.ndarray) else recorded

    def publish_noised(self, family: str, episode: int, stage: int, mechanism: Mechanism, value: np.ndarray,
                       users: str | UserPattern) -> np.ndarray:
        """The release recorded as :meth:`Billboard.publish_noised` records it; the recorded value handed back."""
        super().publish_noised(family, episode, stage, mechanism, value, users)
        return self._replay(family, episode, stage)
