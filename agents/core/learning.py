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
    ``greedy`` and ``uniform``: the exact per-episode regret of the two data-free policies.
    """

    agent_last: tuple[float, ...]
    control_last: tuple[float, ...]
    p_value: float | None
    greedy: float
    uniform: float
    level: float = LEVEL
    greedy_p_value: float | None = None

    def __post_init__(self) -> None:
        if len(self.agent_last) != len(self.control_last) or not self.agent_last:
            raise InvalidParameterError("control_last", "must have one value per seed of the agent's",
                                        len(self.control_last))
        for name in ("p_value", "greedy_p_value"):
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
                else f"one-sided paired t-test over {self.seeds} seeds, p = {self.p_value:.2g}")
        greedy = {True: "below", False: "not below", None: "cannot tell against"}[self.beats_greedy]
        return (f"learned from users: {answer} (regret per episode over the last {LAST_FRACTION:.0%} of episodes: "
                f"{self._stat(self.agent_last)} with its users vs {self._stat(self.control_last)} with no user data; "
                f"{test}); {greedy} the data-free known-reward greedy policy's {self.greedy:.4g} "
                f"(uniformly random {self.uniform:.4g})")

    def to_dict(self) -> dict[str, Any]:
        return {"learned": self.learned, "p_value": self.p_value, "level": self.level, "seeds": self.seeds,
                "beats_known_reward_greedy": self.beats_greedy, "greedy_p_value": self.greedy_p_value,
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
                              paired_p_value(a, np.full_like(a, greedy)))
