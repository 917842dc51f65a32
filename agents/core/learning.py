"""Did an agent learn from its users? Its regret against the control that could fake it.

A private agent's regret can fall for reasons that need no user data: the noise alone can switch it to a
policy that is good on the known rewards, or its exploration bonus can keep it on one fixed policy. The
control is the same agent, with the same seeds and options, given **no user data**: every episode it plans
and deploys its policy as usual, and then its user slot is empty (``end_episode(None)``, the add/remove-one
"empty slot" of :mod:`dpverify.agents.core.tapes`). Its regret is exact like the agent's (the deployed policy
evaluated by backward induction), so the two runs differ only in the data.

Two data-free policies frame the comparison, both with exact regret per episode: the **known-reward greedy
policy** (in each stage and state, the action of largest known reward; the policy an agent reaches with no
data when its noise or bonus leaves the rewards to decide) and the **uniformly random policy**.

Beating the control says the data moved the agent; it does not say the agent learned more than a policy
that needs no data. So the comparison also says whether the agent's regret is below the known-reward
greedy policy's (the same one-sided test against that constant): an agent whose data only lead it to the
data-free greedy policy "learned from users" in the first sense and not in the second.

The statistic is the regret per episode over the last :data:`LAST_FRACTION` of the episodes (after the
agent has had most of its users), per seed. "Learned from users" means the agent's is below its control's
by a one-sided paired t-test over the shared seeds (the per-seed differences; Student 1908) at level
:data:`LEVEL`. With one seed, or differences that are all equal, the test is exact in the obvious way: equal
zero differences are "no", a constant negative one is "yes" only with at least two seeds; one seed cannot tell.
Beside the t-test the comparison reports the exact paired sign-flip p-value (:func:`exact_sign_flip_p_value`,
all 2ⁿ sign assignments of the n seeds' differences), which assumes no normality.

One comparison answers one question. A search for K* (the smallest K of a grid at which the agent learns)
asks one per grid step, and testing each at :data:`LEVEL` lets the chance of a false "learned" grow with the
steps tested; :func:`holm_first_step` takes K* with Holm's correction over the whole grid
(:func:`holm_adjusted`), which keeps the family-wise error of the claim at :data:`LEVEL`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpverify.errors import InvalidParameterError

from . import planning
from .planning import DeterministicPolicyEvaluator

#: The share of the episodes (the last ones) whose regret per episode the comparison uses.
LAST_FRACTION = 0.2
#: The one-sided level of the paired test.
LEVEL = 0.05
#: Most seeds the exact sign-flip test enumerates (2ⁿ sign assignments).
MAX_EXACT_SEEDS = 20
#: Relative size below which a paired difference is rounding, not a difference (:func:`paired_p_value`).
ROUNDING = 1e-9


def last_regret_per_episode(regret: np.ndarray, fraction: float = LAST_FRACTION) -> np.ndarray:
    """Per seed (rows of ``regret``, seeds × K): the mean regret per episode over the last ``fraction`` of K."""
    regret = np.atleast_2d(np.asarray(regret, dtype=float))
    tail = max(1, int(math.ceil(fraction * regret.shape[1])))
    return regret[:, -tail:].mean(axis=1)


def known_reward_greedy_policy(mdp: Any) -> np.ndarray:
    """The (H, S) policy that takes, in each stage and state, the action of largest known reward (the lowest
    index among ties)."""
    return np.argmax(np.asarray(mdp.rewards, dtype=float), axis=-1).astype(np.int64)


def known_reward_greedy_regret(mdp: Any) -> float:
    """Exact per-episode regret of :func:`known_reward_greedy_policy`; for an environment whose rewards are what the
    agent learns (``mdp.rewards_known`` False: a bandit, :mod:`dpverify.agents.envs.bandit`) no policy knows them
    without data, and the uniformly random policy's regret stands in."""
    if not getattr(mdp, "rewards_known", True):
        return uniform_policy_regret(mdp)
    return float(DeterministicPolicyEvaluator(mdp).regret(known_reward_greedy_policy(mdp)))


def uniform_policy_regret(mdp: Any) -> float:
    """Exact per-episode regret of the policy that picks actions uniformly at random."""

    uniform = np.full((mdp.horizon, mdp.num_states, mdp.num_actions), 1.0 / mdp.num_actions)
    return float(planning.regret(mdp, uniform))


