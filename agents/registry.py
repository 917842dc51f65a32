"""The one registry of the agents and environments dpverify knows by name, and the one way to build them.

* :data:`AGENTS` — name → :class:`AgentEntry`, the agent's *card*: its factory
  ``(mdp, num_episodes, rng, /, **options) -> Agent``, the environment kind it needs (``"linear"`` or
  ``"mixture"``), and for a private agent everything the other layers know about it — its privacy notion,
  its non-private counterpart, its regret bound in :data:`dpverify.bounds.REGISTRY`, its release schedule,
  the published calibration ``dpverify verify`` checks, and the vectorised twin the two-world audits use.
  Every private agent's factory also accepts ``billboard=`` (a :class:`~dpverify.agents.core.billboard.Billboard`
  or :class:`~dpverify.agents.core.billboard.ReplayBillboard` to publish on), and the agent it returns has
  ``billboard``, ``ledger``, ``claimed_guarantee()``, ``privacy_notion`` ("jdp" or "ldp") and
  ``config.num_episodes``/``epsilon``/``delta``/``relation`` (:class:`dpverify.agents.core.private.PrivateAgent`).
* :data:`ENVIRONMENTS` — name → :class:`EnvironmentEntry`: a factory ``(num_episodes, /, **options) -> MDP``
  (``num_episodes`` is the run's K, positional-only so that an option may carry the same name).
* :func:`agent_factory`, :func:`build_environment`, :func:`build_agent` — the runner, the audits,
  ``dpverify verify`` and the testing helpers build agents and environments here, with one error wording.

Adding an agent is one module plus one :func:`register_agent` call below (and its tests): CONTRIBUTING.md.
A factory is given as a callable or as ``"module:attribute"``, imported on first use, so that naming the
agents does not import every agent (and its dependencies) before a run.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpverify import _validate
from dpverify.errors import InvalidParameterError
from dpverify.usercode import NOTIONS as PRIVACY_NOTIONS
from dpverify.usercode import guarded_factory, is_factory_path

from .envs.bandit import Bandit
from .envs.bandit_instances import armed_bandit, linear_bandit
from .envs.linear_mdp import LinearMDP, LinearMixtureMDP
from .envs.min2021 import min2021_mdp
from .envs.random_mdps import random_linear_mdp, random_linear_mixture_mdp
from .envs.zhou2021_mixture import zhou2021_mixture_mdp

if TYPE_CHECKING:  # types only: naming the agents imports no calibration code
    from dpverify.calibration import NamedSchedule

ENV_KINDS = ("linear", "mixture", "bandit")
#: The environment class of each kind, and how an error names it.
ENV_TYPES: dict[str, tuple[type, str]] = {"linear": (LinearMDP, "linear MDP"),
                                          "mixture": (LinearMixtureMDP, "linear mixture MDP"),
                                          "bandit": (Bandit, "bandit")}


def _import_attribute(target: str) -> Any:
    """The object ``"module:attribute"`` names (imported on first use)."""
    module, _, attribute = target.partition(":")
    value: Any = importlib.import_module(module)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


def _resolve(target: Callable[..., Any] | str) -> Callable[..., Any]:
    return target if callable(target) else _import_attribute(target)


@dataclass(frozen=True)
class BatchedTwin:
    """A vectorised twin of a private agent for the two-world audits: many trials per call, each trial
    bit-identical to the reference agent run with the same generators (its tests tie the two together).

    Attributes:
        build: ``build(mdp, num_episodes, options, randomness, record) -> batched agent`` (or its
            ``"module:attribute"``); ``options`` are the agent's factory options.
        covers: ``covers(options) -> bool``: whether the twin implements the agent with these options (else the
            audit runs the reference agent one trial at a time); None: every option, both relations.
    """

    build: Callable[..., Any] | str
    covers: Callable[..., bool] | str | None = None

    def applies(self, options: dict[str, Any]) -> bool:
        return self.covers is None or bool(_resolve(self.covers)(options))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _resolve(self.build)(*args, **kwargs)


@dataclass(frozen=True)
class AgentEntry:
    """A registered agent: its card (module docstring).

    Attributes:
        name: the name ``--agent`` takes.
        target: the factory or its ``"module:attribute"``.
        env_kind: "linear" (linear MDPs), "mixture" (linear mixture MDPs) or "bandit" (bandits,
            :mod:`dpverify.agents.envs.bandit`).
        description: one line for listings.
        private: whether the agent makes a privacy claim.
        notion: "jdp" or "ldp" for a private agent (None for a non-private one).
        counterpart: the registered non-private agent with the same learning rule (regret comparisons).
        bound: the name of the agent's regret bound in :data:`dpverify.bounds.REGISTRY`.
        schedule: the agent's release schedule for ``dpverify calibrate``: a
            :class:`~dpverify.calibration.NamedSchedule` or the ``"module:attribute"`` of one.
        batched: the vectorised twin the two-world audits run (:class:`BatchedTwin`).
    """

    name: str
    target: Callable[..., Any] | str
    env_kind: str
    description: str
    private: bool = False
    notion: str | None = None
    counterpart: str | None = None
    bound: str | None = None
    schedule: NamedSchedule | str | None = None
    batched: BatchedTwin | None = None

    def __post_init__(self) -> None:
        _validate.one_of("env_kind", self.env_kind, ENV_KINDS)
        if self.private:
            _validate.one_of("notion", self.notion, PRIVACY_NOTIONS)
        elif self.notion is not None or self.batched is not None:
            raise InvalidParameterError("private", "must be True for an agent with a privacy notion or an audit "
                                        "twin", self.private)
        if self.batched is not None and not isinstance(self.batched, BatchedTwin):
            raise InvalidParameterError("batched", "must be a BatchedTwin", self.batched)

    @property
    def factory(self) -> Callable[..., Any]:
        return _resolve(self.target)

    @property
    def env_type(self) -> type:
        return ENV_TYPES[self.env_kind][0]

    @property
    def named_schedule(self) -> NamedSchedule | None:
        """The agent's :class:`~dpverify.calibration.NamedSchedule` (None when it registers none)."""
        if isinstance(self.schedule, str):
            return _import_attribute(self.schedule)
        return self.schedule


