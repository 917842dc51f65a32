"""The audit notions of an agent audit: what the auditor of each sees, one registry that the spec, the views, the
runs, ``dpverify verify`` and the command line read.

* ``"billboard"`` — the published transcript (the premise of the billboard lemma: Hsu et al. 2014; Sahu 2025,
  Lemma 2.4): every release, as two rows per view (:func:`dpverify.agent_audit.views.output_view`).
* ``"jdp"`` — only the actions given to the *other* users (Kearns et al. 2014; Vietri et al. 2020): the
  deployed policies of the users after the audited one.
* ``"ldp"`` — one user's outgoing messages (Liao et al. 2021): the releases published with ``users="current"``.

A new notion is an :class:`AuditNotion` registered here with :func:`register_notion`, and the view it needs in
:mod:`dpverify.agent_audit.views` (its ``rows`` post-processing and its episodes): CONTRIBUTING.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpverify._registry import look_up, register


@dataclass(frozen=True)
class AuditNotion:
    """One audit notion.

    Attributes:
        name: the ``--notion`` value.
        description: one line for listings and errors.
        reads_policies: the view is the deployed policies (one-hot), not published values.
        users: the user pattern of the releases the view reads (None: every release).
        first_offset: the first episode the view reads, relative to the audited user j (0: j itself).
        reads_window: the view reads ``window`` episodes after the first (else the first only).
        summarises_window: the view keeps the first episode's row and the mean of the later ones (the
            billboard view: every later prefix release carries user j's term, the mean shrinks fresh noise).
        claims: the privacy notions (of an agent's ``privacy_notion``) whose claim this view audits.
        sees: what the auditor saw, for the result's scope note.
        add_remove: whether an add/remove-one audit applies (local DP compares two inputs of one user only).
    """

    name: str
    description: str
    reads_policies: bool
    users: str | None
    first_offset: int
    reads_window: bool
    summarises_window: bool
    claims: tuple[str, ...]
    sees: str
    add_remove: bool = True

    def episodes(self, position: int, window: int) -> tuple[int, ...]:
        """The 1-based episodes the view of the user at ``position`` reads."""
        first = position + self.first_offset
        last = position + window if self.reads_window else first
        return tuple(range(first, last + 1))

    def what_is_published(self) -> str:
        """What the agent must publish for this view (an error names it)."""
        return "policies" if self.reads_policies else (f"messages (users={self.users!r})" if self.users
                                                       else "releases")


NOTIONS: dict[str, AuditNotion] = {}


def register_notion(notion: AuditNotion, replace: bool = False) -> AuditNotion:
    """Add an audit notion (an existing name is an error unless ``replace``)."""
    return register(NOTIONS, notion, "notion", AuditNotion, replace)


def audit_notion(name: str, parameter: str = "notion") -> AuditNotion:
    """The registered notion ``name`` (one clear error otherwise)."""
    return look_up(NOTIONS, name, parameter)


def notions_for(privacy_notion: str) -> tuple[str, ...]:
    """The audit notions that apply to an agent of privacy notion ``privacy_notion`` ("jdp" or "ldp")."""
    return tuple(name for name, notion in NOTIONS.items() if privacy_notion in notion.claims)


register_notion(AuditNotion("billboard", "the published transcript", reads_policies=False, users=None,
                            first_offset=0, reads_window=True, summarises_window=True, claims=("jdp",),
                            sees="the published releases of episodes j..j+window"))
register_notion(AuditNotion("jdp", "the actions given to the other users", reads_policies=True, users=None,
                            first_offset=1, reads_window=True, summarises_window=False, claims=("jdp",),
                            sees="the policies deployed to users j+1..j+window"))
register_notion(AuditNotion("ldp", "one user's outgoing messages", reads_policies=False, users="current",
                            first_offset=0, reads_window=False, summarises_window=False, claims=("ldp",),
                            sees="user j's own messages", add_remove=False))
