"""The frozen results of the white-box release checks (:func:`dpverify.whitebox.check_releases`).

One :class:`WhiteBoxResult` holds one :class:`~dpverify.checks.CheckResult` (pass, fail or not run, the
reason and its evidence) per check, in the order they run —

1. ``reproducible from the seeds``: a replay with the same users and seeds reproduces every release;
2. ``noise as recorded``: :class:`NoiseCheck`, one :class:`FamilyNoise` per statistic family;
3. ``release pattern as recorded``: every release that changed when a user's data changed is recorded as
   reading that user (:class:`ReleaseFinding` otherwise);
4. ``sensitivity within the record``: no release changed by more than its recorded sensitivity
   (:class:`FamilySensitivity`: the realised fraction of the recorded sensitivity, per family);
5. ``witnessed pairs within the claim``: no replayed pair implies an ε above the claim
   (:class:`PairWitness`);
6. ``published structure``: finite values of the recorded shape, exactly symmetric matrices where the
   mechanism promises them —

and the figures a reader needs: the realised sensitivity fractions (how much a sensitivity error could
hide from the audits), and the pairs witnessed (:class:`PairWitness`, with the ε the witnessed changes
imply with σ at the noise check's upper confidence limits).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from dpverify import _validate
from dpverify.checks import FAIL, NOT_RUN, PASS, UNDECIDED, CheckResult, named
from dpverify.jsonable import to_jsonable

#: The checks of a white-box result, in the order they run.
CHECK_NAMES: tuple[str, ...] = (
    "reproducible from the seeds",
    "noise as recorded",
    "release pattern as recorded",
    "sensitivity within the record",
    "witnessed pairs within the claim",
    "published structure",
)


def _status(value: str) -> str:
    return _validate.one_of("status", value, (PASS, FAIL, NOT_RUN))


@dataclass(frozen=True)
class FamilyNoise:
    """The noise check of one statistic family (:mod:`dpverify.whitebox.noise_check`).

    ``scale_ratio`` is the measured noise scale over the recorded one, with its two-sided confidence limits
    at the family's share of the level; the p-values are those of the scale test's two tails, the shape
    test, the kurtosis test and the two independence tests (NaN where a test did not run).
    """

    family: str
    mechanism: str
    releases: int
    values: int
    status: str
    detail: str
    scale_ratio: float = math.nan
    scale_lower: float = math.nan
    scale_upper: float = math.nan
    p_small: float = math.nan
    p_large: float = math.nan
    p_shape: float = math.nan
    p_kurtosis: float = math.nan
    p_across: float = math.nan
    p_within: float = math.nan

    def __post_init__(self) -> None:
        _status(self.status)


@dataclass(frozen=True)
class NoiseCheck:
    """Every family's noise check; ``shared_draws`` the pairs of releases sharing a draw up to sign,
    ``correlated`` the most correlated pair of releases' noise across the run when it fails the run-wide test,
    ``same_noise`` the families whose noise another auditor's seeds left unchanged; ``measured_epsilon`` is the ε
    the agent's own accounting gives with the noise actually drawn, for families with too little (None when none
    has)."""

    status: str
    detail: str
    level: float
    families: tuple[FamilyNoise, ...] = ()
    shared_draws: tuple[str, ...] = ()
    correlated: tuple[str, ...] = ()
    not_checked: tuple[str, ...] = ()
    measured_epsilon: float | None = None
    same_noise: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _status(self.status)

    def scale_upper(self, family: str) -> float | None:
        """The upper confidence limit of the family's noise scale ratio (None when not measured)."""
        for f in self.families:
            if f.family == family and math.isfinite(f.scale_upper):
                return f.scale_upper
        return None


@dataclass(frozen=True)
class ReleaseFinding:
    """One release that contradicts its record: ``kind`` "pattern" (it changed when user ``user``'s data
    changed, but is recorded as not reading that user) or "sensitivity" (it changed by more than its
    recorded sensitivity)."""

    kind: str
    family: str
    episode: int
    stage: int
    user: int
    environment: str
    detail: str
    ratio: float = math.nan  # the change over the recorded sensitivity

    def __post_init__(self) -> None:
        _validate.one_of("kind", self.kind, ("pattern", "sensitivity"))

    def line(self) -> str:
        return (f"{self.family} release of episode {self.episode}, stage {self.stage}, user {self.user} "
                f"({self.environment}): {self.detail}")


@dataclass(frozen=True)
class FamilySensitivity:
    """The largest change of one family's releases seen when one user's data changed, against its record.

    ``ratio`` = ``realised`` / ``recorded`` (the realised fraction of the recorded sensitivity: the
    tightness of the audit for this family); ``pair`` names the environment, position and canaries.
    """

    family: str
    norm: str
    recorded: float
    realised: float
    ratio: float
    pair: str
    releases_read: int


@dataclass(frozen=True)
class PairWitness:
    """One neighbouring pair replayed: the releases its user changed and the ε those changes imply.

    ``mu`` composes μᵢ = ‖Δᵢ‖/σᵢ over the user's changed Gaussian releases (σᵢ at its verified upper
    confidence limit, or as recorded when the noise check did not measure it); ``epsilon_lower`` is the exact
    μ-GDP ε(δ) of that μ, rounded down. It is the pair's ε along the replayed transcript: a lower bound on
    the pair's ε when each release's change does not depend on the published values before it (the replay
    cannot see other transcripts), which the label ``transcript`` states.
    """

    environment: str
    episodes: int
    position: int
    canaries: str
    changed_releases: int
    mu: float
    epsilon_lower: float
    noise_verified: bool
    transcript: str = "along the recorded transcript"


@dataclass(frozen=True)
class WhiteBoxResult:
    """Everything the white-box release checks found (module docstring)."""

    status: str
    checks: tuple[CheckResult, ...]
    noise: NoiseCheck | None = None
    sensitivity: tuple[FamilySensitivity, ...] = ()
    witnesses: tuple[PairWitness, ...] = ()
    findings: tuple[ReleaseFinding, ...] = ()
    notes: tuple[str, ...] = ()
    episodes: int = 0
    search_episodes: int = 0
    seed: int = 0
    seconds: float = 0.0
    settings: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _status(self.status)

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        return tuple(c for c in self.checks if c.status == FAIL)

    @property
    def not_run(self) -> tuple[CheckResult, ...]:
        return tuple(c for c in self.checks if c.status == NOT_RUN)

    @property
    def refutations(self) -> tuple[CheckResult, ...]:
        """The failures that show the claim false (a failure of the records alone may leave it standing)."""
        return tuple(c for c in self.checks if c.refutes)

    @property
    def undecided(self) -> tuple[CheckResult, ...]:
        """The failures of the records whose correction leaves the claim undecided."""
        return tuple(c for c in self.checks if c.status == FAIL and c.claim == UNDECIDED)

    def __getitem__(self, name: str) -> CheckResult:
        return named(self.checks, name)

    @property
    def epsilon_lower(self) -> float | None:
        """The largest witnessed ε (None when no pair was witnessed)."""
        return max((w.epsilon_lower for w in self.witnesses), default=None)

    def summary(self) -> str:
        lines = [f"white-box release checks: {self.status.upper()} (K = {self.episodes}, search K = "
                 f"{self.search_episodes}, seed {self.seed})"]
        lines += [f"  [{c.status}] {c.name}: {c.reason}" for c in self.checks]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["epsilon_lower"] = self.epsilon_lower
        return to_jsonable(out)