@dataclass(frozen=True)
class LearningComparison:
    """An agent's regret against its no-data control over shared seeds (module docstring).

    ``agent_last``/``control_last``: per seed, the regret per episode over the last :data:`LAST_FRACTION` of
    the episodes; ``p_value``: one-sided paired t-test that the agent's is lower (None with one seed);
    ``greedy`` and ``uniform``: the exact per-episode regret of the two data-free policies; ``exact_p_value``:
    the exact paired sign-flip p-value (:func:`exact_sign_flip_p_value`), reported beside the t-test, which
    decides (with few seeds the exact test cannot go below 2⁻ⁿ).
    """

    agent_last: tuple[float, ...]
    control_last: tuple[float, ...]
    p_value: float | None
    greedy: float
    uniform: float
    level: float = LEVEL
    greedy_p_value: float | None = None
    exact_p_value: float | None = None

    def __post_init__(self) -> None:
        if len(self.agent_last) != len(self.control_last) or not self.agent_last:
            raise InvalidParameterError("control_last", "must have one value per seed of the agent's",
                                        len(self.control_last))
        for name in ("p_value", "greedy_p_value", "exact_p_value"):
            value = getattr(self, name)
            if value is not None and not 0.0 <= value <= 1.0:
                raise InvalidParameterError(name, "must lie in [0, 1]", value)

    @property
    def seeds(self) -> int:
        return len(self.agent_last)

    @property
    def learned(self) -> bool | None:
        """True/False by the paired test; None when it cannot tell (one seed)."""
        return None if self.p_value is None else self.p_value < self.level

    @property
    def beats_greedy(self) -> bool | None:
        """Whether the agent's regret is below the known-reward greedy policy's (None: one seed)."""
        return None if self.greedy_p_value is None else self.greedy_p_value < self.level

    def _stat(self, values: tuple[float, ...]) -> str:
        sd = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
        return f"{float(np.mean(values)):.4g} ± {sd:.2g}"

    def line(self) -> str:
        """One line: "learned from users: yes/no/cannot tell (...)"."""
        answer = {True: "yes", False: "no", None: "cannot tell"}[self.learned]
        test = ("one seed: no test" if self.p_value is None
                else f"one-sided paired t-test over {self.seeds} seeds, p = {self.p_value:.2g}"
                + ("" if self.exact_p_value is None else f"; exact sign-flip p = {self.exact_p_value:.2g}"))
        greedy = {True: "below", False: "not below", None: "cannot tell against"}[self.beats_greedy]
        return (f"learned from users: {answer} (regret per episode over the last {LAST_FRACTION:.0%} of episodes: "
                f"{self._stat(self.agent_last)} with its users vs {self._stat(self.control_last)} with no user data; "
                f"{test}); {greedy} the data-free known-reward greedy policy's {self.greedy:.4g} "
                f"(uniformly random {self.uniform:.4g})")

    def to_dict(self) -> dict[str, Any]:
        return {"learned": self.learned, "p_value": self.p_value, "level": self.level, "seeds": self.seeds,
                "beats_known_reward_greedy": self.beats_greedy, "greedy_p_value": self.greedy_p_value,
                "exact_p_value": self.exact_p_value,
                "agent_last_per_episode": list(self.agent_last), "control_last_per_episode": list(self.control_last),
                "known_reward_greedy_per_episode": self.greedy, "uniform_per_episode": self.uniform,
                "last_fraction": LAST_FRACTION}


def paired_p_value(agent: np.ndarray, control: np.ndarray) -> float | None:
    """One-sided p-value that ``agent`` < ``control`` (paired by seed); None with one seed (module docstring)."""
    differences = np.asarray(agent, dtype=float) - np.asarray(control, dtype=float)
    if not np.all(np.isfinite(differences)):
        raise InvalidParameterError("regret", "must be finite to be compared", "NaN or infinite")
    if len(differences) < 2:
        return None
    # Regrets are sums of thousands of per-episode terms, so equal runs can differ by rounding: differences
    # within ROUNDING of the values' scale count as exactly zero (never as a gain), and a spread within it as none.
    tolerance = ROUNDING * max(1.0, float(np.max(np.abs(agent))), float(np.max(np.abs(control))))
    if abs(float(np.mean(differences))) <= tolerance:
        return 1.0
    if np.ptp(differences) <= tolerance:  # no spread: the t statistic is ±∞
        return 0.0 if differences[0] < 0 else 1.0
    from scipy import stats

    return float(stats.ttest_1samp(differences, 0.0, alternative="less").pvalue)


