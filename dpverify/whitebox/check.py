"""The white-box release checks of one agent: :func:`check_releases`.

The order of work (every run is a controlled run of :mod:`.runs`):

1. **record** — a fresh run R0 on K users chosen by the auditor (ordinary users from the environment,
   with a canary — or an empty slot, for add/remove-one — at each tested position);
2. **reproducible** — a replay of R0 with the same users, coins and noise seed must reproduce every
   release and every policy bit for bit; otherwise the agent does not follow the seeds the auditor
   passes (global random state, for instance) and no behavioural check can run;
3. **noise** — the noise the billboard drew and kept in R0, for releases the agent noised itself a
   replay with another billboard noise seed, and a replay with other coins and another noise seed, which
   must change every release's noise: :mod:`.noise_check`;
4. **pattern and sensitivity** — a replay per tested position with that user replaced (or removed), the
   seeds unchanged: :mod:`.sensitivity_replay`. A replay that changed another user's policy measures no
   single user's effect and is set aside; a self-noised family's changes count only where the noise check
   saw its noise follow the noise seed with the coins held (:func:`_trusted`); records the replays contradict
   are judged by their correction (:mod:`.correction`);
5. **neighbour search** — the same replays at a smaller K (``search_episodes``) on the environment's own
   canaries and on the audit environment of :mod:`.neighbours`, for the pairs that realise the most of
   each family's recorded sensitivity;
6. **structure** — :mod:`.structure_check` on every value R0 published (an agent that published nothing has
   no release to check: every check but the first is not applicable).

The work is split into independent jobs (:class:`_Job`: the recorded run at K with its reproducibility,
noise and structure checks and the neighbour replays at K, which read it; one job per base user of the
search), each a pure function of the agent, the plan and the seeds, so they run on any executor (a run is
made where it is read: cheaper than shipping tens of thousands of releases). Results are the same whatever
runs where. A check that cannot run says why and is never a pass; an
agent that raises is reported, not propagated.
"""

from __future__ import annotations

import dataclasses
import functools
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.adapters.global_rng import uses_global_rng
from dpverify.agents.core.billboard import PublishedRelease
from dpverify.agents.core.tapes import POSITIONS, UserTape, ordinary_tapes, position_index
from dpverify.agents.envs.linear_mdp import LinearMDP
from dpverify.audit.executors import Executor, ProcessExecutor, SerialExecutor
from dpverify.checks import FAIL, NOT_APPLICABLE, NOT_RUN, PASS, CheckResult, overall
from dpverify.neighbouring import Neighbouring
from dpverify.whitebox.correction import Charges, judge_records
from dpverify.whitebox.neighbours import CandidatePair, audit_linear_mdp, audit_tapes, candidate_pairs, own_tapes
from dpverify.whitebox.noise_check import DEFAULT_LEVEL, check_noise, flip_runs
from dpverify.whitebox.result import CHECK_NAMES, FamilySensitivity, NoiseCheck, PairWitness, WhiteBoxResult
from dpverify.whitebox.runs import CouldNotRun, PatternChanged, RunRecord, Subject, run_agent, same_policies
from dpverify.whitebox.sensitivity_replay import PairSummary, compare_replay
from dpverify.whitebox.stacks import stacks
from dpverify.whitebox.structure_check import check_structure

REPRODUCIBLE, NOISE, PATTERN, SENSITIVITY, WITNESSED, STRUCTURE = CHECK_NAMES