@dataclass(frozen=True)
class EnvironmentEntry:
    """A registered environment: ``factory(num_episodes, /, **options) -> LinearMDP | LinearMixtureMDP``."""

    name: str
    target: Callable[..., Any] | str
    description: str

    @property
    def factory(self) -> Callable[..., Any]:
        return _resolve(self.target)


AGENTS: dict[str, AgentEntry] = {}
ENVIRONMENTS: dict[str, EnvironmentEntry] = {}


def register_agent(name: str, factory: Callable[..., Any] | str, env_kind: str, description: str,
                   private: bool = False, replace: bool = False, **card: Any) -> None:
    """Add an agent to :data:`AGENTS` (an existing name is an error unless ``replace``); ``card`` holds the
    other fields of :class:`AgentEntry` (``notion``, ``counterpart``, ``bound``, ``schedule``, ``batched``)."""
    if name in AGENTS and not replace:
        raise InvalidParameterError("agent", "is already registered", name)
    unknown = sorted(set(card) - {f.name for f in dataclasses.fields(AgentEntry)})
    if unknown:
        raise InvalidParameterError("card", f"has no field {', '.join(unknown)}", name)
    AGENTS[name] = AgentEntry(name, factory, env_kind, description, private, **card)


def register_environment(name: str, factory: Callable[..., Any] | str, description: str,
                         replace: bool = False) -> None:
    """Add an environment to :data:`ENVIRONMENTS` (an existing name is an error unless ``replace``)."""
    if name in ENVIRONMENTS and not replace:
        raise InvalidParameterError("env", "is already registered", name)
    ENVIRONMENTS[name] = EnvironmentEntry(name, factory, description)


def schedule_names() -> tuple[str, ...]:
    """The agents that offer a release schedule to ``dpverify calibrate`` (``--schedule`` names), in registration
    order (nothing is imported)."""
    return tuple(name for name, entry in AGENTS.items() if entry.schedule is not None)


def schedules() -> dict[str, NamedSchedule]:
    """Every offered schedule, resolved (``--schedule`` name → :class:`~dpverify.calibration.NamedSchedule`)."""
    return {name: named_schedule(name) for name in schedule_names()}


def named_schedule(name: str, *, parameter: str = "schedule") -> NamedSchedule:
    """The :class:`~dpverify.calibration.NamedSchedule` of the agent ``name`` (one clear error otherwise); only
    that agent's schedule module is imported."""
    offered = schedule_names()
    schedule = AGENTS[name].named_schedule if name in offered else None
    if schedule is None:
        raise InvalidParameterError(parameter, f"must be one of {', '.join(offered)}", name)
    return schedule


