"""The library with several objectives: minimize(fn, space, objectives=..., constraints=..., reference=...)."""
from __future__ import annotations

import math

import pytest

import hpoflow
from hpoflow.config.settings import ConfigError
from hpoflow.core.objectives import dominates
from hpoflow.runner.loop import ObjectiveError
from tests.conftest import mlflow_runs

SPACE = {"x": ("float", 0.0, 1.0), "y": ("float", 0.0, 1.0)}


def two(config):
    """A ZDT1-like pair over (x, y): front f2 = 1 - sqrt(f1) at y = 0; mem grows with x."""
    g = 1 + config["y"]
    return {"f1": config["x"], "f2": g * (1 - math.sqrt(config["x"] / g)), "mem": 100 * config["x"]}


def test_pareto_is_the_feasible_non_dominated_set_and_value_is_the_first_objective():
    r = hpoflow.minimize(two, SPACE, algo="random", rounds=25, objectives={"f1": "min", "f2": "min"},
                         constraints={"mem": ("<=", 70)}, reference=[1.1, 2.2])
    assert [rec.value for rec in r.records] == [rec.values["f1"] for rec in r.records]
    assert r.pareto and all(p["values"]["mem"] <= 70 for p in r.pareto)
    feasible = [(rec.values["f1"], rec.values["f2"]) for rec in r.records if rec.values["mem"] <= 70]
    front = [(p["values"]["f1"], p["values"]["f2"]) for p in r.pareto]
    assert all(not any(dominates(q, p) for q in feasible) for p in front)  # none dominated
    assert all(any(dominates(p, q) or p == q for p in front) for q in feasible)  # every other one is
    assert [m["feasible"] for m in r.metrics] == [float(rec.values["mem"] <= 70) for rec in r.records]
    hv = [m["hypervolume"] for m in r.metrics]
    assert all(b >= a for a, b in zip(hv, hv[1:])) and hv[-1] > 0
    assert r.summary["hypervolume"] == hv[-1] and r.summary["pareto_size"] == len(r.pareto)


def test_a_max_objective_is_negated_in_value_and_its_front_is_the_largest():
    r = hpoflow.minimize(lambda c: {"acc": c["x"], "t": c["x"] ** 2}, SPACE, algo="random", rounds=8,
                         objectives={"acc": "max", "t": "min"})
    assert [rec.value for rec in r.records] == [-rec.values["acc"] for rec in r.records]
    assert "hypervolume" not in r.metrics[-1]  # no reference point given: none logged
    assert len(r.pareto) == 8  # acc up and t up together: every point trades one for the other


def test_single_objective_runs_have_no_pareto_and_no_new_metrics():
    r = hpoflow.minimize(lambda c: c["x"], SPACE, algo="random", rounds=3)
    assert r.pareto is None and not {"hypervolume", "feasible"} & set(r.metrics[-1])
    assert not {"hypervolume", "pareto_size"} & set(r.summary)


def test_auto_picks_parego_for_several_objectives():
    r = hpoflow.minimize(two, SPACE, rounds=3, objectives={"f1": "min", "f2": "min"})
    assert r.summary["auto.choice"] == "parego"


@pytest.mark.parametrize("kwargs, message", [
    ({"objectives": {"f1": "up"}}, "objectives['f1']='up' is not a direction; allowed: 'min', 'max'"),
    ({"objectives": {"f1": "min"}, "constraints": {"mem": ("=<", 1)}}, "constraints['mem']=('=<', 1) is not a"),
    ({"constraints": {"mem": ("<=", 1)}}, "objectives=None is not an objectives spec"),
    ({"objectives": {"f1": "min", "f2": "min"}, "reference": [1]}, "reference=[1] is not a reference point"),
])
def test_bad_specs_are_one_config_error(kwargs, message):
    with pytest.raises(ConfigError) as info:
        hpoflow.minimize(two, SPACE, algo="random", rounds=2, **kwargs)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_maximize_refuses_objectives():
    with pytest.raises(ConfigError, match="^objectives= go with minimize"):
        hpoflow.maximize(two, SPACE, algo="random", rounds=2, objectives={"f1": "min"})


