"""Empirical audits: the agent audits of :mod:`dpverify.agent_audit` that apply to the agent's notion.

JDP agents (DP-LSVI-UCB++, Luyo et al., Ngo et al.) are audited on their billboard (the published
transcript) and on the actions given to the other users; LDP agents (LDP-UCRL-VTR) on one user's
outgoing messages (:func:`dpverify.agent_audit.notions.notions_for`). Each audit notion runs by two routes:

* two-world at a small configuration (:data:`SMALL_ENV_OPTIONS`: the environment at H = 2, and
  K = ``budget.two_world_episodes`` users), with the budget's trials per side — the batched
  DP-LSVI-UCB++ affords ``budget.batched_trials``;
* two-world with worst-case canaries on the first notion that reads published values (the
  billboard of a JDP agent, the messages of an LDP agent), where the environment has an audit
  environment (a linear MDP, or a linear mixture MDP): the same size in the audit environment of its
  dimensions (:func:`dpverify.whitebox.neighbours.audit_environment`), the measured canary pairs of
  largest μ, the view over every later release (:mod:`dpverify.agent_audit.canaries`) — the audit
  that realises most of the sensitivity;
* one-run (Steinke, Nasr & Jagielski 2023) at the requested K with the budget's canaries and runs.

``dpverify verify`` calls :func:`dpverify.agent_audit.audit_agent` as it is; it re-implements no
test and no bound. An audit that cannot run (the agent does not follow the protocol the audit needs,
for instance) is reported "not run" with the reason, which makes the verdict INCONCLUSIVE.
"""

from __future__ import annotations

from typing import Any

from dpverify.agent_audit import AgentAuditResult, AgentAuditSpec, audit_agent
from dpverify.agent_audit.notions import NOTIONS, notions_for
from dpverify.agent_audit.routes import audit_route
from dpverify.agents.envs.linear_mdp import LinearMixtureMDP
from dpverify.audit.executors import Executor
from dpverify.checks import NOT_RUN, overall
from dpverify.errors import DpverifyError
from dpverify.verify.result import AUDIT_NO_VIOLATION, AUDIT_VIOLATION, AuditRun, AuditSection
from dpverify.verify.target import MDP, VerifyRun
from dpverify.whitebox.neighbours import audit_environment

#: Environment options of the two-world audits' small configuration, per registered environment.
SMALL_ENV_OPTIONS: dict[str, dict[str, Any]] = {
    "min2021": {"horizon": 2},
    "zhou2021": {"horizon": 2},
    "random-linear": {"horizon": 2},
    "random-mixture": {"horizon": 2},
    "linear-bandit": {"num_contexts": 2, "num_arms": 4},
}
#: The probability, over all of a verification's audits together, of a VIOLATION on a correct agent.
ERROR_LEVEL = 0.05


def _audit_environment_kind(mdp: MDP) -> str | None:
    """What the worst-case canary design runs in for this environment: "audit linear MDP", "audit
    linear mixture MDP" (of its dimensions), or None when it has no audit environment."""
    try:
        audit = audit_environment(mdp)
    except DpverifyError:
        return None
    label = getattr(audit, "audit_label", None)  # an environment that names its own (the audit bandit)
    if isinstance(label, str):
        return label
    return "audit linear mixture MDP" if isinstance(audit, LinearMixtureMDP) else "audit linear MDP"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


#: Keys of an audit plan that describe it for the report and are not fields of the audit's spec.
_REPORT_KEYS = ("audit_environment",)


def _run(spec_kwargs: dict[str, Any], executor: Executor | None) -> AgentAuditResult:
    spec = {k: v for k, v in spec_kwargs.items() if k not in _REPORT_KEYS}
    return audit_agent(AgentAuditSpec(**spec), executor=executor)


def _configuration(kwargs: dict[str, Any]) -> str:
    options = ", ".join(f"{k}={v}" for k, v in sorted(kwargs["env_options"].items()))
    size = f"{kwargs['env']}{f' ({options})' if options else ''}, K = {kwargs['episodes']}"
    counts = audit_route(kwargs["route"]).size(kwargs)  # e.g. "window 2; 1000 trials per side"
    if kwargs.get("canary_design") == "worst-case":
        return f"{kwargs['audit_environment']} of {size}; worst-case canaries, {counts}"
    return f"{size}; {counts}"


def _route_label(kwargs: dict[str, Any]) -> str:
    """The route as the report names it: "two-world", "two-world, worst-case" or "one-run"."""
    return kwargs["route"] + (", worst-case" if kwargs.get("canary_design") == "worst-case" else "")


def _audit_run(result: AgentAuditResult, kwargs: dict[str, Any]) -> AuditRun:
    audit = result.audit
    one_run = result.one_run
    detail = f"bound by {result.method}"
    if one_run is not None:
        detail += f"; {one_run.v} of {one_run.r} guesses correct over {one_run.m} canary slots"
    if audit is not None:
        detail += f"; pair {audit.pair_label}"
    if result.measured_pairs:
        detail += f"; canaries as measured: {result.measured_pairs[0].describe()}"
    route = _route_label(kwargs)
    return AuditRun(
        notion=kwargs["notion"],
        route=route,
        configuration=_configuration(kwargs),
        verdict=AUDIT_VIOLATION if result.verdict == AUDIT_VIOLATION else AUDIT_NO_VIOLATION,
        claimed_epsilon=result.claimed_epsilon,
        epsilon_lower=float(result.epsilon_lower_bound),
        gdp_epsilon_lower=result.gdp_epsilon,
        mu_lower=result.mu_lower_bound,
        claimed_mu=result.claimed_mu,
        verdict_by=tuple(result.verdict_by),
        ceiling=None if audit is None else float(audit.ceiling),
        trials=int(result.trials),
        seconds=float(result.seconds),
        detail=detail,
        figure=(f"audit_{kwargs['notion']}_{route.replace(', ', '_')}.png" if result.points and audit is not None
                else None),
        raw=result.to_dict(),
    )


