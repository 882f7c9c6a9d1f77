"""The learning-curve suite: its file format read back exactly, the replayed task's values, costs, per-step
seconds and test values, and every shipped task well formed (every configuration found again by its own config)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from hpoflow.tasks.replay import ReplayTask, benchmarks
from hpoflow.tasks.suite import load_suite_task, suite_tasks


@pytest.fixture
def tiny(tmp_path):
    """Three configurations of one float over 4 epochs: config i's value after r epochs is i + 1 / r; test value
    10 x that; step r of config i takes (i + 1) * r seconds."""
    points = np.array([[0.125], [0.5], [0.875]], dtype=np.float32)
    val = np.array([[i + 1 / r for r in range(1, 5)] for i in range(3)], dtype=np.float32)
    seconds = np.array([[(i + 1) * r for r in range(1, 5)] for i in range(3)], dtype=np.float32)
    meta = {"direction": "minimize", "space": {"lr": {"type": "float", "low": 0.0, "high": 1.0}},
            "fidelity": {"name": "epochs", "min": 1, "max": 4, "integer": True}}
    path = tmp_path / "tiny.npz"
    np.savez_compressed(path, meta=np.asarray(json.dumps(meta)), points=points, val_error=val,
                        val_logloss=val.astype(np.float16), test_error=10 * val, seconds=seconds)
    return str(path)


def test_a_suite_file_replays_its_values_costs_step_seconds_and_test_values(tiny):
    task = ReplayTask(tiny)
    assert task.candidates.shape == (3, 1) and task.optimum == pytest.approx(0.25)
    ev = task.evaluate_at({"lr": 0.5}, fidelity=2, config_id=1, round=1)
    assert ev.value == pytest.approx(1.5) and ev.cost == 2 and ev.metrics["elapsed"] == pytest.approx(2 + 4)
    assert ev.metrics["test_value"] == pytest.approx(15.0)
    ev = task.evaluate_at({"lr": 0.5}, fidelity=4, config_id=1, round=2)  # continued: epochs 3 and 4 only
    assert ev.cost == 2 and ev.metrics["elapsed"] == pytest.approx(6 + 8) and [p[0] for p in ev.curve] == [3.0, 4.0]
    cut = ReplayTask(tiny, max_fidelity=2)  # a shorter training: the curves and their seconds cut at 2
    assert cut.evaluate({"lr": 0.875}, round=1).metrics["elapsed"] == pytest.approx(3 + 6)


def test_the_loader_decodes_the_design_and_names_the_allowed_tasks(tiny):
    data = load_suite_task(tiny)
    assert [c["lr"] for c in data["configs"]] == pytest.approx([0.125, 0.5, 0.875])
    assert len(data["step_seconds"]) == 3 and len(data["step_seconds"][0]) == 4
    with pytest.raises(ValueError, match="task.benchmark='nope.npz' is not a suite task; allowed: "):
        load_suite_task("nope.npz")


@pytest.mark.parametrize("name", suite_tasks())
def test_every_shipped_suite_task_is_well_formed(name):
    task = ReplayTask(name)
    n = len(task.configs)
    assert n >= 1000 and task.fidelity.max >= 30 and name in benchmarks()
    curves = np.asarray(task.curves)
    assert curves.shape == (n, task.fidelity.max) and np.isfinite(curves).all()
    assert (curves >= 0).all() and (curves <= 1).all()  # balanced error rates
    assert (np.asarray(task.step_seconds) >= 0).all()
    rows = [task.row(c) for c in task.configs[:: max(1, n // 64)]]  # every configuration is found again exactly
    assert rows == list(range(0, n, max(1, n // 64)))


def test_the_study_resolver_lists_the_shipped_tasks_by_family():
    import pytest as _pytest

    from hpoflow.config.resolvers import lc_suite
    from hpoflow.tasks.suite import suite_tasks

    assert lc_suite().split(",") == suite_tasks()
    linear = lc_suite("linear").split(",")
    assert linear and all(t.endswith("-linear") for t in linear)
    assert linear == [t for t in suite_tasks() if t.endswith("-linear")]
    with _pytest.raises(ValueError, match="family 'cnn2' is not recorded; allowed: "):
        lc_suite("cnn2")


def test_replayed_tasks_share_one_table_per_process_and_own_their_points():
    from hpoflow.tasks.replay import ReplayTask

    name = "breast_cancer-linear"
    a, b = ReplayTask(name, 0), ReplayTask(name, 1)
    assert a.curves is b.curves and a.configs is b.configs  # read once
    assert a.points is not b.points and bool((a.points == b.points).all())
    a.points[0, 0] = -1.0  # one run's candidates are its own
    assert float(b.points[0, 0]) != -1.0
    short = ReplayTask(name, 0, max_fidelity=9)
    assert short.fidelity.max == 9 and len(short.curves[0]) == 9 and len(a.curves[0]) == 30
