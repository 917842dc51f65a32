"""Finite-state linear MDPs and linear mixture MDPs with exact transition and reward tensors.

See :mod:`dpverify.agents.envs.linear_mdp` for the two model classes, :mod:`dpverify.agents.envs.min2021` and
:mod:`dpverify.agents.envs.zhou2021_mixture` for the benchmark instances, and
:mod:`dpverify.agents.envs.random_mdps` for
random valid instances used in property tests; :mod:`dpverify.agents.envs.bandit` and
:mod:`dpverify.agents.envs.bandit_instances` for bandits (one round per user, an episode of horizon 1).
"""

from .bandit import AuditBandit, Bandit, audit_bandit
from .bandit_instances import armed_bandit, linear_bandit
from .linear_mdp import FiniteMDP, LinearMDP, LinearMixtureMDP
from .min2021 import min2021_mdp
from .random_mdps import random_linear_mdp, random_linear_mixture_mdp
from .zhou2021_mixture import zhou2021_mixture_mdp

__all__ = [
    "AuditBandit",
    "Bandit",
    "FiniteMDP",
    "LinearMDP",
    "LinearMixtureMDP",
    "armed_bandit",
    "audit_bandit",
    "linear_bandit",
    "min2021_mdp",
    "random_linear_mdp",
    "random_linear_mixture_mdp",
    "zhou2021_mixture_mdp",
]
