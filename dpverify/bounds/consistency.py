"""Consistency checks over the registry; ``dpverify bounds check`` runs them all.

1. **Statements of the same algorithm agree** (:func:`check_statements`): every pair of entries of
   one algorithm and kind is identical under T = K·H, or has the same polynomial rates term by term
   (then it differs only by polylogarithmic factors, which Õ hides), or is *inconsistent*. This finds
   the self-disagreement of Sahu 2025 (abstract / Theorem 3.2 vs conclusion vs arXiv v2) and
   confirms that the two LSVI-UCB statements (Sahu 2025 in K, Liao et al. 2021 in T) are equal.
2. **The non-private term is the base algorithm's regret** (:func:`check_non_private_terms`): a
   private bound's term without ε should reproduce the regret of the algorithm it privatises.
3. **No upper bound below a lower bound** (:func:`check_upper_vs_lower`): for an upper and a lower
   bound of the same setting and privacy model, the upper bound must not fall below the lower bound
   anywhere in the region checked; the rate of each in ε → 0 and K → ∞ is reported too.
4. **Improvement claims** (:func:`check_claims`): where on the (K, ε) grid the claim
   "A improves over B" of :data:`~dpverify.bounds.registry.CLAIMS` holds under the Õ expressions.

Hidden constants are taken as 1 throughout; a finding is a statement about the expressions as
printed, which is what the papers' comparisons rest on.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy

from dpverify._validate import one_of
from dpverify.bounds.comparison import Region, compare, improvement_region
from dpverify.bounds.formatting import expression_text, rates_text
from dpverify.bounds.rates import leading_exponent, split, term_rates
from dpverify.bounds.registry import CLAIMS, REGISTRY, BoundEntry, get
from dpverify.bounds.symbols import in_episodes

STATUSES: tuple[str, ...] = ("ok", "ok under Õ", "note", "inconsistent", "flagged")


@dataclass(frozen=True)
class CheckRegion:
    """The region the numerical checks look at.

    The defaults are the setting of Sahu 2025's experiments (d = 10, H = 20; Section 4) with
    δ = 1e-5 and S = A = 10 for the tabular bounds; K from 1e2 to 1e8 and ε from 1e-6 to 1e2,
    ``points`` log-spaced values on each axis.
    """

    values: Mapping[str, float] = field(
        default_factory=lambda: {"d": 10.0, "H": 20.0, "delta": 1e-5, "S": 10.0, "A": 10.0}
    )
    k_range: tuple[float, float] = (1e2, 1e8)
    epsilon_range: tuple[float, float] = (1e-6, 1e2)
    points: int = 25
    reference_k: float = 1e5
    reference_epsilon: float = 1.0

    def describe(self) -> str:
        fixed = ", ".join(f"{k}={v:g}" for k, v in self.values.items())
        return (
            f"{fixed}; K in [{self.k_range[0]:g}, {self.k_range[1]:g}], "
            f"ε in [{self.epsilon_range[0]:g}, {self.epsilon_range[1]:g}], {self.points}x{self.points} log grid"
        )


DEFAULT_REGION = CheckRegion()


@dataclass(frozen=True)
class Finding:
    """The outcome of one check.

    Attributes:
        check: which check ("statements", "non-private term", "upper vs lower", "claim").
        subjects: the machine names involved.
        status: one of :data:`STATUSES`.
        message: one sentence, readable on its own.
        details: machine-readable specifics (exponents, crossovers, region summary).
    """

    check: str
    subjects: tuple[str, ...]
    status: str
    message: str
    details: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        one_of("status", self.status, STATUSES)

    @property
    def is_problem(self) -> bool:
        return self.status in ("inconsistent", "flagged")

    def as_dict(self) -> dict[str, object]:
        return {
            "check": self.check,
            "subjects": list(self.subjects),
            "status": self.status,
            "message": self.message,
            "details": dict(self.details),
        }


def _rate_signature(expr: sympy.Expr) -> list[tuple[tuple[str, str], ...]]:
    return sorted(tuple(sorted((k, str(v)) for k, v in r.items() if v != 0)) for r in term_rates(expr))


def _compare_statements(a: BoundEntry, b: BoundEntry) -> Finding:
    fa, fb = in_episodes(a.expression), in_episodes(b.expression)
    subjects = (a.name, b.name)
    if sympy.simplify(fa - fb) == 0:
        return Finding("statements", subjects, "ok", f"{a.name} and {b.name} are identical under T = KH.")
    if _rate_signature(fa) == _rate_signature(fb):
        ratio = sympy.simplify(fa / fb)
        return Finding(
            "statements",
            subjects,
            "ok under Õ",
            f"{a.name} and {b.name} have the same polynomial rates and differ only by logarithmic factors.",
            {"ratio": str(ratio)},
        )
    sa, sb = split(fa), split(fb)
    diffs = []
    for label, ta, tb in (("non-private", sa.non_private, sb.non_private), ("privacy", sa.privacy, sb.privacy)):
        ra = dict(term_rates(ta)[0]) if ta != 0 else {}
        rb = dict(term_rates(tb)[0]) if tb != 0 else {}
        if rates_text(ra) != rates_text(rb):
            diffs.append(f"{label} term {rates_text(ra)} vs {rates_text(rb)}")
    region = DEFAULT_REGION
    cmp = compare(a, b, values={**region.values, "epsilon": region.reference_epsilon})
    crossing = ", ".join(f"{c.value:.3g}" for c in cmp.crossovers) or "none"
    return Finding(
        "statements",
        subjects,
        "inconsistent",
        f"{a.name} and {b.name} disagree: {'; '.join(diffs)}.",
        {
            "differences": diffs,
            "k_crossovers_at_reference": crossing,
            "reference": {**dict(region.values), "epsilon": region.reference_epsilon},
            "lower_for_large_k": cmp.lower_beyond_last_crossover,
        },
    )


def check_statements() -> tuple[Finding, ...]:
    """Every pair of statements of the same algorithm, kind and setting, compared."""
    groups: dict[tuple[str, str, str], list[BoundEntry]] = {}
    for entry in REGISTRY.values():
        groups.setdefault((entry.algorithm, entry.kind, entry.setting), []).append(entry)
    findings = []
    for group in groups.values():
        for a, b in itertools.combinations(group, 2):
            findings.append(_compare_statements(a, b))
    return tuple(findings)


def check_non_private_terms() -> tuple[Finding, ...]:
    """Each private bound's non-private term against the regret of its base algorithm."""
    findings = []
    for entry in REGISTRY.values():
        if entry.base is None or entry.privacy == "none":
            continue
        base = get(entry.base)
        term = in_episodes(split(entry).non_private)
        target = in_episodes(base.expression)
        details: dict[str, object] = {}
        if term == 0:
            status = "note"
            message = (f"{entry.name} has no term without ε, so it does not reduce to {base.name} "
                       f"(Õ({expression_text(base.expression)})) as ε → ∞; it tends to 0 instead.")
        elif sympy.simplify(term - target) == 0:
            status = "ok"
            message = f"the non-private term of {entry.name} equals the regret of {base.name} under T = KH."
        elif _rate_signature(term) == _rate_signature(target):
            status = "ok under Õ"
            message = f"the non-private term of {entry.name} matches {base.name} up to logarithmic factors."
        else:
            status = "inconsistent"
            message = (f"the non-private term of {entry.name} is {rates_text(term_rates(term)[0])} but "
                       f"{base.name} has regret {rates_text(term_rates(target)[0])} (T = KH).")
            details = {"term": str(term), "base": str(target), "ratio": str(sympy.simplify(term / target))}
        findings.append(Finding("non-private term", (entry.name, base.name), status, message, details))
    return tuple(findings)


