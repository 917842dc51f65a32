"""Reference reinforcement-learning environments and agents for dpverify, one package per agent family.

* :mod:`dpverify.agents.envs` — finite linear MDPs and linear mixture MDPs (Min et al. 2021, Zhou et al. 2021,
  random instances), validated on construction.
* :mod:`dpverify.agents.core` — what the families share: exact planning (:mod:`~dpverify.agents.core.planning`:
  V*, the set of optimal actions, the exact value of any deployed policy, exact per-episode regret), the
  sufficient statistics (:mod:`~dpverify.agents.core.statistics`), the private-agent protocol
  (:mod:`~dpverify.agents.core.private`: schedule → calibration → billboard → ledger → claim) and the
  billboard (:mod:`~dpverify.agents.core.billboard`), the running-sum counters, the batched twins' randomness
  and the experiment runner behind ``dpverify run`` (:mod:`~dpverify.agents.core.runner`).
* :mod:`dpverify.agents.nonprivate` — non-private agents (LSVI-UCB, LSVI-UCB++, UCRL-VTR), one readable module
  per algorithm.
* :mod:`dpverify.agents.dp_lsvi_ucb_pp`, :mod:`dpverify.agents.tree_lsvi` (Luyo et al. and Ngo et al., who share
  the tree-aggregated layer), :mod:`dpverify.agents.ldp_ucrl_vtr` — private agents, each package its algorithm
  on top of the core, its release schedule and its batched twin.
* :mod:`dpverify.agents.bandits` — bandit agents (LinUCB, UCB1 and the private JDP-LinUCB, LDP-LinUCB and
  DP-UCB), one round per user, each written once with a trial axis (:mod:`dpverify.agents.bandits.rounds`).
* :mod:`dpverify.agents.registry` — the agents and environments known by name.
"""