@dataclass(frozen=True)
class WhiteBoxPlan:
    """The sizes and seeds of one white-box check.

    Attributes:
        episodes: K of the recorded run and of its replays (the claim's K, or fewer to save time).
        search_episodes: K of the neighbour search's runs (0: no search).
        seed: root of every seed (users, coins, noise): a check is reproducible from its plan.
        level: false-alarm level of the noise check (the only statistical test; the others are exact).
        positions: the positions tested at K ("first", "middle", "last" or 1-based episodes); user 1 is read
            by every later prefix release, so its replay sees the most releases.
        search_positions: the positions tested by the neighbour search.
        claim_epsilon: the claimed ε (None: the witnessed pairs are reported, not judged).
        delta, conversion, accounting: the claim's, for the ε figures.
        max_noise_runs: the most runs (the recorded one included) the flip-rate test of self-noised randomized
            response may make; it makes as many as its power calculation asks (:func:`.noise_check.flip_runs`).
    """

    episodes: int
    search_episodes: int = 24
    seed: int = 0
    level: float = DEFAULT_LEVEL
    positions: tuple[str | int, ...] = ("first",)
    search_positions: tuple[str | int, ...] = ("first", "middle")
    claim_epsilon: float | None = None
    delta: float = 1e-5
    conversion: str = "exact"
    accounting: str = "per-user"
    max_noise_runs: int = 64

    def __post_init__(self) -> None:
        _validate.integer("max_noise_runs", self.max_noise_runs, minimum=2)
        _validate.integer("episodes", self.episodes, minimum=1)
        _validate.integer("search_episodes", self.search_episodes, minimum=0)
        _validate.integer("seed", self.seed, minimum=0)
        _validate.open_unit("level", self.level)
        _validate.open_unit("delta", self.delta)
        if self.claim_epsilon is not None:
            _validate.positive("claim_epsilon", self.claim_epsilon)
        for p in (*self.positions, *self.search_positions):
            if isinstance(p, str):
                _validate.one_of("positions", p, POSITIONS)
            else:
                _validate.integer("positions", p, minimum=1)


@dataclass(frozen=True)
class _Seeds:
    coins: np.random.SeedSequence
    noise: np.random.SeedSequence
    other_noise: np.random.SeedSequence
    data: int
    other_coins: np.random.SeedSequence
    more_noise: np.random.SeedSequence  # the parent of the flip-rate test's further noise seeds

    @classmethod
    def of(cls, seed: int) -> _Seeds:
        coins, noise, other, data, other_coins, more = np.random.SeedSequence(seed).spawn(6)
        return cls(coins, noise, other, int(data.generate_state(1)[0]), other_coins, more)

    def extra_noise(self, i: int) -> np.random.SeedSequence:
        """The i-th further noise seed (spawn key of :attr:`more_noise` plus i: no generator spawned from another
        seed of the check can have it)."""
        return np.random.SeedSequence(self.more_noise.entropy, spawn_key=(*self.more_noise.spawn_key, i))


def _positions(positions: Sequence[str | int], episodes: int) -> list[int]:
    return list(dict.fromkeys(position_index(p, episodes) for p in positions if
                              not isinstance(p, int) or p <= episodes))


def _users(mdp: Any, episodes: int, seeds: _Seeds, at: Sequence[int], base: UserTape | None
           ) -> list[UserTape | None]:
    users: list[UserTape | None] = list(ordinary_tapes(mdp, episodes, seeds.data))
    for j in at:
        users[j - 1] = base
    return users


def _reproduced(recorded: RunRecord, replay: RunRecord) -> str | None:
    """None when the replay reproduced the recorded run bit for bit, else what differed first."""
    episode = same_policies(recorded, replay)
    if episode is not None:
        return f"the policy deployed at episode {episode} differs"
    if replay.n_releases != recorded.n_releases:
        return f"it made {replay.n_releases} releases instead of {recorded.n_releases}"
    for stack in stacks(recorded.releases)[0]:
        same = (stack.values(recorded.releases) == stack.values(replay.releases)).reshape(len(stack.index), -1)
        rows = np.flatnonzero(~same.all(axis=1))
        if rows.size:
            return f"the release {stack.label(int(rows[0]))} differs"
    return None