def _on_grid(improver: BoundEntry | str, baseline: BoundEntry | str, region: CheckRegion) -> Region:
    """Where ``improver`` is below ``baseline`` on the (K, ε) grid of ``region``."""
    return improvement_region(improver, baseline, values=region.values, k_range=region.k_range,
                              epsilon_range=region.epsilon_range, points=region.points)


def check_upper_vs_lower(region: CheckRegion = DEFAULT_REGION) -> tuple[Finding, ...]:
    """Upper bounds that fall below a lower bound of the same setting and privacy model."""
    findings = []
    uppers = [e for e in REGISTRY.values() if e.kind == "upper"]
    lowers = [e for e in REGISTRY.values() if e.kind == "lower"]
    for up, low in itertools.product(uppers, lowers):
        if (up.setting, up.privacy) != (low.setting, low.privacy):
            continue
        res = _on_grid(up, low, region)
        fu, fl = in_episodes(up.expression), in_episodes(low.expression)
        exps = {f"{v}_{side}": leading_exponent(f, v)
                for v in ("epsilon", "K") for side, f in (("upper", fu), ("lower", fl))}
        rates = {key: str(p) for key, p in exps.items()}
        reasons = []
        if exps["epsilon_upper"] > exps["epsilon_lower"]:
            reasons.append(
                f"as ε → 0 the upper bound grows like ε^{rates['epsilon_upper']}, slower than the lower "
                f"bound's ε^{rates['epsilon_lower']}, so at any fixed K it falls below for small enough ε"
            )
        if exps["K_upper"] < exps["K_lower"]:
            reasons.append(f"in K the upper bound grows like K^{rates['K_upper']}, slower than K^{rates['K_lower']}")
        below = res.fraction > 0
        details = {
            "region": region.describe(),
            "fraction_of_grid_below": res.fraction,
            "boundary": [list(p) for p in res.boundary],
            "rates": rates,
            "privacy_definitions": [up.privacy_definition, low.privacy_definition],
        }
        if below or reasons:
            where = ""
            if res.boundary:
                eps_star = [e for _, e in res.boundary]
                where = (
                    f" on {100 * res.fraction:.1f}% of the grid ({region.describe()}): below for ε under "
                    f"{min(eps_star):.3g} (K = {region.k_range[1]:g}) "
                    f"to {max(eps_star):.3g} (K = {region.k_range[0]:g})"
                )
            caveat = ""
            if up.privacy_definition != low.privacy_definition:
                caveat = (
                    f" The lower bound is stated for {low.privacy_definition} and the upper bound for "
                    f"{up.privacy_definition}."
                )
            head = (
                f"upper bound {up.name} falls below lower bound {low.name}{where}"
                if below
                else f"upper bound {up.name} stays above lower bound {low.name} on the grid ({region.describe()}), but"
            )
            status = "flagged"
            message = head + ("; " if below and reasons else " " if reasons else "") + "; ".join(reasons) + "." + caveat
        else:
            status = "ok"
            message = f"upper bound {up.name} stays above lower bound {low.name} on the grid ({region.describe()})."
        findings.append(Finding("upper vs lower", (up.name, low.name), status, message, details))
    return tuple(findings)


