"""The one registry of the agents and environments that ``dpverify run`` (and the results scripts) know by name.

* :data:`AGENTS` — name → :class:`AgentEntry`: a factory ``(mdp, num_episodes, rng, /, **options) -> Agent``,
  the environment kind it needs (``"linear"`` or ``"mixture"``) and whether the agent is private. Every
  private agent's factory also accepts ``billboard=`` (a :class:`~dpverify.agents.billboard.Billboard` or
  :class:`~dpverify.agents.billboard.ReplayBillboard` to publish on), and the agent it returns has
  ``billboard``, ``ledger``, ``claimed_guarantee()``, ``privacy_notion`` ("jdp" or "ldp") and
  ``config.num_episodes``/``epsilon``/``delta``/``relation`` (:class:`dpverify.agents.private.PrivateAgent`).
* :data:`ENVIRONMENTS` — name → :class:`EnvironmentEntry`: a factory ``(num_episodes, /, **options) -> MDP``
  (``num_episodes`` is the run's K, positional-only so that an option may carry the same name).

Adding an agent is one module plus one :func:`register_agent` line below (and its tests). A factory is
given as a callable or as ``"module:attribute"``, imported on first use, so that naming the agents
does not import every agent (and its dependencies) before a run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify import _validate
from dpverify.agents.envs.linear_mdp import LinearMDP, LinearMixtureMDP
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.envs.random_mdps import random_linear_mdp, random_linear_mixture_mdp
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp
from dpverify.errors import InvalidParameterError

ENV_KINDS = ("linear", "mixture")


def _resolve(target: Callable[..., Any] | str) -> Callable[..., Any]:
    if callable(target):
        return target
    module, _, attribute = target.partition(":")
    value: Any = importlib.import_module(module)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


@dataclass(frozen=True)
class AgentEntry:
    """A registered agent (module docstring); ``target`` is the factory or its ``"module:attribute"``."""

    name: str
    target: Callable[..., Any] | str
    env_kind: str
    description: str
    private: bool = False

    def __post_init__(self) -> None:
        _validate.one_of("env_kind", self.env_kind, ENV_KINDS)

    @property
    def factory(self) -> Callable[..., Any]:
        return _resolve(self.target)

    @property
    def env_type(self) -> type:
        return LinearMDP if self.env_kind == "linear" else LinearMixtureMDP


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
                   private: bool = False, replace: bool = False) -> None:
    """Add an agent to :data:`AGENTS` (an existing name is an error unless ``replace``)."""
    if name in AGENTS and not replace:
        raise InvalidParameterError("agent", "is already registered", name)
    AGENTS[name] = AgentEntry(name, factory, env_kind, description, private)


def register_environment(name: str, factory: Callable[..., Any] | str, description: str,
                         replace: bool = False) -> None:
    """Add an environment to :data:`ENVIRONMENTS` (an existing name is an error unless ``replace``)."""
    if name in ENVIRONMENTS and not replace:
        raise InvalidParameterError("env", "is already registered", name)
    ENVIRONMENTS[name] = EnvironmentEntry(name, factory, description)


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


register_environment("min2021", make_min2021, "Min et al. 2021 linear MDP, rescaled so that ‖φ‖ = 1")
register_environment("min2021-raw", make_min2021_raw, "Min et al. 2021 linear MDP, raw features ‖φ‖ = 3")
register_environment("zhou2021", make_zhou2021, "Zhou et al. 2021 hard linear mixture MDP (Liao et al. 2021)")
register_environment("random-linear", make_random_linear, "random linear MDP (option seed)")
register_environment("random-mixture", make_random_mixture, "random linear mixture MDP (option seed)")

# ---- agents (options: the fields of each agent's config except num_episodes) ----------------------------------

register_agent("lsvi-ucb", "dpverify.agents.lsvi_ucb:LsviUcb.from_options", "linear", "LSVI-UCB (Jin et al. 2020)")
register_agent("lsvi-ucb++", "dpverify.agents.lsvi_ucb_pp:LsviUcbPlusPlus.from_options", "linear",
               "LSVI-UCB++ (He et al. 2023; Sahu 2025 §3)")
register_agent("ucrl-vtr", "dpverify.agents.ucrl_vtr:UcrlVtr.from_options", "mixture",
               "UCRL-VTR (Ayoub et al. 2020; Jia et al. 2020)")
register_agent("dp-lsvi-ucb++", "dpverify.agents.dp_lsvi_ucb_pp:DpLsviUcbPlusPlus.from_options", "linear",
               "DP-LSVI-UCB++ (Sahu 2025, Algorithm 1; fresh noise, GOE Gram; options epsilon, delta, "
               "sensitivity_model, conversion, *_multiplier, aggregation=fresh|tree|honaker: binary-tree counters, "
               "or the full dyadic tree with Honaker's estimator)",
               private=True)
register_agent("luyo", "dpverify.agents.luyo:LuyoAgent.from_options", "linear",
               "Luyo et al. 2021 private LSVI-UCB (binary-tree mechanism, fixed batches; options epsilon, "
               "delta, batch_length, *_multiplier)", private=True)
register_agent("ngo", "dpverify.agents.ngo:NgoAgent.from_options", "linear",
               "Ngo et al. 2022 private LSVI-UCB (adaptive batching on determinant doubling; options "
               "epsilon, delta, max_updates, *_multiplier)", private=True)
register_agent("ldp-ucrl-vtr", "dpverify.agents.ldp_ucrl_vtr:LdpUcrlVtr.from_options", "mixture",
               "LDP-UCRL-VTR (Liao et al. 2021; users privatise their own statistics; options epsilon, delta, "
               "*_multiplier)", private=True)
