"""LSVI-UCB on tree-aggregated statistics: Luyo et al. 2021 and Ngo et al. 2022.

The layer both share (:mod:`.tree_lsvi`), the two agents (:mod:`.luyo`, :mod:`.ngo`) and their batched
twin (:mod:`.batched`).
"""
