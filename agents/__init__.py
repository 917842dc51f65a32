"""Reference reinforcement-learning environments and agents for dpverify.

* :mod:`dpverify.agents.envs` — finite linear MDPs and linear mixture MDPs (Min et al. 2021, Zhou et al. 2021,
  random instances), validated on construction.
* :mod:`dpverify.agents.planning` — exact planning: V*, the set of optimal actions, the exact value of any
  deployed policy, exact per-episode regret.
* :mod:`dpverify.agents.lsvi_ucb`, :mod:`dpverify.agents.lsvi_ucb_pp`, :mod:`dpverify.agents.ucrl_vtr` — non-private agents, one
  readable module per algorithm; :mod:`dpverify.agents.statistics` holds the sufficient statistics that private
  variants replace with noisy releases.
* :mod:`dpverify.agents.runner` — the experiment runner behind ``dpverify run`` and its registries.
"""
