"""The library API: minimize/maximize, make_algorithm, the dict space spec, run_config (in-process, small cases)."""
from __future__ import annotations

import math

import pytest

import hpoflow
from hpoflow.config.settings import ConfigError
from hpoflow.core.records import Evaluation
from hpoflow.core.space import Categorical, Float, Int, SpaceError, describe_space, parse_space
from hpoflow.runner.loop import ObjectiveError

SPEC = {"x": ("float", -1.0, 1.0), "lr": ("log", 1e-5, 1e-1), "layers": ("int", 1, 4), "act": ["relu", "tanh"]}


def test_the_dict_spec_gives_typed_parameters_in_order_and_describes_back():
    space = parse_space(SPEC)
    assert space.parameters == (Float("x", -1.0, 1.0), Float("lr", 1e-5, 1e-1, log=True), Int("layers", 1, 4),
                                Categorical("act", ("relu", "tanh")))
    assert parse_space(describe_space(space)) == space
    assert parse_space(space) is space


@pytest.mark.parametrize(("spec", "message"), [
    ({"x": ("exp", 1, 2)}, r"space\['x'\]=\('exp', 1, 2\) is not a parameter; allowed: \('float'"),
    ({"x": ("float", 1, 2, 3)}, "is not a parameter"),
    ({"x": 3}, r"space\['x'\]=3 is not a parameter"),
    ({"n": ("int", 1.5, 4)}, "low and high must be integers"),
    ({"x": ("float", "a", 2)}, "low and high must be numbers"),
    ({"x": ("float", 2.0, 1.0)}, "low=2.0 must be < high=1.0"),
    ({"lr": ("log", 0.0, 1.0)}, "log scale needs low > 0"),
    ({"act": []}, "needs at least one choice"),
    ({}, "at least one parameter"),
    ([("x", 0, 1)], "must be a SearchSpace or a dict"),
])
def test_a_bad_space_spec_is_one_line_naming_the_parameter(spec, message):
    with pytest.raises(SpaceError, match=message) as info:
        parse_space(spec)
    assert "\n" not in str(info.value)


def _quadratic(config):
    return (config["x"] - 0.3) ** 2 + 0.5 * (config["act"] == "tanh")


def test_minimize_finds_the_better_region_and_returns_every_record():
    result = hpoflow.minimize(_quadratic, {"x": ("float", -1.0, 1.0), "act": ["relu", "tanh"]}, rounds=10, seed=1)
    values = [r.value for r in result.records]
    assert len(result.records) == 10 and result.best_value == min(values)
    assert result.best_config == result.records[values.index(min(values))].config
    assert result.best_config["act"] == "relu" and abs(result.best_config["x"] - 0.3) < 0.2
    assert result.run_id is None  # not tracked


def test_maximize_keeps_the_largest_value_and_takes_evaluations_and_settings():
    def score(config):
        return Evaluation(value=-abs(config["n"] - 3), cost=2.0)

    result = hpoflow.maximize(score, {"n": ("int", 1, 8)}, algo="grid", rounds=12, seed=0)  # all 8 values
    assert result.best_value == max(r.value for r in result.records) == 0 and result.best_config == {"n": 3}
    assert result.summary["query_cost"] == 24.0


def test_same_seed_same_trajectory_and_a_setting_changes_it():
    space = {"x": ("float", 0.0, 1.0)}

    def run(**kw):
        return [r.config["x"] for r in hpoflow.minimize(lambda c: (c["x"] - 0.7) ** 2, space, algo="gp_ucb",
                                                         rounds=5, **kw).records]

    assert run(seed=2) == run(seed=2)
    assert run(seed=2, n_init=2, beta=50.0) != run(seed=2, n_init=2, beta=0.01)


def test_a_failing_objective_fails_the_run_or_is_skipped():
    def sometimes(config):
        if config["x"] > 0:
            raise RuntimeError("diverged")
        return config["x"]

    with pytest.raises(ObjectiveError, match="RuntimeError: diverged"):
        hpoflow.minimize(sometimes, {"x": ("float", -1.0, 1.0)}, algo="random", rounds=20)
    result = hpoflow.minimize(sometimes, {"x": ("float", -1.0, 1.0)}, algo="random", rounds=20, on_error="skip")
    assert any(r.failed for r in result.records) and result.summary["failed"] == sum(r.failed for r in result.records)
    bad = hpoflow.minimize(lambda c: "high", {"x": ("float", 0.0, 1.0)}, algo="random", rounds=2, on_error="skip")
    assert all(r.failed and "expected a float" in r.error for r in bad.records)


def test_make_algorithm_builds_a_registered_algorithm_with_its_yaml_defaults_and_surrogate():
    algo = hpoflow.make_algorithm("gp_ucb", SPEC, seed=0, beta=4.0, optimizer={"raw_samples": 64})
    assert (algo.config.beta, algo.config.optimizer.raw_samples, algo.config.beta_schedule) == (4.0, 64, "constant")
    s = algo.ask(1)
    assert set(s.config) == set(SPEC) and s.x.shape == (4,)
    algo.tell(s, Evaluation(value=1.0))
    tv = hpoflow.make_algorithm("tv_gp_ucb", {"x": ("float", 0.0, 1.0)})  # its YAML selects surrogate=tv_gp
    assert type(tv.model).__name__ == "TemporalGP"


def _cli_error(run_cli, *overrides: str) -> str:
    proc = run_cli(*overrides, "task=branin", "tracking=off", check=False)
    assert proc.returncode == 2
    return proc.stderr.strip().splitlines()[-1].removeprefix("Error: ")


