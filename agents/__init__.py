"""Reference reinforcement-learning environments and agents for dpverify.

* :mod:`dpverify.agents.envs` — finite linear MDPs and linear mixture MDPs (Min et al. 2021, Zhou et al. 2021,
  random instances), validated on construction.
* :mod:`dpverify.agents.core.planning` — exact planning: V*, the set of optimal actions, the exact value of any
  deployed policy, exact per-episode regret.
* :mod:`dpverify.agents.nonprivate` (:mod:`~dpverify.agents.nonprivate.lsvi_ucb`,
  :mod:`~dpverify.agents.nonprivate.lsvi_ucb_pp`, :mod:`~dpverify.agents.nonprivate.ucrl_vtr`) — non-private
  agents, one readable module per algorithm; :mod:`dpverify.agents.core.statistics` their sufficient statistics.
* :mod:`dpverify.agents.dp_lsvi_ucb_pp`, :mod:`dpverify.agents.luyo`, :mod:`dpverify.agents.ngo`,
  :mod:`dpverify.agents.ldp_ucrl_vtr` — private agents, each only its algorithm on top of
  :mod:`dpverify.agents.core.private` (schedule → calibration → billboard → ledger → claim) and
  :mod:`dpverify.agents.core.billboard`; Luyo et al. and Ngo et al. share :mod:`dpverify.agents.tree_lsvi`.
* :mod:`dpverify.agents.bandits` — bandit agents (LinUCB, UCB1 and the private JDP-LinUCB, LDP-LinUCB and
  DP-UCB), one round per user, each written once with a trial axis (:mod:`dpverify.agents.bandits.rounds`).
* :mod:`dpverify.agents.registry` — the agents and environments known by name.
* :mod:`dpverify.agents.core.runner` — the experiment runner behind ``dpverify run``.
"""
