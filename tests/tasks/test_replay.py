"""task=lc_replay: recorded learning curves replayed exactly, continued trials, recorded seconds as elapsed."""
from __future__ import annotations

import gzip
import json

import pytest

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.multi_fidelity import MultiFidelity
from hpoflow.algorithms.multi_fidelity_config import MultiFidelityConfig
from hpoflow.core.budget import Budget
from hpoflow.runner.loop import Loop
from hpoflow.runner.simulated import drive_simulated
from hpoflow.tasks.replay import ReplayTask, benchmarks, load_benchmark


@pytest.fixture
def bench(tmp_path):
    """Four configurations of one float, curves over 9 epochs: config i's value after r epochs is i + 1 / r."""
    configs = [{"lr": v} for v in (0.1, 0.2, 0.3, 0.4)]
    data = {"direction": "minimize", "space": {"lr": {"type": "float", "low": 0.0, "high": 1.0}},
            "fidelity": {"name": "epochs", "min": 1, "max": 9, "integer": True}, "configs": configs,
            "curves": [[i + 1 / r for r in range(1, 10)] for i in range(4)], "seconds": [9.0, 18.0, 27.0, 36.0]}
    path = tmp_path / "tiny.json.gz"
    with gzip.open(path, "wt") as fh:
        json.dump(data, fh)
    return str(path)


def test_values_costs_curves_and_seconds_are_the_recorded_ones(bench):
    task = ReplayTask(bench)
    assert task.optimum == pytest.approx(1 / 9) and task.candidates.shape == (4, 1)
    ev = task.evaluate_at({"lr": 0.2}, fidelity=3, config_id=7, round=1)
    assert ev.value == pytest.approx(1 + 1 / 3) and ev.cost == 3 and ev.metrics["elapsed"] == pytest.approx(6.0)
    assert ev.curve == [[1.0, 2.0], [2.0, 1.5], [3.0, pytest.approx(1 + 1 / 3)]]
    ev = task.evaluate_at({"lr": 0.2}, fidelity=9, config_id=7, round=2)  # continued from 3: 6 units, 12 s
    assert ev.cost == 6 and ev.metrics["elapsed"] == pytest.approx(12.0) and [p[0] for p in ev.curve] == list(
        range(4, 10))
    assert task.evaluate({"lr": 0.4}, round=3).value == pytest.approx(3 + 1 / 9)
    assert task.row({"lr": 0.26}) == 2  # not a recorded configuration: the nearest one


def test_max_fidelity_cuts_the_curves_and_their_seconds(bench):
    task = ReplayTask(bench, max_fidelity=3)
    assert task.fidelity.max == 3 and task.optimum == pytest.approx(1 / 3)  # the best value after 3 epochs
    ev = task.evaluate({"lr": 0.2}, round=1)
    assert ev.fidelity == 3 and ev.value == pytest.approx(1 + 1 / 3) and ev.metrics["elapsed"] == pytest.approx(6.0)
    for bad in (10, 0, 2.5, True):
        with pytest.raises(ValueError, match=rf"task.max_fidelity={bad!r} must be an integer in \[1, 9\]"):
            ReplayTask(bench, max_fidelity=bad)


def test_a_multi_fidelity_method_runs_on_it_in_simulated_time(bench):
    task = ReplayTask(bench)
    algo = MultiFidelity(MultiFidelityConfig(scheduler="asha"), BuildContext(task, 1000, seed=0))
    result = drive_simulated(Loop(task, algo, budget=Budget(rounds=12, workers=2, executor="simulated")), 2)
    assert all(r.config["lr"] in (0.1, 0.2, 0.3, 0.4) for r in result.records)  # only recorded configurations
    sim = [m["sim_time"] for m in result.metrics]
    assert sim == sorted(sim) and sim[-1] > 0


def test_an_unknown_benchmark_names_the_shipped_ones():
    with pytest.raises(ValueError, match="task.benchmark='nope' is unknown; allowed: "):
        load_benchmark("nope")


def test_the_shipped_benchmarks_load_and_cover_the_real_tasks():
    names = benchmarks()
    assert {"digits_mlp", "breast_cancer_gb"} <= set(names)
    for name in names:
        task = ReplayTask(name)
        assert len(task.curves) == len(task.configs) == len(task.seconds) >= 32
        assert all(len(c) == task.fidelity.max for c in task.curves)
