"""The accounting of any ledger — Gaussian, Laplace, randomized response, mixed — per user, never below the truth.

**Per user.** A user pays for the releases that read them (:mod:`dpverify.ledger`). With one kind of release
"the worst user" is the one with the largest ρ; with several kinds it is not a scalar, so the accounting works
with each user's *profile* (:class:`UserProfile`): the Gaussian releases' ρ (they compose exactly into one
Gaussian, μ² = 2ρ), and the number of releases of each pure dominating pair. A user whose profile is at least
another's in every coordinate pays at least as much by every route (composing more releases never helps), so
only the maximal profiles are composed (:func:`user_profiles`): the distinct profiles at the ledger's breakpoint
users when every block is prefix or current-user (between consecutive breakpoints every count is constant or
falls with the user's index, so the first user of each stretch dominates it), else of every user, chunk by chunk.
Memory stays proportional to the blocks and the distinct profiles, never to users × releases; past
:data:`MAX_PROFILES` maximal profiles their envelope (the largest count of each coordinate, a profile that
dominates every user's) is composed instead, and the routes say so.

**Routes** (:func:`epsilon_routes`), each an upper bound of ε at δ, reported with its source; a route that does
not apply is skipped with its reason, never reported as a failure:

- ``exact`` — every release Gaussian: the exact μ-GDP profile at μ² = 2ρ of the worst user (Dong, Roth & Su 2019,
  Corollary 3.3; Balle & Wang 2018, Theorem 8); the truth, computed from ρ alone as before;
- ``bun-steinke``, ``cks`` — the registered zCDP conversions of the worst user's ρ (valid for every ledger);
- ``gdp`` — Gaussian releases exactly, each pure pair by ε-DP ⇒ μ-GDP (:func:`dpverify.composition.\\
gdp_mu_of_pure`), composed: μ² = Σμᵢ² (Dong, Roth & Su 2019, Corollary 3.3), then the exact μ-GDP profile;
- ``pure`` — basic composition Σε (no Gaussian release): valid at every δ, and the exact pure ε;
- ``kov`` — the optimal composition of n ε-DP releases (Kairouz, Oh & Viswanath 2015, Theorem 3.3), at the largest
  ε of the profile (valid for heterogeneous ε; exact for n binary randomized responses of one ε, and for one
  k-ary group its exact k-ary profile);
- ``kov-heterogeneous`` — Kairouz, Oh & Viswanath 2015, Theorem 3.5;
- ``pld`` — privacy loss distributions with pessimistic discretisation (:mod:`dpverify.pld`), any mix; with
  ``lower=True`` also the optimistic one, a lower bound of the truth when every pair is attained.

The ledger's ε is the least of the routes (:func:`tightest`). Toeplitz-weighted non-Gaussian releases (a weight
scales a release's sensitivity) are accounted by their ρ only: the other routes say so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from dpverify import _validate
from dpverify.composition import MAX_KARY_COMPOSITIONS, gdp_mu_of_pure, kov_heterogeneous_epsilon, rr_epsilon
from dpverify.conversions import (
    CONVERSION_REGISTRY,
    epsilon_exact_gaussian,
    epsilon_exact_gaussian_lower,
    epsilon_from_rho,
)
from dpverify.errors import DpverifyError, InvalidParameterError
from dpverify.ledger import (
    ACCOUNTING_MODES,
    PrivacyLedger,
    ReleaseBlock,
    ToeplitzFactor,
    release_counts,
    require_per_user_work,
)
from dpverify.mechanisms import DominatingPair
from dpverify.numerics import round_down, round_up

#: Past this many maximal user profiles their envelope is composed instead.
MAX_PROFILES = 64
#: Users per chunk when profiles are computed user by user.
_USER_CHUNK = 1 << 18
#: Orders α at which a lower bound of a composition's zCDP ρ = sup_α D_α/α is evaluated.
_ALPHAS = np.geomspace(1.0 + 1e-3, 1e4, 241)


@dataclass(frozen=True)
class UserProfile:
    """What one user's releases compose to.

    Attributes:
        user: a user with this profile (0 for the envelope of several, or for naive accounting).
        gaussian_rho: Σρ of the Gaussian releases that read the user (they compose to μ² = 2ρ).
        weighted_rho: Σρ of non-Gaussian releases read with a Toeplitz weight (accounted by ρ only).
        pure: (pair, number of releases) for each pure dominating pair (every pair with ``copies`` = 1: a
            release of Δ₀ copies counts Δ₀).
        envelope: True when the profile is the envelope of several (it dominates each, and may be no user's).
    """

    user: int
    gaussian_rho: float
    weighted_rho: float
    pure: tuple[tuple[DominatingPair, int], ...]
    envelope: bool = False

    @property
    def gaussian_mu(self) -> float:
        return math.sqrt(2.0 * self.gaussian_rho)

    @property
    def releases(self) -> int:
        """The number of pure pairs composed."""
        return sum(count for _, count in self.pure)

    @property
    def rho(self) -> float:
        """Σρ over every release: ε²/2 for each pure pair (Bun & Steinke 2016, Proposition 1.4), rounded up."""
        pure = math.fsum(count * pair.parameter * pair.parameter / 2.0 for pair, count in self.pure)
        return round_up(self.gaussian_rho + self.weighted_rho + pure, 4)

    @property
    def all_tight(self) -> bool:
        """Every pair is attained by the worst-case neighbours (lower bounds of the pairs are the user's)."""
        return self.weighted_rho == 0 and all(pair.tight for pair, _ in self.pure)

    def describe(self) -> str:
        parts = [f"Gaussian ρ = {self.gaussian_rho:.4g}"] if self.gaussian_rho else []
        parts += [f"{count} × {pair.law} ε = {pair.parameter:.4g}"
                  + (f" (k = {pair.categories})" if pair.categories > 2 else "") for pair, count in self.pure]
        if self.weighted_rho:
            parts.append(f"weighted ρ = {self.weighted_rho:.4g}")
        who = "envelope of the users" if self.envelope else (f"user {self.user}" if self.user else "every release")
        return f"{who}: " + (", ".join(parts) or "nothing")


@dataclass(frozen=True)
class RouteEpsilon:
    """One route's ε at δ.

    Attributes:
        route: its name (module docstring).
        epsilon: an upper bound of ε (None: the route does not apply, ``note`` says why).
        exact: the route's ε is the truth of the ledger's accounting (up to rounding on the safe side).
        lower: a lower bound of the true ε, where the route gives one (None otherwise).
        note: what the route used, or why it does not apply.
    """

    route: str
    epsilon: float | None
    exact: bool = False
    lower: float | None = None
    note: str = ""


# ------------------------------------------------------------------------------------------------------------
# Profiles


def _unit(pair: DominatingPair) -> DominatingPair:
    return pair if pair.copies == 1 else replace(pair, copies=1)


def _columns(blocks: Sequence[ReleaseBlock]) -> list[DominatingPair]:
    """The pure unit pairs of the blocks, in the order of their first block."""
    pairs: dict[DominatingPair, None] = {}
    for mechanism in dict.fromkeys(b.mechanism for b in blocks if not _weighted(b)):  # (each mechanism once)
        if not mechanism.is_gaussian:
            pairs.setdefault(_unit(mechanism.dominating_pair))
    return list(pairs)


def _weighted(block: ReleaseBlock) -> bool:
    """A Toeplitz factor's block: its users' counts are weights (Σc²), not numbers of releases."""
    return isinstance(block.users, ToeplitzFactor)


def _matrix(blocks: Sequence[ReleaseBlock], users: np.ndarray | None, columns: list[DominatingPair]) -> np.ndarray:
    """Rows: the profile of each of ``users`` (None: one row, every release counted), as
    [Gaussian ρ, weighted ρ, count of each column's pair]."""
    index = {pair: 2 + i for i, pair in enumerate(columns)}
    rows = 1 if users is None else users.size
    out = np.zeros((rows, 2 + len(columns)))
    if users is None:
        counts = [(b.mechanism, _weighted(b), np.array([float(b.n_releases)])) for b in blocks]
    else:
        counts = release_counts(blocks, users)
    for mechanism, weighted, count in counts:
        if mechanism.is_gaussian:
            out[:, 0] += count * mechanism.rho
        elif weighted:
            out[:, 1] += count * mechanism.rho
        else:
            pair = mechanism.dominating_pair
            out[:, index[_unit(pair)]] += count * pair.copies
    return out


def _maximal(rows: np.ndarray, users: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows no other row dominates (≥ in every coordinate), duplicates once, with a user of each; past
    :data:`MAX_PROFILES` of them, their envelope (the largest value of each coordinate) with user 0.

    The remaining row of largest sum is maximal (a row dominating it would have a larger sum, or have been
    dropped as dominated by a maximal row that then dominates it too): keep it, drop every row it dominates
    (itself and its duplicates included), repeat — a pass over the rows per maximal one."""
    sums = rows.sum(axis=1)
    alive = np.ones(rows.shape[0], dtype=bool)
    kept: list[int] = []
    while alive.any():
        if len(kept) == MAX_PROFILES:
            return rows.max(axis=0, keepdims=True), np.zeros(1, dtype=np.int64)
        top = int(np.argmax(np.where(alive, sums, -np.inf)))
        kept.append(top)
        alive &= ~np.all(rows[top] >= rows, axis=1)
    return rows[kept], users[kept]


def user_profiles(ledger: PrivacyLedger, accounting: str = "per-user") -> tuple[UserProfile, ...]:
    """The maximal user profiles of ``ledger`` (module docstring): every user's composition is dominated by one
    of them. ``accounting="naive"``: one profile, every release counted. Empty when no release reads a user."""
    accounting = _validate.one_of("accounting", accounting, ACCOUNTING_MODES)
    blocks = ledger.blocks  # (built on each access: read once)
    columns = _columns(blocks)
    if accounting == "naive":
        if not blocks:
            return ()
        return (_profile(_matrix(blocks, None, columns)[0], 0, columns),)
    n = max((b.users.max_user(b.episodes[1]) for b in blocks), default=0)  # PrivacyLedger.n_users
    if n == 0:
        return ()
    candidates = ledger._candidate_users(None)
    if candidates is not None:
        rows, users = _maximal(_matrix(blocks, candidates, columns), candidates)
    else:
        require_per_user_work(blocks, n)
        rows = np.zeros((0, 2 + len(columns)))
        users = np.zeros(0, dtype=np.int64)
        for start in range(1, n + 1, _USER_CHUNK):
            chunk = np.arange(start, min(n, start + _USER_CHUNK - 1) + 1, dtype=np.int64)
            rows, users = _maximal(np.vstack([rows, _matrix(blocks, chunk, columns)]), np.concatenate([users, chunk]))
    return tuple(_profile(row, int(u), columns, envelope=bool(u == 0)) for row, u in zip(rows, users, strict=True))


def _profile(row: np.ndarray, user: int, columns: list[DominatingPair], envelope: bool = False) -> UserProfile:
    # Each ρ sums one term per block: a few ulps per block cover its rounding (as PrivacyLedger.worst_user).
    ulps = 2 * len(row) + 2
    pure = tuple((pair, int(round(c))) for pair, c in zip(columns, row[2:], strict=True) if c > 0)
    return UserProfile(user, round_up(float(row[0]), ulps) if row[0] else 0.0,
                       round_up(float(row[1]), ulps) if row[1] else 0.0, pure, envelope)


# ------------------------------------------------------------------------------------------------------------
# Routes on one profile


def _gdp_mu(profile: UserProfile) -> float:
    """μ² = 2ρ_G + Σ count·μ(ε)² (each pure pair μ-GDP with μ(ε), composed), rounded up."""
    square = 2.0 * profile.gaussian_rho + math.fsum(count * gdp_mu_of_pure(pair.parameter) ** 2
                                                    for pair, count in profile.pure)
    return round_up(math.sqrt(square), 4)


def _pure_sum(profile: UserProfile, up: bool = True) -> float:
    total = math.fsum(count * pair.parameter for pair, count in profile.pure)
    return round_up(total, 2) if up else round_down(total, 2)


def _kov(profile: UserProfile, delta: float, lower: bool) -> tuple[float, bool, float | None, str]:
    """(ε, exact, lower bound, note) of the optimal composition theorem on a pure profile."""
    n = profile.releases
    top = max(pair.parameter for pair, _ in profile.pure)
    single = profile.pure[0][0] if len(profile.pure) == 1 else None
    if single is not None and single.law == "randomized-response" and single.tight and (
            single.categories == 2 or n <= MAX_KARY_COMPOSITIONS):
        k = single.categories
        epsilon = rr_epsilon(top, n, delta, k)
        low = rr_epsilon(top, n, delta, k, lower=True) if lower else None
        return epsilon, True, low, f"exact profile of {n} {k}-ary randomized responses"
    note = f"homogeneous theorem at the largest ε = {top:.4g} over {n} releases"
    return rr_epsilon(top, n, delta), False, None, note


def _closed_routes(profile: UserProfile, delta: float, lower: bool) -> dict[str, RouteEpsilon]:
    """The closed-form routes of one profile (every route but the PLD)."""
    out: dict[str, RouteEpsilon] = {}
    if profile.weighted_rho:
        for name in ("gdp", "pure", "kov", "kov-heterogeneous"):
            out[name] = RouteEpsilon(name, None, note=_WEIGHTED)
        return out
    mu = _gdp_mu(profile)
    out["gdp"] = RouteEpsilon("gdp", epsilon_exact_gaussian(mu, delta) if mu > 0 else 0.0,
                              note=f"μ = {mu:.6g}: Gaussian μ exact, each ε-DP release μ(ε)-GDP")
    if profile.gaussian_rho:
        reason = "Gaussian releases are ε-DP for no finite ε"
        for name in ("pure", "kov", "kov-heterogeneous"):
            out[name] = RouteEpsilon(name, None, note=reason)
    elif profile.pure:
        out["pure"] = RouteEpsilon("pure", _pure_sum(profile), note="basic composition Σε (valid at every δ)")
        epsilon, exact, low, note = _kov(profile, delta, lower)
        out["kov"] = RouteEpsilon("kov", epsilon, exact, low, note)
        groups = [(pair.parameter, count) for pair, count in profile.pure]
        out["kov-heterogeneous"] = RouteEpsilon("kov-heterogeneous", kov_heterogeneous_epsilon(groups, delta),
                                                note="Kairouz, Oh & Viswanath 2015, Theorem 3.5")
    return out


_WEIGHTED = "Toeplitz-weighted non-Gaussian releases are accounted by their ρ only"


def _estimate(profile: UserProfile, closed: dict[str, RouteEpsilon], delta: float) -> float:
    """The least closed-form ε of a profile (CKS on its ρ when none applies): an upper bound of its ε."""
    values = [r.epsilon for r in closed.values() if r.epsilon is not None]
    return min(values) if values else epsilon_from_rho(profile.rho, delta, "cks")


def _pld_routes(profiles: Sequence[UserProfile], estimates: Sequence[float], delta: float,
                lower: bool) -> list[RouteEpsilon]:
    """The PLD route of each profile, composed in the order of decreasing estimates: a profile whose estimate (an
    upper bound of its ε) is below the largest PLD ε found already cannot raise the ledger's, and keeps its
    estimate instead of a composition."""
    out: list[RouteEpsilon | None] = [None] * len(profiles)
    largest = -math.inf
    for i in sorted(range(len(profiles)), key=lambda j: -estimates[j]):
        if profiles[i].weighted_rho:
            out[i] = RouteEpsilon("pld", None, note=_WEIGHTED)
        elif estimates[i] <= largest and not lower:
            out[i] = RouteEpsilon("pld", estimates[i], note="privacy loss distributions, pessimistic discretisation")
        else:
            out[i] = _pld_route(profiles[i], delta, estimates[i], lower)
            largest = max(largest, out[i].epsilon or -math.inf)  # type: ignore[union-attr]
    return [r for r in out if r is not None]


def _pld_route(profile: UserProfile, delta: float, estimate: float, lower: bool) -> RouteEpsilon:
    from dpverify import pld

    try:
        epsilon = pld.composed_epsilon(profile.gaussian_mu, profile.pure, delta, estimate)
        low = None
        if lower and profile.all_tight:
            low = pld.composed_epsilon(profile.gaussian_mu, profile.pure, delta, estimate, pessimistic=False)
    except ImportError:
        return RouteEpsilon("pld", None, note="needs dp-accounting (pip install dp-accounting)")
    except DpverifyError as exc:
        return RouteEpsilon("pld", None, note=f"not computable here: {exc}")
    if not math.isfinite(epsilon):
        return RouteEpsilon("pld", None, note="δ is below what the discretised PLD resolves")
    return RouteEpsilon("pld", epsilon, lower=low, note="privacy loss distributions, pessimistic discretisation")


# ------------------------------------------------------------------------------------------------------------
# Routes on a ledger


#: The routes in the order they are reported.
ROUTES: tuple[str, ...] = ("bun-steinke", "cks", "gdp", "pure", "kov", "kov-heterogeneous", "pld", "exact")


def _ledger_rho(ledger: PrivacyLedger, accounting: str) -> float:
    return ledger.worst_user_rho() if accounting == "per-user" else ledger.naive_rho()


def epsilon_routes(ledger: PrivacyLedger, delta: float, accounting: str = "per-user",
                   lower: bool = False) -> tuple[RouteEpsilon, ...]:
    """Every route's ε at δ for ``ledger`` (module docstring), in :data:`ROUTES` order; with ``lower`` also the
    lower bounds the routes give (the optimistic PLD costs a second composition)."""
    delta = _validate.open_unit("delta", delta)
    accounting = _validate.one_of("accounting", accounting, ACCOUNTING_MODES)
    rho = _ledger_rho(ledger, accounting)
    out: dict[str, RouteEpsilon] = {}
    for conversion in CONVERSION_REGISTRY.values():
        if not conversion.gaussian_only:
            out[conversion.name] = RouteEpsilon(conversion.name, epsilon_from_rho(rho, delta, conversion.name),
                                                note=f"ρ = {rho:.6g}; {conversion.source}")
    if ledger.all_gaussian:
        mu = math.sqrt(2.0) * math.sqrt(rho)
        low = epsilon_exact_gaussian_lower(mu, delta) if lower else None
        out["exact"] = RouteEpsilon("exact", epsilon_from_rho(rho, delta, "exact"), True, low,
                                    f"μ = {mu:.6g}: every release Gaussian, the exact μ-GDP profile")
        for name in ("gdp", "pure", "kov", "kov-heterogeneous", "pld"):
            out[name] = RouteEpsilon(name, None, note="every release is Gaussian: the exact route is the truth")
        return tuple(out[name] for name in ROUTES if name in out)
    kinds = sorted({b.mechanism.kind for b in ledger.blocks if not b.mechanism.is_gaussian})
    out["exact"] = RouteEpsilon("exact", None, note=f"needs every release to be Gaussian (this ledger has "
                                f"{', '.join(kinds)} releases)")
    profiles = user_profiles(ledger, accounting)
    closed = [_closed_routes(p, delta, lower) for p in profiles]
    plds = _pld_routes(profiles, [_estimate(p, c, delta) for p, c in zip(profiles, closed, strict=True)], delta,
                       lower)
    envelope = any(p.envelope for p in profiles)
    for name in ("gdp", "pure", "kov", "kov-heterogeneous"):
        out[name] = _worst([r[name] for r in closed], name, len(profiles), envelope)
    out["pld"] = _worst(plds, "pld", len(profiles), envelope)
    return tuple(out[name] for name in ROUTES if name in out)


def _worst(results: Sequence[RouteEpsilon], name: str, profiles: int, envelope: bool) -> RouteEpsilon:
    """A route over every maximal profile: the largest ε (exact when exact for each, and no envelope)."""
    if not results:
        return RouteEpsilon(name, 0.0, exact=True, lower=0.0, note="no release reads any user")
    skipped = [r for r in results if r.epsilon is None]
    if skipped:
        return skipped[0]
    worst = max(results, key=lambda r: r.epsilon or 0.0)
    lowers = [r.lower for r in results if r.lower is not None]
    note = worst.note + (f" (the worst of {profiles} user profiles)" if profiles > 1 else "")
    if envelope:
        note += "; the envelope of the users' profiles"
    return RouteEpsilon(name, worst.epsilon, exact=all(r.exact for r in results) and not envelope,
                        lower=None if envelope or not lowers else max(lowers), note=note)


def tightest(routes: Sequence[RouteEpsilon]) -> RouteEpsilon:
    """The route with the least ε among those that apply (an exact route wins a tie)."""
    usable = [r for r in routes if r.epsilon is not None]
    if not usable:
        raise InvalidParameterError("routes", "must contain a route that applies", [r.route for r in routes])
    return min(usable, key=lambda r: (r.epsilon, not r.exact))


# ------------------------------------------------------------------------------------------------------------
# The other measures


def pure_epsilon(ledger: PrivacyLedger, accounting: str = "per-user") -> tuple[float | None, str]:
    """(the exact pure ε of the ledger, how), ε = ∞ when a Gaussian release reads a user (a Gaussian release is
    ε-DP for no finite ε), None when it cannot be computed (Toeplitz-weighted non-Gaussian releases)."""
    profiles = user_profiles(ledger, accounting)
    if any(p.weighted_rho for p in profiles):
        return None, "Toeplitz-weighted non-Gaussian releases are accounted by their ρ only"
    if any(p.gaussian_rho for p in profiles):
        return math.inf, "a Gaussian release is ε-DP for no finite ε"
    total = max((_pure_sum(p) for p in profiles), default=0.0)
    return total, "basic composition Σε of the worst user (exact: every pure release attains its ε)"


def rho_bounds(ledger: PrivacyLedger, accounting: str = "per-user") -> tuple[float, float, bool]:
    """(upper, lower, exact) bounds of the ledger's ρ-zCDP: the worst user's Σρ (Bun & Steinke 2016, Lemma 2.3),
    and sup_α D_α/α of the worst user's composed attained pairs evaluated on a grid of orders (the zCDP of the
    composition can be no smaller). Exact when every release is Gaussian."""
    upper = _ledger_rho(ledger, accounting)
    if ledger.all_gaussian:  # exact up to the upward rounding of the per-block sums (far below 1e-12 relative)
        return upper, round_down(upper * (1.0 - 1e-12), 1), True
    best = 0.0
    for profile in user_profiles(ledger, accounting):
        total = np.zeros(_ALPHAS.size)
        for pair, count in profile.pure:
            if pair.tight:
                total += count * np.array([pair.renyi_divergence(float(a)) for a in _ALPHAS])
        # D_α ≥ 0 for every release left out; the Gaussian part adds αρ_G exactly
        best = max(best, float(np.max(total / _ALPHAS)) + profile.gaussian_rho)
    return upper, round_down(best * (1.0 - 1e-12), 1), False


def mu_bounds(ledger: PrivacyLedger, accounting: str = "per-user") -> tuple[float | None, float, bool, str]:
    """(upper, lower, exact, how) bounds of the ledger's μ-GDP: all Gaussian, μ = √(2ρ) of the worst user (exact);
    otherwise μ² = 2ρ_G + Σμ(εᵢ)² (each pure release μ(ε)-GDP, :func:`dpverify.composition.gdp_mu_of_pure`),
    whose Gaussian part alone is a lower bound. None when no μ bounds it (Toeplitz-weighted pure releases)."""
    rho = _ledger_rho(ledger, accounting)
    if ledger.all_gaussian:
        mu = math.sqrt(2.0) * math.sqrt(rho)  # ρ is rounded up by far less than 1e-12 relative
        return round_up(mu, 1), round_down(mu * (1.0 - 1e-12), 1), True, ("every release Gaussian: μ = √(2ρ) of "
                                                                          "the worst user")
    profiles = user_profiles(ledger, accounting)
    if any(p.weighted_rho for p in profiles):
        return None, 0.0, False, "Toeplitz-weighted non-Gaussian releases have no μ-GDP bound here"
    upper = max((_gdp_mu(p) for p in profiles), default=0.0)
    lower = max((max(0.0, round_down(p.gaussian_mu, 2)) for p in profiles), default=0.0)
    return upper, lower, False, "Gaussian μ exact, each ε-DP release μ(ε)-GDP, composed"


# ------------------------------------------------------------------------------------------------------------
# Interop


def worst_profile(ledger: PrivacyLedger, delta: float, accounting: str = "per-user") -> UserProfile:
    """The maximal user profile with the largest ε at δ (by its tightest route): the worst user's composition."""
    profiles = user_profiles(ledger, accounting)
    if not profiles:
        raise InvalidParameterError("ledger", "must have a release that reads a user", repr(ledger))
    if len(profiles) == 1:
        return profiles[0]

    def epsilon(profile: UserProfile) -> float:
        estimate = _estimate(profile, _closed_routes(profile, delta, lower=False), delta)
        route = _pld_route(profile, delta, estimate, lower=False)
        return min(estimate, route.epsilon if route.epsilon is not None else math.inf)

    return max(profiles, key=epsilon)


def dp_event(ledger: PrivacyLedger, delta: float = 1e-5, accounting: str = "per-user") -> object:
    """The worst user's releases as a dp-accounting ``DpEvent`` (:func:`dpverify.pld.dp_events`: the Gaussian
    releases as one Gaussian event, each pure dominating pair self-composed), for dp-accounting's accountants.
    Its Laplace events hold under dp-accounting's add/remove relation (sensitivity 1) and its randomized-response
    events under replace-one: :func:`dpverify.pld.dp_accounting_epsilon` composes them so."""
    from dpverify import pld

    profile = worst_profile(ledger, _validate.open_unit("delta", delta), accounting)
    if profile.weighted_rho:
        raise InvalidParameterError("ledger", "must have no Toeplitz-weighted non-Gaussian release (no DpEvent "
                                    "states a weighted one)", repr(ledger))
    return pld.dp_events(profile.gaussian_mu, profile.pure)
