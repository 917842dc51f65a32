"""The full dyadic tree with Honaker's estimator: running sums from every complete node, combined optimally.

The binary mechanism of :class:`dpverify.agents.tree_lsvi.tree_lsvi.BinaryTreeSum` (Chan, Shi & Song 2011) releases one
node per episode — (k − lowbit(k), k] — so each prefix is the sum of popcount(k) independent noisy nodes and
nothing else is known about it. The *full* dyadic tree releases every node (j·2^l, (j+1)·2^l] once it is
complete, at episode (j+1)·2^l: at episode k, the nodes of levels 0..v(k) ending at k (v(k) = trailing
zeros of k). A user still lies in one node per level, so with the same noise per node the privacy cost is
the binary mechanism's (⌊log₂K⌋ + 1 releases per user and stage; ledger pattern
:class:`dpverify.ledger.DyadicNode`), and now every internal node has two estimates: its own noisy release and
the sum of its children's.

Honaker 2015 ("Efficient use of differentially private binary trees", TPDP) combines them by inverse-variance
weighting. Bottom up, with y_v the noisy release of node v, σ² its noise variance per coordinate, and the
estimate of a leaf its release:

    est_v = r_l · y_v + (1 − r_l) · (est_left + est_right),   r_l = 2^l / (2^(l+1) − 1)

(r_l is also Var(est_v)/σ²: r_0 = 1 and r_l = 1/(1 + 1/(2 r_(l−1))), whose solution is the closed form). The
prefix over users 1..k is the sum of the estimates of the maximal dyadic intervals of [1, k] (one per set bit
l of k, each a complete subtree), so its noise variance is σ² · Σ_(bits l of k) r_l instead of σ² · popcount(k)
— r_l falls from 1 to 1/2, so up to half the variance. Every node released by episode k lies inside one of
those subtrees and the subtrees' noises are independent, so the bottom-up estimate of each subtree is the
best linear unbiased estimate given everything released by then (Honaker's top-down pass needs later releases
and does not apply to a running sum). The estimates are post-processing of published values: no privacy cost.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpverify import _validate
from dpverify.errors import InvalidParameterError
from dpverify.ledger import DyadicNode
from dpverify.mechanisms import Mechanism

from .billboard import Billboard, stages


def honaker_variance_ratios(levels: int) -> np.ndarray:
    """r_l = 2^l / (2^(l+1) − 1) for l = 0..levels−1: the variance of the bottom-up estimate of a level-l node,
    in units of one release's noise variance (module docstring)."""
    l = np.arange(_validate.integer("levels", levels, minimum=1), dtype=float)
    return 2.0**l / (2.0 ** (l + 1) - 1.0)


def prefix_variance_factors(episodes: int) -> np.ndarray:
    """For n = 0..K−1: Σ over the set bits l of n of r_l — the noise variance of the estimated prefix over users
    1..n (read at the start of episode n + 1), in units of one release's noise variance."""
    K = _validate.integer("episodes", episodes, minimum=1)
    n = np.arange(K, dtype=np.int64)
    ratios = honaker_variance_ratios(max(1, (K - 1).bit_length()))
    factors = np.zeros(K)
    for level, r in enumerate(ratios):
        factors += r * ((n >> level) & 1)
    return factors


def max_prefix_variance_factor(episodes: int) -> float:
    """The worst case over episodes k ≤ K of :func:`prefix_variance_factors`, at least 1 (the binary
    mechanism's counterpart is :func:`dpverify.agents.dp_lsvi_ucb_pp.tree.max_prefix_nodes`)."""
    return max(1.0, float(prefix_variance_factors(episodes).max()))


def level_family(family: str, level: int) -> str:
    """The ledger family of the level-``level`` nodes of ``family``."""
    return f"{family}_l{level}"


class DyadicTreeSum:
    """A running sum of per-user terms, per stage, through the full dyadic tree and Honaker's estimator.

    At the k-th call of :meth:`add` (user k) the nodes of every level l with 2^l | k that end at k are formed
    from raw sums and published for every stage through ``billboard.publish_block`` (stages 1..H of
    ``level_family(family, l)`` by ``mechanisms[l]``, users ``DyadicNode(l)``) with fresh noise; :attr:`prefix`
    is then Honaker's estimate of the
    sum over users 1..k (module docstring). Raw sums never leave this object.

    Args:
        mechanisms: one per level 0..⌊log₂K⌋ (the calibration's mechanism of each level's family).
        shape: shape of one stage's term (e.g. (d, d) or (d·S,)).
        max_users: K.
    """

    def __init__(self, billboard: Billboard, family: str, mechanisms: Sequence[Mechanism], horizon: int,
                 shape: tuple[int, ...], max_users: int, rng: np.random.Generator) -> None:
        self.max_users = _validate.integer("max_users", max_users, minimum=1)
        self.levels = self.max_users.bit_length()
        if len(mechanisms) != self.levels:
            raise InvalidParameterError("mechanisms", f"must give one mechanism per level ({self.levels})",
                                        len(mechanisms))
        self.billboard, self.family, self.rng = billboard, family, rng
        self.mechanisms = tuple(mechanisms)
        self.families = tuple(level_family(family, level) for level in range(self.levels))
        self.patterns = tuple(DyadicNode(level) for level in range(self.levels))
        self.ratios = honaker_variance_ratios(self.levels)
        self.horizon = horizon
        # The last complete node of each level that is a left child (its sibling not yet complete): raw sum and
        # estimate. The set bits of k index exactly these nodes, the maximal dyadic intervals of [1, k].
        self._raw = np.zeros((self.levels, horizon, *shape))
        self._estimate = np.zeros((self.levels, horizon, *shape))
        self.prefix = np.zeros((horizon, *shape))
        self.count = 0

    def _publish(self, level: int, episode: int, node: np.ndarray) -> np.ndarray:
        labels = stages(self.families[level], self.mechanisms[level], self.horizon)
        return np.asarray(self.billboard.publish_block(episode, labels, node, self.patterns[level], self.rng))

    def add(self, terms: np.ndarray | None) -> None:
        """Add user k's terms (shape (H, *shape)) and publish every node ending at k; None is an empty slot (the
        nodes are still published on schedule, with nothing of slot k in them)."""
        k = self.count + 1
        if k > self.max_users:
            raise InvalidParameterError("episodes", f"must be <= {self.max_users} (the calibrated K)", k)
        raw = np.zeros_like(self.prefix) if terms is None else np.asarray(terms, dtype=float)
        level = 0
        estimate = self._publish(0, k, raw)
        while not (k >> level) & 1:  # the level-l node ending at k is a right child: its parent ends at k too
            children = self._estimate[level] + estimate
            raw = self._raw[level] + raw
            self._raw[level] = 0.0
            self._estimate[level] = 0.0
            level += 1
            r = self.ratios[level]
            estimate = r * self._publish(level, k, raw) + (1.0 - r) * children
        self._raw[level] = raw
        self._estimate[level] = estimate
        bits = [lv for lv in range(self.levels) if (k >> lv) & 1]
        self.prefix = self._estimate[bits].sum(axis=0)
        self.count = k


__all__ = [
    "DyadicTreeSum",
    "honaker_variance_ratios",
    "level_family",
    "max_prefix_variance_factor",
    "prefix_variance_factors",
]
