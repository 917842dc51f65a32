"""Controlled runs: the agent run on users the auditor chose, with coins and noise the auditor seeded.

The private-agent protocol gives an auditor two levers over an agent's behaviour, and every white-box
check is built from them (docs/auditing.md, "White-box release checks"):

* **the users' data** — each user is a response tape (:mod:`dpverify.agents.core.tapes`) that fixes the
  user's trajectory under whatever policy the agent deploys, or an empty slot (the user absent);
* **the seeds** — the factory's generator (the agent's own coins and, through the generators it passes to
  :meth:`~dpverify.agents.core.billboard.Billboard.publish`, the billboard-drawn noise) and the billboard's
  ``noise_rng``, from which agents that add their noise themselves draw it
  (:meth:`~dpverify.agents.core.billboard.Billboard.noise_source`).

A *fresh* run publishes on a billboard seeded with one noise seed and keeps everything it published. A
*replay* run holds another run's transcript fixed (:class:`~dpverify.agents.core.billboard.ReplayBillboard`):
the agent is handed the recorded values, so with the same coins it deploys the same policies, while the
billboard keeps what the agent *would* have published. Three replays of a fresh run R0 answer three
questions exactly, with no statistics:

* same users, same noise seed — it must reproduce R0 bit for bit (the agent follows the seeds);
* same users, another billboard noise seed — each self-noised value minus R0's is the difference of two
  independent noise draws of the recorded mechanism, the raw statistic cancelling exactly
  (:mod:`.noise_check`; billboard-drawn noise is kept by the billboard in R0 itself);
* one user replaced (or removed), same noise seed — each kept value minus R0's is that user's effect on
  the raw statistic with the transcript held fixed (:mod:`.sensitivity_replay`).

Anything the agent's code raises is caught here and becomes :class:`CouldNotRun` with a one-line
reason naming the method; a check that cannot run is never a pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpverify.agents.core.base import acts_step_by_step
from dpverify.agents.core.billboard import Billboard, PublishedRelease, ReplayBillboard
from dpverify.agents.core.tapes import UserTape, play_on_tape
from dpverify.errors import DpverifyError, InvalidParameterError
from dpverify.ledger import PrivacyLedger
from dpverify.neighbouring import Neighbouring
from dpverify.usercode import UserCodeError


class CouldNotRun(Exception):
    """A controlled run could not be made; the message says why in one line (it names the agent's method)."""


class PatternChanged(CouldNotRun):
    """A replay's release pattern left the recorded one (a release with another label, or fewer releases)."""


@dataclass(frozen=True)
class Subject:
    """The agent under check: ``factory(mdp, episodes, rng, /, *, billboard=..., **options)`` on ``mdp``.

    ``options`` carry the claim (``epsilon``, ``delta``) and every other factory option; ``relation`` is the
    neighbouring relation of the agent's ledger (the billboard it is given uses it); ``name`` is used in
    messages.
    """

    factory: Callable[..., Any]
    mdp: Any
    episodes: int
    options: Mapping[str, Any] = field(default_factory=dict)
    relation: str = Neighbouring.REPLACE_ONE.value
    name: str = "agent"

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", dict(self.options))
        object.__setattr__(self, "relation", Neighbouring.parse(self.relation).value)

    def on(self, mdp: Any, episodes: int | None = None) -> Subject:
        """The same agent and options on another environment (or another K)."""
        return Subject(self.factory, mdp, self.episodes if episodes is None else episodes, self.options,
                       self.relation, self.name)


@dataclass(frozen=True, eq=False)
class RunRecord:
    """One controlled run: every release it published (fresh) or would have published (replay), in
    publication order, the policies it deployed, and its ledger; ``data_seen_at[k − 1]`` is the position of the
    first release published after user k's data first reached the agent (its trajectory at ``end_episode``, or
    its first state at ``act``; the run's length when none followed or the slot was empty): a release can read
    user k only from that position on."""

    releases: tuple[PublishedRelease, ...]
    policies: tuple[np.ndarray, ...]
    ledger: PrivacyLedger
    data_seen_at: tuple[int, ...] = ()

    @property
    def n_releases(self) -> int:
        return len(self.releases)


def _fault(exc: BaseException, subject: Subject, where: str) -> CouldNotRun:
    text = " ".join(str(exc).split()) or "(no message)"
    return CouldNotRun(f"the agent {subject.name} raised {type(exc).__name__}: {text} (in {where})")


def fresh_generator(seed: np.random.SeedSequence) -> np.random.Generator:
    """A generator from a *copy* of ``seed``: ``Generator.spawn`` advances the SeedSequence it was built from,
    so two runs built from one SeedSequence object would not get the same children."""
    return np.random.default_rng(np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key,
                                                        pool_size=seed.pool_size))


