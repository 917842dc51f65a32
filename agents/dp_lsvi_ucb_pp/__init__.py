"""DP-LSVI-UCB++ (Sahu 2025, Algorithm 1) and its variants.

The agent (:mod:`.dp_lsvi_ucb_pp`), its release schedule (:mod:`.schedule`) and noise constants
(:mod:`.constants`), the running-sum aggregations (:mod:`.tree`), and the batched twins that match the
agent bit for bit (:mod:`.batched`, :mod:`.batched_tree`).
"""