def batched_twin(agent: str | None, options: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> BatchedTwin | None:
    """The batched twin on a registered agent's card when it covers these factory options (else None: a factory
    path, an agent without a twin, or options its twin does not implement)."""
    entry = card(agent)
    twin = None if entry is None else entry.batched
    return twin if twin is not None and twin.applies(dict(options)) else None


def card(agent: str | None) -> AgentEntry | None:
    """The card of a registered agent, None for anything else (a factory path, an unknown name, None)."""
    return AGENTS.get(agent) if isinstance(agent, str) else None


# ---- building (one wording for every caller) ---------------------------------------------------------------


def options_error(kind: str, name: str, options: Any, exc: TypeError) -> InvalidParameterError:
    """The error for options a factory refused (``kind`` "agent" or "env"): the missing ones, or those given."""
    reason = str(exc).split(": ", 1)[-1].split("() ", 1)[-1]
    if "missing" in str(exc) and "required" in str(exc):
        names = str(exc).split(": ", 1)[-1].replace(" and ", ", ").split(",")
        missing = ", ".join(part.strip(" '") for part in names)
        return InvalidParameterError(f"--{kind}-option", f"{missing} is required by {name} (give NAME=VALUE)", missing)
    keys = options.keys() if isinstance(options, Mapping) else (key for key, _ in options)
    return InvalidParameterError(f"--{kind}-option", f"is not accepted by {name} ({reason})", ", ".join(keys))


def agent_factory(agent: str, *, parameter: str = "agent") -> Callable[..., Any]:
    """A registered agent's factory, or the user's factory named ``module.path:factory`` / ``file.py:factory``
    (a :class:`~dpverify.usercode.GuardedFactory`: its import, call and methods are guarded, its module
    imported here so that a path that does not import is refused at once)."""
    if isinstance(agent, str) and is_factory_path(agent):
        try:
            return guarded_factory(agent)
        except InvalidParameterError as exc:  # the path's own error is the option's; any other names itself
            if exc.parameter != "agent":
                raise
            raise InvalidParameterError(parameter, exc.rule, agent) from None
    if not isinstance(agent, str) or agent not in AGENTS:
        raise InvalidParameterError(parameter, f"must be one of {', '.join(sorted(AGENTS))} or module.path:factory",
                                    agent)
    return AGENTS[agent].factory


def build_environment(env: str, num_episodes: int, options: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
                      *, parameter: str = "env") -> Any:
    """The registered environment ``env`` for a run of ``num_episodes`` episodes, with its options."""
    if not isinstance(env, str) or env not in ENVIRONMENTS:
        raise InvalidParameterError(parameter, f"must be one of {', '.join(sorted(ENVIRONMENTS))}", env)
    options = dict(options)
    try:
        return ENVIRONMENTS[env].factory(num_episodes, **options)
    except TypeError as exc:
        raise options_error("env", env, options, exc) from None
    except InvalidParameterError as exc:  # an option's rule, named as the command line gives options
        if not parameter.startswith("--") or exc.parameter not in options:
            raise
        raise InvalidParameterError(f"--env-option {exc.parameter}", exc.rule, exc.value) from None


def check_environment_kind(agent: Any, mdp: Any, label: str | None = None) -> None:
    """Refuse an environment of the other kind for a registered agent (linear vs linear mixture), naming it as
    built (check the user's environment before an audit environment of its kind replaces it)."""
    entry = card(agent) if isinstance(agent, str) else None
    if entry is not None and not isinstance(mdp, entry.env_type):
        kind = "linear" if entry.env_kind == "linear" else "linear mixture"
        raise InvalidParameterError("env", f"must be a {kind} MDP for agent {label or agent}",
                                    getattr(mdp, "name", mdp))


def build_agent(agent: str | Callable[..., Any], mdp: Any, num_episodes: int, rng: np.random.Generator,
                options: Mapping[str, Any] | Iterable[tuple[str, Any]] = (), *, billboard: Any = None,
                billboard_required: bool = True, name: str | None = None) -> Any:
    """Call the agent's factory (a registered name, a factory path, or the factory itself) on ``mdp``.

    A registered agent refuses an environment of the other kind; ``billboard`` (when given) is passed as
    ``billboard=`` — a factory that does not take it is an error, or, unless ``billboard_required``, is called
    without it; a factory's ``TypeError`` is bad input naming the options (:func:`options_error`)."""
    label = name or (agent if isinstance(agent, str) else str(getattr(agent, "__name__", "the factory")))
    check_environment_kind(agent, mdp, label)
    factory = agent_factory(agent) if isinstance(agent, str) else agent
    options = dict(options)
    extra = {} if billboard is None else {"billboard": billboard}
    try:
        return factory(mdp, num_episodes, rng, **extra, **options)
    except TypeError as exc:
        if not (extra and "billboard" in str(exc)):
            raise options_error("agent", label, options, exc) from None
        if billboard_required:
            raise InvalidParameterError("agent", "factory must accept (mdp, num_episodes, rng, billboard=..., "
                                        f"**options) ({exc})", label) from None
    try:
        return factory(mdp, num_episodes, rng, **options)
    except TypeError as exc:
        raise options_error("agent", label, options, exc) from None


def private_agents() -> tuple[str, ...]:
    """The names of the registered private agents, sorted."""
    return tuple(sorted(name for name, entry in AGENTS.items() if entry.private))


# ---- environments ------------------------------------------------------------------------------------------


def make_min2021(num_episodes: int, /, **options: Any) -> LinearMDP:
    return min2021_mdp(**options)


def make_min2021_raw(num_episodes: int, /, **options: Any) -> LinearMDP:
    return min2021_mdp(rescaled=False, **options)


def make_zhou2021(num_episodes: int, /, **options: Any) -> LinearMixtureMDP:
    options.setdefault("num_episodes", num_episodes)
    return zhou2021_mixture_mdp(**options)


def make_random_linear(num_episodes: int, /, seed: int = 0, **options: Any) -> LinearMDP:
    seed = _validate.integer("seed", seed, minimum=0)
    return random_linear_mdp(np.random.default_rng(np.random.SeedSequence(seed)), **options)


def make_random_mixture(num_episodes: int, /, seed: int = 0, **options: Any) -> LinearMixtureMDP:
    seed = _validate.integer("seed", seed, minimum=0)
    return random_linear_mixture_mdp(np.random.default_rng(np.random.SeedSequence(seed)), **options)


def make_bernoulli_bandit(num_episodes: int, /, **options: Any) -> Bandit:
    return armed_bandit(**options)


def make_linear_bandit(num_episodes: int, /, **options: Any) -> Bandit:
    return linear_bandit(**options)


register_environment("min2021", make_min2021, "Min et al. 2021 linear MDP, rescaled so that ‖φ‖ = 1")
register_environment("min2021-raw", make_min2021_raw, "Min et al. 2021 linear MDP, raw features ‖φ‖ = 3")
register_environment("zhou2021", make_zhou2021, "Zhou et al. 2021 hard linear mixture MDP (Liao et al. 2021)")
register_environment("random-linear", make_random_linear, "random linear MDP (option seed)")
register_environment("random-mixture", make_random_mixture, "random linear mixture MDP (option seed)")
register_environment("bernoulli-bandit", make_bernoulli_bandit,
                     "finite-armed stochastic bandit, one round per user (options num_arms, seed, instance="
                     "random|hard|audit, gap, rewards=bernoulli|gaussian, noise_std, num_levels, means)")
register_environment("linear-bandit", make_linear_bandit,
                     "linear contextual bandit, finite arm set per round, ‖x‖ = 1, rewards in [0, 1] (options dim, "
                     "num_arms, num_contexts, seed, instance=random|audit, rewards=bernoulli|gaussian)")

# ---- agents (options: the fields of each agent's config except num_episodes) ----------------------------------

register_agent("lsvi-ucb", "dpverify.agents.nonprivate.lsvi_ucb:LsviUcb.from_options", "linear",
               "LSVI-UCB (Jin et al. 2020)")
register_agent("lsvi-ucb++", "dpverify.agents.nonprivate.lsvi_ucb_pp:LsviUcbPlusPlus.from_options", "linear",
               "LSVI-UCB++ (He et al. 2023; Sahu 2025 §3)")
register_agent("ucrl-vtr", "dpverify.agents.nonprivate.ucrl_vtr:UcrlVtr.from_options", "mixture",
               "UCRL-VTR (Ayoub et al. 2020; Jia et al. 2020)")
register_agent("dp-lsvi-ucb++", "dpverify.agents.dp_lsvi_ucb_pp.dp_lsvi_ucb_pp:DpLsviUcbPlusPlus.from_options",
               "linear",
               "DP-LSVI-UCB++ (Sahu 2025, Algorithm 1; fresh noise, GOE Gram; options epsilon, delta, "
               "sensitivity_model, conversion, *_multiplier, aggregation=fresh|tree|honaker: binary-tree counters, "
               "or the full dyadic tree with Honaker's estimator)",
               private=True, notion="jdp", counterpart="lsvi-ucb++", bound="dp-lsvi-ucb++/theorem-3.2",
               schedule="dpverify.agents.dp_lsvi_ucb_pp.schedule:NAMED_SCHEDULE",
               batched=BatchedTwin("dpverify.agents.dp_lsvi_ucb_pp.batched_tree:build_twin",
                                   "dpverify.agents.dp_lsvi_ucb_pp.batched_tree:covers"))
register_agent("luyo", "dpverify.agents.tree_lsvi.luyo:LuyoAgent.from_options", "linear",
               "Luyo et al. 2021 private LSVI-UCB (binary-tree mechanism, fixed batches; options epsilon, "
               "delta, batch_length, *_multiplier)",
               private=True, notion="jdp", counterpart="lsvi-ucb", bound="luyo-2021/linear-mdp",
               batched=BatchedTwin("dpverify.agents.tree_lsvi.batched:build_luyo_twin",
                                   "dpverify.agents.tree_lsvi.batched:covers"))
register_agent("ngo", "dpverify.agents.tree_lsvi.ngo:NgoAgent.from_options", "linear",
               "Ngo et al. 2022 private LSVI-UCB (adaptive batching on determinant doubling; options "
               "epsilon, delta, max_updates, *_multiplier)",
               private=True, notion="jdp", counterpart="lsvi-ucb", bound="ngo-2022/linear-mdp",
               batched=BatchedTwin("dpverify.agents.tree_lsvi.batched:build_ngo_twin",
                                   "dpverify.agents.tree_lsvi.batched:covers"))
register_agent("ldp-ucrl-vtr", "dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr:LdpUcrlVtr.from_options", "mixture",
               "LDP-UCRL-VTR (Liao et al. 2021; users privatise their own statistics; options epsilon, delta, "
               "*_multiplier, sensitivity_model=standard|staged)",
               private=True, notion="ldp", counterpart="ucrl-vtr", bound="ldp-ucrl-vtr/upper",
               schedule="dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr:NAMED_SCHEDULE",
               batched=BatchedTwin("dpverify.agents.ldp_ucrl_vtr.batched:build_twin",
                                   "dpverify.agents.ldp_ucrl_vtr.batched:covers"))

# ---- bandit agents (one round per user: dpverify.agents.envs.bandit) ------------------------------------------

register_agent("linucb", "dpverify.agents.bandits.linucb:LinUcb.from_options", "bandit",
               "LinUCB / OFUL (Abbasi-Yadkori et al. 2011; options beta_multiplier, regularization, theta_bound)")
register_agent("ucb", "dpverify.agents.bandits.ucb:Ucb.from_options", "bandit",
               "UCB1 (Auer et al. 2002; option beta_multiplier)")
register_agent("jdp-linucb", "dpverify.agents.bandits.jdp_linucb:JdpLinUcb.from_options", "bandit",
               "JDP LinUCB (Shariff & Sheffet 2018: tree-based private Gram matrix and target, GOE noise; options "
               "epsilon, delta, *_multiplier, regularization, theta_bound)",
               private=True, notion="jdp", counterpart="linucb", bound="jdp-linucb/shariff-sheffet-2018",
               schedule="dpverify.agents.bandits.jdp_linucb:NAMED_SCHEDULE",
               batched=BatchedTwin("dpverify.agents.bandits.jdp_linucb:build_twin"))
register_agent("ldp-linucb", "dpverify.agents.bandits.ldp_linucb:LdpLinUcb.from_options", "bandit",
               "LDP LinUCB (Zheng et al. 2020: each user privatises x x^T and x r; options epsilon, delta, "
               "*_multiplier, regularization, theta_bound)",
               private=True, notion="ldp", counterpart="linucb", bound="ldp-linucb/zheng-2020",
               schedule="dpverify.agents.bandits.ldp_linucb:NAMED_SCHEDULE",
               batched=BatchedTwin("dpverify.agents.bandits.ldp_linucb:build_twin"))
register_agent("dp-ucb", "dpverify.agents.bandits.dp_ucb:DpUcb.from_options", "bandit",
               "DP-UCB (Mishra & Thakurta 2015; Tossou & Dimitrakakis 2016: Laplace binary-tree reward counters; "
               "options epsilon, delta, conversion (default pure), *_multiplier)",
               private=True, notion="jdp", counterpart="ucb", bound="dp-ucb/mishra-thakurta-2015",
               schedule="dpverify.agents.bandits.dp_ucb:NAMED_SCHEDULE",
               batched=BatchedTwin("dpverify.agents.bandits.dp_ucb:build_twin"))
