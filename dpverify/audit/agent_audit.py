"""Audits of whole private agents: billboard DP, joint DP and local DP, by two routes.

A user's data is a **response tape** (:mod:`dpverify.agents.tapes`): the initial state and a next-state
table that fix the user's whole trajectory for any policy. A dataset is a sequence of K tapes; two
datasets are replace-one neighbours when they differ in the tape at one position j. The default pair at
a position is a worst-case style canary that always moves to the state of lowest optimal value versus one
that always moves to the state of highest value (the regression targets V(s') go from one end of their
range to the other), with ordinary tapes drawn once from the environment elsewhere.

Add/remove-one claims (agent option ``relation="add-remove-one"``): the pair at j is user j absent versus
the high canary at j. The absent user keeps the time slot: an *empty slot* (tape ``None``), where episode j
still happens (the agent plans, its releases are made on schedule) but the agent receives
``end_episode(None)``, no data. This is what the ledgers account under add/remove (a release reads fixed
episodes; an absent user is a zero term). Shifting later users one episode earlier would instead reveal,
through the episode index, how many users came before, and flag correct agents (e.g. a fixed batch
schedule). The views are unchanged; these audits run one trial at a time (no batched path), and an
``"ldp"`` audit is replace-one only.

What the auditor sees (``notion``):

* ``"billboard"`` — the published transcript (every value on the agent's billboard). The output of a
  trial is two rows: the releases labelled with episode j (before user j's data is read) and the mean
  of those of episodes j + 1 … j + window (matrix releases as their upper triangle). Every later prefix
  release carries user j's term, so the mean keeps it while averaging fresh noise down, and the
  engine's "consecutive difference" feature isolates it exactly when noise is reused (Sahu 2025, Algorithm 1 line 1 as
  printed; Jagielski et al. 2020; Nasr et al. 2021).
* ``"jdp"`` — only the actions given to the *other* users (Kearns et al. 2014; Vietri et al. 2020): the
  deployed policies π_{j+1}, …, π_{j+window} (one-hot in (h, s, a)), i.e. the action every later user
  would get at every state and step. Joint DP requires exactly this to be (ε, δ)-DP in user j's tape.
* ``"ldp"`` — one user's outgoing messages under two data of that user (Liao et al. 2021): the releases
  published with ``users="current"`` at episode j.

Every output is a fixed function of what the notion lets the auditor see, so a lower bound on ε for it is
a lower bound for the claim (post-processing).

Routes:

* ``"two-world"`` — many independent runs on D and on D′ through the audit engine
  (:func:`dpverify.audit.run_audit`: selection/evaluation split, Clopper–Pearson and μ-GDP bounds under one
  error budget; any executor). One candidate pair per position (first, middle, last). DP-LSVI-UCB++ runs
  through the batched implementation (:mod:`dpverify.agents.batched_dp_lsvi_ucb_pp`), every other agent
  one run at a time through the private-agent protocol.
* ``"one-run"`` — Steinke, Nasr & Jagielski (2023), "Privacy auditing with one (1) training run",
  Theorem 3 (:mod:`dpverify.audit.one_run`): m canary slots spread over the K users, each holding the high
  canary or the low canary by an independent fair coin; the agent runs once; a score per slot (a feature
  of :mod:`dpverify.audit.distinguishers` chosen on an independent pilot run with its own coins, so the
  guesses are a function of the audited output alone) ranks the slots; top/bottom guesses with
  pre-registered sizes (abstaining on the rest) and their count of correct guesses give the ε lower
  bound. With ``trials = N`` the N runs are one mechanism of N·m coins (each coin changes one run's
  input only).

The private-agent protocol this needs (third-party agents): a factory
``factory(mdp, num_episodes, rng, /, *, billboard=None, **options)`` returning an agent with
``begin_episode() -> (H, S) int policy`` and ``end_episode(trajectory)`` (``end_episode(None)``: an empty
slot, for add/remove-one audits); for ``"billboard"`` and ``"ldp"``
audits the agent publishes on the billboard it was given (or exposes ``agent.billboard``); for ``"jdp"``
only the policies are read. ``claimed_guarantee()`` (an object with ``epsilon`` and ``delta``) and
``privacy_notion`` ("jdp" or "ldp") state the claim; without them the claim given to the audit is used.

This module imports :mod:`dpverify.agents` lazily (inside functions), never at module level.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.audit.engine import run_audit
from dpverify.audit.executors import Executor
from dpverify.audit.result import NO_VIOLATION_FOUND, NOT_A_CERTIFICATE, VIOLATION, AuditResult
from dpverify.audit.spec import AuditSpec, NeighbourPair
from dpverify.errors import InvalidParameterError

NOTIONS: tuple[str, ...] = ("billboard", "jdp", "ldp")
ROUTES: tuple[str, ...] = ("two-world", "one-run")
POSITIONS: tuple[str, ...] = ("first", "middle", "last")
#: Which audit notions an agent's own notion supports: JDP agents publish a private billboard (whose
#: post-processing gives the actions); LDP agents' claim is about each user's messages.
SUPPORTED: dict[str, tuple[str, ...]] = {"jdp": ("billboard", "jdp"), "ldp": ("ldp",)}
#: Trials of the batched path per vectorised call (larger batches thrash the cache).
BATCH = 2048
#: Smallest two-world trials per side: the engine needs a selection and an evaluation split.
MIN_TRIALS = 10
#: Episodes of the probe run (the width of one episode's releases is read from them).
PROBE_EPISODES = 8
#: One-run guess rules as fractions of m (k_plus = k_minus = fraction · m), sharing α by Bonferroni.
GUESS_FRACTIONS: tuple[float, ...] = (0.05, 0.2, 0.5)
#: The neighbouring relations a claim may be audited under (the agents' spelling,
#: :class:`dpverify.neighbouring.Neighbouring`).
RELATIONS: tuple[str, ...] = ("replace-one", "add-remove-one")


# ---- resolving agents and environments (lazy imports) ---------------------------------------------------


def _registry() -> Any:
    try:
        return importlib.import_module("dpverify.agents.registry")
    except ImportError:  # older layout: the runner holds the registries
        runner = importlib.import_module("dpverify.agents.runner")
        runner.load_registrations()
        return runner


def _import_target(module: str) -> Any:
    """Import ``module`` (a dotted path, the current directory importable as with ``python -m``) or load a
    ``.py`` file."""
    import os
    import sys

    if module.endswith(".py"):
        from importlib import util as import_util

        path = os.path.abspath(module)
        name = "dpverify_agent_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
        if name in sys.modules and getattr(sys.modules[name], "__file__", None) == path:
            return sys.modules[name]
        if not os.path.isfile(path):
            raise ImportError(f"no such file {module}")
        spec = import_util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {module}")
        loaded = import_util.module_from_spec(spec)
        sys.modules[name] = loaded
        spec.loader.exec_module(loaded)
        return loaded
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError:
        cwd = os.getcwd()
        if cwd in sys.path:
            raise
        sys.path.append(cwd)
        return importlib.import_module(module)


def resolve_factory(agent: str) -> Callable[..., Any]:
    """A registered agent name, ``"module.path:factory"`` or ``"file.py:factory"`` (one clear error otherwise)."""
    if not isinstance(agent, str) or not agent:
        raise InvalidParameterError("agent", "must be a registered name or module.path:factory", agent)
    if ":" in agent:
        module, _, attribute = agent.rpartition(":")
        try:
            value: Any = _import_target(module)
            for part in attribute.split("."):
                value = getattr(value, part)
        except (ImportError, AttributeError, SyntaxError) as exc:
            raise InvalidParameterError("agent", f"factory path does not import ({exc})", agent) from None
        if not callable(value):
            raise InvalidParameterError("agent", "must name a callable factory", agent)
        return value
    agents = _registry().AGENTS
    if agent not in agents:
        raise InvalidParameterError("agent", f"must be one of {', '.join(sorted(agents))} or module.path:factory",
                                    agent)
    return agents[agent].factory


def build_environment(env: str, episodes: int, options: tuple[tuple[str, Any], ...]) -> Any:
    environments = _registry().ENVIRONMENTS
    if env not in environments:
        raise InvalidParameterError("env", f"must be one of {', '.join(sorted(environments))}", env)
    try:
        return environments[env].factory(episodes, **dict(options))
    except TypeError as exc:
        raise InvalidParameterError("--env-option", f"is not accepted by {env} ({exc})",
                                    ", ".join(k for k, _ in options)) from None


def _frozen_options(name: str, options: Any) -> tuple[tuple[str, Any], ...]:
    if isinstance(options, dict):
        options = tuple(options.items())
    try:
        pairs = tuple((str(k), v) for k, v in options)
    except (TypeError, ValueError):
        raise InvalidParameterError(name, "must be a mapping or (key, value) pairs", options) from None
    return tuple(sorted(pairs))


# ---- specs ------------------------------------------------------------------------------------------


def _check_positions(positions: Any, episodes: int) -> tuple[Any, ...]:
    out = tuple(positions)
    if not out:
        raise InvalidParameterError("positions", "must name at least one position", out)
    for p in out:
        if isinstance(p, str):
            _validate.one_of("positions", p, POSITIONS)
        elif isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= episodes:
            raise InvalidParameterError("positions", f"must be names or episodes in [1, {episodes}]", p)
    return out


@dataclass(frozen=True)
class AgentAuditSpec:
    """What to audit and how (module docstring).

    Attributes:
        agent: a registered agent name or ``"module.path:factory"``.
        env: a registered environment name; ``env_options``/``agent_options``: their keyword options.
        episodes: K, the number of users.
        notion: "billboard", "jdp" or "ldp".
        route: "two-world" or "one-run".
        epsilon, delta: the claim audited. The agent is configured with them unless ``agent_options``
            set its own; the claim must be one the agent makes (ε ≥ its claimed ε, δ ≥ its δ).
        trials: two-world: trials per side (selection + evaluation); one-run: number of runs.
        canaries: one-run: canary slots m per run (default ⌊K/2⌋).
        confidence: of all bounds together.
        seed: audit seed (the result depends only on the spec).
        data_seed: seed of the ordinary tapes (the fixed dataset).
        positions: two-world: the replaced positions (each a candidate pair).
        window: episodes after j in a billboard/JDP output.
        gaussian_claim: whether the claim is a μ-GDP (Gaussian-mechanism) claim; None = the agent says so
            (a registered private agent adds only Gaussian noise), False for third-party agents.
        batched: use the batched DP-LSVI-UCB++ when the agent is it (None = yes).
    """

    agent: str
    env: str
    episodes: int
    notion: str
    epsilon: float
    delta: float = 1e-5
    route: str = "two-world"
    trials: int = 10_000
    canaries: int | None = None
    confidence: float = 0.95
    seed: int = 0
    data_seed: int = 0
    positions: tuple[str, ...] = POSITIONS
    window: int = 1
    env_options: tuple[tuple[str, Any], ...] = ()
    agent_options: tuple[tuple[str, Any], ...] = ()
    gaussian_claim: bool | None = None
    batched: bool | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.agent, str) or not self.agent:
            raise InvalidParameterError("agent", "must be a registered name or module.path:factory", self.agent)
        if not isinstance(self.env, str) or not self.env:
            raise InvalidParameterError("env", "must be a registered environment name", self.env)
        _validate.integer("episodes", self.episodes, minimum=2)
        _validate.one_of("notion", self.notion, NOTIONS)
        _validate.one_of("route", self.route, ROUTES)
        object.__setattr__(self, "epsilon", _validate.positive("epsilon", self.epsilon))
        object.__setattr__(self, "delta", _validate.open_unit("delta", self.delta))
        minimum = MIN_TRIALS if self.route == "two-world" else 1
        trials = _validate.integer("trials", self.trials, minimum=1)
        if trials < minimum:
            raise InvalidParameterError(
                "trials", f"must be >= {minimum} per side for a two-world audit (a selection and an evaluation split)",
                trials)
        if self.canaries is not None:
            m = _validate.integer("canaries", self.canaries, minimum=2)
            if m > self.episodes:
                raise InvalidParameterError("canaries", f"must be <= episodes = {self.episodes}", m)
        object.__setattr__(self, "confidence", _validate.open_unit("confidence", self.confidence))
        _validate.integer("seed", self.seed, minimum=0)
        _validate.integer("data_seed", self.data_seed, minimum=0)
        object.__setattr__(self, "positions", _check_positions(self.positions, self.episodes))
        _validate.integer("window", self.window, minimum=1)
        object.__setattr__(self, "env_options", _frozen_options("env_options", self.env_options))
        object.__setattr__(self, "agent_options", _frozen_options("agent_options", self.agent_options))
        relation = dict(self.agent_options).get("relation", "replace-one")
        if relation not in RELATIONS:
            raise InvalidParameterError("relation", f"must be one of {', '.join(RELATIONS)}", relation)
        if relation == "add-remove-one" and self.notion == "ldp":
            raise InvalidParameterError(
                "relation", "must be replace-one for an ldp audit (local DP compares two data of one user)", relation)
        for name in ("gaussian_claim", "batched"):
            if getattr(self, name) not in (None, True, False):
                raise InvalidParameterError(name, "must be True, False or None", getattr(self, name))

    @property
    def add_remove(self) -> bool:
        """Whether the claim is under add/remove-one (pairs: user j absent, an empty slot, vs a canary at j)."""
        return dict(self.agent_options).get("relation") == "add-remove-one"

    @property
    def canary_count(self) -> int:
        return self.canaries if self.canaries is not None else max(2, self.episodes // 2)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["env_options"] = dict(self.env_options)
        data["agent_options"] = dict(self.agent_options)
        data["positions"] = list(self.positions)
        return data


# ---- running one agent on tapes ----------------------------------------------------------------------


@dataclass(frozen=True)
class AgentSetup:
    """Everything needed to build the environment and one agent (picklable: names and options only)."""

    agent: str
    env: str
    episodes: int
    env_options: tuple[tuple[str, Any], ...]
    agent_options: tuple[tuple[str, Any], ...]

    def environment(self) -> Any:
        return build_environment(self.env, self.episodes, self.env_options)

    def build(self, mdp: Any, rng: np.random.Generator, billboard: Any) -> Any:
        factory = resolve_factory(self.agent)
        options = dict(self.agent_options)
        try:
            return factory(mdp, self.episodes, rng, billboard=billboard, **options)
        except TypeError as exc:
            raise InvalidParameterError(
                "agent", f"factory must accept (mdp, num_episodes, rng, billboard=..., **options) ({exc})",
                self.agent) from None

    def billboard(self) -> Any:
        from dpverify.agents.billboard import Billboard

        relation = dict(self.agent_options).get("relation", "replace-one")
        return Billboard(relation, keep_history=True)


def _billboard_rows(rows: np.ndarray) -> np.ndarray:
    """The billboard view of episode rows j, j+1, …, j+w: (row j, mean of rows j+1..j+w) — every later
    prefix release carries user j's term, so averaging them keeps the term and shrinks fresh noise."""
    return np.stack([rows[..., 0, :], rows[..., 1:, :].mean(axis=-2)], axis=-2)