def _reproducibility(subject: Subject, users: list[UserTape | None], seeds: _Seeds, recorded: RunRecord) -> str | None:
    """None when a same-seed replay reproduces ``recorded``; else the reason no behavioural check can run."""
    try:
        replay = run_agent(subject, users, coins=seeds.coins, noise=seeds.noise, recorded=recorded)
    except CouldNotRun as exc:
        return f"a replay with the same users and seeds could not be made: {exc}"
    differs = _reproduced(recorded, replay)
    if differs is None:
        return None
    said = f"a replay with the same users, coins and noise seed is not the same run ({differs}): the agent "
    if _draws_from_global_generator(subject, users, seeds):
        return said + (f"draws from numpy's global generator (with it pinned, two runs agree): wrap the code "
                       f"that draws in {GLOBAL_RNG_ADAPTER} so that it follows the seeds given "
                       "(docs/auditing.md, \"Adapters for code as it is written\")")
    return said + ("does not follow the seeds it is given (it reads a generator of its own, the clock, or other "
                   "outside input)")


#: The adapter named when an agent's runs differ only by numpy's global generator.
GLOBAL_RNG_ADAPTER = "dpverify.adapters.SeededGlobalRng(billboard.noise_source())"


def _draws_from_global_generator(subject: Subject, users: list[UserTape | None], seeds: _Seeds) -> bool:
    """Whether two runs of one seed agree once numpy's global generator is pinned (two runs more)."""
    def run() -> RunRecord | None:
        try:
            return run_agent(subject, users, coins=seeds.coins, noise=seeds.noise)
        except CouldNotRun:
            return None

    def same(a: RunRecord | None, b: RunRecord | None) -> bool:
        return a is not None and b is not None and _reproduced(a, b) is None

    return uses_global_rng(run, same)


# ---- the jobs ------------------------------------------------------------------------------------------------


@dataclass
class _Found:
    """What a job found (small and picklable: it crosses back from a worker)."""

    pairs: list[PairSummary] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pattern_changes: list[str] = field(default_factory=list)
    failed: str | None = None  # why the job's recorded run could not be used at all
    structure: CheckResult | None = None
    reproducible: CheckResult | None = None
    noise: NoiseCheck | None = None
    releases: int = 0
    charges: Charges | None = None  # the recorded run's charges per user, for the corrected accounting
    nothing: bool = False  # the recorded run published nothing

    def merge(self, other: _Found) -> None:
        self.pairs += other.pairs
        self.notes += [n for n in other.notes if n not in self.notes]
        self.pattern_changes += other.pattern_changes


#: The neighbour search's environments: the agent's own, and the audit environments of :mod:`.neighbours`.
ENVIRONMENTS: dict[str, str] = {"": "environment", "audit": "audit environment",
                                "oversized": "oversized audit environment"}


@dataclass(frozen=True)
class _Job:
    """One independent piece of the check (module docstring), run by :func:`run_job` with the base user ``base``
    at the tested positions: "record" (the recorded run at K, its reproducibility, noise and structure checks
    and its replays) or "search" (the neighbour search in one environment: ``audit`` is "" for the agent's own,
    "audit" or "oversized" for the audit environments)."""

    kind: str
    subject: Subject
    plan: WhiteBoxPlan
    audit: str = ""
    base: str | None = None


def _replay_pairs(subject: Subject, environment: str, seeds: _Seeds, base_users: list[UserTape | None],
                  recorded: RunRecord, positions: Sequence[int], pairs: Sequence[CandidatePair],
                  tapes: dict[str, UserTape], found: _Found) -> None:
    for pair in pairs:
        tape = None if pair.replacement is None else tapes[pair.replacement]
        for j in positions:
            users = list(base_users)
            users[j - 1] = tape
            where = f"{environment}, {pair.label} at user {j}"
            try:
                replay = run_agent(subject, users, coins=seeds.coins, noise=seeds.noise, recorded=recorded)
            except PatternChanged as exc:
                found.pattern_changes.append(f"{where}: {exc}")
                continue
            except CouldNotRun as exc:
                found.notes.append(f"{where}: the replay could not run ({exc})")
                continue
            moved = [k for k, (a, b) in enumerate(zip(recorded.policies, replay.policies, strict=True), start=1)
                     if k != j and not np.array_equal(a, b)]
            if moved:  # other users' data changed with user j's: no single user's effect to measure
                found.notes.append(f"{where}: the replay changed the policies of other users ({moved[:5]}): the agent "
                                   "reads data outside the billboard or draws its coins in an order the data changes "
                                   "(the contract's billboard isolation check tells which); no single user's effect "
                                   "can be measured on this pair")
                continue
            reach = min(recorded.data_seen_at[j - 1], replay.data_seen_at[j - 1])  # either user j's data
            comparison = compare_replay(recorded.releases, replay.releases, user=j, environment=environment,
                                        canaries=pair.label, episodes=subject.episodes, reach_from=reach)
            found.pairs.append(comparison.summary())


