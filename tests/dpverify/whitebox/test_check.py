"""check_releases end to end: a reference agent passes with its figures, a fault is reported, executors agree."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.agents.registry import AGENTS
from dpverify.audit.executors import ProcessExecutor
from dpverify.checks import HOLDS, NOT_APPLICABLE
from dpverify.errors import InvalidParameterError
from dpverify.whitebox import CHECK_NAMES, Subject, WhiteBoxPlan, check_releases

MDP = min2021_mdp(horizon=2, num_actions=3)


def subject(name: str = "dp-lsvi-ucb++") -> Subject:
    return Subject(AGENTS[name].factory, MDP, 8, {"epsilon": 1.0}, name=name)


def test_a_reference_agent_passes_every_check_with_its_figures() -> None:
    result = check_releases(subject(), WhiteBoxPlan(8, search_episodes=6, claim_epsilon=1.0))
    assert result.status == "pass" and tuple(c.name for c in result.checks) == CHECK_NAMES, result.summary()
    assert {f.family for f in result.sensitivity} == {"gram", "w_hat", "w_check", "w_bar"}
    assert all(0 <= f.ratio <= 1.0 + 1e-9 for f in result.sensitivity)
    assert max(f.ratio for f in result.sensitivity) > 0.5  # the audit environments realise most of it
    assert result.witnesses and all(w.epsilon_lower <= 1.0 for w in result.witnesses)
    assert any("refused the oversized audit environment" in n for n in result.notes)
    assert result.to_dict()["checks"][0]["status"] == "pass" and "white-box" in result.summary()


def test_the_recorded_run_at_k_is_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpverify.whitebox import check

    fresh = []

    def counted(subject, users, **kwargs):
        if kwargs.get("recorded") is None:
            fresh.append(len(users))
        return run_agent(subject, users, **kwargs)

    run_agent = check.run_agent
    monkeypatch.setattr(check, "run_agent", counted)
    result = check_releases(subject(), WhiteBoxPlan(8, search_episodes=0, claim_epsilon=1.0))
    assert result.status == "pass" and fresh == [8]  # R0; its replays (same seed, the neighbour) reuse it


def test_an_agent_that_raises_leaves_every_check_not_run_with_the_reason() -> None:
    def failing(mdp, num_episodes, rng, /, *, billboard=None, **options):
        agent = AGENTS["luyo"].factory(mdp, num_episodes, rng, billboard=billboard, **options)
        agent.begin_episode = lambda: (_ for _ in ()).throw(ZeroDivisionError("division by zero"))
        return agent

    result = check_releases(Subject(failing, MDP, 4, {"epsilon": 1.0}, name="failing"), WhiteBoxPlan(4, 0))
    assert result.status == "not run" and not result.failures
    assert "raised ZeroDivisionError: division by zero (in begin_episode/end_episode of episode 1)" in \
        result.checks[0].reason


def test_plans_are_validated() -> None:
    with pytest.raises(InvalidParameterError, match="positions"):
        WhiteBoxPlan(4, positions=("second",))
    with pytest.raises(InvalidParameterError, match="level"):
        WhiteBoxPlan(4, level=2.0)


@pytest.mark.slow
def test_local_worker_processes_give_the_same_result() -> None:
    plan = WhiteBoxPlan(8, search_episodes=6, claim_epsilon=1.0)
    serial = check_releases(subject("luyo"), plan)
    with ProcessExecutor(2) as executor:
        pooled = check_releases(subject("luyo"), plan, executor=executor)
    assert [c.reason for c in serial.checks] == [c.reason for c in pooled.checks]
    assert [w.mu for w in serial.witnesses] == [w.mu for w in pooled.witnesses]
    assert np.array_equal([f.ratio for f in serial.sensitivity], [f.ratio for f in pooled.sensitivity])


def _unseeded(draw):  # an agent whose Gram noise gets an extra term from outside the seeds it is given
    def factory(mdp, num_episodes, rng, /, *, billboard=None, **options):
        from dpverify.audits.third_party.self_noised_lsvi import SelfNoisedLsvi, make_agent

        agent = make_agent(mdp, num_episodes, rng, billboard=billboard, **options)
        original = SelfNoisedLsvi.draw.__get__(agent)
        agent.draw = lambda *args: original(*args) + draw()
        return agent

    return factory


def test_an_unreproducible_agent_is_told_whether_numpy_s_global_generator_is_why() -> None:
    from itertools import count

    ticks = count()
    global_rng = Subject(_unseeded(lambda: np.random.normal()), MDP, 4, {"epsilon": 1.0}, name="global")  # noqa: NPY002
    clock = Subject(_unseeded(lambda: 1e-3 * next(ticks)), MDP, 4, {"epsilon": 1.0}, name="clock")
    said_global = check_releases(global_rng, WhiteBoxPlan(4, 0)).checks[0]
    said_clock = check_releases(clock, WhiteBoxPlan(4, 0)).checks[0]
    assert said_global.status == said_clock.status == "not run"
    assert "draws from numpy's global generator" in said_global.reason
    assert "SeededGlobalRng(billboard.noise_source())" in said_global.reason
    assert "global generator" not in said_clock.reason and "does not follow the seeds" in said_clock.reason


def _third_party(target: str) -> Subject:
    from pathlib import Path

    from dpverify.agents.registry import agent_factory
    from dpverify.audits import third_party

    module, _, factory = target.partition(":")
    path = Path(third_party.__file__).parent / f"{module}.py"
    return Subject(agent_factory(f"{path}:{factory}"), min2021_mdp(horizon=3, num_actions=4), 16, {"epsilon": 1.0},
                   name=factory)


def test_wrong_records_whose_correction_meets_the_claim_fail_with_the_claim_holding() -> None:
    """Episode and stage labels swapped: the replays contradict the records, yet corrected — every release
    charged to the users whose data had reached the agent when it was published — they meet the claim. Noise
    calibrated to the swapped records instead (fewer releases than truly read a user) is refuted."""
    plan = WhiteBoxPlan(16, 12, claim_epsilon=1.0)
    swapped = check_releases(_third_party("noisy_lsvi:make_swapped_labels"), plan)["release pattern as recorded"]
    assert swapped.status == "fail" and swapped.claim == HOLDS and "the claim holds" in swapped.reason
    calibrated = check_releases(_third_party("noisy_lsvi:make_swapped_calibrated"), plan)
    assert calibrated["release pattern as recorded"].refutes and "the claim is false" in \
        calibrated["release pattern as recorded"].reason


def test_checks_resting_on_the_noise_held_fixed_do_not_run_when_coins_and_noise_share_a_stream() -> None:
    """Research code drawing its tie-breaks and its noise from numpy's one global stream: the noise check
    cannot hold the coins fixed, so no replay's differences are raw changes — never a refutation for that."""
    result = check_releases(_third_party("closed_loop_ucbvi_adapter:make_agent"), WhiteBoxPlan(12, 8,
                                                                                              claim_epsilon=1.0))
    assert not result.failures, result.summary()
    assert result["noise as recorded"].status == "not run" and "share one stream" in result["noise as recorded"].reason
    for name in ("release pattern as recorded", "sensitivity within the record", "witnessed pairs within the claim"):
        assert result[name].status == "not run" and "held fixed" in result[name].reason


def test_an_agent_that_publishes_nothing_has_its_release_checks_not_applicable() -> None:
    result = check_releases(_third_party("silent:make_agent"), WhiteBoxPlan(16, 8, claim_epsilon=1.0))
    assert result.status == "pass" and result.checks[0].status == "pass"
    assert all(c.status == NOT_APPLICABLE and "nothing was published" in c.reason for c in result.checks[1:])
