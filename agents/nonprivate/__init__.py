"""The non-private agents, the counterparts the private agents are compared with.

LSVI-UCB (:mod:`.lsvi_ucb`, Jin et al. 2020), LSVI-UCB++ (:mod:`.lsvi_ucb_pp`, He et al. 2023) and
UCRL-VTR (:mod:`.ucrl_vtr`, Ayoub et al. 2020).
"""