def _environment_of(job: _Job) -> tuple[Any, dict[str, UserTape]]:
    mdp = job.subject.mdp
    if not job.audit:
        return mdp, own_tapes(mdp)
    own = getattr(mdp, "audit_environment", None)
    if callable(own):  # an environment with an audit environment of its own (a bandit's audit bandit)
        audit_env = own()
        return audit_env, audit_tapes(audit_env)
    oversized = job.audit == "oversized"
    audit = audit_linear_mdp(mdp.horizon, mdp.num_states, mdp.num_actions, mdp.dim, oversized)
    if audit is None:
        return mdp, {}
    return audit, audit_tapes(audit, oversized)


def _failed(found: _Found, record: bool, failed: str, note: str) -> _Found:
    """A job without a usable recorded run: the record job says why (``failed``), a search job notes it."""
    if record:
        found.failed = failed
    else:
        found.notes.append(note)
    return found


def run_job(job: _Job) -> _Found:
    """Run one job (a module-level function, so that an executor can send it to a worker): its recorded run,
    the same-seed replay that must reproduce it, and the replays with one user changed at the job's K; the
    record job (steps 1–4 and 6) also checks the recorded run's noise and structure, and says why there is no
    usable recorded run (``failed``); a search job (step 5) notes it."""
    plan, seeds, found, record = job.plan, _Seeds.of(job.plan.seed), _Found(), job.kind == "record"
    env, tapes = _environment_of(job)
    if not tapes:
        return found
    K = plan.episodes if record else plan.search_episodes
    subject = job.subject.on(env, K)
    positions = _positions(plan.positions if record else plan.search_positions, K)
    pairs = [p for p in candidate_pairs(list(tapes), subject.relation, bool(job.audit))
             if p.base == job.base and (not record or p.replacement == "high")]  # at K: the environment's high canary
    base_users = _users(env, K, seeds, positions, None if job.base is None else tapes[job.base])
    environment = ENVIRONMENTS[job.audit]
    label = environment if record else f"{environment} (K = {K})"
    try:
        recorded = run_agent(subject, base_users, coins=seeds.coins, noise=seeds.noise)
    except CouldNotRun as exc:
        what = f"refused the {environment}" if job.audit else "could not run at the search size"
        if job.audit == "oversized":
            what += " (as an agent whose sensitivities assume a feature-norm bound must)"
        return _failed(found, record, f"the recorded run could not be made: {exc}",
                       f"neighbour search: the agent {what}: {exc}")
    if record:
        found.releases, found.nothing = recorded.n_releases, recorded.n_releases == 0
        found.structure = None if found.nothing else check_structure(recorded.releases)
    elif recorded.n_releases == 0:  # a search run that published nothing has nothing to replay
        return found
    unreproducible = _reproducibility(subject, base_users, seeds, recorded)
    if unreproducible is not None:
        return _failed(found, record, unreproducible, f"neighbour search ({label}): {unreproducible}")
    if record:
        found.reproducible = CheckResult(REPRODUCIBLE, PASS, f"a replay with the same users, coins and noise seed "
                                                             f"reproduced all {recorded.n_releases} releases and "
                                                             f"{K} policies bit for bit",
                                         {"releases": recorded.n_releases, "policies": K})
        if found.nothing:
            return found
        found.noise = _noise(subject, base_users, seeds, recorded, plan)
        found.charges = Charges.of(recorded)
    _replay_pairs(subject, label, seeds, base_users, recorded, positions, pairs, tapes, found)
    return found


