"""The no-data control of one documented run: the same agent, seeds and options with every user slot empty.

Used by docs/make_frontier.py (``control``) and docs/make_results.py (``--controls``): every private run those
scripts document gets a control record, and ``tests/docs/test_no_data_controls.py`` fails when one lacks it.
The record reruns the agent with its users as well (the runs are deterministic, so the rerun must reproduce the
documented per-seed regret: the record says whether it did) and then compares the two runs over the shared
seeds with :func:`dpverify.agents.core.learning.compare_learning` — the regret per episode over the last 20% of the
episodes, a one-sided paired t-test — and, for the final cumulative regret the tables print, the same test on
the per-seed totals ("the data shortened the way" can hold where "the data led to a better policy" does not).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from dpverify.agents.core.learning import LearningComparison, compare_learning, paired_p_value
from dpverify.agents.core.runner import RunSpec, build_environment, package_versions, run_many


def control_record(spec: RunSpec, documented_final_per_seed: list[float] | None = None,
                   executor: Any = None) -> dict[str, Any]:
    """Run ``spec`` with and without its users (one batch of seeds for both) and compare them (module docstring)."""
    if not spec.users:
        raise ValueError("spec must be the run with its users; its control is derived from it")
    start = time.perf_counter()
    mdp = build_environment(spec)
    control_spec = dataclasses.replace(spec, users=False)
    with_users, without = run_many([spec, control_spec], executor, None, [mdp, mdp])
    comparison = compare_learning(with_users.regret, without.regret, mdp)
    agent_final = with_users.cumulative_regret()[:, -1]
    control_final = without.cumulative_regret()[:, -1]
    fifth = max(spec.num_episodes // 5, 1)
    reproduces = None
    if documented_final_per_seed is not None:
        documented = np.asarray(documented_final_per_seed, dtype=float)
        reproduces = bool(documented.shape == agent_final.shape
                          and np.allclose(documented, agent_final, rtol=1e-9, atol=1e-6))
    return {
        "agent": spec.agent, "env": spec.env, "K": spec.num_episodes, "num_seeds": spec.num_seeds,
        "base_seed": spec.base_seed, "agent_options": dict(spec.agent_options), "env_options": dict(spec.env_options),
        "comparison": comparison.to_dict(),
        "line": comparison.line(),
        "final_with_users_per_seed": agent_final.tolist(),
        "final_without_users_per_seed": control_final.tolist(),
        "final_p_value": paired_p_value(agent_final, control_final),
        "control_mean_regret_first_fifth": float(without.regret[:, :fifth].mean()),
        "control_mean_regret_last_fifth": float(without.regret[:, -fifth:].mean()),
        "control_policy_changes_mean": float(np.mean([s.policy_changes for s in without.seeds])),
        "reproduces_documented_run": reproduces,
        "wall_seconds": time.perf_counter() - start,
        "versions": package_versions(),
    }


def refresh_tests(record: dict[str, Any]) -> bool:
    """Recompute the record's tests from its per-seed values with today's :func:`paired_p_value` (the record is
    updated in place); True if a figure changed."""
    c = record["comparison"]
    agent, control = np.asarray(c["agent_last_per_episode"]), np.asarray(c["control_last_per_episode"])
    comparison = LearningComparison(
        tuple(agent.tolist()), tuple(control.tolist()), paired_p_value(agent, control),
        c["known_reward_greedy_per_episode"], c["uniform_per_episode"], c["level"],
        paired_p_value(agent, np.full_like(agent, c["known_reward_greedy_per_episode"])))
    final = paired_p_value(np.asarray(record["final_with_users_per_seed"]),
                           np.asarray(record["final_without_users_per_seed"]))
    changed = comparison.to_dict() != c or record["final_p_value"] != final
    record.update(comparison=comparison.to_dict(), line=comparison.line(), final_p_value=final)
    return changed


def same_run(record: dict[str, Any], spec: RunSpec) -> bool:
    """Whether ``record`` is the control of ``spec`` (agent, environment, K, seeds and options all equal)."""
    return (record["agent"] == spec.agent and record["env"] == spec.env and record["K"] == spec.num_episodes
            and record["num_seeds"] == spec.num_seeds and record["base_seed"] == spec.base_seed
            and record["agent_options"] == dict(spec.agent_options)
            and record["env_options"] == dict(spec.env_options))


def verdict(record: dict[str, Any]) -> str:
    """A table cell: "yes (p)" / "no (p)" for the last-20% test."""
    c = record["comparison"]
    answer = {True: "yes", False: "no", None: "cannot tell"}[c["learned"]]
    return answer if c["p_value"] is None else f"{answer} ({c['p_value']:.2g})"
