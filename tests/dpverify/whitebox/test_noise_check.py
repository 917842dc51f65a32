"""The noise check on synthetic releases: correct noise passes at its level, each planted defect fails."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpverify.agents.core.billboard import PublishedRelease
from dpverify.ledger import PrivacyLedger
from dpverify.mechanisms import GaussianMechanism, GOEMechanism, LaplaceMechanism, RandomizedResponse
from dpverify.whitebox.noise_check import check_noise, flip_runs, rescaled_ledger
from dpverify.whitebox.rr_agreement import agreement_pmf, agreements, power, runs_needed, upper_tail

VEC = GaussianMechanism(1.0, 2.0, 5)
GOE = GOEMechanism(1.0, 0.5, 4)
LAP = LaplaceMechanism(1.0, 3.0, 4)


def drawn(mechanism, noises, family="v", raw=None):
    """Releases whose noise the billboard drew (and kept)."""
    out = []
    for k, noise in enumerate(noises, start=1):
        base = np.zeros(mechanism.output_shape) if raw is None else raw
        out.append(PublishedRelease(family, k, 1, "prefix", base + noise, np.asarray(noise), mechanism))
    return out


def gaussian(rng, n, mechanism=VEC, scale=1.0):
    return [rng.normal(0.0, mechanism.sigma * scale, mechanism.output_shape) for _ in range(n)]


def goe(rng, n, mechanism=GOE, symmetric=True):
    out = []
    for _ in range(n):
        z = rng.normal(0.0, mechanism.entry_std, mechanism.output_shape)
        out.append((z + z.T) / math.sqrt(2.0) if symmetric else z)
    return out


def test_correct_gaussian_and_goe_noise_pass_with_scale_near_one() -> None:
    rng = np.random.default_rng(0)
    result = check_noise(drawn(VEC, gaussian(rng, 400)) + drawn(GOE, goe(rng, 400), "G"))
    assert result.status == "pass", result.detail
    ratios = {f.family: f.scale_ratio for f in result.families}
    assert ratios["v"] == pytest.approx(1.0, abs=0.05) and ratios["G"] == pytest.approx(1.0, abs=0.05)
    assert all(f.scale_lower <= 1.0 <= f.scale_upper for f in result.families)
    assert result.measured_epsilon is None


def test_half_the_noise_fails_and_reports_the_accounted_epsilon_with_the_noise_drawn() -> None:
    rng = np.random.default_rng(1)
    ledger = PrivacyLedger()
    for k in range(1, 401):
        ledger.record("v", k, 1, VEC, "current")
    result = check_noise(drawn(VEC, gaussian(rng, 400, scale=0.5)), ledger=ledger)
    assert result.status == "fail" and "less noise than recorded" in result.detail
    family = result.families[0]
    assert family.scale_ratio == pytest.approx(0.5, abs=0.02) and family.scale_upper < 0.55
    recorded = ledger.guarantee(1e-5).epsilon
    assert result.measured_epsilon is not None and result.measured_epsilon > 1.7 * recorded
    assert rescaled_ledger(ledger, {"v": 0.5}).guarantee(1e-5).epsilon > recorded


def test_more_noise_than_recorded_passes_with_a_note() -> None:
    result = check_noise(drawn(VEC, gaussian(np.random.default_rng(2), 400, scale=1.5)))
    assert result.status == "pass" and "more noise than recorded" in result.families[0].detail


@pytest.mark.parametrize("defect", ["reused", "broadcast", "unnoised-coordinate", "uniform", "correlated",
                                    "no-noise"])
def test_each_defect_of_the_noise_fails(defect: str) -> None:
    rng = np.random.default_rng(3)
    noises = gaussian(rng, 400)
    if defect == "reused":
        noises[7] = -noises[3]
    elif defect == "broadcast":
        noises = [np.full(5, rng.normal(0.0, VEC.sigma)) for _ in range(400)]
    elif defect == "unnoised-coordinate":
        for n in noises:
            n[-1] = 0.0
    elif defect == "uniform":  # the right variance, the wrong law: a bounded noise has no (ε, δ) tail
        half_width = VEC.sigma * math.sqrt(3.0)
        noises = [rng.uniform(-half_width, half_width, 5) for _ in range(400)]
    elif defect == "correlated":
        noises = [noises[0]] + [0.9 * noises[i - 1] + math.sqrt(1 - 0.81) * noises[i] for i in range(1, 400)]
    elif defect == "no-noise":
        noises[10] = np.zeros(5)
    result = check_noise(drawn(VEC, noises))
    assert result.status == "fail", (defect, result.detail)


def test_asymmetric_goe_noise_fails_its_diagonal_scale() -> None:
    result = check_noise(drawn(GOE, goe(np.random.default_rng(4), 400, symmetric=False), "G"))
    assert result.status == "fail" and "less noise than recorded" in result.detail


def test_laplace_noise_drawn_and_as_differences() -> None:
    rng = np.random.default_rng(5)
    correct = [rng.laplace(0.0, LAP.scale, 4) for _ in range(500)]
    assert check_noise(drawn(LAP, correct)).status == "pass"
    halved = [rng.laplace(0.0, LAP.scale / 2, 4) for _ in range(500)]
    assert check_noise(drawn(LAP, halved)).status == "fail"
    # self-noised releases: two runs, the same raw values, independent noise
    raw = rng.normal(size=4)
    first = [PublishedRelease("c", k, 1, "prefix", raw + rng.laplace(0, LAP.scale, 4), None, LAP) for k in range(500)]
    second = [PublishedRelease("c", k, 1, "prefix", raw + rng.laplace(0, LAP.scale, 4), None, LAP) for k in range(500)]
    assert check_noise(first, second).status == "pass"
    small = [PublishedRelease("c", k, 1, "prefix", raw + rng.laplace(0, LAP.scale / 2, 4), None, LAP)
             for k in range(500)]
    assert check_noise(first[:250] + small[:250], second[:250] + small[250:]).status == "fail"


def test_self_noised_releases_need_the_replay_and_a_noise_that_follows_the_seed() -> None:
    rng = np.random.default_rng(6)
    values = [rng.normal(0, VEC.sigma, 5) for _ in range(300)]
    first = [PublishedRelease("v", k, 1, "prefix", v, None, VEC) for k, v in enumerate(values)]
    assert check_noise(first).status == "not run"
    assert "need a replay" in check_noise(first).detail
    same = check_noise(first, first)  # the replay's noise did not change with the billboard's seed
    assert same.status == "not run" and "noise_source" in same.detail
    other = [PublishedRelease("v", k, 1, "prefix", rng.normal(0, VEC.sigma, 5), None, VEC) for k in range(300)]
    assert check_noise(first, other).status == "pass"


def test_families_sharing_a_draw_are_correlated() -> None:
    rng = np.random.default_rng(7)
    a = gaussian(rng, 300)
    b = [0.8 * x + 0.6 * y for x, y in zip(a, gaussian(rng, 300), strict=True)]
    result = check_noise(drawn(VEC, a, "a") + drawn(VEC, b, "b"))
    assert result.status == "fail" and result.correlated


@pytest.mark.slow
def test_false_alarm_rate_of_correct_noise_is_within_the_level() -> None:
    """300 independent checks of correct noise (two families, every test) at level 0.05: the number of false
    alarms is Binomial(300, ≤ 0.05); ≤ 25 fails with probability < 0.01 if the level holds (mean 15)."""
    alarms = 0
    for seed in range(300):
        rng = np.random.default_rng(1000 + seed)
        result = check_noise(drawn(VEC, gaussian(rng, 60)) + drawn(GOE, goe(rng, 60), "G"), level=0.05)
        alarms += result.status == "fail"
    assert alarms <= 25


def test_a_pass_names_the_tests_that_ran_and_those_too_few_values_left_out() -> None:
    rng = np.random.default_rng(1)
    scalar = GaussianMechanism(1.0, 2.0, 1)
    few = check_noise(drawn(scalar, gaussian(rng, 9, scalar)))  # 9 values of one coordinate
    assert few.status == "pass", few.detail
    assert "distributed as recorded" not in few.detail
    assert "pass the scale, shape and independence across releases tests" in few.detail
    assert "not run, too few values: kurtosis, independence within releases" in few.detail
    many = check_noise(drawn(VEC, gaussian(rng, 400)))
    assert "pass the scale, shape, kurtosis, independence across releases and independence within releases tests" \
        in many.detail
    laplace = check_noise(drawn(LAP, [rng.laplace(0.0, LAP.scale, LAP.output_shape) for _ in range(300)]))
    assert "kurtosis" not in laplace.detail  # no test of it applies to Laplace noise: none is said missing


# ---- randomized response -------------------------------------------------------------------------------------


def test_randomized_response_flips_as_recorded_pass_and_too_few_fail() -> None:
    rr = RandomizedResponse(1, 1.0, 6, 4)
    rng = np.random.default_rng(3)
    raw = np.array([0.0, 1.0, 2.0, 3.0, 0.0, 1.0])
    honest = check_noise(drawn(rr, list(rr.noise(rng, 500)), "r", raw=raw))
    assert honest.status == "pass", honest.detail
    family = honest.families[0]
    assert family.scale_ratio == pytest.approx(1.0, abs=0.1) and family.p_small > 1e-3
    # a coordinate kept more often than recorded (ε = 2 drawn, 1 recorded): too few changes
    lying = RandomizedResponse(1, 2.0, 6, 4)
    result = check_noise(drawn(rr, list(lying.noise(rng, 500)), "r", raw=raw))
    assert result.status == "fail" and "less noise than recorded" in result.detail
    assert result.measured_epsilon is None  # (no scale to rescale)


def test_randomized_response_offsets_must_be_uniform() -> None:
    rr = RandomizedResponse(1, 0.5, 4, 5)
    rng = np.random.default_rng(4)
    noise = rr.noise(rng, 1000)
    noise[noise != 0] = 1.0  # every change to the next category: the right flip rate, the wrong law
    result = check_noise(drawn(rr, list(noise), "r"))
    assert result.status == "fail" and "not uniform" in result.detail


def test_self_noised_randomized_response_is_checked_by_the_difference_of_two_runs() -> None:
    rr = RandomizedResponse(1, 0.8, 3, 3)
    rng = np.random.default_rng(5)
    raw = np.zeros((400, 3))
    first = [PublishedRelease("r", k, 1, "current", v, None, rr)
             for k, v in enumerate(rr.release(raw[0], rng, 400), start=1)]
    second = [PublishedRelease("r", k, 1, "current", v, None, rr)
              for k, v in enumerate(rr.release(raw[0], rng, 400), start=1)]
    result = check_noise(first, second)
    assert result.status == "pass", result.detail


def test_families_of_different_shapes_sharing_standard_normals_are_refuted_with_the_pair_named() -> None:
    """One generator rebuilt per family from each episode's seed: the Gram's diagonal repeats the target's first
    normal (r = 1), which no test of either family alone can see."""
    rng = np.random.default_rng(8)
    releases = []
    for k in range(1, 9):
        seed = int(rng.integers(2**32))
        gram, target = np.random.default_rng(seed), np.random.default_rng(seed)
        z = gram.normal(0.0, GOE.entry_std, GOE.output_shape)
        g = (z + z.T) / math.sqrt(2.0)
        releases.append(PublishedRelease("gram", k, 1, "prefix", g, g, GOE))
        v = target.normal(0.0, VEC.sigma, VEC.output_shape)
        releases.append(PublishedRelease("target", k, 1, "prefix", v, v, VEC))
    result = check_noise(releases)
    assert result.status == "fail" and result.correlated, result.detail
    pair = result.correlated[0]
    assert "gram (stage 1, coordinate" in pair and "target (stage 1, coordinate 0)" in pair
    fresh = check_noise(drawn(GOE, goe(rng, 8), "gram") + drawn(VEC, gaussian(rng, 8), "target"))
    assert fresh.status == "pass", fresh.detail


def test_noise_that_no_auditor_seed_moves_is_refuted_and_noise_of_the_agents_own_generator_is_not_run() -> None:
    rng = np.random.default_rng(9)
    values = [rng.normal(0, VEC.sigma, 5) for _ in range(40)]
    first = [PublishedRelease("v", k, 1, "prefix", v, None, VEC) for k, v in enumerate(values, start=1)]
    public = check_noise(first, first, reseeded=first)  # the same values with other coins and noise seeds
    assert public.status == "fail" and public.same_noise and "public quantities" in public.detail
    moved = [PublishedRelease("v", k, 1, "prefix", rng.normal(0, VEC.sigma, 5), None, VEC) for k in range(1, 41)]
    own = check_noise(first, first, reseeded=moved)  # not with the noise seed, but with the coins
    assert own.status == "not run" and "a generator of the agent's own" in own.detail and "noise_source()" in own.detail
    kept = drawn(VEC, gaussian(rng, 40))
    assert check_noise(kept, reseeded=kept).status == "fail"  # billboard-drawn: the kept noise itself


def test_laplace_families_of_different_shapes_sharing_draws_are_refuted_and_fresh_ones_pass() -> None:
    """Self-noised Laplace families: a 3-coordinate family reuses the first standardised draws of a 6-coordinate
    one at every episode (seen as differences of two runs). No family's own test and no row-equality test sees it;
    the run-wide test of the Laplace laws names the pair, and fresh draws pass it."""
    big, small = LaplaceMechanism(2.0, 5.0, 6), LaplaceMechanism(2.0, 0.5, 3)

    def run(rng: np.random.Generator, shared: bool) -> list[PublishedRelease]:
        out = []
        for k in range(1, 301):
            z = rng.laplace(0.0, 1.0, 6)
            w = z[:3] if shared else rng.laplace(0.0, 1.0, 3)
            out += [PublishedRelease("counts", k, 1, "prefix", k + big.scale * z, None, big),
                    PublishedRelease("returns", k, 1, "prefix", 0.5 * k + small.scale * w, None, small)]
        return out

    rng = np.random.default_rng(10)
    result = check_noise(run(rng, True), run(rng, True))
    assert result.status == "fail" and result.correlated, result.detail
    assert "counts (stage 1, coordinate" in result.correlated[0] and "returns (stage 1, coordinate" in (
        result.correlated[0])
    fresh = check_noise(run(rng, False), run(rng, False))
    assert fresh.status == "pass", fresh.detail


# ---- self-noised randomized response: the flip rate from m runs with m noise seeds ----------------------------


def _self_noised_runs(rng, runs, releases, recorded, drawn_epsilon):
    """``runs`` runs of self-noised randomized response around one fixed raw input (same users and coins), each with
    its own noise: the releases are recorded at ``recorded`` and drawn at ``drawn_epsilon``."""
    raw = rng.integers(0, recorded.categories, (releases, recorded.dim))
    draw = RandomizedResponse(recorded.sensitivity, drawn_epsilon, recorded.dim, recorded.categories)
    return [[PublishedRelease("r", k, 1, "current", draw.release(raw[k - 1], rng), None, recorded)
             for k in range(1, releases + 1)] for _ in range(runs)]


def test_flip_rate_of_self_noised_rr_needs_the_runs_its_power_calculation_asks_for() -> None:
    """The red-team sizes (ε₀ = 0.05, k = 2, 20 coordinates × 1000 releases): a pair of runs cannot tell ε₀ from
    2ε₀ (power ≪ ½: it passes what it tested and says how weak that is, naming the remedy — a protocol-following
    agent is never left undecided for its size); the planned runs can (power ≥ 0.99, refuted)."""
    rr = RandomizedResponse(20, 0.05, 20, 2)
    planned = flip_runs(_self_noised_runs(np.random.default_rng(0), 1, 1000, rr, 0.05)[0], 1e-3, 64)
    assert len(planned) == 1 and 30 <= planned[0].runs <= 50 and planned[0].power >= 0.99
    rng = np.random.default_rng(1)
    pair = _self_noised_runs(rng, 2, 1000, rr, 0.1)
    weak = check_noise(pair[0], pair[1])
    assert weak.status == "pass" and "weak at this size" in weak.detail and "billboard.publish" in weak.detail
    bug = _self_noised_runs(rng, planned[0].runs, 1000, rr, 0.1)
    result = check_noise(bug[0], bug[1], replays=bug[2:])
    assert result.status == "fail" and "less noise than recorded" in result.detail, result.detail
    twin = _self_noised_runs(rng, planned[0].runs, 1000, rr, 0.05)
    assert check_noise(twin[0], twin[1], replays=twin[2:]).status == "pass"


def test_flip_rate_u_statistic_false_alarms_within_level_and_power_on_doubled_epsilon() -> None:
    """200 synthetic flip-rate tests per hypothesis, ε₀ = 0.5, k = 3, 6 runs over 300 coordinates, at level 0.05 (the
    exact null law through Chernoff's bound is conservative): correct noise alarms at most 0.05 of the time — 10
    expected at most, P(Binomial(200, 0.05) ≥ 21) < 10⁻³, so ≤ 20 fails only a broken test (3 seen); ε₀ drawn at
    1.0 is seen in at least 190 (200 seen; design power > 0.999)."""
    rng = np.random.default_rng(7)
    rr = RandomizedResponse(1, 0.5, 3, 3)
    k, m, n, alpha = rr.categories, 6, 300, 0.05
    pmf = agreement_pmf(rr.keep_probability, k, m)
    planned = power(rr.keep_probability, RandomizedResponse(1, 1.0, 3, 3).keep_probability, k, m, n, alpha)

    def p_value(drawn: float) -> float:
        keep = RandomizedResponse(1, drawn, 3, 3).keep_probability
        raw = rng.integers(0, k, n)
        offsets = np.where(rng.random((m, n)) < keep, 0, rng.integers(1, k, (m, n)))
        return upper_tail(pmf, n, float(agreements(list(np.mod(raw + offsets, k))).sum()))

    alarms = sum(p_value(0.5) < alpha for _ in range(200))
    detected = sum(p_value(1.0) < alpha for _ in range(200))
    assert alarms <= 20, alarms
    assert detected >= 190 and planned > 0.99, (detected, planned)


@pytest.mark.slow
def test_flip_rate_at_the_red_team_sizes_false_alarms_and_power() -> None:
    """ε₀ = 0.05, k = 2, 20,000 coordinates, the planned runs (the test at α = 10⁻⁴, its share in the check):
    200 checks of correct noise, counted at the whole check's level 10⁻³ (stricter than α), alarm at most twice
    (P(Binomial(200, 10⁻³) ≥ 3) ≈ 10⁻³); 200 checks of ε₀ drawn at 0.1 are refuted at least 190 times (design
    power ≥ 0.99 at α)."""
    rr = RandomizedResponse(20, 0.05, 20, 2)
    m = runs_needed(rr, 20000, 1e-4, 64).runs
    pmf = agreement_pmf(rr.keep_probability, 2, m)
    rng = np.random.default_rng(11)

    def p_value(drawn: float) -> float:
        keep = RandomizedResponse(1, drawn, 1, 2).keep_probability
        raw = rng.integers(0, 2, 20000)
        flips = (rng.random((m, 20000)) >= keep).astype(np.int64)
        return upper_tail(pmf, 20000, float(agreements(list(np.mod(raw + flips, 2))).sum()))

    alarms = sum(p_value(0.05) < 1e-3 for _ in range(200))
    refuted = sum(p_value(0.1) < 1e-4 for _ in range(200))
    assert alarms <= 2 and refuted >= 190, (m, alarms, refuted)


class _LdpVisits:
    """A fixture LDP agent: each user's visited states (one per stage) by binary randomized response at ε/H per
    stage, drawn from billboard.noise_source() and recorded with publish_noised; ``factor`` scales the ε₀ drawn
    (2: the red-team bug, recording ε₀ while keeping with probability of 2ε₀)."""

    def __init__(self, mdp, num_episodes, rng, billboard, epsilon, factor):
        self.billboard, self.H, self.A, self.coins = billboard, mdp.horizon, mdp.num_actions, rng
        self.rr = RandomizedResponse(self.H, epsilon / self.H, self.H, 2)
        self.keep = RandomizedResponse(1, factor * epsilon / self.H, 1, 2).keep_probability
        self.episode, self.num_episodes = 0, num_episodes

    def claimed_guarantee(self):
        from dpverify.claims import PrivacyClaim
        return PrivacyClaim.pure(self.H * self.rr.local_epsilon)

    @property
    def ledger(self):
        return self.billboard.ledger

    def begin_episode(self):
        self.episode += 1
        return self.coins.integers(0, self.A, (self.H, 2))

    def end_episode(self, trajectory):
        states = np.minimum(np.asarray(trajectory.states)[:-1], 1)
        flips = (self.billboard.noise_source().random(self.H) >= self.keep).astype(float)
        self.billboard.publish_noised("visited", self.episode, 1, self.rr, np.mod(states + flips, 2), "current")


@pytest.mark.parametrize("factor, status", [(1.0, "pass"), (2.0, "fail")])
def test_self_noised_rr_agent_doubling_its_epsilon_is_refuted_and_its_twin_cleared(factor, status) -> None:
    from dpverify.agents.envs.min2021 import min2021_mdp
    from dpverify.whitebox import Subject, WhiteBoxPlan, check_releases

    def make(mdp, num_episodes, rng, /, *, billboard=None, epsilon=1.0, delta=1e-5):
        return _LdpVisits(mdp, num_episodes, rng, billboard, epsilon, factor)

    subject = Subject(make, min2021_mdp(horizon=10), 200, {"epsilon": 4.0}, name=f"ldp x{factor:g}")
    result = check_releases(subject, WhiteBoxPlan(200, search_episodes=0, claim_epsilon=4.0))
    noise = result.noise
    assert result["noise as recorded"].status == noise.status == status, noise.detail
    assert ("less noise than recorded" if status == "fail" else "power") in noise.families[0].detail
    assert " runs" in noise.families[0].detail and "2 runs" not in noise.families[0].detail