def test_a_value_fn_does_not_return_is_named_at_the_first_evaluation():
    with pytest.raises(ObjectiveError, match=r"round 1: ValueError: objective 'f3' is not among the values the task "
                                             r"returned \(f1, f2, mem\)"):
        hpoflow.minimize(two, SPACE, algo="random", rounds=3, objectives={"f1": "min", "f3": "min"})
    with pytest.raises(ObjectiveError, match="with objectives it must return a dict of values"):
        hpoflow.minimize(lambda c: 1.0, SPACE, algo="random", rounds=3, objectives={"f1": "min"})


def test_tracked_run_logs_values_feasibility_and_hypervolume(tmp_path):
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    r = hpoflow.minimize(two, SPACE, algo="random", rounds=5, objectives={"f1": "min", "f2": "min"},
                         constraints={"mem": ("<=", 70)}, reference={"f1": 1.1, "f2": 2.2}, tracking=uri)
    (run,) = mlflow_runs(uri)
    assert run.info.run_id == r.run_id
    assert run.data.metrics["hypervolume"] == pytest.approx(r.metrics[-1]["hypervolume"])
    assert {"f1", "f2", "mem", "feasible"} <= set(run.data.metrics)
    assert run.data.params["task.objectives.f1"] == "min" and run.data.params["task.reference"] == "[1.1, 2.2]"


def test_a_resumed_run_rebuilds_its_front_from_the_checkpoint(tmp_path):
    kwargs = dict(algo="random", rounds=8, objectives={"f1": "min", "f2": "min"}, reference=[1.1, 2.2],
                  constraints={"mem": ("<=", 70)})
    whole = hpoflow.minimize(two, SPACE, **kwargs)
    calls = []

    def stops(config):
        calls.append(1)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return two(config)

    checkpoint = tmp_path / "run.json"
    with pytest.raises(KeyboardInterrupt):
        hpoflow.minimize(stops, SPACE, checkpoint=checkpoint, name="two", **kwargs)
    resumed = hpoflow.minimize(two, SPACE, checkpoint=checkpoint, **kwargs)
    assert [m["hypervolume"] for m in resumed.metrics] == [m["hypervolume"] for m in whole.metrics]
    assert resumed.pareto == whole.pareto


def test_a_study_tells_dicts_of_values():
    from hpoflow import Study

    study = Study(SPACE, algo="random", rounds=6, objectives={"f1": "min", "f2": "min"}, reference=[1.1, 2.2])
    trial = study.ask()
    with pytest.raises(ValueError, match=r"^objective 'f2' is not among the values the task returned \(f1\)"):
        study.tell(trial, {"f1": 0.5})
    study.tell(trial, two(trial.config))  # still pending after the refusal
    for _ in range(5):
        t = study.ask()
        study.tell(t, two(t.config))
    r = study.result()
    assert len(r.records) == 6 and r.pareto and r.metrics[-1]["hypervolume"] > 0
    assert [rec.value for rec in r.records] == [rec.values["f1"] for rec in r.records]


def test_result_best_is_the_best_feasible_point_in_the_objectives_own_sign():
    r = hpoflow.minimize(lambda c: {"acc": c["x"], "t": c["x"] ** 2}, SPACE, algo="random", rounds=8,
                         objectives={"acc": "max", "t": "min"})
    accs = [rec.values["acc"] for rec in r.records]
    assert r.best_value == max(accs) > 0  # not negated
    assert r.best_config == r.records[accs.index(max(accs))].config
    c = hpoflow.minimize(lambda cfg: {"f": cfg["x"], "mem": 100 * cfg["x"]}, SPACE, algo="random", rounds=12,
                         objectives={"f": "max"}, constraints={"mem": ("<=", 50)})
    feasible = [rec.values["f"] for rec in c.records if rec.values["mem"] <= 50]
    assert c.best_value == max(feasible) and c.best_config["x"] <= 0.5
    assert max(rec.values["f"] for rec in c.records) > 0.5  # the unconstrained best was infeasible