def _audit(kwargs: dict[str, Any], executor: Executor | None) -> AuditRun:
    """One planned audit, or why it could not run."""
    def not_run(detail: str) -> AuditRun:
        return AuditRun(kwargs["notion"], _route_label(kwargs), _configuration(kwargs), NOT_RUN,
                        kwargs["epsilon"], detail=detail)

    if audit_route(kwargs["route"]).canary_slots and kwargs["episodes"] < 4:  # (one-run: K is the claim's)
        return not_run("K < 4 leaves no room for canaries")
    try:
        return _audit_run(_run(kwargs, executor), kwargs)
    except DpverifyError as exc:
        return not_run(f"the audit could not run the agent: {_one_line(exc)}")
    except Exception as exc:  # an agent dpverify did not write may fail in any way: report it, do not crash
        return not_run(f"the audit raised {type(exc).__name__}: {_one_line(exc)}")


def _two_world_plans(common: dict[str, Any], notions: tuple[str, ...], run: VerifyRun) -> list[dict[str, Any]]:
    """The two-world audits at the small configuration: one per notion with the environment's
    canaries, and an audit with worst-case canaries of the first notion that reads published values
    (the billboard, an LDP agent's messages) where the environment has an audit environment."""
    budget = run.budget
    k = min(budget.two_world_episodes, run.episodes) if run.episodes >= 2 else 2
    # the window covers every later release: a user's data enters all of them (prefix and tree patterns)
    trials = budget.batched_trials if run.target.batched(run.agent_options) else budget.two_world_trials
    size = {"route": "two-world", "episodes": k, "window": k, "trials": trials,
            "env_options": {**run.env_options, **SMALL_ENV_OPTIONS.get(run.env, {})}}
    plans = [{**common, **size, "notion": n} for n in notions]
    # The worst-case design for the releases its measured fractions are about (the billboard, the
    # messages); a second JDP audit (a view of H·S·A per episode) would be the costliest part of
    # `verify` (19 of 83 s at quick, measured).
    released = [n for n in notions if not NOTIONS[n].reads_policies]
    kind = _audit_environment_kind(run.mdp) if released else None
    if kind is not None:
        plans.append({**common, **size, "notion": released[0], "canary_design": "worst-case",
                      "positions": ("first",), "audit_environment": kind})
    return plans


def audit_section(run: VerifyRun, executor: Executor | None = None) -> AuditSection:
    """Every audit that applies to the run's notion, at the budget's sizes (module docstring); agents with a
    vectorised audit path (a batched twin) get the budget's larger trial count, and the run's
    ``gaussian_claim`` (``--gaussian-claim``) says whether the claim is μ-GDP (None: as the agent says)."""
    try:
        notions = notions_for(run.notion)
    except ImportError as exc:
        return AuditSection(NOT_RUN, f"checks could not run: the agent audits are not available ({exc})")
    if not notions:
        return AuditSection(NOT_RUN, f"checks could not run: no audit applies to privacy notion {run.notion!r} "
                                     "(the agent must declare privacy_notion 'jdp' or 'ldp')")
    budget, episodes = run.budget, run.episodes
    common = {"agent": run.target.name, "env": run.env, "epsilon": run.epsilon, "delta": run.delta,
              "seed": budget.audit_seed, "agent_options": run.options, "gaussian_claim": run.gaussian_claim}
    plans = _two_world_plans(common, notions, run)
    one_run_notions = {"all": notions, "first": notions[:1], "none": ()}[budget.one_run_audits]
    for audit_notion in one_run_notions:
        plans.append({**common, "notion": audit_notion, "route": "one-run", "episodes": episodes,
                      "env_options": dict(run.env_options), "trials": budget.one_run_runs,
                      "canaries": max(2, min(budget.one_run_canaries, episodes // 2))})
    confidence = 1.0 - ERROR_LEVEL / len(plans)  # the audits share one error budget: any VIOLATION refutes
    for kwargs in plans:
        kwargs["confidence"] = confidence
    # the one-run audits first (a chain of whole runs here, while the workers end what they were given)
    order = sorted(range(len(plans)), key=lambda i: plans[i]["route"] != "one-run")
    runs = tuple(audit for _, audit in sorted((i, _audit(plans[i], executor)) for i in order))
    status = overall(r.status for r in runs)
    share = (f"The {len(plans)} audits share the error level {ERROR_LEVEL:g} (Bonferroni: each at confidence "
             f"{confidence:.4g}), so a correct agent is refuted by an audit with probability "
             f"at most {ERROR_LEVEL:g}.")
    note = share
    if budget.one_run_audits == "none":
        note += (f" The {budget.name} budget runs no one-run audit at K = {episodes} (the standard and thorough "
                 "budgets do); the two-world audits at the small configuration are its audits.")
    elif budget.one_run_audits == "first" and len(notions) > 1:
        note += (f" The {budget.name} budget runs the one-run audit at K = {episodes} for the {notions[0]} notion "
                 f"only (not for {', '.join(notions[1:])}); the standard and thorough budgets run it for every "
                 "notion.")
    return AuditSection(status, note, runs)