def _build(subject: Subject, coins: np.random.SeedSequence, board: Billboard) -> Any:
    try:
        agent = subject.factory(subject.mdp, subject.episodes, fresh_generator(coins), billboard=board,
                                **subject.options)
    except Exception as exc:  # the agent's own code: any failure is reported, never raised through
        raise _fault(exc, subject, "its factory") from None
    if getattr(agent, "billboard", board) is not board:
        raise CouldNotRun(f"the agent {subject.name} does not publish on the billboard it is given (billboard=...): "
                          "its releases cannot be observed")
    return agent


def run_agent(subject: Subject, users: Sequence[UserTape | None], *, coins: np.random.SeedSequence,
              noise: np.random.SeedSequence, recorded: RunRecord | None = None) -> RunRecord:
    """Run the agent for one episode per entry of ``users`` (a tape, or None for an empty slot).

    Its factory gets a generator of ``coins``; its billboard's ``noise_rng`` is a generator of ``noise``
    (:func:`fresh_generator`: every run of one seed gets the same streams). With ``recorded``, the billboard
    replays that run's values (module docstring) and the record holds what this run would have published.
    Raises :class:`CouldNotRun`.
    """
    noise_rng = fresh_generator(noise)
    if recorded is None:
        board: Billboard = Billboard(subject.relation, keep_history=True, keep_noise=True, noise_rng=noise_rng)
    else:
        board = ReplayBillboard(recorded.releases, subject.relation, keep_history=True, keep_noise=True,
                                noise_rng=noise_rng)
    agent = _build(subject, coins, board)
    policies = []
    seen: list[int] = []
    for k, tape in enumerate(users, start=1):
        try:
            policy = play_on_tape(_watched(agent, board, seen, k) if tape is not None else agent, subject.mdp, tape,
                                  k)[0]
        except InvalidParameterError as exc:
            if isinstance(board, ReplayBillboard) and exc.parameter in ("release", "recorded"):
                raise PatternChanged(f"episode {k}: the release pattern left the recorded one ({exc})") from None
            raise _fault(exc, subject, f"episode {k}") from None
        except DpverifyError as exc:
            raise _fault(exc, subject, f"episode {k}") from None
        except UserCodeError as exc:  # the user's fault ends the command (dpverify.usercode), said precisely
            raise exc.within(f"episode {k} of a white-box run") from None
        except Exception as exc:  # the agent's own code
            raise _fault(exc, subject, f"begin_episode/end_episode of episode {k}") from None
        policies.append(policy)
        seen += [board.n_published] * (k - len(seen))  # no data reached the agent (an empty slot)
    if isinstance(board, ReplayBillboard) and recorded is not None and board.n_replayed != recorded.n_releases:
        raise PatternChanged(f"the replay made {board.n_replayed} of the recorded run's {recorded.n_releases} "
                             "releases")
    return RunRecord(board.history(), tuple(policies), board.ledger, tuple(seen))


def _watched(agent: Any, board: Billboard, seen: list[int], k: int) -> Any:
    """``agent`` as :func:`play_on_tape` drives it, noting in ``seen`` how many releases the billboard had made
    when user k's data first reached it: at ``act`` (its first state) or at ``end_episode`` (its trajectory)."""
    def note() -> None:
        if len(seen) < k:
            seen.append(board.n_published)

    class Watched:
        def __getattr__(self, name: str) -> Any:
            return getattr(agent, name)

        def end_episode(self, trajectory: Any) -> Any:
            note()
            return agent.end_episode(trajectory)

    if acts_step_by_step(agent):
        def act(self: Any, h: int, state: int) -> Any:
            note()
            return agent.act(h, state)

        Watched.act = act  # type: ignore[attr-defined]
    return Watched()


def same_policies(a: RunRecord, b: RunRecord) -> int | None:
    """The first episode (1-based) whose deployed policy differs between the runs, or None."""
    for k, (p, q) in enumerate(zip(a.policies, b.policies, strict=True), start=1):
        if not np.array_equal(p, q):
            return k
    return None
