"""The batched LDP-UCRL-VTR is the reference algorithm: identical outputs for identical seeds, trial by trial."""

from __future__ import annotations

import numpy as np
import pytest

from dpverify.agents.core.batching import SPAWNED_STREAMS, BatchRandomness, PerTrialRandomness, run_batch
from dpverify.agents.core.billboard import Billboard
from dpverify.agents.core.tapes import canary_tape, ordinary_tapes, replace, run_on_tapes, tape_arrays
from dpverify.agents.envs.random_mdps import random_linear_mixture_mdp
from dpverify.agents.envs.zhou2021_mixture import zhou2021_mixture_mdp
from dpverify.agents.ldp_ucrl_vtr.batched import BatchedLdpUcrlVtr, build_twin, covers
from dpverify.agents.ldp_ucrl_vtr.ldp_ucrl_vtr import LdpUcrlVtr, LdpUcrlVtrConfig
from dpverify.errors import InvalidParameterError


def _mdp(env: str):
    if env == "zhou2021":
        return zhou2021_mixture_mdp(horizon=3, dim=3)
    return random_linear_mixture_mdp(np.random.default_rng(3), num_states=3, num_actions=2, dim=3, horizon=3)


@pytest.mark.parametrize(("env", "episodes", "options"), [
    ("zhou2021", 8, {"epsilon": 1.0}),
    ("random", 9, {"epsilon": 1e6, "privacy_beta_multiplier": 0.0}),   # data dominate the messages
    ("random", 7, {"epsilon": 3.0, "shift_multiplier": 0.0}),          # unshifted: eigenvalues floored
    ("zhou2021", 8, {"epsilon": 1.0, "sensitivity_model": "staged"}),  # stage by stage; none at H
    ("random", 9, {"epsilon": 1e6, "privacy_beta_multiplier": 0.0, "sensitivity_model": "staged"}),
    ("random", 7, {"epsilon": 3.0, "shift_multiplier": 0.0, "sensitivity_model": "staged"}),
])
def test_identical_to_the_reference_agent_trial_by_trial(env: str, episodes: int, options: dict) -> None:
    mdp = _mdp(env)
    config = LdpUcrlVtrConfig(episodes, **options)
    tapes = replace(ordinary_tapes(mdp, episodes, 1), 2, canary_tape(mdp, "high"))
    seeds = [41, 42, 43, 44]
    batched = BatchedLdpUcrlVtr(mdp, config, PerTrialRandomness([np.random.default_rng(s) for s in seeds],
                                                                SPAWNED_STREAMS))
    initial, table = tape_arrays(tapes)
    policies = run_batch(batched, initial, table)
    corrections = 0
    for i, seed in enumerate(seeds):
        board = Billboard("replace-one", keep_history=True)
        agent = LdpUcrlVtr(mdp, config, np.random.default_rng(seed), billboard=board)
        reference = run_on_tapes(agent, mdp, tapes)
        for k in range(episodes):
            assert np.array_equal(reference[k], policies[k + 1][i])
        assert np.array_equal(agent.q, batched.q[i])
        history = board.history()
        assert [(r.family, r.episode, r.stage) for r in history] == [(f, e, s) for f, e, s, _ in batched.releases]
        for release, (_, _, _, value) in zip(history, batched.releases, strict=True):
            assert np.array_equal(release.value, value[i])  # bit for bit
        corrections += agent.server.psd_corrections
        if options.get("sensitivity_model") == "staged":  # stage H sends nothing: its sums stay 0
            assert {r.stage for r in history} == set(range(1, mdp.horizon))
            assert not agent.server.gram_sums[-1].any() and not batched.gram_sums[i, -1].any()
            assert not agent.server.target_sums[-1].any() and not batched.target_sums[i, -1].any()
    if options.get("shift_multiplier") == 0.0:
        assert corrections > 0  # the floored path ran


def test_the_twin_is_on_the_card() -> None:
    from dpverify.agents.registry import AGENTS

    twin = AGENTS["ldp-ucrl-vtr"].batched
    assert twin is not None and twin.applies({"epsilon": 1.0}) and covers({})
    assert not covers({"relation": "add-remove-one"})
    mdp = _mdp("random")
    agent = build_twin(mdp, 3, {"epsilon": 1.0, "keep_history": True}, BatchRandomness(np.random.default_rng(0), 5),
                       (2,))
    initial, table = tape_arrays(ordinary_tapes(mdp, 3, 0))
    run_batch(agent, initial, table)
    assert {e for _, e, _, _ in agent.releases} == {2} and len(agent.releases) == 2 * mdp.horizon
    with pytest.raises(InvalidParameterError, match="episodes"):
        agent.begin_episode()
    with pytest.raises(InvalidParameterError, match="--agent-option"):
        build_twin(mdp, 3, {"colour": 1}, BatchRandomness(np.random.default_rng(0), 5), None)
