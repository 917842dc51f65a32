"""Privacy claims in their own measure — pure ε-DP, (ε, δ)-DP, ρ-zCDP, μ-GDP — compared with a ledger.

A :class:`PrivacyClaim` is a measure and its parameters. :meth:`PrivacyClaim.compare` puts the ledger's
accounting (:mod:`dpverify.accounting`) in the claim's terms, by the tightest valid route, and answers
(:class:`ClaimComparison`):

- ``holds`` — a valid upper bound of the ledger's privacy parameter meets the claim;
- ``refuted`` — a lower bound (an exact route's value, or a route's certified lower bound) exceeds it;
- ``undecided`` — the best upper bound exceeds the claim but no lower bound does (the accounting cannot show the
  claim, and cannot show it false);
- ``cannot-compare`` — no valid route puts the ledger in the claim's measure (with the reason): a check that
  could not run, never a failure.

The routes per measure:

- pure ε: basic composition Σε of the worst user, exact (every pure release attains its ε); ∞ exactly when a
  Gaussian release reads a user;
- (ε, δ): the least ε of every route (:func:`dpverify.accounting.epsilon_routes`), refuted by the exact route
  (every release Gaussian), the exact randomized-response profile, or the optimistic PLD;
- ρ-zCDP: the worst user's Σρ (exact when every release is Gaussian), refuted by sup_α D_α/α of the worst
  user's composed pairs;
- μ-GDP: μ = √(2ρ) when every release is Gaussian (exact), else √(2ρ_G + Σμ(εᵢ)²) with each ε-DP release
  μ(ε)-GDP; refuted by the Gaussian part alone.

Values are compared with the relative slack :data:`TOLERANCE` (floating-point rounding only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpverify import _validate
from dpverify.accounting import (
    ACCOUNTING_MODES,
    RouteEpsilon,
    epsilon_routes,
    mu_bounds,
    pure_epsilon,
    rho_bounds,
    tightest,
)
from dpverify.conversions import CONVERSION_REGISTRY, epsilon_exact_gaussian, epsilon_from_rho
from dpverify.errors import InvalidParameterError

if TYPE_CHECKING:
    from dpverify.ledger import PrivacyLedger

#: The privacy measures a claim can be stated in.
MEASURES: tuple[str, ...] = ("pure", "approximate", "zcdp", "gdp")
#: The answers of :meth:`PrivacyClaim.compare`.
STATUSES: tuple[str, ...] = ("holds", "refuted", "undecided", "cannot-compare")
#: Relative slack when comparing a ledger's value with a claimed one (rounding of per-user sums only).
TOLERANCE = 1e-9

_PARAMETER = {"pure": "epsilon", "approximate": "epsilon", "zcdp": "rho", "gdp": "mu"}


@dataclass(frozen=True)
class PrivacyClaim:
    """A privacy claim: ``measure`` (one of :data:`MEASURES`) with its parameter ``value`` (ε, ρ or μ) and, for
    (ε, δ)-DP, ``delta`` in (0, 1) (0 for every other measure). ``conversion``, for an (ε, δ) claim, names the
    zCDP → (ε, δ) conversion the claimant calibrated with (:data:`~dpverify.conversions.CONVERSIONS`): a note of
    how the claim was made; a ledger is compared with the claim by the tightest valid route whatever it says."""

    measure: str
    value: float
    delta: float = 0.0
    conversion: str | None = None

    def __post_init__(self) -> None:
        _validate.one_of("measure", self.measure, MEASURES)
        object.__setattr__(self, "value", _validate.positive(_PARAMETER[self.measure], self.value))
        if self.measure == "approximate":
            object.__setattr__(self, "delta", _validate.open_unit("delta", self.delta))
        elif self.delta != 0:
            raise InvalidParameterError("delta", f"must be 0 for a {self.measure} claim", self.delta)
        if self.conversion is not None:
            if self.measure != "approximate":
                raise InvalidParameterError("conversion", "is for an (epsilon, delta) claim only", self.conversion)
            _validate.one_of("conversion", self.conversion, tuple(CONVERSION_REGISTRY))

    @property
    def parameter(self) -> str:
        """The name of the claim's parameter: ``epsilon``, ``rho`` or ``mu``."""
        return _PARAMETER[self.measure]

    def epsilon_at(self, delta: float) -> float:
        """The ε of the (ε, δ)-DP the claim implies at ``delta`` in (0, 1), rounded up: a pure ε-DP claim is
        (ε, δ)-DP at every δ; a ρ-zCDP claim (ε, δ)-DP with ε by the conversion of Canonne, Kamath & Steinke 2020
        (Proposition 12; valid for every ρ-zCDP mechanism); a μ-GDP claim with ε by the exact profile (Balle &
        Wang 2018, Theorem 8); an (ε, δ) claim implies itself at δ ≥ its δ and nothing at a smaller δ (∞)."""
        delta = _validate.open_unit("delta", delta)
        if self.measure == "pure":
            return self.value
        if self.measure == "approximate":
            return self.value if delta >= self.delta else math.inf
        if self.measure == "zcdp":
            return epsilon_from_rho(self.value, delta, "cks")
        return epsilon_exact_gaussian(self.value, delta)

    def audit_point(self, delta: float) -> tuple[float, float, str]:
        """(ε, δ, conversion): the claim as the (ε, δ) checks that need one test it — an (ε, δ) claim as stated,
        a claim in another measure as the ε it implies at ``delta`` (:meth:`epsilon_at`); the conversion the claim
        names, else ``cks`` for pure and zCDP claims (valid for every zCDP release) and ``exact`` otherwise."""
        at = self.delta if self.measure == "approximate" else _validate.open_unit("delta", delta)
        conversion = self.conversion or ("cks" if self.measure in ("pure", "zcdp") else "exact")
        return self.epsilon_at(at), at, conversion

    @classmethod
    def pure(cls, epsilon: float) -> PrivacyClaim:
        return cls("pure", epsilon)

    @classmethod
    def approximate(cls, epsilon: float, delta: float) -> PrivacyClaim:
        return cls("approximate", epsilon, delta)

    @classmethod
    def zcdp(cls, rho: float) -> PrivacyClaim:
        return cls("zcdp", rho)

    @classmethod
    def gdp(cls, mu: float) -> PrivacyClaim:
        return cls("gdp", mu)

    @classmethod
    def parse(cls, text: str) -> PrivacyClaim:
        """From ``epsilon=1`` (pure), ``epsilon=1,delta=1e-5``, ``rho=0.5`` or ``mu=1``."""
        fields: dict[str, float] = {}
        for part in str(text).split(","):
            name, _, number = part.partition("=")
            try:
                fields[name.strip()] = float(number)
            except ValueError:
                raise InvalidParameterError("claim", "must be epsilon=E[,delta=D], rho=R or mu=M", text) from None
        keys = set(fields)
        if keys == {"epsilon"} or (keys == {"epsilon", "delta"} and fields["delta"] == 0):
            return cls.pure(fields["epsilon"])
        if keys == {"epsilon", "delta"}:
            return cls.approximate(fields["epsilon"], fields["delta"])
        if keys in ({"rho"}, {"mu"}):
            name = keys.pop()
            return cls("zcdp" if name == "rho" else "gdp", fields[name])
        raise InvalidParameterError("claim", "must be epsilon=E[,delta=D], rho=R or mu=M", text)

    @classmethod
    def of(cls, value: object, where: str = "claim") -> PrivacyClaim:
        """A claim from an object: a :class:`PrivacyClaim`, or anything with ``epsilon`` and ``delta``
        (:class:`~dpverify.conversions.DPGuarantee`, whose ``conversion`` is kept; δ = 0: pure), ``rho`` alone or
        ``mu`` alone — an error naming ``where`` and what it got otherwise (an agent's ``claimed_guarantee()``
        is read through this)."""
        if isinstance(value, cls):
            return value
        item: Any = value
        if hasattr(item, "epsilon") and hasattr(item, "delta"):
            epsilon = _validate.positive(f"{where}.epsilon", item.epsilon)
            delta = _validate.non_negative(f"{where}.delta", item.delta)
            if delta == 0:
                return cls.pure(epsilon)
            conversion = getattr(item, "conversion", None)
            if conversion is not None and conversion not in CONVERSION_REGISTRY:
                raise InvalidParameterError(f"{where}.conversion", f"must be one of {', '.join(CONVERSION_REGISTRY)}",
                                            conversion)
            return cls("approximate", epsilon, _validate.open_unit(f"{where}.delta", delta), conversion)
        for name, measure in (("rho", "zcdp"), ("mu", "gdp")):
            if hasattr(item, name):
                return cls(measure, _validate.positive(f"{where}.{name}", getattr(item, name)))
        raise InvalidParameterError(where, "must have epsilon and delta (a DPGuarantee or PrivacyClaim), rho, or mu",
                                    f"{type(value).__name__} {value!r:.60}")

    def __str__(self) -> str:
        if self.measure == "approximate":
            return f"({self.value:g}, {self.delta:g})-DP"
        return {"pure": f"{self.value:g}-DP (pure)", "zcdp": f"{self.value:g}-zCDP",
                "gdp": f"{self.value:g}-GDP"}[self.measure]

    def compare(self, ledger: PrivacyLedger, accounting: str = "per-user") -> ClaimComparison:
        """The ledger's privacy in this claim's measure, and whether it meets the claim (module docstring)."""
        accounting = _validate.one_of("accounting", accounting, ACCOUNTING_MODES)
        if ledger.n_releases == 0:
            return ClaimComparison(self, "cannot-compare", "", None, None, "the ledger is empty: nothing the "
                                   "algorithm released was recorded, so the claim has no accounting behind it")
        if self.measure == "approximate":
            return self._compare_approximate(ledger, accounting)
        if self.measure == "pure":
            value, how = pure_epsilon(ledger, accounting)
            return self._verdict("pure", value, value, how)
        if self.measure == "zcdp":
            upper, lower, exact = rho_bounds(ledger, accounting)
            how = "Σρ of the worst user" + (" (every release Gaussian: exact)" if exact else "")
            return self._verdict("zcdp", upper, lower, how)
        mu, low, _, how = mu_bounds(ledger, accounting)
        return self._verdict("gdp", mu, low, how)

    def _compare_approximate(self, ledger: PrivacyLedger, accounting: str) -> ClaimComparison:
        routes = epsilon_routes(ledger, self.delta, accounting)
        best = tightest(routes)
        upper = best.epsilon if best.epsilon is not None else math.inf
        if upper <= self.value * (1.0 + TOLERANCE):
            return self._verdict(best.route, upper, None, best.note, routes)
        routes = epsilon_routes(ledger, self.delta, accounting, lower=True)
        lowers = [r.lower for r in routes if r.lower is not None]
        return self._verdict(best.route, upper, max(lowers) if lowers else None, best.note, routes)

    def _verdict(self, route: str, upper: float | None, lower: float | None, how: str,
                 routes: tuple[RouteEpsilon, ...] = ()) -> ClaimComparison:
        if upper is None:
            return ClaimComparison(self, "cannot-compare", route, None, None, how, routes)
        slack = self.value * (1.0 + TOLERANCE)
        if upper <= slack:
            status = "holds"
        elif lower is not None and lower > slack:
            status = "refuted"
        else:
            status = "undecided"
        return ClaimComparison(self, status, route, upper, lower, how, routes)


