"""task=bbob: COCO's functions (cocoex) checked against a second implementation (IOHprofiler's ``ioh``)."""
from __future__ import annotations

import numpy as np
import pytest

from hpoflow.config.settings import ConfigError, validate
from hpoflow.tasks.bbob import BBOBTask
from scripts.check_bbob import max_abs_difference
from tests.conftest import mlflow_runs


@pytest.mark.parametrize("function", range(1, 25))
def test_values_and_optimum_agree_with_ioh(function):
    pytest.importorskip("ioh")
    for dim, instance in ((2, 1), (5, 3), (10, 7)):
        diff, scale, f_star_diff = max_abs_difference(function, dim, instance)
        assert diff <= 1e-11 * max(1.0, scale) and f_star_diff <= 1e-12, (function, dim, instance, diff, scale)


def test_optimum_is_attained_at_the_known_minimiser_and_batches_match_single_points():
    task = BBOBTask(function=7, instance=2, dim=4)
    x_star = task.problem.best_parameter()
    ev = task.evaluate({f"x{i}": float(v) for i, v in enumerate(x_star)}, round=1)
    assert ev.value == pytest.approx(task.optimum, abs=1e-9) and ev.true_value == ev.value
    X = np.random.default_rng(1).uniform(-5, 5, (6, 4))
    single = [task.evaluate({f"x{i}": v for i, v in enumerate(row)}, round=1).value for row in X]
    assert np.allclose(task.values(X), single)
    assert task.direction.value == "minimize" and task.space.dim == 4
    assert all(p.low == -5.0 and p.high == 5.0 for p in task.space.parameters)


def test_noise_is_added_to_the_value_only():
    task = BBOBTask(function=1, instance=1, dim=2, noise_std=0.5, seed=3)
    ev = task.evaluate({"x0": 0.0, "x1": 0.0}, round=1)
    assert ev.value != ev.true_value and ev.true_value == pytest.approx(float(task.values(np.zeros((1, 2)))[0]))


@pytest.mark.parametrize("override,fragment", [("function", 25), ("function", 0), ("instance", 0), ("dim", 1)])
def test_bad_settings_are_config_errors(override, fragment):
    raw = {"algo": {"name": "random"}, "surrogate": {"name": "gp"}, "task": {"name": "bbob", override: fragment}}
    with pytest.raises(ConfigError, match=f"task.{override}={fragment}"):
        validate(raw)


def test_cli_run_logs_regret_against_the_known_optimum(run_cli, store):
    run_cli("algo=random", "task=bbob", "task.function=8", "task.dim=3", "task.instance=2", "budget.rounds=4",
            f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "bbob")
    assert run.info.status == "FINISHED" and run.data.tags["regret_reference"] == "optimum"
    assert run.data.params["task.function"] == "8" and run.data.params["task.dim"] == "3"
    assert run.data.metrics["simple_regret"] > 0