def check_claims(region: CheckRegion = DEFAULT_REGION) -> tuple[Finding, ...]:
    """Where each published improvement claim holds under the Õ expressions."""
    findings = []
    for claim in CLAIMS.values():
        res = _on_grid(claim.improver, claim.baseline, region)
        at_k = compare(
            claim.improver,
            claim.baseline,
            over="epsilon",
            values={**region.values, "K": region.reference_k},
            search=(1e-8, 1e8),
        )
        at_eps = compare(
            claim.improver,
            claim.baseline,
            over="K",
            values={**region.values, "epsilon": region.reference_epsilon},
        )
        eps_where = _where(at_k, claim.improver, "ε")
        k_where = _where(at_eps, claim.improver, "K")
        status = "ok" if res.fraction == 1.0 else "flagged"
        findings.append(
            Finding(
                "claim",
                (claim.improver, claim.baseline),
                status,
                f"'{claim.improver} improves over {claim.baseline}' ({claim.source.document}, "
                f"{claim.source.location}) {res.summary()}; at K = {region.reference_k:g} it holds for {eps_where}; "
                f"at ε = {region.reference_epsilon:g} for {k_where}.",
                {
                    "claim": claim.name,
                    "region": region.describe(),
                    "fraction": res.fraction,
                    "at_reference_k": eps_where,
                    "at_reference_epsilon": k_where,
                    "epsilon_crossovers": [c.value for c in at_k.crossovers],
                    "k_crossovers": [c.value for c in at_eps.crossovers],
                },
            )
        )
    return tuple(findings)


def _where(cmp, improver: str, var: str) -> str:
    pieces = [s for s in cmp.segments if s.lower == improver]
    if not pieces:
        return f"no {var} in [{cmp.search[0]:g}, {cmp.search[1]:g}]"
    if len(pieces) == len(cmp.segments):
        return f"every {var} in [{cmp.search[0]:g}, {cmp.search[1]:g}]"
    parts = []
    for s in pieces:
        if s.low == cmp.search[0]:
            parts.append(f"{var} < {s.high:.3g}")
        elif s.high == cmp.search[1]:
            parts.append(f"{var} > {s.low:.3g}")
        else:
            parts.append(f"{s.low:.3g} < {var} < {s.high:.3g}")
    return " or ".join(parts)


def run_all(region: CheckRegion = DEFAULT_REGION) -> tuple[Finding, ...]:
    """All consistency checks, in a fixed order."""
    if region == DEFAULT_REGION:
        return _default_findings()
    return _run(region)


def _run(region: CheckRegion) -> tuple[Finding, ...]:
    return check_statements() + check_non_private_terms() + check_upper_vs_lower(region) + check_claims(region)


@functools.lru_cache(maxsize=1)
def _default_findings() -> tuple[Finding, ...]:
    # The registry is immutable, so the findings over the default region never change in a process.
    return _run(DEFAULT_REGION)