@dataclass(frozen=True)
class ClaimComparison:
    """A claim against a ledger.

    Attributes:
        claim: the claim.
        status: one of :data:`STATUSES` (module docstring).
        route: the route whose value is ``ledger_value``.
        ledger_value: an upper bound of the ledger's parameter in the claim's measure (None: no route).
        lower: a lower bound of it, where one is known.
        detail: how the value was obtained, or why no route applies.
        routes: for an (ε, δ) claim, every route (those that do not apply with their reason).
    """

    claim: PrivacyClaim
    status: str
    route: str
    ledger_value: float | None
    lower: float | None
    detail: str
    routes: tuple[RouteEpsilon, ...] = ()

    def __post_init__(self) -> None:
        _validate.one_of("status", self.status, STATUSES)

    @property
    def summary(self) -> str:
        """One line: the verdict, the ledger's value by its route, the claim."""
        name = _PARAMETER[self.claim.measure]
        if self.ledger_value is None:
            return f"{self.claim}: cannot compare ({self.detail})"
        bounds = f"{name} = {self.ledger_value:.6g}"
        if self.lower is not None and self.lower != self.ledger_value:
            bounds += f" (at least {self.lower:.6g})"
        return f"{self.claim}: {self.status} — ledger {bounds} by {self.route or self.claim.measure}: {self.detail}"
