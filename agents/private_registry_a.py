"""Registers DP-LSVI-UCB++ (Sahu 2025, Algorithm 1) with the experiment runner as ``dp-lsvi-ucb++``.

Options (``dpverify run --agent dp-lsvi-ucb++ --agent-option KEY=VALUE``): every field of
:class:`dpverify.agents.dp_lsvi_ucb_pp.DpLsviUcbPlusPlusConfig` except ``num_episodes`` — notably ``epsilon``,
``delta``, ``sensitivity_model`` ("paper" | "derived"), ``conversion`` ("exact" | "cks" |
"bun-steinke") and the multipliers ``beta_hat_multiplier``, ``beta_check_multiplier``,
``beta_bar_multiplier``, ``privacy_radius_multiplier``, ``shift_multiplier``, ``variance_floor_multiplier``,
``disagreement_multiplier``.
``epsilon`` is required (there is no default privacy budget).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpverify.agents.dp_lsvi_ucb_pp import DpLsviUcbPlusPlus, DpLsviUcbPlusPlusConfig
from dpverify.agents.envs.linear_mdp import LinearMDP
from dpverify.agents.runner import AGENTS, register_agent


def make_dp_lsvi_ucb_pp(mdp: LinearMDP, num_episodes: int, rng: np.random.Generator, **options: Any) -> DpLsviUcbPlusPlus:
    """Runner factory: DP-LSVI-UCB++ for K = ``num_episodes`` with the given options."""
    return DpLsviUcbPlusPlus(mdp, DpLsviUcbPlusPlusConfig(num_episodes, **options), rng)


if "dp-lsvi-ucb++" not in AGENTS:
    register_agent("dp-lsvi-ucb++", make_dp_lsvi_ucb_pp, "linear",
                   "DP-LSVI-UCB++ (Sahu 2025, Algorithm 1; fresh noise, GOE Gram; options epsilon, delta, "
                   "sensitivity_model, conversion, *_multiplier)")
