"""check_private_agent: a correct home-made agent passes every property, and each planted bug fails its own."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from dpverify.agents.core.billboard import Billboard
from dpverify.agents.envs.min2021 import min2021_mdp
from dpverify.calibrate_mechanism import calibrate_gaussian, composition_ledger
from dpverify.checks import FAIL, NOT_APPLICABLE, NOT_RUN, PASS, CheckResult
from dpverify.conversions import DPGuarantee
from dpverify.errors import InvalidParameterError
from dpverify.ledger import PrivacyLedger
from dpverify.testing import CONTRACT_PROPERTIES, AgentContractResult, assert_private_agent, check_private_agent
from dpverify.testing.agent_contract import MAY_NOT_APPLY


@dataclass(frozen=True)
class ToyConfig:
    num_episodes: int
    epsilon: float
    delta: float = 1e-5
    feature_norm_bound: float = 1.0
    relation: str = "replace-one"
    conversion: str = "exact"


class ToyLocalAgent:
    """A local-DP agent small enough to read: user k publishes its own features φ_h(s_h, a_h) with
    Gaussian noise (H releases); the policy of episode k maximises φ_h(s, a)·(sum of what was published at
    stage h). ``bug`` plants one defect at a time (``raw_read``: the policy also reads the previous user's raw
    features, outside the billboard)."""

    name = "toy-local"
    privacy_notion: Any = "ldp"

    def __init__(self, mdp: Any, config: ToyConfig, rng: np.random.Generator, billboard: Billboard | None = None,
                 bug: str | None = None) -> None:
        if mdp.feature_norm_bound > config.feature_norm_bound and bug != "no_norm_check":
            raise InvalidParameterError("feature_norm_bound", f"must be <= {config.feature_norm_bound}",
                                        mdp.feature_norm_bound)
        if bug == "no_notion":
            self.privacy_notion = None
        self.mdp, self.config, self.rng, self.bug = mdp, config, rng, bug
        relation = "add-remove-one" if bug == "relation" else config.relation
        self.mechanism = calibrate_gaussian(config.epsilon, config.delta, 2.0 * config.feature_norm_bound,
                                            compositions=mdp.horizon, dim=mdp.dim, relation=relation)
        self.billboard = billboard if billboard is not None else Billboard(relation)
        self.published = np.zeros((mdp.horizon, mdp.dim))
        self.last_raw = np.zeros((mdp.horizon, mdp.dim))  # the previous user's raw features (read by one bug)
        self.episode = 0

    @property
    def ledger(self) -> PrivacyLedger:
        return self.billboard.ledger

    def claimed_guarantee(self) -> DPGuarantee:
        releases = self.mdp.horizon - 1 if self.bug == "under_claim" else self.mdp.horizon
        return composition_ledger(self.mechanism, releases).guarantee(self.config.delta, self.config.conversion)

    def settings(self) -> dict[str, Any]:
        claim = self.claimed_guarantee()
        accounted = self.ledger.guarantee(self.config.delta, self.config.conversion)
        return {**dataclasses.asdict(self.config), "claimed_epsilon": claim.epsilon, "claimed_delta": claim.delta,
                "accounted_epsilon": accounted.epsilon, "accounted_delta": accounted.delta}

    def begin_episode(self) -> np.ndarray:
        if self.episode >= self.config.num_episodes and self.bug != "no_cap":
            raise InvalidParameterError("episodes", f"must be <= {self.config.num_episodes}", self.episode + 1)
        self.episode += 1
        weights = self.published + (100.0 * self.last_raw if self.bug == "raw_read" else 0.0)
        return np.argmax(np.einsum("hsad,hd->hsa", self.mdp.features, weights), axis=-1)

    def end_episode(self, trajectory: Any) -> None:
        for h in range(self.mdp.horizon):
            phi = self.mdp.features[h, trajectory.states[h], trajectory.actions[h]]
            rng = np.random.default_rng(0) if self.bug == "reuse_noise" else self.rng
            self.published[h] += self.billboard.publish("phi", self.episode, h + 1, self.mechanism, phi, "current", rng)
            self.last_raw[h] = phi


def toy_factory(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *, billboard: Billboard | None = None,
                bug: str | None = None, **options: Any) -> ToyLocalAgent:
    return ToyLocalAgent(mdp, ToyConfig(num_episodes, **options), rng, billboard=billboard, bug=bug)


def env():
    return min2021_mdp(horizon=3, num_actions=4)


def test_a_correct_agent_passes_every_property() -> None:
    result = check_private_agent(toy_factory, env(), num_episodes=15, options={"epsilon": 1.0})
    assert isinstance(result, AgentContractResult) and result.passed, result.summary()
    assert tuple(p.name for p in result.properties) == CONTRACT_PROPERTIES
    assert result.notion == "ldp" and result.agent == "toy-local"
    assert result["noise_as_recorded"].reason.startswith("450 noise values of 45 releases")  # d = 10, H = 3, K = 15
    assert result["published_structure"].reason.startswith("45 releases")
    assert result["published_structure"].evidence["releases"] == 45
    assert result["claim_meets_target"].evidence["target_epsilon"] == 1.0
    assert result.to_dict()["passed"] is True
    assert assert_private_agent(toy_factory, env(), num_episodes=15, options={"epsilon": 1.0}) == result
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.seed = 1  # type: ignore[misc]


@pytest.mark.parametrize(("bug", "failed"), [
    ("reuse_noise", {"noise_as_recorded", "witnessed_pairs_within_the_claim"}),
    ("raw_read", {"billboard_structure"}),  # the white-box replays of it change other users: measured on none
    ("no_cap", {"refuses_episodes_past_cap"}),
    # an agent that accepts any environment is also audited in the oversized audit environment, where its
    # per-user terms exceed the sensitivity its noise assumes
    ("no_norm_check", {"refuses_oversized_features", "sensitivity_within_the_record",
                       "witnessed_pairs_within_the_claim"}),
    ("under_claim", {"ledger_within_claim", "witnessed_pairs_within_the_claim"}),
    ("relation", {"relation_matches_claim"}),
    ("no_notion", {"notion"}),
])
def test_each_planted_bug_fails_its_property(bug: str, failed: set[str]) -> None:
    result = check_private_agent(toy_factory, env(), num_episodes=15, options={"epsilon": 1.0, "bug": bug})
    assert {p.name for p in result.failures} == failed, result.summary()
    with pytest.raises(AssertionError, match="FAIL"):
        assert_private_agent(toy_factory, env(), num_episodes=15, options={"epsilon": 1.0, "bug": bug})


def test_a_ledger_below_the_claim_meets_it_and_says_how_much_noise_could_go() -> None:
    def over_claiming(mdp, num_episodes, rng, /, *, billboard=None, **options):
        agent = toy_factory(mdp, num_episodes, rng, billboard=billboard, **options)
        agent.claimed_guarantee = lambda: composition_ledger(agent.mechanism, 4 * mdp.horizon).guarantee(1e-5)
        agent.config = ToyConfig(num_episodes, 10.0)  # the claim still meets the (larger) target
        return agent

    result = check_private_agent(over_claiming, env(), num_episodes=6, options={"epsilon": 1.0})
    ledger = result["ledger_within_claim"]
    assert ledger.status == PASS and "met with room" in ledger.reason, ledger.reason
    assert "2× smaller" in ledger.reason  # 4H releases claimed, H made: the noise could be √4 = 2× smaller
    assert ledger.evidence["noise_room"] == pytest.approx(2.0, rel=1e-6)
    assert ledger.evidence["ledger_epsilon"] < ledger.evidence["claimed_epsilon"]


def test_an_agent_whose_choices_follow_no_seed_is_not_blamed_for_reading_user_data() -> None:
    from itertools import count

    built = count(1)  # outside input: a counter that runs on across runs (like a clock)

    def unseeded(mdp, num_episodes, rng, /, *, billboard=None, **options):
        agent = toy_factory(mdp, num_episodes, rng, billboard=billboard, **options)
        plan = agent.begin_episode  # each policy shifted by a function of the counter, which runs on across runs
        agent.begin_episode = lambda: (plan() + int(1e6 * abs(np.sin(next(built))))) % mdp.num_actions
        return agent

    result = check_private_agent(unseeded, env(), num_episodes=6, options={"epsilon": 1.0})
    structure = result["billboard_structure"]
    assert structure.status == "not run", structure
    assert "even with no user's data replaced" in structure.reason
    assert "read user data outside the billboard" not in structure.reason


def test_an_agent_without_settings_has_that_property_not_applicable_and_passes() -> None:
    def without_settings(mdp, num_episodes, rng, /, *, billboard=None, **options):
        agent = toy_factory(mdp, num_episodes, rng, billboard=billboard, **options)
        agent.settings = None  # an adapter's agent reports no settings()
        return agent

    result = check_private_agent(without_settings, env(), num_episodes=6, options={"epsilon": 1.0})
    assert result.passed, result.summary()
    assert result["settings_report_the_claim"].status == NOT_APPLICABLE
    assert "reports no settings()" in result["settings_report_the_claim"].reason


def test_bad_arguments_and_a_factory_that_ignores_the_billboard() -> None:
    assert check_private_agent(toy_factory, env(), num_episodes=4, options={"epsilon": 1.0}).passed
    with pytest.raises(InvalidParameterError, match="num_episodes"):
        check_private_agent(toy_factory, env(), num_episodes=0, options={"epsilon": 1.0})

    def own_billboard(mdp, num_episodes, rng, /, *, billboard=None, **options):
        return toy_factory(mdp, num_episodes, rng, **options)

    with pytest.raises(InvalidParameterError, match="billboard"):
        check_private_agent(own_billboard, env(), num_episodes=4, options={"epsilon": 1.0})


def test_an_explicit_oversized_environment() -> None:
    raw = min2021_mdp(horizon=3, num_actions=4, rescaled=False)  # ‖φ‖ = 3
    result = check_private_agent(toy_factory, env(), num_episodes=4, options={"epsilon": 1.0}, oversized_env=raw)
    assert result["refuses_oversized_features"].status == PASS
    assert "= 3" in result["refuses_oversized_features"].reason


@dataclass(frozen=True)
class NoNormConfig:
    """A config that declares no feature-norm bound."""

    num_episodes: int
    epsilon: float
    delta: float
    relation: str
    conversion: str


def _without_declared_norm(mdp: Any, num_episodes: int, rng: np.random.Generator, /, *,
                           billboard: Billboard | None = None, **options: Any) -> ToyLocalAgent:
    """The toy agent, accepting any environment, with a config that declares no feature-norm bound."""
    agent = toy_factory(mdp, num_episodes, rng, billboard=billboard, bug="no_norm_check", **options)
    c = agent.config
    agent.config = NoNormConfig(num_episodes, c.epsilon, c.delta, c.relation, c.conversion)  # type: ignore[assignment]
    return agent


def test_the_norm_refusal_is_not_applicable_only_without_a_declared_bound_and_an_oversized_env() -> None:
    # (without the white-box checks: they audit the agent, which accepts any environment, on the oversized
    # audit environment, where its noise is too small — see the end of this test)
    result = check_private_agent(_without_declared_norm, env(), num_episodes=6, options={"epsilon": 1.0},
                                 whitebox=False)
    norm = result["refuses_oversized_features"]
    assert norm.status == NOT_APPLICABLE
    assert "declares no feature_norm_bound" in norm.reason
    assert result.passed and not result.failures and result.not_applicable == (norm,)
    assert all(p.status == "pass" for p in result.properties if p is not norm)
    assert "PASS (1 not applicable)" in result.summary()
    assert "[n/a] refuses_oversized_features" in result.summary()
    as_dict = result.to_dict()
    assert as_dict["not_applicable"] == ["refuses_oversized_features"]
    assert as_dict["properties"][5]["status"] == NOT_APPLICABLE
    assert_private_agent(_without_declared_norm, env(), num_episodes=6, options={"epsilon": 1.0}, whitebox=False)
    audited = check_private_agent(_without_declared_norm, env(), num_episodes=6, options={"epsilon": 1.0})
    assert audited["sensitivity_within_the_record"].status == "fail"
    assert "oversized audit environment" in audited["sensitivity_within_the_record"].reason
    # given an oversized environment, the property is checked, and an agent that accepts it fails
    raw = min2021_mdp(horizon=3, num_actions=4, rescaled=False)
    checked = check_private_agent(_without_declared_norm, env(), num_episodes=6, options={"epsilon": 1.0},
                                  oversized_env=raw, whitebox=False)
    assert checked["refuses_oversized_features"].status == "fail" and not checked.passed
    assert "the config declares none" in checked["refuses_oversized_features"].reason
    # an agent that declares a bound is always checked (the planted bug above), never not applicable
    declared = check_private_agent(toy_factory, env(), num_episodes=6, options={"epsilon": 1.0, "bug": "no_norm_check"},
                                   whitebox=False)
    assert declared["refuses_oversized_features"].status == "fail" and not declared.not_applicable


def test_a_registered_agent_that_accepts_an_oversized_environment_fails() -> None:
    from dpverify.agents.registry import AGENTS

    def accepting(mdp: Any, num_episodes: int, rng: np.random.Generator, /, **options: Any) -> Any:
        in_bound = dataclasses.replace(mdp, feature_norm_bound=min(mdp.feature_norm_bound, 1.0))
        return AGENTS["luyo"].factory(in_bound, num_episodes, rng, **options)  # ignores the declared bound

    small = min2021_mdp(horizon=2, num_actions=3)
    result = check_private_agent(accepting, small, num_episodes=4, options={"epsilon": 1.0})
    assert result["refuses_oversized_features"].status == "fail" and not result.not_applicable
    assert [p.name for p in result.failures] == ["refuses_oversized_features"]


def test_only_the_listed_properties_may_not_apply() -> None:
    assert MAY_NOT_APPLY == {"refuses_oversized_features", "settings_report_the_claim"}
    result = check_private_agent(toy_factory, env(), num_episodes=4, options={"epsilon": 1.0}, whitebox=False)
    assert all(isinstance(p, CheckResult) for p in result.properties)
    assert result.to_dict()["properties"][0] == {"name": "notion", "status": "pass",
                                                 "reason": "ldp: every release reads the current user only",
                                                 "evidence": {}, "claim": None}


def test_a_declared_bound_that_is_not_a_number_fails_rather_than_not_applying() -> None:
    @dataclass(frozen=True)
    class TextNormConfig(NoNormConfig):
        feature_norm_bound: str = "1.0"

    def text_norm(mdp: Any, num_episodes: int, rng: np.random.Generator, /, **options: Any) -> ToyLocalAgent:
        agent = _without_declared_norm(mdp, num_episodes, rng, **options)
        c = agent.config
        agent.config = TextNormConfig(num_episodes, c.epsilon, c.delta, c.relation, c.conversion)
        return agent

    result = check_private_agent(text_norm, env(), num_episodes=4, options={"epsilon": 1.0})
    norm = result["refuses_oversized_features"]
    assert norm.status == "fail" and "not a number: '1.0'" in norm.reason and not result.not_applicable


_OPTIMISED_SCRIPT = """
import sys
sys.path.insert(0, {here!r})
from test_agent_contract import env, toy_factory
from dpverify.testing import assert_private_agent, check_private_agent
assert_private_agent(toy_factory, env(), num_episodes=6, options={{"epsilon": 1.0}})  # the correct agent passes
for bug in ("reuse_noise", "raw_read", "no_cap", "no_norm_check", "under_claim", "relation", "no_notion"):
    whitebox = bug == "reuse_noise"  # the one bug only the white-box noise check sees
    options = {{"epsilon": 1.0, "bug": bug}}
    result = check_private_agent(toy_factory, env(), num_episodes=6, options=options, whitebox=whitebox)
    print(bug, sys.flags.optimize, sorted(p.name for p in result.failures))
    try:
        assert_private_agent(toy_factory, env(), num_episodes=6, options=options, whitebox=whitebox)
    except AssertionError:
        print(bug, "raised")
