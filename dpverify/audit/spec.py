"""What an audit is asked to do: the claim, the confidence, the trial budget and the seed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dpverify import _validate
from dpverify.conversions import mu_for_epsilon_delta
from dpverify.errors import InvalidParameterError

#: Weighted Bonferroni split of the error budget 1 − confidence over the four one-sided bounds the
#: evaluation split computes: FPR and FNR of the Clopper–Pearson test get 3/8 each, FPR and FNR of the
#: μ-GDP test 1/8 each (the weights sum to 1, so all four hold together with probability ≥ confidence).
#: The μ-GDP bound sits in the bulk of the distributions where a tighter level costs little; the
#: Clopper–Pearson bound lives in a tail where every bit of level counts.
CP_SHARE = 3.0 / 8.0
GDP_SHARE = 1.0 / 8.0


@dataclass(frozen=True)
class AuditSpec:
    """A privacy claim to audit and the budget to audit it with.

    Attributes:
        epsilon: the claimed ε (≥ 0).
        delta: the claimed δ, in [0, 1) (must be > 0 for a Gaussian claim).
        trials: trials per side (per dataset of a neighbouring pair): a selection split of
            ``round(selection_fraction · trials)`` (at least 1) and the rest for evaluation. With several
            candidate pairs each pair gets its own selection split; only the chosen pair is evaluated.
        confidence: the probability that *every* bound the audit reports holds simultaneously.
        selection_fraction: share of ``trials`` used to choose features, thresholds, directions, pair.
        seed: root of the SeedSequence tree every chunk's generator is spawned from.
        gaussian_claim: the claim is that of a Gaussian mechanism (μ-GDP with the μ that is exactly
            (ε, δ)-DP); only then may the μ-GDP bound decide the verdict.
        chunk_size: trials per chunk sent to the executor (fixed here, so results do not depend on it
            being run serially, on processes or on a cluster).
        max_pairs: the largest number of candidate neighbouring pairs accepted.
    """

    epsilon: float
    delta: float
    trials: int = 100_000
    confidence: float = 0.95
    selection_fraction: float = 0.2
    seed: int = 0
    gaussian_claim: bool = False
    chunk_size: int = 1 << 17
    max_pairs: int = 32

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _validate.non_negative("epsilon", self.epsilon))
        delta = _validate.non_negative("delta", self.delta)
        if delta >= 1.0:
            raise InvalidParameterError("delta", "must be in [0, 1)", self.delta)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "trials", _validate.integer("trials", self.trials, minimum=1))
        if self.trials < 2:
            raise InvalidParameterError(
                "trials", "must be >= 2 per side (at least one selection and one evaluation trial)", self.trials
            )
        object.__setattr__(self, "confidence", _validate.open_unit("confidence", self.confidence))
        object.__setattr__(
            self, "selection_fraction", _validate.open_unit("selection_fraction", self.selection_fraction)
        )
        object.__setattr__(self, "seed", _validate.integer("seed", self.seed, minimum=0))
        if not isinstance(self.gaussian_claim, bool):
            raise InvalidParameterError("gaussian_claim", "must be a bool", self.gaussian_claim)
        if self.gaussian_claim and delta == 0:
            raise InvalidParameterError(
                "delta", "must be > 0 for a Gaussian claim (no Gaussian mechanism is (ε, 0)-DP)", 0)
        object.__setattr__(self, "chunk_size", _validate.integer("chunk_size", self.chunk_size, minimum=1))
        object.__setattr__(self, "max_pairs", _validate.integer("max_pairs", self.max_pairs, minimum=1))

    @property
    def selection_trials(self) -> int:
        """Selection trials per side and per candidate pair."""
        return min(self.trials - 1, max(1, int(round(self.selection_fraction * self.trials))))

    @property
    def evaluation_trials(self) -> int:
        """Evaluation trials per side on the chosen pair."""
        return self.trials - self.selection_trials

    @property
    def cp_alpha(self) -> float:
        """Error level of each of the two Clopper–Pearson-test bounds: CP_SHARE · (1 − confidence)."""
        return CP_SHARE * (1.0 - self.confidence)

    @property
    def gdp_alpha(self) -> float:
        """Error level of each of the two μ-GDP-test bounds: GDP_SHARE · (1 − confidence)."""
        return GDP_SHARE * (1.0 - self.confidence)

    @property
    def claimed_mu(self) -> float | None:
        """For a Gaussian claim, the largest μ that is (ε, δ)-DP by the exact profile; else None."""
        if not self.gaussian_claim:
            return None
        if self.epsilon == 0:
            return 0.0
        return mu_for_epsilon_delta(self.epsilon, self.delta)

    def to_dict(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "trials": self.trials,
            "confidence": self.confidence,
            "selection_fraction": self.selection_fraction,
            "seed": self.seed,
            "gaussian_claim": self.gaussian_claim,
            "chunk_size": self.chunk_size,
            "max_pairs": self.max_pairs,
        }


@dataclass(frozen=True)
class NeighbourPair:
    """Two neighbouring datasets D and D′ (any picklable objects the mechanism accepts)."""

    first: Any
    second: Any
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.label, str):
            raise InvalidParameterError("label", "must be a string", self.label)


def normalise_pairs(neighbours: Any, max_pairs: int) -> tuple[NeighbourPair, ...]:
    """A NeighbourPair, a 2-tuple (D, D′), or an iterable (list, generator) of either, as a tuple of pairs.

    A plain 2-tuple is read as ONE pair (D, D′) unless its items are NeighbourPair objects; pass a list
    (or NeighbourPair objects) to give several candidate pairs.
    """
    if isinstance(neighbours, NeighbourPair):
        return (neighbours,)
    if (
        isinstance(neighbours, tuple)
        and len(neighbours) == 2
        and not any(isinstance(item, NeighbourPair) for item in neighbours)
    ):
        return (NeighbourPair(neighbours[0], neighbours[1]),)
    try:
        iterator = iter(neighbours)
    except TypeError:
        raise InvalidParameterError(
            "neighbours", "must be a NeighbourPair, a 2-tuple (D, D'), or an iterable of them",
            type(neighbours).__name__,
        ) from None
    pairs: list[NeighbourPair] = []
    for item in iterator:
        if len(pairs) >= max_pairs:
            raise InvalidParameterError("neighbours", f"must yield at most max_pairs={max_pairs} pairs",
                                        ">" + str(max_pairs))
        if isinstance(item, NeighbourPair):
            pairs.append(item)
        elif isinstance(item, tuple) and len(item) == 2:
            pairs.append(NeighbourPair(item[0], item[1]))
        else:
            raise InvalidParameterError("neighbours", "must yield NeighbourPair objects or 2-tuples (D, D')",
                                        type(item).__name__)
    if not pairs:
        raise InvalidParameterError("neighbours", "must contain at least one pair", 0)
    return tuple(pairs)

