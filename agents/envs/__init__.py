"""Finite-state linear MDPs and linear mixture MDPs with exact transition and reward tensors.

See :mod:`agents.envs.linear_mdp` for the two model classes, :mod:`agents.envs.min2021` and
:mod:`agents.envs.zhou2021_mixture` for the benchmark instances, and :mod:`agents.envs.random_mdps` for
random valid instances used in property tests.
"""

from agents.envs.linear_mdp import FiniteMDP, LinearMDP, LinearMixtureMDP
from agents.envs.min2021 import min2021_mdp
from agents.envs.random_mdps import random_linear_mdp, random_linear_mixture_mdp
from agents.envs.zhou2021_mixture import zhou2021_mixture_mdp

__all__ = [
    "FiniteMDP",
    "LinearMDP",
    "LinearMixtureMDP",
    "min2021_mdp",
    "random_linear_mdp",
    "random_linear_mixture_mdp",
    "zhou2021_mixture_mdp",
]