def _jobs(subject: Subject, plan: WhiteBoxPlan) -> list[_Job]:
    jobs = [_Job("record", subject, plan, "", "low" if subject.relation == Neighbouring.REPLACE_ONE.value else None)]
    if plan.search_episodes <= 0:
        return jobs
    environments = [""]
    if isinstance(subject.mdp, LinearMDP) and subject.mdp.dim >= 2:
        environments += ["audit", "oversized"]
    elif callable(getattr(subject.mdp, "audit_environment", None)):
        environments.append("audit")
    for audit in environments:
        names = list(_environment_of(_Job("search", subject, plan, audit))[1]) if audit else ["high", "low"]
        for base in dict.fromkeys(p.base for p in candidate_pairs(names, subject.relation, bool(audit))):
            jobs.append(_Job("search", subject, plan, audit, base))
    return jobs


def _map(executor: Executor | None, jobs: list[_Job]) -> list[_Found]:
    """The jobs on ``executor`` when they can be sent to workers, else here, in order. Local worker processes
    get every job (each is a whole agent run or more: the adaptive first-item-here rule would serialise the
    two long ones)."""
    if executor is None or isinstance(executor, SerialExecutor):
        return [run_job(job) for job in jobs]
    try:
        pickle.dumps(jobs[0])
    except Exception:  # an agent defined where a worker cannot import it: run here
        return [run_job(job) for job in jobs]
    if isinstance(executor, ProcessExecutor):
        return list(executor.map(run_job, jobs, adaptive=False))
    return list(executor.map(run_job, jobs))


# ---- the rows ------------------------------------------------------------------------------------------------


def _figures(pairs: Sequence[PairSummary]) -> tuple[FamilySensitivity, ...]:
    """The largest realised fraction of each family's recorded sensitivity over every pair."""
    best: dict[str, FamilySensitivity] = {}
    reads: dict[str, int] = {}
    for pair in pairs:
        for f in pair.best:
            reads[f.family] = reads.get(f.family, 0) + f.releases_read
            if f.family not in best or f.ratio > best[f.family].ratio:
                best[f.family] = f
    return tuple(FamilySensitivity(f.family, f.norm, f.recorded, f.realised, f.ratio, f.pair, reads[f.family])
                 for f in best.values())


def _trusted(pairs: Sequence[PairSummary], noise: NoiseCheck | None) -> tuple[list[PairSummary], list[str]]:
    """The pairs without the families whose changes are not raw changes, and those families: a family the agent
    noised itself is read from its values, which change by the raw statistic's change only where the same seed
    drew the same noise in both runs — established by the noise check for the families it tested (their values
    followed the noise seed, the coins held)."""
    tested = {f.family for f in noise.families} if noise is not None else set()
    unheld = sorted({f for p in pairs for f in p.self_noised} - tested)
    return ([p.without(set(unheld)) for p in pairs] if unheld else list(pairs)), unheld


def _unheld(unheld: Sequence[str], noise: NoiseCheck | None) -> str:
    why = noise.detail if noise is not None else "the noise check did not run"
    return (f"it rests on the noise being held fixed in the replays, which the noise check could not establish for "
            f"{', '.join(unheld)} ({why})")