def _episode_rows(history: Sequence[Any], episodes: Sequence[int], width: int, users: str | None) -> np.ndarray:
    """One row per episode: that episode's releases (matrices as upper triangles) in publication order,
    zero-padded or truncated to ``width`` (a fixed post-processing of the transcript)."""
    rows = np.zeros((len(episodes), width))
    index = {e: i for i, e in enumerate(episodes)}
    parts: dict[int, list[np.ndarray]] = {e: [] for e in episodes}
    for release in history:
        if release.episode in index and (users is None or release.users == users):
            parts[release.episode].append(_flat(np.asarray(release.value, dtype=float)))
    for e, chunks in parts.items():
        if chunks:
            flat = np.concatenate(chunks)[:width]
            rows[index[e], : len(flat)] = flat
    return rows


def _flat(value: np.ndarray) -> np.ndarray:
    if value.ndim == 2 and value.shape[0] == value.shape[1]:
        return value[np.triu_indices(value.shape[0])]
    return value.reshape(-1)


def _flat_batch(value: np.ndarray) -> np.ndarray:
    if value.ndim == 3 and value.shape[1] == value.shape[2]:
        rows, cols = np.triu_indices(value.shape[1])
        return value[:, rows, cols]
    return value.reshape(value.shape[0], -1)


