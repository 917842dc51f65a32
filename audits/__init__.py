"""The zoo, ``dpverify.audits``: concrete audits of concrete privacy claims — planted bugs in mechanisms
(:mod:`.zoo`) and in whole agents (:mod:`.agent_zoo`), third-party-style agents (:mod:`.third_party_zoo`). The
engine that runs them is :mod:`dpverify.audit` (singular)."""
