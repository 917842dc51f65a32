"""The billboard: the public record of every privatised statistic a private agent releases.

Joint DP by the billboard lemma (Hsu et al. 2014; Sahu 2025 Lemma 2.4) needs two things of the code:

1. every statistic computed from users' data leaves the learner only through a DP mechanism — here,
   :meth:`Billboard.publish`, which draws fresh noise from a dpverify mechanism with an explicit
   ``numpy.random.Generator`` *and* records the release (family, episode, stage, mechanism, users it
   touches) in a :class:`~dpverify.ledger.PrivacyLedger`, so the (ε, δ) accounted after a run is the
   (ε, δ) of exactly what was published;
2. the action given to user k is a function of the published statistics and user k's own state only.

Private agents therefore read other users' data exclusively through values returned by ``publish``.
With ``keep_history=True`` the billboard keeps every published value (and, with ``keep_noise=True``,
the noise that was added), so audits can read what was published and tests can check that no two
releases share a noise draw. Memory is O(number of releases × statistic size) then; off by default.

Agents that add their noise themselves (code written without dpverify) record each already-noised
value with :meth:`Billboard.publish_noised`, naming the mechanism they claim to have used, and draw that
noise from the billboard's own generator, :meth:`Billboard.noise_source` (``noise_rng``, given when the
billboard is created: by the agent from its own seed when it makes its billboard, by the auditor when
the auditor passes one). That generator is the auditor's lever on such noise: rerunning the agent with
the same users and coins and another ``noise_rng`` changes the noise and nothing else
(:mod:`dpverify.whitebox`). The noise of :meth:`publish` is drawn by the billboard itself from the
generator the agent passes, and kept with ``keep_noise`` (the value minus the raw statistic), so it is
checked in the run as the agent makes it.

For local DP (Liao et al. 2021) the same class records each user's outgoing messages: the "users" of a local
release is ``"current"`` (the release at episode k reads user k only) and :meth:`Billboard.messages_of`
returns what user k sent.

Every publishing path ends in one of two hooks, :meth:`Billboard._emit` (one release) and
:meth:`Billboard._emit_block` (several, in publication order): a plain billboard counts, keeps and hands
back the noisy values; a :class:`ReplayBillboard` hands back another run's values instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger, UserPattern, user_pattern
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, Mechanism
from dpverify.neighbouring import Neighbouring


def _checked_value(mechanism: Mechanism, value: object) -> np.ndarray:
    """One value to release, after the checks the mechanism makes (:func:`_checked_stack` for one)."""
    raw = np.asarray(value, dtype=float)
    if raw.shape != mechanism.output_shape or not np.isfinite(raw).all() or isinstance(mechanism, GOEMechanism):
        return _checked_stack(mechanism, raw[None])[0]  # raises the error naming the failed check
    return raw


def _checked_stack(mechanism: Mechanism, values: object) -> np.ndarray:
    """``values`` as an (n, *output_shape) float array after the checks the mechanism makes on each value:
    the shape, finiteness and, for the GOE mechanism, the symmetry of every matrix (same tolerance as
    :meth:`~dpverify.mechanisms.GOEMechanism.release`, and symmetrised as it does: the GOE mechanism releases
    the symmetric part, so no rounding asymmetry of the raw sums reaches the public record un-noised)."""
    raw = np.asarray(values, dtype=float)
    shape = mechanism.output_shape
    if raw.ndim != len(shape) + 1 or raw.shape[1:] != shape or raw.shape[0] < 1:
        raise InvalidParameterError("value", f"must be a stack of values of shape {shape}", raw.shape)
    if not np.all(np.isfinite(raw)):
        raise InvalidParameterError("value", "must be finite (no NaN or inf)", "non-finite entries")
    # (an exactly symmetric stack passes without the tolerance computation)
    if isinstance(mechanism, GOEMechanism) and not np.array_equal(raw, np.swapaxes(raw, -1, -2)):
        transposed = np.swapaxes(raw, -1, -2)
        asymmetry = np.abs(raw - transposed).max(axis=(-2, -1))
        scale = np.maximum(1.0, np.abs(raw).max(axis=(-2, -1)))
        if np.any(asymmetry > 1e-12 * scale):
            raise InvalidParameterError("value", "must be a symmetric matrix", "asymmetric")
        raw = 0.5 * (raw + transposed)
    return raw


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
    seq = _generator("rng", rng).bit_generator.seed_seq
    if not isinstance(seq, np.random.SeedSequence):
        raise InvalidParameterError("rng", "must be seeded from a numpy.random.SeedSequence", type(seq).__name__)
    return np.random.default_rng(np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, NOISE_SPAWN_KEY),
                                                        pool_size=seq.pool_size))


def _generator(name: str, rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError(name, "must be a numpy.random.Generator", type(rng).__name__)
    return rng


def draw_noise(mechanisms: Sequence[Mechanism], rng: np.random.Generator) -> list[np.ndarray]:
    """The noise of one release by each of ``mechanisms`` in turn, from one call of ``rng``.

    Exactly the noise ``mechanism.release`` adds when called on each in turn with ``rng`` (the same
    draws, in the same order, to the bit): a Gaussian release adds N(0, σ²) = σ·N(0, 1) per coordinate,
    a GOE release (Z + Zᵀ)/√2 with Z = s·N(0, 1) entrywise. Each release gets its own draws (fresh
    noise); :meth:`ReservedReleases.publish` uses each once. Other mechanisms draw through their
    own ``release``.
    """
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError("rng", "must be a numpy.random.Generator", type(rng).__name__)
    if not all(isinstance(m, (GaussianMechanism, GOEMechanism)) for m in mechanisms):
        return [m.release(np.zeros(m.output_shape), rng) for m in mechanisms]
    block = _gaussian_noise_block(mechanisms, rng)
    if block is not None:
        return list(block)
    sizes = [math.prod(m.output_shape) for m in mechanisms]
    normals = rng.standard_normal(sum(sizes))
    starts = np.cumsum([0, *sizes[:-1]])
    # The releases of each mechanism scaled at once (the same elementwise operations as one by one).
    positions: dict[int, list[int]] = {}
    for i, m in enumerate(mechanisms):
        positions.setdefault(id(m), []).append(i)
    noise: list[np.ndarray] = [normals[:0]] * len(mechanisms)
    for indices in positions.values():
        m, size = mechanisms[indices[0]], sizes[indices[0]]
        block = normals[starts[indices][:, None] + np.arange(size)].reshape(len(indices), *m.output_shape)
        if isinstance(m, GOEMechanism):
            z = m.entry_std * block
            scaled = (z + np.swapaxes(z, -1, -2)) / math.sqrt(2.0)
        else:
            scaled = m.noise_scale * block
        for i, value in zip(indices, scaled, strict=True):
            noise[i] = value
    return noise


def _gaussian_noise_block(mechanisms: Sequence[Mechanism], rng: np.random.Generator) -> np.ndarray | None:
    """:func:`draw_noise` as one (n, *shape) array when every mechanism is Gaussian of one shape (else None,
    drawing nothing)."""
    distinct = list({id(m): m for m in mechanisms}.values())
    shape = distinct[0].output_shape if distinct else ()
    if not all(isinstance(m, GaussianMechanism) and m.output_shape == shape for m in distinct):
        return None
    sigmas = np.array([m.noise_scale for m in mechanisms])
    return rng.standard_normal((len(mechanisms), *shape)) * sigmas.reshape(-1, *(1,) * len(shape))


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
    """

    def __init__(
        self,
        relation: Neighbouring | str = Neighbouring.REPLACE_ONE,
        keep_history: bool = False,
        keep_noise: bool = False,
        noise_rng: np.random.Generator | None = None,
    ) -> None:
        self.ledger = PrivacyLedger(relation)
        self.keep_history = bool(keep_history)
        self.keep_noise = bool(keep_noise)
        self.noise_rng = None if noise_rng is None else _generator("noise_rng", noise_rng)
        self._history: list[PublishedRelease] = []
        self.n_published = 0

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

        ``episode`` and ``stage`` are 1-based labels (paper notation: k ∈ [K], h ∈ [H]).
        """
        rng = _generator("rng", rng)
        pattern = user_pattern(users)
        raw = np.asarray(raw_value, dtype=float)
        noisy = mechanism.release(raw, rng)
        self.ledger.record(family, episode, stage, mechanism, pattern)
        return self._emit(family, episode, stage, pattern, mechanism, raw, noisy)

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
        draws it, from :meth:`noise_source` (fresh for every release). The billboard checks only the shape and
        finiteness;
        :mod:`dpverify.whitebox` checks the claim against the agent's behaviour. Nothing is kept as "noise"
        (the raw value is not known here).
        """
        pattern = user_pattern(users)
        noisy = _published_value(mechanism, value)
        self.ledger.record(family, episode, stage, mechanism, pattern)
        return self._emit(family, episode, stage, pattern, mechanism, None, noisy)

    def publish_stages(
        self,
        family: str,
        episode: int,
        mechanism: Mechanism,
        raw_values: np.ndarray,
        users: str | UserPattern,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Release ``raw_values[h − 1]`` as stage h = 1..n of ``episode``: n releases with fresh noise.

        Exactly ``n`` calls of :meth:`publish` for stages 1..n in order (the same checks on every value,
        the same noise draws from ``rng`` in the same order, the same ledger records and history), made
        at once: the values are validated as one array, the n noise draws come from one call of the
        mechanism, and the ledger records the stages as one run.
        """
        rng = _generator("rng", rng)
        pattern = user_pattern(users)
        raw = _checked_stack(mechanism, raw_values)
        n = raw.shape[0]
        noisy = raw + mechanism.release(np.zeros(mechanism.output_shape), rng, n)
        self.ledger.record_stages(family, episode, (1, n), mechanism, pattern)
        return self._emit_block(episode, pattern, [(family, h + 1, mechanism) for h in range(n)], raw, noisy)

    def reserve(
        self,
        episode: int,
        releases: ReleasePlan | Sequence[tuple[str, int, Mechanism]],
        users: str | UserPattern,
        rng: np.random.Generator,
    ) -> ReservedReleases:
        """Plan the releases (family, stage, mechanism) one episode will make, in publication order
        (a :class:`ReleasePlan`, or the list it is made from).

        For releases whose values are computed one after the other (a backward pass): the ledger records
        them all now (so it never lags what is published; if the episode stops early, it over-counts,
        the safe side), their noise is drawn now in publication order (:func:`draw_noise`: the same
        draws as :meth:`publish` would make one by one), and :meth:`ReservedReleases.publish` then checks,
        releases and keeps each value exactly as :meth:`publish` does, once.
        """
        rng = _generator("rng", rng)
        pattern = user_pattern(users)
        plan = releases if isinstance(releases, ReleasePlan) else ReleasePlan(releases)
        plan.record(self.ledger, episode, pattern)
        block, noise, stacks = plan.draw_noise(rng)
        return ReservedReleases(self, episode, plan, pattern, noise, block, stacks)

    # ---- the two hooks every publishing path ends in ---------------------------------------------------

    def _emit(self, family: str, episode: int, stage: int, pattern: UserPattern, mechanism: Mechanism,
              raw: np.ndarray | None, noisy: np.ndarray) -> np.ndarray:
        """One release, recorded in the ledger already: count and keep it; return the value handed to the agent."""
        self.n_published += 1
        if self.keep_history:
            self._keep(family, episode, stage, pattern, mechanism, raw, noisy)
        return noisy

    def _emit_block(self, episode: int, pattern: UserPattern, releases: Sequence[tuple[str, int, Mechanism]],
                    raws: Any, noisy: Any) -> Any:
        """Several releases of ``episode`` in publication order (labels ``releases``, values ``raws[i]`` and
        ``noisy[i]``), recorded in the ledger already: count and keep them; return the values handed to the
        agent, in the container ``noisy`` came in."""
        self.n_published += len(releases)
        if not self.keep_history:
            return noisy
        if not (isinstance(noisy, np.ndarray) and isinstance(raws, np.ndarray)):
            for (family, stage, mechanism), raw, value in zip(releases, raws, noisy, strict=True):
                self._keep(family, episode, stage, pattern, mechanism, raw, value)
            return noisy
        # one read-only copy of the block (and of its noise), the releases kept as views of its rows
        values = np.array(noisy, dtype=float, copy=True)
        values.setflags(write=False)
        noises: Any = [None] * len(releases)
        if self.keep_noise:
            noises = values - raws
            noises.setflags(write=False)
        kind = pattern.kind
        self._history.extend(PublishedRelease(family, int(episode), int(stage), kind, value, noise, mechanism)
                             for (family, stage, mechanism), value, noise in zip(releases, values, noises, strict=True))
        return noisy

    def _keep(self, family: str, episode: int, stage: int, pattern: UserPattern, mechanism: Mechanism,
              raw: np.ndarray | None, noisy: np.ndarray) -> None:
        value = np.array(noisy, dtype=float, copy=True)
        value.setflags(write=False)
        noise = None
        if self.keep_noise and raw is not None:
            noise = noisy - raw
            noise.setflags(write=False)
        self._history.append(PublishedRelease(family, int(episode), int(stage), pattern.kind, value, noise,
                                              mechanism))

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

    def _emit(self, family: str, episode: int, stage: int, pattern: UserPattern, mechanism: Mechanism,
              raw: np.ndarray | None, noisy: np.ndarray) -> np.ndarray:
        recorded = self._replay(family, episode, stage)
        super()._emit(family, episode, stage, pattern, mechanism, raw, noisy)
        return recorded

    def _emit_block(self, episode: int, pattern: UserPattern, releases: Sequence[tuple[str, int, Mechanism]],
                    raws: Any, noisy: Any) -> Any:
        recorded = [self._replay(family, episode, stage) for family, stage, _ in releases]
        super()._emit_block(episode, pattern, releases, raws, noisy)
        return np.stack(recorded) if isinstance(noisy, np.ndarray) else recorded


class ReleasePlan:
    """The releases (family, stage, mechanism) an agent makes in one episode, in publication order.

    The same plan serves every episode of a run, so what :meth:`Billboard.reserve` derives from it — the
    position of each release and the ledger records (one run of stages per family where the stages are
    contiguous and share a mechanism, one record per release otherwise) — is derived once, here.
    """

    def __init__(self, releases: Sequence[tuple[str, int, Mechanism]]) -> None:
        self.releases = tuple(releases)
        self.index = {(family, stage): i for i, (family, stage, _) in enumerate(self.releases)}
        if len(self.index) != len(self.releases):
            raise InvalidParameterError("releases", "must name each (family, stage) once", len(self.releases))
        self.mechanisms = [mechanism for _, _, mechanism in self.releases]
        self._groups: dict[tuple[tuple[str, ...], int], tuple[int, int, tuple[int, ...]] | None] = {}
        self._noise_layout: tuple[str, Any] | None = None
        self._family_stages: dict[str, list[int]] | None = None
        self._family_positions: dict[str, tuple[int, ...]] | None = None
        stages: dict[str, list[int]] = {}
        mechanisms: dict[str, Mechanism] = {}
        mixed: set[str] = set()  # families released by several mechanisms: recorded one by one
        for family, stage, mechanism in self.releases:
            if mechanisms.setdefault(family, mechanism) is not mechanism:
                mixed.add(family)
            stages.setdefault(family, []).append(stage)
        #: (family, (first, last) or stage, mechanism), in the order the ledger records them.
        self.records: list[tuple[str, tuple[int, int] | int, Mechanism]] = []
        for family, planned in stages.items():
            first, last = min(planned), max(planned)
            if family not in mixed and sorted(planned) == list(range(first, last + 1)):
                self.records.append((family, (first, last), mechanisms[family]))
            else:
                self.records.extend((f, stage, m) for f, stage, m in self.releases if f == family)

    def family_positions(self) -> dict[str, tuple[int, ...]]:
        """The positions in the plan of every family's releases, in stage order (memoised)."""
        if self._family_positions is None:
            self._family_positions = {family: tuple(self.index[(family, stage)] for stage in stages)
                                      for family, stages in self.family_stages().items()}
        return self._family_positions

    def family_stages(self) -> dict[str, list[int]]:
        """The sorted stages of every family (memoised)."""
        if self._family_stages is None:
            stages: dict[str, list[int]] = {}
            for family, stage, _ in self.releases:
                stages.setdefault(family, []).append(stage)
            self._family_stages = {family: sorted(planned) for family, planned in stages.items()}
        return self._family_stages

    def draw_noise(self, rng: np.random.Generator
                   ) -> tuple[np.ndarray | None, list[np.ndarray], dict[tuple[int, ...], np.ndarray]]:
        """(the noise block or None, the noise of every release, the noise of each mechanism's releases stacked,
        keyed by their positions in the plan): :func:`_gaussian_noise_block` and :func:`draw_noise` of the plan's
        mechanisms — the same draws and the same arithmetic — with the layout (scales, each mechanism's
        positions in the one draw) derived once per plan."""
        if self._noise_layout is None:
            self._noise_layout = self._derive_noise_layout()
        kind, layout = self._noise_layout
        if kind == "block":
            sigmas, shape = layout
            block = rng.standard_normal((len(self.releases), *shape)) * sigmas
            return block, list(block), {}
        if kind == "other":
            return None, draw_noise(self.mechanisms, rng), {}
        total, groups = layout
        normals = rng.standard_normal(total)
        noise: list[np.ndarray] = [normals[:0]] * len(self.releases)
        stacks = {}
        for goe, scale, indices, gather, shape in groups:
            values = normals[gather].reshape(len(indices), *shape)
            if goe:
                z = scale * values
                values = (z + np.swapaxes(z, -1, -2)) / math.sqrt(2.0)
            else:
                values = scale * values
            for i, value in zip(indices, values, strict=True):
                noise[i] = value
            stacks[indices] = values
        return None, noise, stacks

    def _derive_noise_layout(self) -> tuple[str, Any]:
        mechanisms = self.mechanisms
        distinct = list({id(m): m for m in mechanisms}.values())
        shape = distinct[0].output_shape if distinct else ()
        if all(isinstance(m, GaussianMechanism) and m.output_shape == shape for m in distinct):
            sigmas = np.array([m.noise_scale for m in mechanisms]).reshape(-1, *(1,) * len(shape))
            return "block", (sigmas, shape)
        if not all(isinstance(m, (GaussianMechanism, GOEMechanism)) for m in mechanisms):
            return "other", None
        sizes = [math.prod(m.output_shape) for m in mechanisms]
        starts = np.cumsum([0, *sizes[:-1]])
        positions: dict[int, list[int]] = {}
        for i, m in enumerate(mechanisms):
            positions.setdefault(id(m), []).append(i)
        groups = []
        for indices in map(tuple, positions.values()):
            m, size = mechanisms[indices[0]], sizes[indices[0]]
            goe = isinstance(m, GOEMechanism)
            scale = m.entry_std if isinstance(m, GOEMechanism) else m.noise_scale
            groups.append((goe, scale, indices, starts[list(indices)][:, None] + np.arange(size), m.output_shape))
        return "mixed", (sum(sizes), groups)

    def group(self, families: tuple[str, ...], stage: int) -> tuple[int, int, tuple[int, ...]] | None:
        """(start, stop, shape) when the releases of ``families`` at ``stage`` are consecutive in the plan,
        in that order, and all Gaussian of one shape; None otherwise (memoised)."""
        key = (families, stage)
        if key not in self._groups:
            found = [self.index.get((family, stage)) for family in families]
            indices = [i for i in found if i is not None]
            group = None
            if indices and len(indices) == len(found) and indices == list(range(indices[0], indices[0] + len(indices))):
                start = indices[0]
                members = self.mechanisms[start:start + len(indices)]
                shape = members[0].output_shape
                if all(isinstance(m, GaussianMechanism) and m.output_shape == shape for m in members):
                    group = (start, start + len(indices), shape)
            self._groups[key] = group
        return self._groups[key]

    def record(self, ledger: PrivacyLedger, episode: int, pattern: UserPattern) -> None:
        """Record every planned release of ``episode`` in ``ledger``."""
        for family, stages, mechanism in self.records:
            if isinstance(stages, tuple):
                ledger.record_stages(family, episode, stages, mechanism, pattern)
            else:
                ledger.record(family, episode, stages, mechanism, pattern)


class ReservedReleases:
    """The releases of one episode planned by :meth:`Billboard.reserve`: recorded, their noise drawn.

    :meth:`publish` releases one of them (each once: a second release would reuse its noise);
    :meth:`publish_group`, :meth:`publish_block` and :meth:`publish_all` release several at once with the
    same values. Every path ends in the billboard's hooks (:meth:`Billboard._emit`,
    :meth:`Billboard._emit_block`), so a :class:`ReplayBillboard` hands back its recorded values here too.
    """

    def __init__(self, billboard: Billboard, episode: int, plan: ReleasePlan, pattern: UserPattern,
                 noise: list[np.ndarray], noise_block: np.ndarray | None = None,
                 noise_stacks: dict[tuple[int, ...], np.ndarray] | None = None) -> None:
        self.billboard, self.episode, self.pattern = billboard, episode, pattern
        self._plan, self._block = plan, noise_block
        self._stacks = noise_stacks or {}  # the noise of several releases stacked, keyed by their positions
        self._index, self._mechanisms = plan.index, plan.mechanisms
        self._noise: list[np.ndarray | None] = list(noise)
        self._used = [False] * len(plan.releases)

    def publish_all(self, raw_values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Release every reserved release at once when all values are known: ``raw_values[family][h − 1]``
        is the value of (family, stage h). Every value is checked first (one array per family), then all
        are released in the reserved order; returns the released values, stacked per family."""
        stages = self._plan.family_stages()
        if raw_values.keys() != stages.keys() or any(
                stages[f] != list(range(1, len(raw_values[f]) + 1)) for f in stages):
            raise InvalidParameterError("raw_values", "must hold one value per reserved stage 1..n of every family",
                                        sorted(raw_values))
        checked = {family: _checked_stack(self._mechanisms[self._index[(family, 1)]], values)
                   for family, values in raw_values.items()}
        if any(self._used):
            raise InvalidParameterError("release", "may be published once (its noise is used)", "publish_all")
        # Each family's values plus their noise at once (the same additions as one by one).
        positions = self._plan.family_positions()
        noisy = {}
        for family, values in checked.items():
            at = positions[family]
            noise = self._stacks.get(at)
            noisy[family] = values + (noise if noise is not None else np.stack([self._pending(i) for i in at]))
        self._spend(range(len(self._used)))
        releases = self._plan.releases
        handed = self.billboard._emit_block(self.episode, self.pattern, releases,
                                            [checked[f][stage - 1] for f, stage, _ in releases],
                                            [noisy[f][stage - 1] for f, stage, _ in releases])
        out: dict[str, list[np.ndarray]] = {family: [] for family in noisy}
        for (family, _, _), value in zip(releases, handed, strict=True):
            out[family].append(value)  # the plan lists each family's stages in increasing order
        return {family: np.stack(values) for family, values in out.items()}

    def publish_group(self, families: Sequence[str], stage: int, raw_values: Sequence[np.ndarray]) -> list[np.ndarray]:
        """:meth:`publish` of several families' values at one stage, checked together (all before any release)."""
        block = self._block
        group = self._plan.group(tuple(families), stage) if block is not None else None
        # consecutive Gaussian releases of one shape: one check, one addition
        if block is not None and group is not None:
            start, stop, shape = group
            raws = np.array(raw_values, dtype=float)
            if raws.shape == (stop - start, *shape) and np.isfinite(raws).all() and not any(self._used[start:stop]):
                self._spend(range(start, stop))
                noisy = raws + block[start:stop]
                releases = self._plan.releases[start:stop]
                return list(self.billboard._emit_block(self.episode, self.pattern, releases, raws, noisy))
        indices = [self._index.get((family, stage)) for family in families]
        if None in indices or len({self._mechanisms[i].output_shape for i in indices}) != 1:  # type: ignore[index]
            return [self.publish(family, stage, value) for family, value in zip(families, raw_values, strict=True)]
        raws = np.asarray(raw_values, dtype=float)
        first = self._mechanisms[indices[0]]  # type: ignore[index]
        if (raws.shape[1:] != first.output_shape or not np.isfinite(raws).all()
                or any(isinstance(self._mechanisms[i], GOEMechanism) for i in indices)):  # type: ignore[index]
            raws = np.stack([_checked_value(self._mechanisms[i], value)  # type: ignore[index]
                             for i, value in zip(indices, raw_values, strict=True)])
        return [self._release(i, family, stage, raw)  # type: ignore[arg-type]
                for i, family, raw in zip(indices, families, raws, strict=True)]

    def publish_block(self, raw_values: np.ndarray) -> np.ndarray:
        """Release every reserved release at once, ``raw_values[i]`` being the value of the i-th release of the
        plan (publication order), shape (n, *shape); returns the released values in that order.

        When the noise was drawn as one block (all Gaussian of one shape): one check, one addition — the same
        values, counts and kept history as publishing each in turn. Otherwise each is published in turn. Every
        value is checked (and none may have been published) before any is released."""
        releases = self._plan.releases
        block = self._block
        raws = np.asarray(raw_values, dtype=float)
        if raws.shape[:1] != (len(releases),):
            raise InvalidParameterError("raw_values", f"must hold the {len(releases)} reserved values in order",
                                        raws.shape)
        if any(self._used):
            raise InvalidParameterError("release", "may be published once (its noise is used)", "publish_block")
        if block is None or raws.shape != block.shape or not np.isfinite(raws).all():
            checked = [_checked_value(mechanism, raw) for mechanism, raw in zip(self._mechanisms, raws, strict=True)]
            return np.stack([self._release(i, family, stage, raw)
                             for i, ((family, stage, _), raw) in enumerate(zip(releases, checked, strict=True))])
        self._spend(range(len(releases)))
        return self.billboard._emit_block(self.episode, self.pattern, releases, raws, raws + block)

    def publish(self, family: str, stage: int, raw_value: np.ndarray) -> np.ndarray:
        """Release the reserved (family, stage) with its own noise; check, keep and return it."""
        i = self._index.get((family, stage))
        if i is None:
            raise InvalidParameterError("release", f"must be reserved for episode {self.episode}", (family, stage))
        if self._used[i]:
            raise InvalidParameterError("release", "may be published once (its noise is used)", (family, stage))
        return self._release(i, family, stage, _checked_value(self._mechanisms[i], raw_value))

    def _pending(self, i: int) -> np.ndarray:
        """The noise drawn for reserved release i (an error once it is used)."""
        noise = self._noise[i]
        if noise is None:
            raise InvalidParameterError("release", "may be published once (its noise is used)", i)
        return noise

    def _spend(self, indices: range) -> None:
        """Mark releases published and drop their noise (each noise draw is used once)."""
        for i in indices:
            self._used[i] = True
            self._noise[i] = None

    def _release(self, i: int, family: str, stage: int, raw: np.ndarray) -> np.ndarray:
        if self._used[i]:
            raise InvalidParameterError("release", "may be published once (its noise is used)", (family, stage))
        noise = self._pending(i)
        self._spend(range(i, i + 1))
        return self.billboard._emit(family, self.episode, stage, self.pattern, self._mechanisms[i], raw,
                                    raw + noise)
