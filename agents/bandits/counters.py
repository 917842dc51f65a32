"""The binary-tree counter of the bandit agents, for n trials at once, and the noise bound of its prefix sums.

:class:`TreeCounter` is the binary mechanism (Dwork, Naor, Pitassi & Rothblum 2010; Chan, Shi & Song 2011;
Shariff & Sheffet 2018 for linear bandits): at round t the node (t − lowbit(t), t] — the sum of the
terms of rounds t − lowbit(t) + 1, …, t — is released once with fresh noise (``users="tree"``, the ledger's
:class:`~dpverify.ledger.BinaryTreeNode`), and the noisy prefix sum over rounds 1..t is the sum of the noisy
nodes of the binary decomposition of t, at most ⌊log₂K⌋ + 1 of them. Each user lies in one node per level,
⌊log₂K⌋ + 1 releases, which is what the per-user ledger counts. Raw partial sums never leave the counter.
The same counter as :class:`dpverify.agents.tree_lsvi.tree_lsvi.BinaryTreeSum`, with a leading trial axis and its
releases made through a channel (:mod:`dpverify.agents.bandits.rounds`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpverify.errors import InvalidParameterError
from dpverify.mechanisms import Mechanism

#: The user pattern of a tree node (:class:`dpverify.ledger.BinaryTreeNode`).
TREE = "tree"


class TreeCounter:
    """A running sum of per-round terms of shape ``shape`` for ``n`` trials through the binary mechanism.

    Args:
        channel: where the nodes are released (:class:`~dpverify.agents.bandits.rounds.BillboardChannel` or
            :class:`~dpverify.agents.bandits.rounds.TrialChannel`).
        family: the ledger family of the nodes.
        mechanism: the calibrated mechanism of a node.
        max_rounds: K (sets the levels, ⌊log₂K⌋ + 1).
    """

    def __init__(self, channel: Any, family: str, mechanism: Mechanism, n: int, shape: tuple[int, ...],
                 max_rounds: int) -> None:
        self.channel, self.family, self.mechanism = channel, family, mechanism
        self.max_rounds = int(max_rounds)
        self.levels = self.max_rounds.bit_length()
        self.raw = np.zeros((self.levels, n, *shape))
        self.noisy = np.zeros((self.levels, n, *shape))
        self.prefix = np.zeros((n, *shape))
        self.count = 0

    def add(self, terms: np.ndarray) -> None:
        """Add round t's terms (n, *shape) and release the node ending at t (t = the rounds added so far)."""
        t = self.count + 1
        if t > self.max_rounds:
            raise InvalidParameterError("episodes", f"must be <= {self.max_rounds} (the calibrated K)", t)
        level = (t & -t).bit_length() - 1
        node = self.raw[:level].sum(axis=0) + terms  # the rounds (t − 2^level, t]
        self.raw[level] = node
        self.raw[:level] = 0.0
        self.noisy[level] = self.release(t, level, node)
        self.noisy[:level] = 0.0
        self.prefix = self.noisy.sum(axis=0)
        self.count = t

    def release(self, t: int, level: int, node: np.ndarray) -> np.ndarray:
        """The node of round t (level ``level``) released through the channel, with fresh noise."""
        return np.asarray(self.channel.release(t, self.family, self.mechanism, TREE, node))


def laplace_sum_bound(scale: float, terms: int, failure_probability: float) -> float:
    """A bound on |Σ_{i≤m} L_i| for m iid Lap(b) holding with probability ≥ 1 − p.

    E e^{λL} = 1/(1 − λ²b²) ≤ e^{2λ²b²} for |λ| ≤ 1/(2b) (1/(1 − x) ≤ e^{2x} on [0, ½]), so the sum is
    sub-exponential with parameters (ν² = 4mb², α = 2b) and P(|Σ| > u) ≤ 2 exp(−min(u²/(8mb²), u/(4b)))
    (Wainwright 2019, Proposition 2.9): u = b·max(√(8m log(2/p)), 4 log(2/p)).
    """
    log_term = math.log(2.0 / failure_probability)
    return scale * max(math.sqrt(8.0 * terms * log_term), 4.0 * log_term)


__all__ = ["TREE", "TreeCounter", "laplace_sum_bound"]