def _pattern_row(pairs: Sequence[PairSummary], found: _Found, tested: str, unheld: Sequence[str],
                 noise: NoiseCheck | None, judged: tuple[str | None, str]) -> CheckResult:
    pattern = [f for p in pairs for f in p.findings if f.kind == "pattern"]
    evidence = {"pairs": len(pairs), "changed_releases": sum(p.changed for p in pairs),
                "contradicting": len(pattern) + len(found.pattern_changes)}
    if evidence["contradicting"]:
        lines = [f.line() for f in pattern[:3]] + found.pattern_changes[:2]
        claim, words = (None, "") if found.pattern_changes else judged  # a pattern that follows the data: ε = ∞
        return CheckResult(PATTERN, FAIL, f"{evidence['contradicting']} release(s) contradict their recorded users: "
                                          + "; ".join(lines) + words, evidence, claim)
    if not pairs:
        return CheckResult(PATTERN, NOT_RUN, "no neighbour replay could run" + _why(found))
    if unheld:
        return CheckResult(PATTERN, NOT_RUN, _unheld(unheld, noise), evidence)
    return CheckResult(PATTERN, PASS, f"{evidence['changed_releases']} releases changed when one user's data changed "
                                      f"({tested}); each is recorded as reading that user", evidence)


def _sensitivity_row(pairs: Sequence[PairSummary], found: _Found, figures: tuple[FamilySensitivity, ...],
                     unheld: Sequence[str], noise: NoiseCheck | None, judged: tuple[str | None, str]) -> CheckResult:
    exceeded = [f for p in pairs for f in p.findings if f.kind == "sensitivity"]
    if exceeded:
        worst = max(exceeded, key=lambda f: f.ratio)
        return CheckResult(SENSITIVITY, FAIL, f"{len(exceeded)} release(s) changed by more than their recorded "
                                              f"sensitivity; the most: {worst.line()}" + judged[1],
                           {"exceeding": len(exceeded), "largest_fraction": worst.ratio}, judged[0])
    if not pairs:
        return CheckResult(SENSITIVITY, NOT_RUN, "no neighbour replay could run" + _why(found))
    if unheld:
        return CheckResult(SENSITIVITY, NOT_RUN, _unheld(unheld, noise))
    parts = [f"{f.family} {f.ratio:.3g}" for f in figures]
    return CheckResult(SENSITIVITY, PASS, "no release changed by more than its recorded sensitivity; the largest "
                                          "realised fraction per family: " + (", ".join(parts) or "none read a user"),
                       {"exceeding": 0, "largest_fraction": max((f.ratio for f in figures), default=None)})


def _witnessed_row(witnesses: Sequence[PairWitness], plan: WhiteBoxPlan, found: _Found, unheld: Sequence[str],
                   noise: NoiseCheck | None) -> CheckResult:
    """Every witnessed pair's ε against the claim. For a correct agent each release changes by at most its
    recorded sensitivity and only releases charged to the user change, so a pair's μ² is at most the ledger's
    for that user and its ε at most the claim — unless the noise check's upper limit on σ is wrong, an event of
    probability at most the noise check's level. A pair above the claim therefore refutes it; a pair whose
    changes the noise check could not scale (or hold fixed) leaves the check not run, never passed."""
    if not witnesses:
        return CheckResult(WITNESSED, NOT_RUN, "no neighbour replay could run" + _why(found))
    worst = max(witnesses, key=lambda w: w.epsilon_lower)
    where = f"{worst.environment}, {worst.canaries} at user {worst.position}"
    evidence = {"pairs": len(witnesses), "largest_epsilon": worst.epsilon_lower, "mu": worst.mu,
                "claim_epsilon": plan.claim_epsilon}
    if plan.claim_epsilon is not None and worst.epsilon_lower > plan.claim_epsilon:
        return CheckResult(WITNESSED, FAIL, f"the pair {where} implies ε ≥ {worst.epsilon_lower:.4g} > the claimed "
                                            f"{plan.claim_epsilon:g} (μ = {worst.mu:.4g} over "
                                            f"{worst.changed_releases} releases, σ at the noise check's upper "
                                            "confidence limits)", evidence)
    if unheld:
        return CheckResult(WITNESSED, NOT_RUN, _unheld(unheld, noise), evidence)
    if not all(w.noise_verified for w in witnesses):
        why = noise.detail if noise is not None else "the noise check did not run"
        return CheckResult(WITNESSED, NOT_RUN, f"it rests on the noise scale the noise check measures, which it could "
                                               f"not measure for a family a user's change moved ({why})", evidence)
    if plan.claim_epsilon is None:
        return CheckResult(WITNESSED, PASS, f"no claim to judge; the largest witnessed ε is "
                                            f"{worst.epsilon_lower:.4g} ({where})", evidence)
    return CheckResult(WITNESSED, PASS, f"every witnessed pair stays within the claim: the largest implies ε = "
                                        f"{worst.epsilon_lower:.4g} ≤ {plan.claim_epsilon:g} ({where})", evidence)


