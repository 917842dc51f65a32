"""The audit-notion registry: what each notion reads, which claims it audits, and a new notion end to end."""

from __future__ import annotations

import pytest

from dpverify.agent_audit import AgentAuditSpec, audit_agent
from dpverify.agent_audit.notions import NOTIONS, AuditNotion, audit_notion, notions_for, register_notion
from dpverify.agent_audit.views import output_view
from dpverify.errors import InvalidParameterError

SMALL = (("dim", 3), ("horizon", 2), ("num_actions", 2), ("num_states", 3), ("seed", 3))


def test_the_episodes_each_notion_reads() -> None:
    assert output_view("billboard", 2, 3, 9, 5).episodes == (2, 3, 4, 5)
    assert output_view("jdp", 2, 3, 9, 5).episodes == (3, 4, 5)
    assert output_view("ldp", 2, 3, 9, 5).episodes == (2,)
    assert notions_for("jdp") == ("billboard", "jdp") and notions_for("ldp") == ("ldp",)
    assert not audit_notion("ldp").add_remove and audit_notion("jdp").reads_policies
    assert audit_notion("ldp").what_is_published() == "messages (users='current')"


def test_bad_names_and_double_registration_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="must be one of billboard, jdp, ldp") as info:
        audit_notion("dp", parameter="--notion")
    assert info.value.parameter == "--notion"
    with pytest.raises(InvalidParameterError, match="already registered"):
        register_notion(NOTIONS["jdp"])
    with pytest.raises(InvalidParameterError, match="AuditNotion"):
        register_notion("jdp")  # type: ignore[arg-type]


def test_the_command_line_lists_the_registered_notions() -> None:
    from dpverify.cli import audit_agent_command

    assert audit_agent_command.NOTION_CHOICES == tuple(NOTIONS)


def test_a_new_notion_is_one_registry_entry() -> None:
    """The recipe of CONTRIBUTING.md, followed once: a notion that reads the policy deployed to the next user only
    is validated, viewed and audited (batched) with no other change."""
    register_notion(AuditNotion("next-action", "the policy deployed to user j+1", reads_policies=True, users=None,
                                first_offset=1, reads_window=False, summarises_window=False, claims=("jdp",),
                                sees="the policy deployed to user j+1"))
    try:
        assert output_view("next-action", 2, 3, 9, 5).episodes == (3,)
        spec = AgentAuditSpec("dp-lsvi-ucb++", "random-linear", 3, "next-action", 1.0, 1e-5, trials=200,
                              env_options=SMALL, positions=("first",))
        result = audit_agent(spec, progress=False)
        assert result.batched and result.verdict == "NO VIOLATION FOUND"
        assert "the policy deployed to user j+1" in " ".join(result.notes)
        with pytest.raises(InvalidParameterError, match="notion"):  # an LDP agent's claim is not about policies
            audit_agent(AgentAuditSpec("ldp-ucrl-vtr", "random-mixture", 3, "next-action", 1.0, 1e-5, trials=20,
                                       env_options=SMALL, positions=("first",)), progress=False)
    finally:
        del NOTIONS["next-action"]