def test_bad_settings_give_the_clis_one_line_errors(run_cli):
    cases = [({"beta": "abc"}, "algo.beta=abc"), ({"bogus": 1}, "algo.bogus=1")]
    for settings, override in cases:
        with pytest.raises(ConfigError) as info:
            hpoflow.make_algorithm("gp_ucb", SPEC, **settings)
        assert str(info.value) == _cli_error(run_cli, "algo=gp_ucb", override)
    with pytest.raises(ConfigError, match="Could not find 'algo/nope'; allowed: .*gp_ei"):
        hpoflow.make_algorithm("nope", SPEC)
    with pytest.raises(ConfigError, match="seed=-1 must be a non-negative integer"):
        hpoflow.minimize(_quadratic, SPEC, seed=-1)
    with pytest.raises(ConfigError, match="budget.rounds=0 must be a positive integer"):
        hpoflow.minimize(_quadratic, SPEC, rounds=0)


def test_minimize_tracked_is_a_finished_mlflow_run_with_the_space_as_params(store):
    from mlflow import MlflowClient

    result = hpoflow.minimize(_quadratic, {"x": ("float", -1.0, 1.0), "act": ["relu", "tanh"]}, algo="random",
                              rounds=4, tracking={"uri": store, "experiment": "lib"})
    run = MlflowClient(store).get_run(result.run_id)
    assert run.info.status == "FINISHED" and run.data.tags["task"] == "_quadratic" and run.data.tags["algo"] == "random"
    assert run.data.params["task.space.act"] == "['relu', 'tanh']" and run.data.params["algo.name"] == "random"
    assert run.data.metrics["best_value"] == result.best_value
    assert [m.value for m in MlflowClient(store).get_metric_history(result.run_id, "value")] == \
        [r.value for r in result.records]


def test_run_config_runs_a_registered_task_as_the_cli_does():
    result = hpoflow.run_config(["algo=random", "task=branin", "tracking=off", "budget.rounds=3", "progress=false"])
    assert len(result.records) == 3 and math.isfinite(result.summary["simple_regret"])
    same = hpoflow.run_config({"algo": {"name": "random"}, "surrogate": {"name": "gp"}, "task": {"name": "branin"},
                               "tracking": {"enabled": False}, "budget": {"rounds": 3}, "seed": 0})
    assert [r.config for r in same.records] == [r.config for r in result.records]
    with pytest.raises(ConfigError, match="algo='nope' is unknown"):
        hpoflow.run_config({"algo": {"name": "nope"}, "task": {"name": "branin"}})


def test_a_checkpointed_run_is_not_repeated_and_other_settings_are_refused(tmp_path):
    checkpoint = tmp_path / "run.json"
    space = {"x": ("float", -1.0, 1.0), "act": ["relu", "tanh"]}
    first = hpoflow.minimize(_quadratic, space, algo="random", rounds=4, checkpoint=checkpoint)

    def never(config):
        raise AssertionError("a finished run is not evaluated again")

    again = hpoflow.minimize(never, space, algo="random", rounds=4, checkpoint=checkpoint, name="_quadratic")
    assert [r.config for r in again.records] == [r.config for r in first.records]
    assert (again.best_value, again.best_config) == (first.best_value, first.best_config)
    with pytest.raises(ConfigError, match=r"other settings \(budget.rounds: 4 -> 5\)"):
        hpoflow.minimize(_quadratic, space, algo="random", rounds=5, checkpoint=checkpoint)


def test_the_default_algorithm_is_auto_and_the_summary_says_what_it_picked():
    """Issue 41: minimize(fn, space) ran gp_ei, not the recommended auto; with tracking off nothing said what auto
    picked. Now the default is auto and Result.summary carries its run tags."""
    import inspect

    assert inspect.signature(hpoflow.minimize).parameters["algo"].default == "auto"
    assert inspect.signature(hpoflow.maximize).parameters["algo"].default == "auto"
    result = hpoflow.minimize(lambda c: (c["x"] - 0.3) ** 2 + (c["y"] + 0.1) ** 2,
                              {"x": ("float", -1.0, 1.0), "y": ("float", -1.0, 1.0)}, rounds=40)
    assert result.summary["auto.choice"] == "cobyqa" and "40 rounds <= 20 x d" in result.summary["auto.reason"]
    assert result.summary["best_value"] == result.best_value
    picked = hpoflow.minimize(_quadratic, {"x": ("float", -1.0, 1.0), "act": ["relu", "tanh"]}, rounds=4).summary
    assert (picked["auto.choice"], picked["auto.settings"]) == ("gp_ei", "discrete=snap")


def test_auto_on_a_continuous_space_at_a_cobyqa_budget_gives_one_run_for_every_seed_as_the_readme_says():
    """The README's note on seed statistics under algo=auto (COBYQA from the centre of the box): if the seed ever
    moves the start, this fails and the README's sentence must change with it."""
    from tests.test_readme import README

    assert "COBYQA starts from the centre of the box whatever the" in README

    def run(seed):
        result = hpoflow.minimize(lambda c: (c["x"] - 0.3) ** 2 + abs(c["y"] + 0.1), {"x": ("float", -1.0, 1.0),
                                  "y": ("float", -1.0, 1.0)}, rounds=40, seed=seed)
        assert result.summary["auto.choice"] == "cobyqa"
        return [r.config for r in result.records[:8]]

    assert run(0) == run(7)
