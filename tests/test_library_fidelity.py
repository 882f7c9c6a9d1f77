"""The library with a fidelity: minimize(train, space, algo=..., fidelity=(...), cost=...) and a Study whose
trials report(step, value) and stop at should_stop()."""
from __future__ import annotations

import pytest

import hpoflow
from hpoflow import Study
from hpoflow.config.settings import ConfigError

SPACE = {"x": ("float", 0.0, 1.0)}


def curve(config, epochs):
    """A learning curve: converges to (x - 0.3)^2 as epochs grow."""
    return (config["x"] - 0.3) ** 2 + 1.0 / epochs


def test_minimize_calls_the_objective_with_the_fidelity_keyword_and_counts_fidelity_units():
    seen = []

    def train(config, epochs):
        seen.append(epochs)
        return curve(config, epochs)

    r = hpoflow.minimize(train, SPACE, algo="hyperband", fidelity=("epochs", 1, 27), cost=300)
    assert set(seen) <= {1, 3, 9, 27} and 27 in seen and 1 in seen
    assert 300 - 27 < r.summary["query_cost"] == sum(seen) <= 300  # a float result from scratch costs its level
    # the incumbent: the best evaluation at the full fidelity (27), the only level it is taken from
    assert r.best_value == pytest.approx(min(curve(rec.config, 27) for rec in r.records if rec.fidelity == 27))
    assert r.summary["incumbent_fidelity"] == 27
    assert all(rec.fidelity in (1, 3, 9, 27) for rec in r.records)


def test_a_full_fidelity_algorithm_evaluates_at_the_maximum():
    r = hpoflow.minimize(curve, SPACE, algo="random", fidelity=("epochs", 1, 27), rounds=4)
    assert [rec.fidelity for rec in r.records] == [27] * 4 and r.summary["query_cost"] == 108


@pytest.mark.parametrize("fidelity, fragment", [
    (("epochs", 5, 2), "min=5 > max=2"),
    (("epochs", 0, 3), "min=0 must be > 0"),
    (("epochs", 1, 2.5, True), "fractional"),
    (("epochs", 1), "is not a fidelity"),
])
def test_a_bad_fidelity_spec_is_one_config_error(fidelity, fragment):
    with pytest.raises(ConfigError, match=fragment) as info:
        hpoflow.minimize(curve, SPACE, algo="hyperband", fidelity=fidelity, cost=10)
    assert "\n" not in str(info.value)


def test_an_objective_without_the_keyword_is_refused_naming_it():
    def train(config):
        return 0.0

    with pytest.raises(ConfigError, match="takes no keyword 'epochs'.*def train\\(config, epochs\\)"):
        hpoflow.minimize(train, SPACE, algo="hyperband", fidelity=("epochs", 1, 9), cost=10)


def test_a_multi_fidelity_algorithm_without_a_fidelity_is_refused():
    with pytest.raises(ConfigError, match="needs a task with a fidelity"):
        hpoflow.minimize(lambda c: 0.0, SPACE, algo="asha", rounds=3)


def test_study_trials_report_and_stop_by_ashas_rule():
    stopped, steps = 0, 0
    with Study(SPACE, algo="random", fidelity=("epochs", 1, 27), cost=300, seed=1) as s:
        while not s.done:
            trial = s.ask()
            assert trial.fidelity == 27
            for epoch in range(1, 28):
                trial.report(epoch, curve(trial.config, epoch))
                steps += 1
                if trial.should_stop():
                    stopped += 1
                    break
            s.tell(trial)  # the last reported value
        records = s.records
    assert stopped > 0 and s.result().summary["query_cost"] == steps  # a told trial costs the steps it reached
    assert all(rec.curve == [[e, curve(rec.config, e)] for e in range(1, int(rec.fidelity) + 1)] for rec in records)
    assert all(rec.fidelity in (1, 3, 9, 27) for rec in records)  # stopped at a rung, or trained to the end


def test_study_with_hyperband_says_the_level_to_train_to():
    with Study(SPACE, algo="hyperband", fidelity=("epochs", 1, 9), cost=100) as s:
        levels = []
        while not s.done:
            trial = s.ask()
            levels.append(trial.fidelity)
            s.tell(trial, curve(trial.config, trial.fidelity))
    assert levels[:9] == [1] * 9 and 9 in levels and s.result().summary["query_cost"] == sum(levels)


def test_report_checks_its_steps():
    with Study(SPACE, algo="random", fidelity=("epochs", 1, 9), rounds=2) as s:
        trial = s.ask()
        trial.report(1, 0.5)
        with pytest.raises(ValueError, match="steps must increase"):
            trial.report(1, 0.4)
    with Study(SPACE, algo="random", rounds=2) as s:
        with pytest.raises(ValueError, match="needs a study with a fidelity"):
            s.ask().report(1, 0.5)
    with pytest.raises(ConfigError, match="prune='median' is unknown"):
        Study(SPACE, algo="random", fidelity=("epochs", 1, 9), prune="median")


def misleading(config, epochs):
    """A curve that falls then rises: below the full 9 epochs a large x looks best, at 9 the best x is 0.3."""
    return (config["x"] - 0.3) ** 2 if epochs == 9 else -config["x"]


def test_a_study_has_no_incumbent_before_its_first_full_fidelity_evaluation_then_the_best_at_it():
    with Study(SPACE, algo="hyperband", fidelity=("epochs", 1, 9), cost=100, seed=0) as s:
        while not s.done:
            trial = s.ask()
            s.tell(trial, misleading(trial.config, trial.fidelity))
            if all(rec.fidelity < 9 for rec in s.records):  # the first bracket's low rungs
                assert s.best_value is None and s.best_config is None
        records = s.records
    full = [rec for rec in records if rec.fidelity == 9]
    best = min(full, key=lambda rec: rec.value)
    assert full and s.best_value == best.value and s.best_config == best.config
    assert min(rec.value for rec in records) < 0 < s.best_value  # the lower values below 9 epochs did not count


def test_the_front_of_several_objectives_holds_full_fidelity_evaluations_only():
    def two(config, epochs):
        return {"f1": misleading(config, epochs), "f2": 1.0 - config["x"]}

    r = hpoflow.minimize(two, SPACE, algo="hyperband", fidelity=("epochs", 1, 9), cost=60,
                         objectives={"f1": "min", "f2": "min"})
    full = {rec.config["x"] for rec in r.records if rec.fidelity == 9}
    assert r.pareto and {p["config"]["x"] for p in r.pareto} <= full and r.best_config["x"] in full
    assert r.summary["pareto_size"] == len(r.pareto)
