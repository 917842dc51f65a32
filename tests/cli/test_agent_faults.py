"""The agent-loading commands against misbehaving third-party agents: the user's fault is said in
one line, with exit status 2, within its limit, whatever the agent does.

Every planted fault of :mod:`_misbehaving` (raise, ``sys.exit``, ``MemoryError`` or a hang at import, in the
factory or in a protocol method; a malformed policy, claim, factory result or notion) is run through
``dpverify verify``; a hypothesis fuzzer draws faults and options for ``run`` and ``audit agent`` as well.
The correct twin of every fault (``none``) passes ``audit agent`` and ``run``, so the handling is shown to
leave a correct agent alone (``verify`` on correct third-party agents: tests/audits/test_third_party_zoo.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _misbehaving import FAULTS, expected_fragment, write_agent
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz import EXAMPLES, invoke, problems

#: Each example runs a command with the user's code in it (about 1 s): fewer than the argument fuzzer's.
FUZZ_AGENTS = settings(max_examples=max(EXAMPLES // 2, 1), deadline=None,
                       suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

#: Every command here finishes long before this (a hang is cut by --call-timeout 1).
LIMIT = 60
COMMON = ["--episodes", "4", "--call-timeout", "1"]


def verify_argv(agent: str, out: Path) -> list[str]:
    return ["verify", "--agent", agent, "--env", "min2021", "--epsilon", "1", "--delta", "1e-5", *COMMON,
            "--budget", "quick", "--workers", "1"]


def run_argv(agent: str, out: Path) -> list[str]:
    return ["run", "--agent", agent, "--env", "min2021", "--seeds", "2", "--workers", "1", "--no-plot",
            "--out", str(out / "run"), "--force", *COMMON]


def audit_argv(agent: str, out: Path) -> list[str]:
    return ["audit", "agent", "--agent", agent, "--notion", "billboard", "--env", "min2021", "--epsilon", "1",
            "--delta", "1e-5", "--trials", "20", "--workers", "1", *COMMON]


COMMANDS = {"verify": verify_argv, "run": run_argv, "audit agent": audit_argv}


def assert_user_fault(argv: list[str], fault: str) -> None:
    outcome = invoke(argv, LIMIT)
    assert not problems(outcome), (problems(outcome), outcome.stderr)
    assert outcome.code == 2, (fault, outcome.code, outcome.stdout[-800:], outcome.stderr)
    line = outcome.stderr.strip()
    assert "\n" not in line and "Traceback" not in outcome.stderr
    assert expected_fragment(fault) in line, (fault, line)
    assert "REFUTED" not in outcome.stdout + line  # a crash says nothing about privacy


@pytest.mark.parametrize("fault", FAULTS)
def test_verify_says_each_fault_of_the_agent_in_one_line(fault: str, tmp_path: Path) -> None:
    assert_user_fault(verify_argv(write_agent(tmp_path, fault), tmp_path), fault)


def test_the_correct_twin_passes_audit_agent_and_run(tmp_path: Path) -> None:
    agent = write_agent(tmp_path, "none")
    outcome = invoke(audit_argv(agent, tmp_path), LIMIT)
    assert outcome.code == 0 and "no violation found" in outcome.stdout.lower(), (outcome.stdout[-1500:],
                                                                                   outcome.stderr)
    outcome = invoke(run_argv(agent, tmp_path), LIMIT)
    assert outcome.code == 0 and (tmp_path / "run" / "regret.json").is_file(), outcome.stderr


#: The faults each command meets: run reads no claim and no notion; audit agent reads no settings().
MET = {
    "verify": FAULTS,
    "run": tuple(f for f in FAULTS if not f.startswith(("claim:", "notion:")) and not f.endswith(":claimed_guarantee")),
    "audit agent": tuple(f for f in FAULTS if not f.endswith(":settings")),
}


@pytest.mark.slow
@FUZZ_AGENTS
@given(data=st.data())
def test_fuzz_agent_loading_commands_with_misbehaving_agents(data: st.DataObject, tmp_path_factory) -> None:
    command = data.draw(st.sampled_from(sorted(COMMANDS)), label="command")
    fault = data.draw(st.sampled_from(MET[command]), label="fault")
    directory = tmp_path_factory.mktemp("agent")
    assert_user_fault(COMMANDS[command](write_agent(directory, fault), directory), fault)