def _one_hot(policy: np.ndarray, num_actions: int) -> np.ndarray:
    return (policy[..., None] == np.arange(num_actions)).astype(float).reshape(*policy.shape[:-2], -1)


@dataclass(frozen=True)
class View:
    """What one audit output holds: the notion, the episodes read and the width of a row."""

    notion: str
    episodes: tuple[int, ...]
    width: int


def output_view(notion: str, position: int, window: int, episodes: int, width: int) -> View:
    """Billboard: releases of episodes j … j + window (as two rows, :func:`_billboard_rows`); JDP: policies
    of users j + 1 … j + window; LDP: the messages of user j."""
    if notion == "billboard":
        return View(notion, tuple(range(position, position + window + 1)), width)
    if notion == "jdp":
        return View(notion, tuple(range(position + 1, position + window + 1)), width)
    return View(notion, (position,), width)


def observe(view: View, history: Sequence[Any] | None, policies: Sequence[np.ndarray], num_actions: int) -> np.ndarray:
    """The output (rows, width) of one run of the reference (non-batched) path."""
    if view.notion == "jdp":
        rows = np.zeros((len(view.episodes), view.width))
        for i, e in enumerate(view.episodes):
            if 1 <= e <= len(policies):
                rows[i] = _one_hot(np.asarray(policies[e - 1]), num_actions)
        return rows
    assert history is not None
    rows = _episode_rows(history, view.episodes, view.width, "current" if view.notion == "ldp" else None)
    return _billboard_rows(rows) if view.notion == "billboard" else rows