def _why(found: _Found) -> str:
    return f" ({found.notes[0]})" if found.notes else ""


def _not_run(reason: str, plan: WhiteBoxPlan, start: float, structure: CheckResult | None = None
             ) -> WhiteBoxResult:
    checks = (*(CheckResult(name, NOT_RUN, reason) for name in CHECK_NAMES[:-1]),
              structure or CheckResult(STRUCTURE, NOT_RUN, reason))
    return WhiteBoxResult(overall(c.status for c in checks), checks, episodes=plan.episodes,
                          search_episodes=plan.search_episodes, seed=plan.seed, seconds=time.perf_counter() - start)


def _nothing_published(reproducible: CheckResult, plan: WhiteBoxPlan, start: float) -> WhiteBoxResult:
    """An agent that published nothing: no release to check (its claim rests on its actions alone, which the
    contract's billboard isolation check tests)."""
    checks = (reproducible, *(CheckResult(name, NOT_APPLICABLE, "nothing was published: no release to check")
                              for name in CHECK_NAMES[1:]))
    return WhiteBoxResult(overall(c.status for c in checks), checks, episodes=plan.episodes,
                          search_episodes=plan.search_episodes, seed=plan.seed, seconds=time.perf_counter() - start)


def check_releases(subject: Subject, plan: WhiteBoxPlan, executor: Executor | None = None,
                   on_done: Callable[[], None] | None = None) -> WhiteBoxResult:
    """Run the white-box release checks (module docstring) of ``subject``; every agent fault is reported.

    ``executor`` (any of :mod:`dpverify.audit.executors`; default: here, serially) runs the independent jobs;
    the result does not depend on it.
    """
    start = time.perf_counter()
    subject = subject.on(subject.mdp, plan.episodes)
    results = _map(executor, _jobs(subject, plan))
    if on_done is not None:
        on_done()
    record, found = results[0], _Found()
    for other in results:
        found.merge(other)
    if record.failed is not None:
        return _not_run(record.failed, plan, start, record.structure)
    if record.nothing and record.reproducible is not None:
        return _nothing_published(record.reproducible, plan, start)
    noise = record.noise
    noise_row = (CheckResult(NOISE, noise.status, noise.detail, {"level": noise.level, "families": len(noise.families),
                                                                 "measured_epsilon": noise.measured_epsilon})
                 if noise is not None else CheckResult(NOISE, NOT_RUN, "the noise check did not run"))
    pairs, unheld = _trusted(found.pairs, noise)
    figures = _figures(pairs)
    positions = _positions(plan.positions, plan.episodes)
    tested = f"users {', '.join(map(str, positions))} at K = {plan.episodes}" + (
        f", and the neighbour search at K = {plan.search_episodes}" if plan.search_episodes else "")
    reproducible = record.reproducible or CheckResult(REPRODUCIBLE, NOT_RUN, "the replay did not run")
    structure = record.structure or CheckResult(STRUCTURE, NOT_RUN, "no release to check")
    witnesses = tuple(p.witness(noise, plan.delta) for p in pairs)
    judged = (judge_records(pairs, record.charges, plan.claim_epsilon, plan.delta, plan.conversion, plan.accounting)
              if any(p.findings for p in pairs) else (None, ""))
    checks = (reproducible, noise_row, _pattern_row(pairs, found, tested, unheld, noise, judged),
              _sensitivity_row(pairs, found, figures, unheld, noise, judged),
              _witnessed_row(witnesses, plan, found, unheld, noise), structure)
    findings = tuple(f for p in pairs for f in p.findings)
    return WhiteBoxResult(overall(c.status for c in checks), checks, noise, figures, witnesses, findings,
                          tuple(found.notes), plan.episodes, plan.search_episodes, plan.seed,
                          time.perf_counter() - start, {"level": plan.level, "positions": positions,
                                                        "relation": subject.relation, "releases": record.releases})


