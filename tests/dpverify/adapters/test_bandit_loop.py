"""ClosedLoopAgent.bandit: a bandit loop (context, arms, pull) over dpverify's rounds, and its no-data control."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

greenlet = pytest.importorskip("greenlet", reason="greenlet, a dependency of dpverify, is not installed here")

from dpverify.adapters import BanditLoopEnv, ClosedLoopAgent, LoopProtocolError  # noqa: E402
from dpverify.agents.core.base import run_episodes  # noqa: E402
from dpverify.agents.envs import min2021_mdp  # noqa: E402
from dpverify.agents.envs.bandit_instances import armed_bandit, linear_bandit  # noqa: E402
from dpverify.audits.third_party_zoo import CONSISTENT, REFUTED, whitebox_outcomes  # noqa: E402
from dpverify.errors import InvalidParameterError  # noqa: E402
from dpverify.usercode import UserCodeError  # noqa: E402

BANDIT = linear_bandit(dim=3, num_arms=4, num_contexts=5)


class Greedy:
    """A loop of the shape bandit code has: per round the context and arms, a pull, the reward; it records them."""

    def __init__(self, rounds: int) -> None:
        self.rounds, self.seen = rounds, []

    def __call__(self, env: BanditLoopEnv) -> None:
        totals = np.zeros(env.num_arms)
        for _ in range(self.rounds):
            context, arms = env.context(), env.arms()
            assert env.context() == context and arms.shape == (env.num_arms, env.dim)
            arm = int(np.argmax(totals))
            reward = env.pull(arm)
            totals[arm] += reward - 0.5
            self.seen.append((context, arms, arm, reward))


def test_a_bandit_loop_sees_its_rounds_contexts_arms_and_rewards() -> None:
    loop = Greedy(30)
    agent = ClosedLoopAgent.bandit(loop, BANDIT)
    regret, _ = run_episodes(BANDIT, agent, 30, np.random.default_rng(0))
    assert len(loop.seen) == 30
    for (context, arms, arm, reward), r in zip(loop.seen, regret, strict=True):
        np.testing.assert_array_equal(arms, BANDIT.features[context])
        assert reward in BANDIT.levels and r == pytest.approx(BANDIT.gaps()[context, arm])


def test_a_loop_without_contexts_may_just_pull() -> None:
    bandit = armed_bandit(num_arms=3)
    pulls: list[float] = []
    agent = ClosedLoopAgent.bandit(lambda env: pulls.extend(env.pull(t % 3) for t in range(6)), bandit)
    run_episodes(bandit, agent, 6, np.random.default_rng(1))
    assert len(pulls) == 6 and set(pulls) <= {0.0, 1.0}


def test_bandit_loop_errors_are_named_in_one_line() -> None:
    short = ClosedLoopAgent.bandit(Greedy(2), BANDIT)
    with pytest.raises(LoopProtocolError, match="ended after 2 episodes"):
        run_episodes(BANDIT, short, 3, np.random.default_rng(0))
    bad_arm = ClosedLoopAgent.bandit(lambda env: env.pull(BANDIT.num_arms), BANDIT)
    with pytest.raises(InvalidParameterError, match=r"act\(\)") as raised:
        run_episodes(BANDIT, bad_arm, 1, np.random.default_rng(0))
    assert "\n" not in str(raised.value)
    with pytest.raises(InvalidParameterError, match="bandit"):
        ClosedLoopAgent.bandit(Greedy(1), min2021_mdp(horizon=3))
    failing = ClosedLoopAgent.bandit(lambda env: env.arms()[99], BANDIT)
    with pytest.raises(UserCodeError, match="its loop"):
        run_episodes(BANDIT, failing, 1, np.random.default_rng(0))


def test_a_closed_loop_has_a_no_data_control() -> None:
    loop = Greedy(40)
    regret, _ = run_episodes(BANDIT, ClosedLoopAgent.bandit(loop, BANDIT), 40, np.random.default_rng(2), users=False)
    contexts = [c for c, *_ in loop.seen]
    np.testing.assert_allclose(regret, BANDIT.gaps()[contexts, [arm for _, _, arm, _ in loop.seen]])
    assert all(reward in BANDIT.levels for *_, reward in loop.seen)


def test_the_laplace_ucb_adapter_is_thirty_lines_and_its_cases_come_out_as_expected() -> None:
    import dpverify.audits.third_party.laplace_ucb_adapter as adapter

    assert len(Path(adapter.__file__).read_text(encoding="utf-8").splitlines()) <= 30
    outcomes = {o.case.name: o for o in whitebox_outcomes(only=["laplace-ucb-bandit", "laplace-ucb-reused-noise"])}
    assert outcomes["laplace-ucb-bandit"].verdict == CONSISTENT and outcomes["laplace-ucb-bandit"].as_expected
    assert outcomes["laplace-ucb-reused-noise"].verdict == REFUTED
    assert outcomes["laplace-ucb-reused-noise"].failed == ("noise as recorded",)


@pytest.mark.slow
@pytest.mark.parametrize(("factory", "expected"), [("make_agent", CONSISTENT), ("make_reused_noise", REFUTED)])
def test_verify_audits_the_bandit_loop_through_the_adapter(factory: str, expected: str) -> None:
    from dpverify.verify import verify

    agent = f"{Path(__file__).resolve().parents[3] / 'audits/third_party/laplace_ucb_adapter.py'}:{factory}"
    report = verify(agent, "bernoulli-bandit", 1.0, 1e-5, budget="quick", env_options={"num_arms": 3})
    assert report.verdict.verdict == expected, report.verdict.reasons
    assert report.utility.learning_line.startswith(("learned from users: yes", "learned from users: no"))