def run_agent_once(setup: AgentSetup, mdp: Any, tapes: Sequence[Any],
                   rng: np.random.Generator) -> tuple[Any, list[np.ndarray]]:
    """Build an agent with a recording billboard, run it on the tapes; (billboard history, policies)."""
    from dpverify.agents.tapes import run_on_tapes

    board = setup.billboard()
    agent = setup.build(mdp, rng, board)
    policies = run_on_tapes(agent, mdp, tapes)
    published = getattr(agent, "billboard", board)
    history = published.history() if getattr(published, "keep_history", False) else board.history()
    return history, policies


def _is_batched(setup: AgentSetup, batched: bool | None) -> bool:
    # The batched implementation is the fresh-noise variant; aggregation="tree" runs the reference agent, and
    # add/remove audits (empty slots) run one trial at a time through the protocol.
    options = dict(setup.agent_options)
    return (batched is not False and setup.agent == "dp-lsvi-ucb++"
            and options.get("aggregation", "fresh") == "fresh" and options.get("relation") != "add-remove-one")


def _batched_agent(setup: AgentSetup, mdp: Any, randomness: Any, record: Sequence[int]) -> Any:
    from dpverify.agents.batched_dp_lsvi_ucb_pp import BatchedDpLsviUcbPlusPlus
    from dpverify.agents.dp_lsvi_ucb_pp import DpLsviUcbPlusPlusConfig

    options = {k: v for k, v in setup.agent_options if k not in ("keep_history", "keep_noise")}
    try:
        config = DpLsviUcbPlusPlusConfig(setup.episodes, **options)
    except TypeError as exc:
        raise InvalidParameterError("--agent-option", f"is not accepted by dp-lsvi-ucb++ ({exc})",
                                    ", ".join(options)) from None
    return BatchedDpLsviUcbPlusPlus(mdp, config, randomness, record=record)


def observe_batch(view: View, agent: Any, policies: dict[int, np.ndarray], num_actions: int) -> np.ndarray:
    """The outputs (n, rows, width) of a batched run (same layout as :func:`observe`)."""
    n = agent.n
    out = np.zeros((n, len(view.episodes), view.width))
    if view.notion == "jdp":
        for i, e in enumerate(view.episodes):
            if e in policies:
                out[:, i] = _one_hot(policies[e], num_actions)
        return out
    parts: dict[int, list[np.ndarray]] = {e: [] for e in view.episodes}
    for _family, episode, _stage, value in agent.releases:
        if episode in parts:
            parts[episode].append(_flat_batch(value))
    for i, e in enumerate(view.episodes):
        if parts[e]:
            flat = np.concatenate(parts[e], axis=1)[:, : view.width]
            out[:, i, : flat.shape[1]] = flat
    return _billboard_rows(out) if view.notion == "billboard" else out


