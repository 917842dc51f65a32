"""The zoo, ``dpverify.audits``: planted privacy bugs in the bandit agents, each a one-rule change of its agent.

Each bug is a variant of the agent's rule (:mod:`dpverify.agents.bandits`), so one class gives both the
reference agent (a factory path ``dpverify.audits.bandit_zoo:<Class>.from_options`` that ``dpverify verify``
and the white-box checks run, keeping the agent's registered name and card) and its batched twin (for the
two-world audits of :mod:`dpverify.audits.agent_zoo`). Every variant keeps the claim, the calibration and the
ledger of the correct agent, except where the bug is in what it records:

* ``half-noise`` — every release's noise calibrated for half its true sensitivity, and recorded so (sensitivity
  Δ/2, noise s/2: the ledger still meets the claim): the true μ is twice the claimed one.
* ``tree-noise-reused`` — the tree counter draws its noise once and adds it to every node (the agent adds it
  itself, from the billboard's noise source): the difference of two releases is noise-free.
* ``wrong-node-sets`` — the counter releases the running sum (0, t] at round t, recorded as the binary-tree node
  (t − lowbit(t), t]: every user is read by every later release, the ledger charges ⌊log₂K⌋ + 1 of them.
* ``raw-statistics`` — the released counters are correct, but the rule plans from the raw sums (a raw reward
  count in DP-UCB, the raw Gram matrix and target in JDP-LinUCB): the billboard is intact, the actions given
  to later users read user data outside it.
* ``unnoised-target`` (LDP-LinUCB) — the users send their x·r message with its noise numerically absent
  (σ·10⁻¹², recorded: the ledger shows it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from dpverify.agents.bandits.counters import TREE, TreeCounter
from dpverify.agents.bandits.dp_ucb import DpUcb, DpUcbRule
from dpverify.agents.bandits.jdp_linucb import JdpLinUcb, JdpLinUcbRule
from dpverify.agents.bandits.ldp_linucb import LdpLinUcb, LdpLinUcbRule
from dpverify.agents.bandits.rounds import BatchedBandit, PrivateBandit, Round
from dpverify.mechanisms import Mechanism

_M = TypeVar("_M", bound=Mechanism)

#: The noise scale of an "absent" noise: 10⁻¹² of the calibrated one (a mechanism needs a positive scale).
ABSENT = 1e-12


def halved(mechanism: _M) -> _M:
    """The mechanism recorded with half the sensitivity and half the noise (same μ, same ledger)."""
    return type(mechanism).build(0.5 * mechanism.sensitivity_value, 0.5 * mechanism.noise_scale, mechanism.dim,
                                 mechanism.relation)


# ---- counters ----------------------------------------------------------------------------------------------


class ReusedNoiseCounter(TreeCounter):
    """Bug: one noise draw for the whole counter, added to every node."""

    def release(self, t: int, level: int, node: np.ndarray) -> np.ndarray:
        if not hasattr(self, "drawn"):
            self.drawn = self.channel.own_noise(self.mechanism)
        return np.asarray(self.channel.release_noised(t, self.family, self.mechanism, TREE, node + self.drawn))


class RunningSumCounter(TreeCounter):
    """Bug: the release of round t is the running sum over rounds 1..t, recorded as the node (t − lowbit(t), t]."""

    def add(self, terms: np.ndarray) -> None:
        t = self.count + 1
        self.total = getattr(self, "total", 0.0) + terms
        self.prefix = self.release(t, 0, self.total)
        self.count = t


# ---- JDP-LinUCB --------------------------------------------------------------------------------------------


class JdpHalfNoiseRule(JdpLinUcbRule):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tree.mechanism = halved(self.tree.mechanism)


class JdpReusedNoiseRule(JdpLinUcbRule):
    counter_class = ReusedNoiseCounter


class JdpWrongNodesRule(JdpLinUcbRule):
    counter_class = RunningSumCounter


class JdpRawStatisticsRule(JdpLinUcbRule):
    """Plans from the raw Σ z zᵀ (the released tree is untouched)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.raw = np.zeros((self.n, self.dim + 1, self.dim + 1))

    def published(self) -> np.ndarray:
        return self.raw

    def learn(self, played: Round | None) -> None:
        terms = self.round_terms(played)
        self.raw += terms
        self.tree.add(terms)
        self.round += 1