"""


@pytest.mark.slow
def test_the_contract_fails_every_planted_bug_under_python_minus_o() -> None:
    import subprocess
    import sys
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    done = subprocess.run([sys.executable, "-O", "-c", _OPTIMISED_SCRIPT.format(here=here)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    bugs = ("reuse_noise", "raw_read", "no_cap", "no_norm_check", "under_claim", "relation", "no_notion")
    for bug in bugs:
        row = next(line for line in lines if line.startswith(f"{bug} 1 "))  # optimize flag 1: asserts stripped
        assert row != f"{bug} 1 []", row
        assert f"{bug} raised" in lines


def _third_party(target: str) -> Any:
    from pathlib import Path

    from dpverify.agents.registry import agent_factory
    from dpverify.audits import third_party

    module, _, factory = target.partition(":")
    return agent_factory(f"{Path(third_party.__file__).parent / module}.py:{factory}")


@pytest.mark.parametrize(("target", "status"), [
    ("noisy_lsvi:make_raw_average", FAIL),        # a planner averaging in noisy copies of the raw statistics
    ("noisy_lsvi:make_published_average", PASS),  # ... of the published ones: post-processing
    ("silent:make_raw_explorer", FAIL),           # publishes nothing, acts on raw counts
    ("silent:make_agent", PASS),                  # publishes nothing, data-free: ε = 0
    ("closed_loop_ucbvi_adapter:make_choice_coins", NOT_RUN),  # coins drawn only at ties: their order follows data
])
def test_billboard_isolation_replaces_every_earlier_user_and_blames_only_what_the_data_changed(target: str,
                                                                                                status: str) -> None:
    result = check_private_agent(_third_party(target), env(), num_episodes=16, options={"epsilon": 1.0},
                                 whitebox=False)
    isolation = result["billboard_structure"]
    assert isolation.status == status, isolation.reason
    if status == FAIL:
        assert "its coins where they stood in the run: the agent reads user data outside the billboard" in \
            isolation.reason
    if target == "silent:make_agent":
        assert result.passed and "nothing was published" in isolation.reason
        assert result["ledger_within_claim"].reason.startswith("nothing was published")
    if status == NOT_RUN:
        assert "drawn in an order the users' data changes" in isolation.reason


def test_a_missing_cap_refutes_only_when_the_extra_episode_takes_the_ledger_above_the_claim() -> None:
    """An agent that accepts episode K + 1 fails the cap property; the failure refutes the claim when what it then
    releases takes its ledger above the claim (the third-party LSVI, calibrated for K, told its cap is K + 1), and
    leaves it undecided when the ledger still meets it (the toy's local messages; an agent that publishes nothing)."""
    from dpverify.audits.third_party import noisy_lsvi, silent

    toy = check_private_agent(toy_factory, env(), num_episodes=15, options={"epsilon": 1.0, "bug": "no_cap"})
    cap = toy["refuses_episodes_past_cap"]
    assert cap.status == "fail" and cap.claim == "undecided" and not cap.refutes, cap.reason

    def no_cap_silent(mdp, num_episodes, rng, /, *, billboard=None, **options):
        agent = silent.make_agent(mdp, num_episodes, rng, billboard=billboard, **options)
        agent.config = dataclasses.replace(agent.config, num_episodes=num_episodes + 1)
        return agent

    def no_cap_lsvi(mdp, num_episodes, rng, /, *, billboard=None, **options):
        agent = noisy_lsvi.make_agent(mdp, num_episodes, rng, billboard=billboard, **options)
        agent.config = dataclasses.replace(agent.config, num_episodes=num_episodes + 1)
        return agent

    mdp = min2021_mdp(horizon=2, num_actions=2)
    quiet = check_private_agent(no_cap_silent, mdp, num_episodes=6, whitebox=False)
    assert quiet["refuses_episodes_past_cap"].claim == "undecided", quiet.summary()
    assert not any(p.refutes for p in quiet.properties), quiet.summary()
    over = check_private_agent(no_cap_lsvi, mdp, num_episodes=6, whitebox=False)["refuses_episodes_past_cap"]
    assert over.refutes and "> the claim" in over.reason, over.reason
