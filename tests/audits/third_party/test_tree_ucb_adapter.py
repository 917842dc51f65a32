"""The per-arm tree-counter UCB bandit through its adapter: every node recorded with the rounds it read (the ledger's
pure ε is the calibrated ε when an arm's counter fills all its levels), the white-box noise check refutes the twin
that draws half the recorded scale and the release-pattern check the twin that records the node's range of rounds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpverify.accounting import pure_epsilon
from dpverify.agents.core.base import run_episodes
from dpverify.agents.registry import agent_factory, build_environment
from dpverify.checks import FAIL, PASS
from dpverify.ledger import UserSet
from dpverify.whitebox import Subject, WhiteBoxPlan, check_releases

THIRD_PARTY = Path(__file__).resolve().parents[3] / "audits" / "third_party"


def test_the_adapter_is_thirty_lines_and_the_bandit_does_not_import_dpverify() -> None:
    assert len((THIRD_PARTY / "tree_ucb_adapter.py").read_text(encoding="utf-8").splitlines()) <= 30
    code = (THIRD_PARTY / "tree_ucb_bandit.py").read_text(encoding="utf-8")
    assert not any(line.startswith(("import dpverify", "from dpverify")) for line in code.splitlines())


def run(factory: str, rounds: int, seed: int = 0):
    env = build_environment("bernoulli-bandit", rounds, {"num_arms": 3})
    agent = agent_factory(f"{THIRD_PARTY / 'tree_ucb_adapter.py'}:{factory}")(env, rounds, np.random.default_rng(seed),
                                                                             epsilon=1.0, delta=1e-5)
    run_episodes(env, agent, rounds, np.random.default_rng(seed + 1))
    return agent.ledger


def test_each_node_reads_the_rounds_that_pulled_its_arm_in_its_block_and_the_ledger_is_the_calibrated_epsilon() -> None:
    rounds = 256
    ledger = run("make_agent", rounds)
    levels = rounds.bit_length()
    nodes: dict[tuple[str, int], list[tuple[int, UserSet]]] = {}
    for b in ledger.blocks:
        assert isinstance(b.users, UserSet) and b.n_releases == 1 and b.mechanism.scale == levels / 1.0
        nodes.setdefault((b.family, b.stages[0] - 1), []).append((b.episodes[0], b.users))
    pulled = {family: sorted(k for k, _ in found) for (family, level), found in nodes.items() if level == 0}
    assert sorted(k for ks in pulled.values() for k in ks) == list(range(1, rounds + 1))  # each round one arm
    deepest = 0
    for (family, level), found in nodes.items():
        own = pulled[family]
        blocks = [own[i:i + (1 << level)] for i in range(0, len(own) - (1 << level) + 1, 1 << level)]
        assert sorted(found, key=lambda x: x[0]) == [(block[-1], UserSet(block)) for block in blocks]
        deepest = max(deepest, level + 1)
    epsilon, _ = pure_epsilon(ledger)
    assert epsilon == pytest.approx(deepest / levels) and epsilon <= 1.0 + 1e-12  # each node ε0 = ε/L


@pytest.mark.parametrize(("factory", "caught_by"), [("make_agent", None), ("make_half_scale", "noise as recorded"),
                                                    ("make_round_ranges", "release pattern as recorded")])
def test_the_white_box_checks_refute_each_twin_and_pass_the_counter(factory: str, caught_by: str | None) -> None:
    rounds = 128
    env = build_environment("bernoulli-bandit", rounds, {"num_arms": 3})
    subject = Subject(agent_factory(f"{THIRD_PARTY / 'tree_ucb_adapter.py'}:{factory}"), env, rounds,
                      {"epsilon": 1.0, "delta": 1e-5}, name=factory)
    checks = {c.name: c for c in check_releases(subject, WhiteBoxPlan(rounds, 12, seed=0, claim_epsilon=1.0)).checks}
    failed = sorted(name for name, c in checks.items() if c.status == FAIL)
    assert failed == ([] if caught_by is None else [caught_by]), {n: checks[n].reason for n in failed}
    assert all(checks[name].refutes for name in failed)
    for name in ("noise as recorded", "release pattern as recorded", "sensitivity within the record"):
        assert checks[name].status == (FAIL if name == caught_by else PASS)
