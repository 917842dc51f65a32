"""Private and non-private bandit agents: one round per user, each written once with a trial axis.

:mod:`.rounds` holds what they share (the rule with its trial axis, the reference front-ends, the batched twin,
the release channels), :mod:`.counters` the binary-tree counter. The agents: :mod:`.linucb` (LinUCB,
Abbasi-Yadkori et al. 2011) and :mod:`.ucb` (UCB1, Auer et al. 2002), the non-private counterparts;
:mod:`.jdp_linucb` (Shariff & Sheffet 2018, JDP), :mod:`.ldp_linucb` (Zheng et al. 2020, LDP) and
:mod:`.dp_ucb` (Mishra & Thakurta 2015; Tossou & Dimitrakakis 2016). The environments are in
:mod:`dpverify.agents.envs.bandit`.
"""
