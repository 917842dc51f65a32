"""The binary-tree counter with a trial axis: its nodes, its prefix sums, and the Laplace noise bound."""

from __future__ import annotations

import numpy as np

from dpverify.agents.bandits.counters import TreeCounter, laplace_sum_bound
from dpverify.mechanisms import LaplaceMechanism


class Recording:
    """A channel that adds a known noise (the round index) and records what it released."""

    def __init__(self) -> None:
        self.released: list[tuple[int, np.ndarray]] = []

    def release(self, t, family, mechanism, users, raw):
        assert users == "tree"
        self.released.append((t, raw.copy()))
        return raw + t


def test_each_node_sums_the_rounds_of_its_dyadic_interval_and_the_prefix_is_their_noisy_sum() -> None:
    K, n = 13, 2
    channel = Recording()
    counter = TreeCounter(channel, "x", LaplaceMechanism(1.0, 1.0, 1), n, (1,), K)
    assert counter.levels == 4
    terms = np.arange(1, K + 1, dtype=float) ** 2  # round s contributes s²
    for t in range(1, K + 1):
        counter.add(np.full((n, 1), terms[t - 1]))
        low = t - (t & -t)
        node_t, node = channel.released[-1]
        assert node_t == t and np.all(node == terms[low:t].sum())
        decomposition = []  # the nodes of the binary decomposition of t, each carrying its noise (its round)
        rest = t
        while rest:
            decomposition.append(rest)
            rest -= rest & -rest
        assert np.all(counter.prefix == terms[:t].sum() + sum(decomposition))


def test_every_round_lies_in_one_node_per_level() -> None:
    K = 64
    members = {s: 0 for s in range(1, K + 1)}
    for t in range(1, K + 1):
        for s in range(t - (t & -t) + 1, t + 1):
            members[s] += 1
    assert max(members.values()) == K.bit_length() and members[1] == K.bit_length()


def test_laplace_sum_bound_holds_at_its_failure_probability() -> None:
    rng = np.random.default_rng(0)
    for m in (1, 10):
        sums = rng.laplace(0.0, 2.0, size=(50_000, m)).sum(axis=1)
        assert np.mean(np.abs(sums) > laplace_sum_bound(2.0, m, 0.01)) < 0.01
