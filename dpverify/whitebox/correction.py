"""The corrected accounting: when the replays show an agent's records wrong, does its claim fall with them?

A release pattern or a sensitivity that the replays contradict (:mod:`.sensitivity_replay`) proves the
*records* false, not the claim: a release labelled with the wrong episode may still be charged, in truth, to
exactly the users the claim was calibrated for. The records are therefore corrected, in two directions:

* **for the users replayed** — each pair's user is charged, at the recorded noise and sensitivity (or at the
  change seen where that is larger), for every release seen to change and for every release its record charges
  it that could have read it (published after its data reached the agent: a release labelled with an episode
  before the user's is not charged, whatever its label says)
  (:meth:`~.sensitivity_replay.PairSummary.corrected_epsilon`). Above the claim, the claim is false by the
  agent's own accounting: the records, corrected, exceed it;
* **from above** — a release cannot read data that had not reached the agent when it was published (the
  position of user k's first data in the run: :attr:`~.runs.RunRecord.data_seen_at`). Charging every release of
  a family whose pattern the replays contradict to every user whose data it could have read, and every other
  release as recorded, bounds every user's charge from above (:class:`Charges`) — while the recorded
  sensitivities hold: a sensitivity the replays saw exceeded bounds nothing from above. Within the claim, the
  claim holds although the records are wrong.

Between the two the claim is undecided (the verdict INCONCLUSIVE, never REFUTED).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpverify.checks import HOLDS, UNDECIDED
from dpverify.conversions import epsilon_from_rho
from dpverify.whitebox.runs import RunRecord
from dpverify.whitebox.sensitivity_replay import PairSummary

#: Relative slack between a corrected ε and the claim (rounding of the sums only, as for the ledger).
CLAIM_REL_TOL = 1e-9


@dataclass(frozen=True)
class Charges:
    """Per family and user 1..K of the recorded run: the ρ its ledger charges (``recorded``) and the ρ of every
    release published after the user's data reached the agent (``reachable``); ``naive`` the ρ of every release
    (naive accounting charges each user for all of them, whatever the pattern)."""

    recorded: dict[str, np.ndarray]
    reachable: dict[str, np.ndarray]
    naive: float = 0.0

    @classmethod
    def of(cls, run: RunRecord) -> Charges:
        users = len(run.data_seen_at)
        recorded: dict[str, np.ndarray] = {}
        reachable: dict[str, np.ndarray] = {}
        rho = np.array([np.inf if r.mechanism is None else r.mechanism.rho for r in run.releases])
        families = np.array([r.family for r in run.releases])
        seen = np.asarray(run.data_seen_at, dtype=np.int64)
        for family in dict.fromkeys(families.tolist()):
            charged = np.zeros(users)
            per_user = run.ledger.per_user_rho(family)[:users]
            charged[:per_user.size] = per_user
            recorded[family] = charged
            positions = np.flatnonzero(families == family)
            suffix = np.r_[np.cumsum(rho[positions][::-1])[::-1], 0.0]  # ρ of the family's releases from each on
            reachable[family] = suffix[np.searchsorted(positions, seen)]
        return cls(recorded, reachable, float(rho.sum()))

    def upper_epsilon(self, corrected: set[str], delta: float, conversion: str, accounting: str) -> float:
        """The worst user's ε with the families in ``corrected`` charged by reach, the others as recorded (naive
        accounting: every release, whatever its pattern)."""
        if accounting == "naive":
            return epsilon_from_rho(self.naive, delta, conversion)
        total = sum((self.reachable[f] if f in corrected else self.recorded[f] for f in self.recorded),
                    np.zeros(1))
        return epsilon_from_rho(float(np.max(total)), delta, conversion)


def judge_records(pairs: Sequence[PairSummary], charges: Charges | None, claim: float | None, delta: float,
                  conversion: str, accounting: str) -> tuple[str | None, str]:
    """(what the replays' findings show of the claim — None: it is false, :data:`~dpverify.checks.HOLDS` or
    :data:`~dpverify.checks.UNDECIDED` —, the words that say so), from the pairs' findings (module docstring)."""
    findings = [f for p in pairs for f in p.findings]
    if claim is None:
        return UNDECIDED, "; no claim to judge the corrected records against"
    worst = max(pairs, key=lambda p: p.corrected_epsilon(delta, conversion))
    lower = worst.corrected_epsilon(delta, conversion)
    if lower > claim * (1.0 + CLAIM_REL_TOL):
        return None, (f"; corrected where the replays show them wrong (every release seen to change charged to "
                         f"the user, at least at its recorded sensitivity, and no release the user's data had not "
                         f"reached) the records account to ε = {lower:.6g} > "
                         f"the claimed {claim:g} ({worst.environment}, {worst.canaries} at user {worst.user}): the "
                         "claim is false")
    if any(f.kind == "sensitivity" for f in findings) or charges is None:
        return UNDECIDED, (f"; corrected for the users replayed the records account to ε = {lower:.6g} ≤ the "
                           f"claimed {claim:g}, "
                           "and a sensitivity above its record bounds no correction from above: whether the claim "
                           "holds is undecided")
    wrong = {f.family for f in findings}
    upper = charges.upper_epsilon(wrong, delta, conversion, accounting)
    if upper <= claim * (1.0 + CLAIM_REL_TOL):
        return HOLDS, (f"; the claim holds: corrected (every release of {', '.join(sorted(wrong))} charged to every "
                       f"user whose data had reached the agent when it was published) the records account to "
                       f"ε = {upper:.6g} ≤ the claimed {claim:g}")
    return UNDECIDED, (f"; corrected, the records account to ε = {lower:.6g} for the users replayed and to at most "
                       f"ε = {upper:.6g} for every user, for the claimed {claim:g}: whether the claim holds is "
                       "undecided")