#: What the noise check says of an agent whose actions follow the billboard's noise seed (module docstring).
SHARED_STREAM = (
    "with the transcript held fixed, another billboard noise seed changed the policy deployed at episode {episode}: "
    "the agent's coins and its noise share one stream (numpy's global generator seeded from noise_source(), or "
    "coins drawn from noise_source()), so no replay can hold the noise fixed while the data change. Draw the "
    "coins from the factory's generator; for code you cannot edit, an adapter that answers the calls drawing its "
    "coins from a generator of their own (dpverify.adapters.watch_calls) makes it checkable")


def _noise(subject: Subject, users: list[UserTape | None], seeds: _Seeds, recorded: RunRecord,
           plan: WhiteBoxPlan) -> NoiseCheck:
    """The noise check of R0 (:mod:`.noise_check`), with the replays it needs: another noise seed (self-noised
    releases), and other coins with another noise seed (fresh noise)."""
    try:
        reseeded = run_agent(subject, users, coins=seeds.other_coins, noise=seeds.other_noise,
                             recorded=recorded).releases
    except CouldNotRun:  # the pattern follows the coins (data-adaptive releases), say: no freshness evidence
        reseeded = None
    check = functools.partial(check_noise, level=plan.level, ledger=recorded.ledger, delta=plan.delta,
                              conversion=plan.conversion, accounting=plan.accounting, reseeded=reseeded)
    if all(r.noise is not None for r in recorded.releases):  # every release noised by the billboard: kept in R0
        return check(recorded.releases)
    try:
        other = run_agent(subject, users, coins=seeds.coins, noise=seeds.other_noise, recorded=recorded)
    except PatternChanged as exc:
        return NoiseCheck(NOT_RUN, f"the release pattern depends on the noise seed ({exc})", plan.level)
    except CouldNotRun as exc:
        return NoiseCheck(NOT_RUN, f"the replay with another noise seed could not run ({exc})", plan.level)
    episode = same_policies(recorded, other)
    if episode is None:
        try:
            replays = _flip_replays(subject, users, seeds, recorded, plan)
        except CouldNotRun as exc:
            return NoiseCheck(NOT_RUN, f"a replay with a further noise seed could not run ({exc})", plan.level)
        if isinstance(replays, int):
            episode = replays
        else:
            return check(recorded.releases, other.releases, replays=replays)
    partial = check(recorded.releases)  # what can be checked without the replay
    if partial.status == FAIL:
        return partial
    shared = SHARED_STREAM.format(episode=episode)
    return dataclasses.replace(partial, status=NOT_RUN, detail=shared, not_checked=(*partial.not_checked, shared))


def _flip_replays(subject: Subject, users: list[UserTape | None], seeds: _Seeds, recorded: RunRecord,
                  plan: WhiteBoxPlan) -> list[tuple[PublishedRelease, ...]] | int:
    """The further same-coins replays, each with its own noise seed, that the flip-rate test of self-noised
    randomized response asks for (none without such releases); the first episode whose policy one of them
    changed, if any. Raises :class:`CouldNotRun`."""
    plans = flip_runs(recorded.releases, plan.level, plan.max_noise_runs)
    replays: list[tuple[PublishedRelease, ...]] = []
    for i in range(max((p.runs for p in plans), default=2) - 2):
        replay = run_agent(subject, users, coins=seeds.coins, noise=seeds.extra_noise(i), recorded=recorded)
        episode = same_policies(recorded, replay)
        if episode is not None:
            return episode
        replays.append(replay.releases)
    return replays
