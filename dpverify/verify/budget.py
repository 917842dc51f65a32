"""How much work ``dpverify verify`` spends: trial counts and seeds per budget.

``quick`` is sized for a CI job (about a minute on 2 cores for the reference agents at the default K),
``standard`` for a reviewer's workstation (about ten minutes), ``thorough`` for a cluster (pass
``--scheduler`` to run the audit trials on Dask). Only the trial counts and seeds change between
budgets; the checks are the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpverify import _validate
from dpverify.errors import InvalidParameterError

ONE_RUN_CHOICES: tuple[str, ...] = ("all", "first", "none")


@dataclass(frozen=True)
class Budget:
    """Trial counts and seeds of one verification.

    Attributes:
        name: the budget's name.
        utility_seeds: independent runs of the agent (and of its non-private counterpart) for regret.
        two_world_trials: trials per side of each two-world agent audit (selection + evaluation).
        batched_trials: the same for agents the audits run vectorised (many trials per call).
        two_world_episodes: K of the two-world audits' small configuration.
        one_run_canaries: canary users of each one-run audit (capped at K/2 by the audit itself).
        one_run_runs: independent runs of each one-run audit.
        contract_episodes: the episode cap of the private-agent contract check's run.
        one_run_audits: which notions get a one-run audit at K: "all", "first" (the billboard for JDP
            agents, the messages for LDP agents) or "none" (the report says the budget left it out).
        audit_seed: seed of every audit and white-box check (a verification is reproducible from its settings).
        whitebox_episodes: the largest K of the white-box checks (the claim's K when smaller).
        whitebox_search_episodes: K of the white-box neighbour search.
        timeout: the wall-clock limit of a whole verification at this budget (seconds; ``--timeout``), far
            beyond what a correct agent needs at the default K.
        description: what the budget is for, for the report.
    """

    name: str
    utility_seeds: int
    two_world_trials: int
    batched_trials: int
    two_world_episodes: int
    one_run_canaries: int
    one_run_runs: int
    contract_episodes: int = 20
    one_run_audits: str = "all"
    audit_seed: int = 0
    whitebox_episodes: int = 1000
    whitebox_search_episodes: int = 24
    timeout: float = 3600.0
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidParameterError("name", "must be a non-empty string", self.name)
        _validate.integer("utility_seeds", self.utility_seeds, minimum=1)
        _validate.integer("two_world_trials", self.two_world_trials, minimum=10)
        _validate.integer("batched_trials", self.batched_trials, minimum=10)
        _validate.integer("two_world_episodes", self.two_world_episodes, minimum=2)
        _validate.integer("one_run_canaries", self.one_run_canaries, minimum=1)
        _validate.integer("one_run_runs", self.one_run_runs, minimum=1)
        _validate.integer("contract_episodes", self.contract_episodes, minimum=2)
        _validate.one_of("one_run_audits", self.one_run_audits, ONE_RUN_CHOICES)
        _validate.integer("audit_seed", self.audit_seed, minimum=0)
        _validate.integer("whitebox_episodes", self.whitebox_episodes, minimum=1)
        _validate.integer("whitebox_search_episodes", self.whitebox_search_episodes, minimum=0)
        _validate.positive("timeout", self.timeout)


BUDGETS: dict[str, Budget] = {
    "quick": Budget("quick", utility_seeds=3, two_world_trials=400, batched_trials=2_000, two_world_episodes=8,
                    one_run_canaries=200, one_run_runs=1, contract_episodes=20, one_run_audits="first",
                    whitebox_episodes=1000, whitebox_search_episodes=24,
                    description="CI gate: about a minute on 2 cores for the reference agents at K = 1000"),
    "standard": Budget("standard", utility_seeds=10, two_world_trials=5_000, batched_trials=50_000,
                       two_world_episodes=16, one_run_canaries=500, one_run_runs=1, contract_episodes=40,
                       whitebox_episodes=10_000, whitebox_search_episodes=48, timeout=6 * 3600.0,
                       description="a reviewer's workstation: about ten minutes on 2 cores"),
    "thorough": Budget("thorough", utility_seeds=30, two_world_trials=50_000, batched_trials=200_000,
                       two_world_episodes=16, one_run_canaries=1_000, one_run_runs=4, contract_episodes=100,
                       whitebox_episodes=100_000, whitebox_search_episodes=96, timeout=48 * 3600.0,
                       description="a cluster (--scheduler): the paper-scale audit sizes"),
}


def budget_by_name(name: str) -> Budget:
    """The budget called ``name`` (one of :data:`BUDGETS`)."""
    return BUDGETS[_validate.one_of("budget", name, tuple(BUDGETS))]
