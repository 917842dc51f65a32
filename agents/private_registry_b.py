"""Registers the private reference agents of Luyo et al. 2021, Ngo et al. 2022 and Liao et al. 2021 with the runner.

Names (``dpverify run --agent NAME --agent-option KEY=VALUE``):

* ``luyo`` (linear MDPs) — :class:`dpverify.agents.luyo.LuyoAgent`; options: every field of
  :class:`dpverify.agents.luyo.LuyoConfig` except ``num_episodes``: ``epsilon`` (required), ``delta``,
  ``batch_length``, ``beta_multiplier``, ``privacy_beta_multiplier``, ``shift_multiplier``,
  ``regularization``, ``failure_probability``, ``feature_norm_bound``, ``relation``, ``conversion``.
* ``ngo`` (linear MDPs) — :class:`dpverify.agents.ngo.NgoAgent`; options: the fields of
  :class:`dpverify.agents.ngo.NgoConfig` (as ``luyo`` with ``max_updates`` in place of ``batch_length``).
* ``ldp-ucrl-vtr`` (linear mixture MDPs) — :class:`dpverify.agents.ldp_ucrl_vtr.LdpUcrlVtr`; options: the fields
  of :class:`dpverify.agents.ldp_ucrl_vtr.LdpUcrlVtrConfig`: ``epsilon`` (required), ``delta``,
  ``beta_multiplier``, ``privacy_beta_multiplier``, ``shift_multiplier``, ``regularization``,
  ``failure_probability``, ``feature_norm_bound``, ``relation``, ``conversion``.

The runner records ``agent.settings()`` (every option, the calibrated noise, the radii actually used).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpverify.agents.envs.linear_mdp import LinearMDP, LinearMixtureMDP
from dpverify.agents.ldp_ucrl_vtr import LdpUcrlVtr, LdpUcrlVtrConfig
from dpverify.agents.luyo import LuyoAgent, LuyoConfig
from dpverify.agents.ngo import NgoAgent, NgoConfig
from dpverify.agents.runner import AGENTS, register_agent


def make_luyo(mdp: LinearMDP, num_episodes: int, rng: np.random.Generator, **options: Any) -> LuyoAgent:
    """Runner factory: the Luyo et al. 2021 agent for K = ``num_episodes``."""
    return LuyoAgent(mdp, LuyoConfig(num_episodes, **options), rng)


def make_ngo(mdp: LinearMDP, num_episodes: int, rng: np.random.Generator, **options: Any) -> NgoAgent:
    """Runner factory: the Ngo et al. 2022 agent for K = ``num_episodes``."""
    return NgoAgent(mdp, NgoConfig(num_episodes, **options), rng)


def make_ldp_ucrl_vtr(mdp: LinearMixtureMDP, num_episodes: int, rng: np.random.Generator,
                      **options: Any) -> LdpUcrlVtr:
    """Runner factory: LDP-UCRL-VTR (Liao et al. 2021) for K = ``num_episodes``."""
    return LdpUcrlVtr(mdp, LdpUcrlVtrConfig(num_episodes, **options), rng)


if "luyo" not in AGENTS:
    register_agent("luyo", make_luyo, "linear",
                   "Luyo et al. 2021 private LSVI-UCB (binary-tree mechanism, fixed batches; options epsilon, "
                   "delta, batch_length, *_multiplier)")
if "ngo" not in AGENTS:
    register_agent("ngo", make_ngo, "linear",
                   "Ngo et al. 2022 private LSVI-UCB (adaptive batching on determinant doubling; options "
                   "epsilon, delta, max_updates, *_multiplier)")
if "ldp-ucrl-vtr" not in AGENTS:
    register_agent("ldp-ucrl-vtr", make_ldp_ucrl_vtr, "mixture",
                   "LDP-UCRL-VTR (Liao et al. 2021; users privatise their own statistics; options epsilon, delta, "
                   "*_multiplier)")
