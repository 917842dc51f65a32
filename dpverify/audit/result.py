"""The frozen outcome of an audit: bounds, the tests behind them, counts, ceiling and verdict.

An audit can show that a claim is false; it can never show that it is true. The verdict is therefore
either VIOLATION or NO VIOLATION FOUND, and every result carries that caveat.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from dpverify import _validate
from dpverify.errors import InvalidParameterError

VIOLATION = "VIOLATION"
NO_VIOLATION_FOUND = "NO VIOLATION FOUND"

NOT_A_CERTIFICATE = (
    "An audit can refute a privacy claim, never certify one: NO VIOLATION FOUND only means that these "
    "tests, at this number of trials, could not refute it."
)
GDP_SCOPE = (
    "The mu-GDP bound refutes only a Gaussian-mechanism (mu-GDP) claim; its epsilon is that of the Gaussian "
    "mechanism it rules out, not a lower bound on the epsilon of a non-Gaussian mechanism."
)


@dataclass(frozen=True)
class BoundReport:
    """One threshold test evaluated on the evaluation split, and the bound it gives.

    Attributes:
        method: "clopper-pearson" (an (ε, δ) lower bound valid for any mechanism) or "gaussian-dp"
            (a lower bound on μ, and the ε at δ of a μ-GDP mechanism with that μ).
        test: human-readable description of the feature, threshold, event and null dataset.
        feature: the feature's name.
        threshold: the threshold, chosen on the selection split.
        false_positives, false_negatives: counts on the evaluation split.
        trials: evaluation trials per side.
        fpr_upper, fnr_upper: one-sided Clopper–Pearson upper bounds, each at level ``alpha_each``.
        alpha_each: error level of each bound.
        epsilon_lower: the ε lower bound (for "gaussian-dp", ε at δ of μ_lower-GDP).
        mu_lower: the μ lower bound (for "gaussian-dp"), else None.
    """

    method: str
    test: str
    feature: str
    threshold: float
    false_positives: int
    false_negatives: int
    trials: int
    fpr_upper: float
    fnr_upper: float
    alpha_each: float
    epsilon_lower: float
    mu_lower: float | None = None

    def __post_init__(self) -> None:
        _validate.one_of("method", self.method, ("clopper-pearson", "gaussian-dp"))
        n = _validate.integer("trials", self.trials, minimum=1)
        for name in ("false_positives", "false_negatives"):
            k = _validate.integer(name, getattr(self, name), minimum=0)
            if k > n:
                raise InvalidParameterError(name, f"must be <= trials={n}", k)
        for name in ("fpr_upper", "fnr_upper"):
            x = _validate.real(name, getattr(self, name))
            if not 0.0 <= x <= 1.0:
                raise InvalidParameterError(name, "must be in [0, 1]", x)
        _validate.open_unit("alpha_each", self.alpha_each)
        if math.isnan(self.epsilon_lower) or self.epsilon_lower < 0:
            raise InvalidParameterError("epsilon_lower", "must be >= 0 (inf allowed)", self.epsilon_lower)
        if self.mu_lower is not None and (math.isnan(self.mu_lower) or self.mu_lower < 0):
            raise InvalidParameterError("mu_lower", "must be >= 0", self.mu_lower)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class AuditResult:
    """Everything an audit found, frozen.

    Attributes:
        verdict: VIOLATION or NO VIOLATION FOUND (never "private").
        violated_by: the methods whose bound exceeded the claim (empty when none did).
        claimed_epsilon, delta: the claim.
        gaussian_claim: whether the claim is that of a Gaussian mechanism.
        claimed_mu: for a Gaussian claim, the largest μ that meets (ε, δ) exactly; else None.
        confidence: probability that all reported bounds hold simultaneously.
        trials, selection_trials, evaluation_trials: per side (selection per candidate pair).
        pairs, pair_index, pair_label: how many candidate pairs, and the one evaluated.
        clopper_pearson, gaussian: the two tests and their bounds.
        ceiling: the largest ε the Clopper–Pearson test could certify with this many evaluation trials.
        correction: how one error budget covers every choice and bound.
        seed: the audit seed (with the spec, it reproduces the result exactly).
        notes: caveats, always including that an audit is not a certificate.
    """

    verdict: str
    violated_by: tuple[str, ...]
    claimed_epsilon: float
    delta: float
    gaussian_claim: bool
    claimed_mu: float | None
    confidence: float
    trials: int
    selection_trials: int
    evaluation_trials: int
    pairs: int
    pair_index: int
    pair_label: str
    clopper_pearson: BoundReport
    gaussian: BoundReport
    ceiling: float
    correction: str
    seed: int
    notes: tuple[str, ...]

    def __post_init__(self) -> None:
        _validate.one_of("verdict", self.verdict, (VIOLATION, NO_VIOLATION_FOUND))
        if (self.verdict == VIOLATION) != bool(self.violated_by):
            raise InvalidParameterError("violated_by", "must be non-empty exactly when the verdict is VIOLATION",
                                        self.violated_by)
        if NOT_A_CERTIFICATE not in self.notes:
            raise InvalidParameterError("notes", "must state that an audit is not a certificate", self.notes)

    @property
    def epsilon_lower_bound(self) -> float:
        """The Clopper–Pearson ε lower bound: valid for any mechanism at the stated confidence."""
        return self.clopper_pearson.epsilon_lower

    @property
    def gdp_epsilon(self) -> float:
        """ε at δ of the μ-GDP lower bound: meaningful only against a Gaussian-mechanism claim."""
        return self.gaussian.epsilon_lower

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["clopper_pearson"] = self.clopper_pearson.to_dict()
        out["gaussian"] = self.gaussian.to_dict()
        out["violated_by"] = list(self.violated_by)
        out["notes"] = list(self.notes)
        return out

    def summary(self) -> str:
        """A few human-readable lines."""
        cp = self.clopper_pearson
        claim = f"({self.claimed_epsilon:g}, {self.delta:g})" + (" Gaussian" if self.gaussian_claim else "")
        lines = [
            f"verdict: {self.verdict}" + (f" (by {', '.join(self.violated_by)})" if self.violated_by else ""),
            f"claim: {claim}-DP; confidence {self.confidence:g}; {self.trials} trials per side "
            f"({self.selection_trials} selection, {self.evaluation_trials} evaluation)",
            f"Clopper-Pearson epsilon lower bound: {cp.epsilon_lower:.4f}  [{cp.test}; FP {cp.false_positives}, "
            f"FN {cp.false_negatives} of {cp.trials}]",
            self._gdp_line(),
            f"ceiling (largest epsilon this many trials can certify): {self.ceiling:.4f}",
            f"error control: {self.correction}",
        ]
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)

    def _gdp_line(self) -> str:
        g = self.gaussian
        mu = "not computed" if g.mu_lower is None else f"mu >= {g.mu_lower:.4f}"
        if not self.gaussian_claim:
            # A μ-GDP bound refutes only a Gaussian claim: for any other claim its ε is no lower bound.
            return (f"mu-GDP lower bound: does not apply (the claim is not a Gaussian-mechanism claim; "
                    f"{mu} shown for reference only)  [{g.test}]")
        return (f"mu-GDP lower bound: {mu} -> epsilon {g.epsilon_lower:.4f} at delta {self.delta:g}"
                + (f" (claimed mu {self.claimed_mu:.4f})" if self.claimed_mu is not None else "")
                + f"  [{g.test}]")