def exact_sign_flip_p_value(agent: np.ndarray, control: np.ndarray) -> float | None:
    """Exact one-sided p-value that ``agent`` < ``control`` by the paired sign-flip permutation test (Fisher 1935,
    §21; Good 2005, "Permutation, Parametric and Bootstrap Tests of Hypotheses", §3.6.1): under the null the sign
    of each seed's difference d_i is a fair coin, so p = #{s ∈ {±1}ⁿ : Σ s_i|d_i| ≤ Σ d_i} / 2ⁿ, over all 2ⁿ
    assignments (n ≤ :data:`MAX_EXACT_SEEDS`). No normality is assumed; with n seeds p ≥ 2⁻ⁿ (5 seeds: 1/32).
    Differences within :data:`ROUNDING` of the values' scale count as zero, as in :func:`paired_p_value`; None
    with one seed."""
    differences = np.asarray(agent, dtype=float) - np.asarray(control, dtype=float)
    if not np.all(np.isfinite(differences)):
        raise InvalidParameterError("regret", "must be finite to be compared", "NaN or infinite")
    n = len(differences)
    if n < 2:
        return None
    if n > MAX_EXACT_SEEDS:
        raise InvalidParameterError("seeds", f"must be at most {MAX_EXACT_SEEDS} for the exact test (2^n sums)", n)
    tolerance = ROUNDING * max(1.0, float(np.max(np.abs(agent))), float(np.max(np.abs(control))))
    magnitudes = np.where(np.abs(differences) <= tolerance, 0.0, np.abs(differences))
    observed = float(np.sum(np.where(magnitudes == 0.0, 0.0, differences)))
    signs = 1.0 - 2.0 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)  # every assignment, one per row
    sums = signs @ magnitudes
    slack = tolerance * n  # a sum equal to the observed one up to rounding counts as at least as extreme
    return float(np.count_nonzero(sums <= observed + slack)) / 2**n


def holm_adjusted(p_values: list[float | None] | tuple[float | None, ...],
                  family_size: int | None = None) -> list[float | None]:
    """Holm's step-down adjusted p-values (Holm 1979, "A simple sequentially rejective multiple test procedure",
    Scand. J. Statist. 6): with the m p-values sorted, p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)); rejecting
    where p̃ < α controls the family-wise error at α. ``family_size`` m may exceed the p-values given: the
    hypotheses of the family not tested (a grid's steps a search did not reach) count as p = 1, which only
    makes the adjustment larger. A None (no test) stays None and counts as p = 1."""
    m = len(p_values) if family_size is None else int(family_size)
    if m < len(p_values):
        raise InvalidParameterError("family_size", "must be at least the number of p-values", family_size)
    for p in p_values:
        if p is not None and not 0.0 <= p <= 1.0:
            raise InvalidParameterError("p_values", "must lie in [0, 1]", p)
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def holm_first_step(p_values: list[float | None] | tuple[float | None, ...], family_size: int,
                    level: float = LEVEL) -> int | None:
    """The index of the first step of a grid whose Holm-adjusted p-value (:func:`holm_adjusted`, the whole grid of
    ``family_size`` steps as the family) is below ``level``, or None: the K* of a search over a grid with the
    family-wise error of "learned at K*" controlled at ``level``."""
    adjusted = holm_adjusted(p_values, family_size)
    return next((i for i, p in enumerate(adjusted) if p is not None and p < level), None)


def compare_learning(agent_regret: np.ndarray, control_regret: np.ndarray, mdp: Any,
                     level: float = LEVEL) -> LearningComparison:
    """The comparison of an agent's per-episode regret (seeds × K) with its no-data control's (same seeds)."""
    agent_regret, control_regret = np.atleast_2d(agent_regret), np.atleast_2d(control_regret)
    if agent_regret.shape != control_regret.shape:
        raise InvalidParameterError("control_regret", f"must have the agent's shape {agent_regret.shape}",
                                    control_regret.shape)
    a, c = last_regret_per_episode(agent_regret), last_regret_per_episode(control_regret)
    greedy = known_reward_greedy_regret(mdp)
    return LearningComparison(tuple(float(x) for x in a), tuple(float(x) for x in c), paired_p_value(a, c),
                              greedy, uniform_policy_regret(mdp), level,
                              paired_p_value(a, np.full_like(a, greedy)),
                              exact_sign_flip_p_value(a, c) if len(a) <= MAX_EXACT_SEEDS else None)