@dataclass(frozen=True, eq=False)
class AgentWorld:
    """The audited mechanism of a two-world audit: ``(tapes, n, rng) -> n outputs`` (engine interface).

    Each trial is a fresh agent (fresh randomness) run on the same tapes; its output is the notion's view.
    ``batch_factory`` (optional, picklable) builds a vectorised agent ``(setup, mdp, randomness, record)``
    with the interface of :class:`dpverify.agents.batched_dp_lsvi_ucb_pp.BatchedDpLsviUcbPlusPlus`.
    """

    setup: AgentSetup
    view: View
    batched: bool = False
    batch_factory: Callable[..., Any] | None = None

    def __call__(self, tapes: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        mdp = self.setup.environment()
        if self.batched or self.batch_factory is not None:
            return self._batched(mdp, tapes, n, rng)
        seeds = rng.integers(0, 2**63 - 1, size=n)
        outputs = []
        for i in range(n):
            history, policies = run_agent_once(self.setup, mdp, tapes, np.random.default_rng(int(seeds[i])))
            outputs.append(observe(self.view, history, policies, mdp.num_actions))
        return np.stack(outputs)

    def _batched(self, mdp: Any, tapes: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        from dpverify.agents.batched_dp_lsvi_ucb_pp import BatchRandomness, run_batch
        from dpverify.agents.tapes import tape_arrays

        initial, table = tape_arrays(tapes)
        build = self.batch_factory or _batched_agent
        outputs = []
        for start in range(0, n, BATCH):
            size = min(BATCH, n - start)
            agent = build(self.setup, mdp, BatchRandomness(rng, size), self.view.episodes)
            keep = self.view.episodes if self.view.notion == "jdp" else ()
            policies = run_batch(agent, initial, table, keep_policies=keep)
            outputs.append(observe_batch(self.view, agent, policies, mdp.num_actions))
        return np.concatenate(outputs)


# ---- claims ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentClaim:
    """The claim the agent itself states: its notion and (ε, δ) (None when it does not say)."""

    notion: str | None
    epsilon: float | None
    delta: float | None
    gaussian: bool


def probe_agent(spec: AgentAuditSpec, setup: AgentSetup) -> tuple[AgentClaim, int, Any]:
    """Build one agent and check the claim it makes (:func:`check_claim`), then run its first
    :data:`PROBE_EPISODES` episodes on ordinary tapes: (the claim, the widest row of releases of one
    episode, the environment). Rows of later episodes are zero-padded or truncated to that width (a
    fixed post-processing)."""
    from dpverify.agents.tapes import ordinary_tapes

    mdp = setup.environment()
    tapes = ordinary_tapes(mdp, spec.episodes, spec.data_seed)
    board = setup.billboard()
    agent = setup.build(mdp, np.random.default_rng(np.random.SeedSequence(spec.seed)), board)
    notion = getattr(agent, "privacy_notion", None)
    epsilon = delta = None
    claimed = getattr(agent, "claimed_guarantee", None)
    if callable(claimed):
        guarantee = claimed()
        epsilon, delta = float(guarantee.epsilon), float(guarantee.delta)
    registered = ":" not in setup.agent
    gaussian = bool(spec.gaussian_claim) if spec.gaussian_claim is not None else registered and epsilon is not None
    claim = AgentClaim(notion, epsilon, delta, gaussian)
    check_claim(spec, claim)  # before any episode runs
    from dpverify.agents.tapes import run_on_tapes

    policies = run_on_tapes(agent, mdp, tapes[:PROBE_EPISODES])
    width = 1
    if spec.notion == "jdp":
        width = mdp.horizon * mdp.num_states * mdp.num_actions
        del policies
    else:
        published = getattr(agent, "billboard", board)
        if not getattr(published, "keep_history", False):
            published = board
        history = published.history()
        users = "current" if spec.notion == "ldp" else None
        per_episode: dict[int, int] = {}
        for r in history:
            if users is None or r.users == users:
                per_episode[r.episode] = per_episode.get(r.episode, 0) + _flat(np.asarray(r.value)).size
        if not per_episode:
            what = "messages (users='current')" if spec.notion == "ldp" else "releases"
            raise InvalidParameterError(
                "notion", f"{spec.notion} needs an agent that publishes {what} on its billboard", spec.agent)
        width = max(per_episode.values())
    return claim, width, mdp


def check_claim(spec: AgentAuditSpec, claim: AgentClaim) -> None:
    """The notion must be one the agent supports, and (ε, δ) a claim it makes (one line otherwise)."""
    if claim.notion is not None:
        supported = SUPPORTED.get(claim.notion, ())
        if spec.notion not in supported:
            raise InvalidParameterError(
                "notion", f"must be one of {', '.join(supported) or 'none'} for a {claim.notion} agent", spec.notion)
    if claim.epsilon is not None and claim.delta is not None:
        if spec.epsilon < claim.epsilon * (1 - 1e-9) or spec.delta < claim.delta * (1 - 1e-9):
            raise InvalidParameterError(
                "epsilon/delta",
                f"must be a claim the agent makes: it claims ({claim.epsilon:.6g}, {claim.delta:g}), so epsilon >= "
                f"{claim.epsilon:.6g} and delta >= {claim.delta:g}",
                (spec.epsilon, spec.delta))


def _setup(spec: AgentAuditSpec) -> AgentSetup:
    options = dict(spec.agent_options)
    options.setdefault("epsilon", spec.epsilon)
    options.setdefault("delta", spec.delta)
    return AgentSetup(spec.agent, spec.env, spec.episodes, spec.env_options, tuple(sorted(options.items())))


def neighbour_pairs(spec: AgentAuditSpec, mdp: Any) -> list[NeighbourPair]:
    """One pair per position, ordinary tapes elsewhere. Replace-one: (low canary at j, high canary at j).
    Add/remove-one: (user j absent — an empty slot, episode j still happens —, high canary at j)."""
    from dpverify.agents.tapes import canary_tape, ordinary_tapes, position_index, replace

    base = ordinary_tapes(mdp, spec.episodes, spec.data_seed)
    low, high = canary_tape(mdp, "low"), canary_tape(mdp, "high")
    pairs = []
    for p in spec.positions:
        j = position_index(p, spec.episodes)
        if spec.add_remove:
            pairs.append(NeighbourPair(replace(base, j, None), replace(base, j, high),
                                       f"user {j} ({p}): absent (empty slot) vs high canary"))
            continue
        label = f"user {j} ({p}): low vs high canary"
        pairs.append(NeighbourPair(replace(base, j, low), replace(base, j, high), label))
    return pairs


# ---- results ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentAuditResult:
    """The outcome of an agent audit (frozen).

    Attributes:
        verdict: VIOLATION or NO VIOLATION FOUND (never "private").
        spec: the :class:`AgentAuditSpec` audited.
        epsilon_lower_bound: the largest ε lower bound the route certified.
        method: which bound gave it ("clopper-pearson", "gaussian-dp" or the one-run method).
        claimed_epsilon, delta: the claim audited; ``agent_claim``: what the agent itself claims.
        trials: two-world trials per side, or one-run runs; ``canaries``: one-run m per run (else None).
        seconds: wall time of the audit.
        batched: whether the batched DP-LSVI-UCB++ ran the trials.
        audit: the engine's :class:`~dpverify.audit.AuditResult` (two-world) or None.
        one_run: the one-run result (:class:`dpverify.audit.one_run.OneRunResult`) or None.
        points: tested (FPR, FNR, FPR upper, FNR upper) points for the trade-off plot.
        notes: caveats, always including that an audit is not a certificate.
    """

    verdict: str
    spec: AgentAuditSpec
    epsilon_lower_bound: float
    method: str
    claimed_epsilon: float
    delta: float
    agent_claim: AgentClaim
    trials: int
    canaries: int | None
    seconds: float
    batched: bool
    audit: AuditResult | None
    one_run: Any
    points: tuple[tuple[float, float, float, float], ...]
    notes: tuple[str, ...]

    def __post_init__(self) -> None:
        _validate.one_of("verdict", self.verdict, (VIOLATION, NO_VIOLATION_FOUND))
        if math.isnan(self.epsilon_lower_bound) or self.epsilon_lower_bound < 0:
            raise InvalidParameterError("epsilon_lower_bound", "must be >= 0", self.epsilon_lower_bound)

    @property
    def gaussian_claim(self) -> bool:
        return self.agent_claim.gaussian

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "agent": self.spec.agent,
            "env": self.spec.env,
            "episodes": self.spec.episodes,
            "notion": self.spec.notion,
            "route": self.spec.route,
            "claimed_epsilon": self.claimed_epsilon,
            "delta": self.delta,
            "gaussian_claim": self.gaussian_claim,
            "agent_claim": dataclasses.asdict(self.agent_claim),
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "method": self.method,
            "trials": self.trials,
            "canaries": self.canaries,
            "seconds": self.seconds,
            "batched": self.batched,
            "spec": self.spec.to_dict(),
            "audit": None if self.audit is None else self.audit.to_dict(),
            "one_run": None if self.one_run is None else self.one_run.to_dict(),
            "points": [list(p) for p in self.points],
            "notes": list(self.notes),
        }

    def summary(self) -> str:
        s = self.spec
        lines = [
            f"agent: {s.agent} on {s.env} (K={s.episodes}); notion: {s.notion}; route: {s.route}",
            f"verdict: {self.verdict}",
            f"claim: ({self.claimed_epsilon:g}, {self.delta:g})" + (" Gaussian-DP" if self.gaussian_claim else ""),
            f"epsilon lower bound: {self.epsilon_lower_bound:.4f} ({self.method})",
        ]
        if self.audit is not None:
            lines.append(f"trials: {self.trials} per side ({self.audit.selection_trials} selection, "
                         f"{self.audit.evaluation_trials} evaluation); pair: {self.audit.pair_label}"
                         + ("; batched DP-LSVI-UCB++" if self.batched else ""))
            lines.append(f"Clopper-Pearson: {self.audit.clopper_pearson.epsilon_lower:.4f} "
                         f"[{self.audit.clopper_pearson.test}]")
            lines.append(f"mu-GDP: mu >= {self.audit.gaussian.mu_lower or 0.0:.4f} -> epsilon "
                         f"{self.audit.gaussian.epsilon_lower:.4f}")
        if self.one_run is not None:
            lines.append(f"runs: {self.trials}, canaries per run: {self.canaries}; {self.one_run.v} of "
                         f"{self.one_run.r} guesses correct (m = {self.one_run.m})")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


# ---- the audits ----------------------------------------------------------------------------------------


def audit_agent(spec: AgentAuditSpec, executor: Executor | None = None, progress: bool | None = None,
                batch_factory: Callable[..., Any] | None = None) -> AgentAuditResult:
    """Audit an agent's claim by the spec's route (module docstring); bad input raises InvalidParameterError.

    ``batch_factory`` optionally supplies a vectorised agent for the two-world route (planted-bug variants
    of the batched DP-LSVI-UCB++ use it); it must be picklable for process executors.
    """
    if not isinstance(spec, AgentAuditSpec):
        raise InvalidParameterError("spec", "must be an AgentAuditSpec", type(spec).__name__)
    start = time.perf_counter()
    if spec.add_remove and batch_factory is not None:
        raise InvalidParameterError("batch_factory", "must be None for an add/remove audit (the batched path has no "
                                    "empty slots)", type(batch_factory).__name__)
    setup = _setup(spec)
    claim, width, mdp = probe_agent(spec, setup)
    if spec.route == "two-world":
        return _two_world(spec, setup, claim, width, mdp, executor, progress, batch_factory, start)
    return _one_run(spec, setup, claim, width, mdp, batch_factory, start)


def _two_world(spec: AgentAuditSpec, setup: AgentSetup, claim: AgentClaim, width: int, mdp: Any,
               executor: Executor | None, progress: bool | None, batch_factory: Callable[..., Any] | None,
               start: float) -> AgentAuditResult:
    from dpverify.agents.tapes import position_index

    pairs = neighbour_pairs(spec, mdp)
    batched = batch_factory is not None or _is_batched(setup, spec.batched)
    # one mechanism per position: its view reads the episodes around that position
    mechanisms = [AgentWorld(setup, output_view(spec.notion, position_index(p, spec.episodes), spec.window,
                                                spec.episodes, width), batched, batch_factory)
                  for p in spec.positions]
    audit_spec = AuditSpec(epsilon=spec.epsilon, delta=spec.delta, trials=spec.trials, confidence=spec.confidence,
                           seed=spec.seed, gaussian_claim=claim.gaussian, max_pairs=max(1, len(pairs)))
    mechanism = PositionedWorlds(tuple(mechanisms))
    labelled = [NeighbourPair((i, p.first), (i, p.second), p.label) for i, p in enumerate(pairs)]
    result = run_audit(mechanism, labelled, audit_spec, executor=executor, progress=progress)
    eps = max(result.clopper_pearson.epsilon_lower, result.gaussian.epsilon_lower if claim.gaussian else 0.0)
    method = "clopper-pearson" if eps == result.clopper_pearson.epsilon_lower else "gaussian-dp"
    points = tuple(
        (r.false_positives / r.trials, r.false_negatives / r.trials, r.fpr_upper, r.fnr_upper)
        for r in (result.clopper_pearson, result.gaussian))
    notes = list(result.notes)
    notes.append(_scope_note(spec))
    return AgentAuditResult(
        verdict=result.verdict, spec=spec, epsilon_lower_bound=float(eps), method=method,
        claimed_epsilon=spec.epsilon, delta=spec.delta, agent_claim=claim, trials=spec.trials, canaries=None,
        seconds=time.perf_counter() - start, batched=batched, audit=result, one_run=None, points=points,
        notes=tuple(notes))


@dataclass(frozen=True, eq=False)
class PositionedWorlds:
    """Engine mechanism over datasets ``(position index, tapes)``: the world of that position's view."""

    worlds: tuple[AgentWorld, ...]

    def __call__(self, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        index, tapes = dataset
        return self.worlds[index](tapes, n, rng)


def _scope_note(spec: AgentAuditSpec) -> str:
    seen = {"billboard": "the published releases of episodes j..j+window",
            "jdp": "the policies deployed to users j+1..j+window",
            "ldp": "user j's own messages"}[spec.notion]
    moved = ("add/remove-one: user j was absent (an empty slot, episode j still happened) or a high canary"
             if spec.add_remove else "canaries moved the targets between the lowest- and highest-value states")
    return (f"The auditor saw {seen} (window {spec.window}); {moved}. A bug whose effect lies outside this view or "
            "needs other user data is not tested.")


def canary_slots(episodes: int, m: int) -> np.ndarray:
    """m canary positions (1-based) spread evenly over 1..K."""
    return np.unique(np.round(np.linspace(1, episodes, m)).astype(np.int64))


def _slot_features(spec: AgentAuditSpec, view_rows: np.ndarray) -> np.ndarray:
    """A slot's feature vector: its rows and, for several rows, their consecutive differences."""
    if view_rows.shape[0] >= 2:
        return np.concatenate([(view_rows[1:] - view_rows[:-1]).reshape(-1), view_rows.reshape(-1)])
    return view_rows.reshape(-1)


def _one_run_features(spec: AgentAuditSpec, setup: AgentSetup, mdp: Any, width: int, slots: np.ndarray,
                      inclusion: np.ndarray, rng: np.random.Generator,
                      batch_factory: Callable[..., Any] | None) -> np.ndarray:
    """Run the agent once with the canaries the coins select; one feature row per slot."""
    from dpverify.agents.tapes import canary_tape, ordinary_tapes, replace

    tapes: tuple[Any, ...] = ordinary_tapes(mdp, spec.episodes, spec.data_seed)
    # add/remove: the coin chooses between the canary and an empty slot (user absent)
    high, low = canary_tape(mdp, "high"), None if spec.add_remove else canary_tape(mdp, "low")
    for slot, included in zip(slots, inclusion, strict=True):
        tapes = replace(tapes, int(slot), high if included else low)
    views = [output_view(spec.notion, int(j), spec.window, spec.episodes, width) for j in slots]
    if batch_factory is not None or _is_batched(setup, spec.batched):
        from dpverify.agents.batched_dp_lsvi_ucb_pp import BatchRandomness, run_batch
        from dpverify.agents.tapes import tape_arrays

        episodes = sorted({e for v in views for e in v.episodes})
        agent = (batch_factory or _batched_agent)(setup, mdp, BatchRandomness(rng, 1), episodes)
        initial, table = tape_arrays(tapes)
        policies = run_batch(agent, initial, table, keep_policies=episodes if spec.notion == "jdp" else ())
        rows = [observe_batch(v, agent, policies, mdp.num_actions)[0] for v in views]
    else:
        history, plist = run_agent_once(setup, mdp, tapes, rng)
        rows = [observe(v, history, plist, mdp.num_actions) for v in views]
    return np.stack([_slot_features(spec, r) for r in rows])


def _auc(scores: np.ndarray, inclusion: np.ndarray) -> float:
    """P[score(included) > score(excluded)] (+ half the ties): the rank statistic of Mann & Whitney."""
    order = np.sort(scores)
    # 0-based average ranks (ties share their mean rank)
    lo = np.searchsorted(order, scores, side="left")
    hi = np.searchsorted(order, scores, side="right")
    ranks = (lo + hi - 1) / 2.0
    n1, n0 = int(inclusion.sum()), int((~inclusion).sum())
    if n1 == 0 or n0 == 0:
        return 0.5
    return float((ranks[inclusion].sum() - n1 * (n1 - 1) / 2.0) / (n1 * n0))


@dataclass(frozen=True, eq=False)
class SlotScorer:
    """The score of a canary slot: a feature learned on the pilot run (engine learners), signed so that
    higher means "included" on the pilot."""

    feature: Any
    sign: float

    def __call__(self, features: np.ndarray) -> np.ndarray:
        return self.sign * np.asarray(self.feature.scores(features), dtype=float)


def learn_scorer(pilot: np.ndarray, inclusion: np.ndarray) -> SlotScorer:
    """Candidate features of :func:`dpverify.audit.distinguishers.propose_features` fitted on the pilot's
    excluded vs included slots; the one whose pilot rank statistic is furthest from 1/2 wins."""
    from dpverify.audit.distinguishers import LinearFeature, propose_features

    if inclusion.all() or not inclusion.any():
        return SlotScorer(LinearFeature("slot coordinate 0", "release", np.eye(pilot.shape[1])[0]), 1.0)
    best: tuple[float, Any, float] | None = None
    for feature in propose_features(pilot[~inclusion], pilot[inclusion]):
        scores = np.asarray(feature.scores(pilot), dtype=float)
        if not np.all(np.isfinite(scores)):
            continue
        auc = _auc(scores, inclusion)
        if best is None or abs(auc - 0.5) > best[0]:
            best = (abs(auc - 0.5), feature, 1.0 if auc >= 0.5 else -1.0)
    if best is None:
        return SlotScorer(LinearFeature("slot coordinate 0", "release", np.eye(pilot.shape[1])[0]), 1.0)
    return SlotScorer(best[1], best[2])


def _one_run(spec: AgentAuditSpec, setup: AgentSetup, claim: AgentClaim, width: int, mdp: Any,
             batch_factory: Callable[..., Any] | None, start: float) -> AgentAuditResult:
    from dpverify.audit import one_run as steinke

    slots = canary_slots(spec.episodes, spec.canary_count)
    m = len(slots)
    root = np.random.SeedSequence(spec.seed)
    pilot_seq, audit_seq = root.spawn(2)
    pilot_coin, pilot_run = (np.random.default_rng(s) for s in pilot_seq.spawn(2))
    pilot_inclusion = steinke.draw_inclusion(m, pilot_coin)
    pilot = _one_run_features(spec, setup, mdp, width, slots, pilot_inclusion, pilot_run, batch_factory)
    scorer = learn_scorer(pilot, pilot_inclusion)
    runs = spec.trials
    total = m * runs

    def experiment(inclusion: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        scores = []
        for r, g in enumerate(rng.spawn(runs)):
            feats = _one_run_features(spec, setup, mdp, width, slots, inclusion[r * m:(r + 1) * m], g, batch_factory)
            scores.append(scorer(feats))
        return np.nan_to_num(np.concatenate(scores), posinf=1e300, neginf=-1e300)

    rules = [(max(1, int(f * total)), max(1, int(f * total))) for f in GUESS_FRACTIONS]
    rules = [(min(kp, total // 2), min(km, total - min(kp, total // 2))) for kp, km in rules]
    result = steinke.run_one_run_audit(experiment, total, np.random.default_rng(audit_seq), guesses=rules,
                                       delta=spec.delta, confidence=spec.confidence)
    eps = float(result.epsilon_lower_bound)
    verdict = VIOLATION if result.refutes(spec.epsilon) else NO_VIOLATION_FOUND
    wrong = 1.0 - result.v / result.r if result.r else 1.0
    notes = [NOT_A_CERTIFICATE,
             f"One-run bound (Steinke, Nasr & Jagielski 2023, Theorem 3) over {runs} run(s) of {m} canary slots; "
             f"guess rules {rules} share alpha by Bonferroni; the slot score ({scorer.feature.name}) was learned on an "
             "independent pilot run.", _scope_note(spec)]
    return AgentAuditResult(
        verdict=verdict, spec=spec, epsilon_lower_bound=eps, method=result.method, claimed_epsilon=spec.epsilon,
        delta=spec.delta, agent_claim=claim, trials=runs, canaries=m, seconds=time.perf_counter() - start,
        batched=batch_factory is not None or _is_batched(setup, spec.batched), audit=None, one_run=result,
        points=((wrong, wrong, wrong, wrong),), notes=tuple(notes))