class JdpLinUcbHalfNoise(JdpLinUcb):
    rule_class = JdpHalfNoiseRule


class JdpLinUcbReusedNoise(JdpLinUcb):
    rule_class = JdpReusedNoiseRule


class JdpLinUcbWrongNodes(JdpLinUcb):
    rule_class = JdpWrongNodesRule


class JdpLinUcbRawStatistics(JdpLinUcb):
    rule_class = JdpRawStatisticsRule


# ---- DP-UCB ------------------------------------------------------------------------------------------------


class DpUcbHalfNoiseRule(DpUcbRule):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.counter.mechanism = halved(self.counter.mechanism)


class DpUcbReusedNoiseRule(DpUcbRule):
    counter_class = ReusedNoiseCounter


class DpUcbWrongNodesRule(DpUcbRule):
    counter_class = RunningSumCounter


class DpUcbRawCountRule(DpUcbRule):
    """Reads the raw reward sums (the released counters are untouched)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.raw_sums = np.zeros((self.n, self.num_arms))

    def published_sums(self) -> np.ndarray:
        return self.raw_sums

    def learn(self, played: Round | None) -> None:
        terms = self.reward_terms(played)
        self.raw_sums += terms
        self.counter.add(terms)
        self.round += 1


class DpUcbHalfNoise(DpUcb):
    rule_class = DpUcbHalfNoiseRule


class DpUcbReusedNoise(DpUcb):
    rule_class = DpUcbReusedNoiseRule


class DpUcbWrongNodes(DpUcb):
    rule_class = DpUcbWrongNodesRule


class DpUcbRawCount(DpUcb):
    rule_class = DpUcbRawCountRule


# ---- LDP-LinUCB --------------------------------------------------------------------------------------------


class LdpHalfNoiseRule(LdpLinUcbRule):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gram_mechanism = halved(self.gram_mechanism)
        self.target_mechanism = halved(self.target_mechanism)


class LdpUnnoisedTargetRule(LdpLinUcbRule):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        m = self.target_mechanism
        self.target_mechanism = type(m).build(m.sensitivity_value, ABSENT * m.noise_scale, m.dim, m.relation)


class LdpLinUcbHalfNoise(LdpLinUcb):
    rule_class = LdpHalfNoiseRule


class LdpLinUcbUnnoisedTarget(LdpLinUcb):
    rule_class = LdpUnnoisedTargetRule


# ---- the batched twins of the variants ---------------------------------------------------------------------


class BatchedJdpLinUcbHalfNoise(BatchedBandit):
    agent_class = JdpLinUcbHalfNoise


class BatchedJdpLinUcbReusedNoise(BatchedBandit):
    agent_class = JdpLinUcbReusedNoise


class BatchedJdpLinUcbWrongNodes(BatchedBandit):
    agent_class = JdpLinUcbWrongNodes


class BatchedJdpLinUcbRawStatistics(BatchedBandit):
    agent_class = JdpLinUcbRawStatistics


class BatchedDpUcbHalfNoise(BatchedBandit):
    agent_class = DpUcbHalfNoise


class BatchedDpUcbReusedNoise(BatchedBandit):
    agent_class = DpUcbReusedNoise


class BatchedDpUcbWrongNodes(BatchedBandit):
    agent_class = DpUcbWrongNodes


class BatchedDpUcbRawCount(BatchedBandit):
    agent_class = DpUcbRawCount


class BatchedLdpLinUcbHalfNoise(BatchedBandit):
    agent_class = LdpLinUcbHalfNoise


class BatchedLdpLinUcbUnnoisedTarget(BatchedBandit):
    agent_class = LdpLinUcbUnnoisedTarget


#: Every planted bandit agent: (agent, bug) → its reference class (a factory path is ``<module>:<Class>.from_options``).
PLANTED: dict[tuple[str, str], type[PrivateBandit]] = {
    ("jdp-linucb", "half-noise"): JdpLinUcbHalfNoise,
    ("jdp-linucb", "tree-noise-reused"): JdpLinUcbReusedNoise,
    ("jdp-linucb", "wrong-node-sets"): JdpLinUcbWrongNodes,
    ("jdp-linucb", "raw-statistics"): JdpLinUcbRawStatistics,
    ("dp-ucb", "half-noise"): DpUcbHalfNoise,
    ("dp-ucb", "tree-noise-reused"): DpUcbReusedNoise,
    ("dp-ucb", "wrong-node-sets"): DpUcbWrongNodes,
    ("dp-ucb", "raw-count"): DpUcbRawCount,
    ("ldp-linucb", "half-noise"): LdpLinUcbHalfNoise,
    ("ldp-linucb", "unnoised-target"): LdpLinUcbUnnoisedTarget,
}

#: The batched twin of each planted agent (the zoo's ``BatchedVariant`` names them).
BATCHED: dict[tuple[str, str], type[BatchedBandit]] = {
    ("jdp-linucb", "half-noise"): BatchedJdpLinUcbHalfNoise,
    ("jdp-linucb", "tree-noise-reused"): BatchedJdpLinUcbReusedNoise,
    ("jdp-linucb", "wrong-node-sets"): BatchedJdpLinUcbWrongNodes,
    ("jdp-linucb", "raw-statistics"): BatchedJdpLinUcbRawStatistics,
    ("dp-ucb", "half-noise"): BatchedDpUcbHalfNoise,
    ("dp-ucb", "tree-noise-reused"): BatchedDpUcbReusedNoise,
    ("dp-ucb", "wrong-node-sets"): BatchedDpUcbWrongNodes,
    ("dp-ucb", "raw-count"): BatchedDpUcbRawCount,
    ("ldp-linucb", "half-noise"): BatchedLdpLinUcbHalfNoise,
    ("ldp-linucb", "unnoised-target"): BatchedLdpLinUcbUnnoisedTarget,
}


@dataclass(frozen=True)
class ContractOutcome:
    """A planted bug (or, with ``bug`` None, the correct agent) under the private-agent contract with its
    white-box checks: the properties that failed (none for a correct agent)."""

    agent: str
    bug: str | None
    failed: tuple[str, ...]

    @property
    def as_expected(self) -> bool:
        return bool(self.failed) == (self.bug is not None)


def contract_outcomes(episodes: int = 30, seed: int = 0) -> list[ContractOutcome]:
    """Every planted bug and every correct bandit agent through :func:`dpverify.testing.check_private_agent` (white-box
    checks included) at K = ``episodes`` on the default instances: each bug must fail a property, no correct agent
    may (about 0.3 s a case)."""
    from dpverify.agents.registry import agent_factory, build_environment
    from dpverify.testing import check_private_agent

    outcomes = []
    for agent, bug in [*((a, None) for a in ("jdp-linucb", "dp-ucb", "ldp-linucb")), *PLANTED]:
        env = build_environment("bernoulli-bandit" if agent == "dp-ucb" else "linear-bandit", episodes)
        factory = agent_factory(agent) if bug is None else PLANTED[(agent, bug)].from_options
        result = check_private_agent(factory, env, num_episodes=episodes, options={"epsilon": 1.0}, seed=seed)
        outcomes.append(ContractOutcome(agent, bug, tuple(p.name for p in result.failures)))
    return outcomes


def factory_path(agent: str, bug: str) -> str:
    """The factory path of a planted agent, for ``dpverify verify --agent`` and the audits."""
    return f"dpverify.audits.bandit_zoo:{PLANTED[(agent, bug)].__name__}.from_options"


__all__ = ["ABSENT", "BATCHED", "PLANTED", "ContractOutcome", "ReusedNoiseCounter", "RunningSumCounter",
           "contract_outcomes", "factory_path", "halved"]
