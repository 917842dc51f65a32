"""Reference reinforcement-learning environments and agents for dpverify.

* :mod:`agents.envs` — finite linear MDPs and linear mixture MDPs (Min et al. 2021, Zhou et al. 2021,
  random instances), validated on construction.
* :mod:`agents.planning` — exact planning: V*, the set of optimal actions, the exact value of any
  deployed policy, exact per-episode regret.
* :mod:`agents.lsvi_ucb`, :mod:`agents.lsvi_ucb_pp`, :mod:`agents.ucrl_vtr` — non-private agents, one
  readable module per algorithm; :mod:`agents.statistics` holds the sufficient statistics that private
  variants replace with noisy releases.
* :mod:`agents.runner` — the experiment runner behind ``dpverify run`` and its registries.
"""
