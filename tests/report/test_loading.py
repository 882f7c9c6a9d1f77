"""Bulk loading: the selection (parents, failures, sweeps, tags) and curves equal to MLflow's own histories."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from hpoflow.report import loading
from hpoflow.report.loading import SelectionError, load_study, to_run_curves
from tests.report.study_store import add_run, add_study_parent


@pytest.fixture
def study(store):
    """A parent study with 2 algorithms x 2 seeds (one FAILED, one RUNNING), plus runs that are not data."""
    client = MlflowClient(tracking_uri=store)
    exp = client.create_experiment("bo")
    parent = add_study_parent(client, exp, "bo", "sw1")
    ids = {}
    for algo, seed, vals, status in [("random", 0, [3.0, None, 2.0], "FINISHED"),
                                     ("random", 1, [4.0, 1.0, 5.0], "FINISHED"),
                                     ("gp_ei", 0, [2.0, 0.5, 0.7], "FINISHED"),
                                     ("gp_ei", 1, [2.5], "FAILED"),
                                     ("gp_ei", 2, [9.0], "RUNNING")]:
        ids[(algo, seed)] = add_run(client, exp, algo=algo, task="branin", seed=seed, values=vals, optimum=0.25,
                                    status=status, parent=parent, sweep_id="sw1", rounds=3,
                                    task_params={"dim": 2, "low": None})
    other = add_run(client, exp, algo="random", task="branin", seed=0, values=[1.0], sweep_id="sw2")
    replaced = add_run(client, exp, algo="gp_ei", task="branin", seed=0, values=[9.0], status="FAILED",
                       parent=parent, sweep_id="sw1")
    client.set_tag(replaced, "hpoflow.superseded", "true")  # a study re-run replaced it: not data
    report = client.create_run(exp, tags={"hpoflow.kind": "report"}).info.run_id
    client.set_terminated(report)
    deleted = add_run(client, exp, algo="random", task="branin", seed=7, values=[1.0], parent=parent,
                      sweep_id="sw1")
    client.delete_run(deleted)
    return {"uri": store, "parent": parent, "ids": ids, "other": other}


def _history(client, run_id, key):
    return {m.step: m.value for m in client.get_metric_history(run_id, key)}


def test_selection_skips_parents_reports_running_and_deleted_runs(study):
    data = load_study(study["uri"], experiment="bo", parent_run_id=study["parent"])
    ids = study["ids"]
    assert set(data.runs["run_id"]) == {ids[k] for k in [("random", 0), ("random", 1), ("gp_ei", 0), ("gp_ei", 1)]}
    assert list(data.parents["run_id"]) == [study["parent"]] and data.study_parent() == study["parent"]
    row = data.runs.set_index("run_id").loc[ids[("gp_ei", 1)]]
    assert row["status"] == "FAILED" and row["algo"] == "gp_ei" and row["seed"] == "1"
    assert row["task_key"] == "branin dim=2" and row["rounds"] == 3 and row["direction"] == "minimize"
    assert row["params.algo.name"] == "gp_ei" and row["tags.sweep_id"] == "sw1"
    assert row["metrics.value"] == 2.5 and row["parent_run_id"] == study["parent"]

    finished = load_study(study["uri"], experiment="bo", sweep_id="sw1", include_failed=False)
    assert set(finished.runs["status"]) == {"FINISHED"}
    assert len(finished.runs) == 3 and study["other"] not in set(finished.runs["run_id"])
    assert set(load_study(study["uri"], tags={"algo": "gp_ei"}).runs["seed"]) == {"0", "1"}
    client = MlflowClient(tracking_uri=study["uri"])
    elsewhere = client.create_experiment("elsewhere")
    child = add_run(client, elsewhere, algo="gp_ei", task="branin", seed=0, values=[1.0], parent=study["parent"])
    only_child = load_study(study["uri"], experiment="elsewhere")  # its parent is not in the selection
    assert list(only_child.runs["run_id"]) == [child] and only_child.study_parent() == study["parent"]
    everything = load_study(study["uri"])
    assert study["other"] in set(everything.runs["run_id"]) and len(everything.runs) == 6
    assert everything.study_parent() == study["parent"]  # one study met by the selection


def test_curves_equal_mlflow_histories_and_missing_steps_are_nan(study):
    data = load_study(study["uri"], experiment="bo", metrics=None)
    client = MlflowClient(tracking_uri=study["uri"])
    assert {"value", "best_value", "regret", "query_cost"} <= set(data.curves.columns)
    for run_id, curve in data.curves.groupby("run_id"):
        for key in ("value", "best_value", "regret", "query_cost"):
            logged = _history(client, run_id, key)
            got = dict(zip(curve["step"], curve[key]))
            assert {s: v for s, v in got.items() if not np.isnan(v)} == logged
    r0 = data.curves[data.curves["run_id"] == study["ids"][("random", 0)]]
    assert list(r0["step"]) == [1, 2, 3] and np.isnan(r0["value"].iloc[1]) and r0["best_value"].iloc[1] == 3.0
    (curve,) = [c for c in to_run_curves(data) if c.run_id == study["ids"][("random", 0)]]
    np.testing.assert_allclose(curve.values, [3.0, np.nan, 2.0])
    np.testing.assert_allclose(curve.regret, [2.75, np.nan, 1.75])
    assert curve.task_key == ("branin", "dim=2")


def test_client_path_reads_the_same_tables_as_the_sql_path(study, monkeypatch):
    fast = load_study(study["uri"], experiment="bo")
    monkeypatch.setattr(loading, "_sql_store", lambda client: None)  # as against an http:// server
    slow = load_study(study["uri"], experiment="bo")
    cols = ["run_id", "status", "algo", "task_key", "seed", "rounds", "parent_run_id", "metrics.value"]
    key = ["run_id"]
    pd.testing.assert_frame_equal(fast.runs[cols].sort_values(key).reset_index(drop=True),
                                  slow.runs[cols].sort_values(key).reset_index(drop=True), check_dtype=False)
    curve_cols = ["run_id", "step", "value", "best_value", "regret", "query_cost"]
    pd.testing.assert_frame_equal(fast.curves[curve_cols], slow.curves[curve_cols], check_dtype=False)


def test_bad_selection_is_a_selection_error(study):
    with pytest.raises(SelectionError, match="tracking.experiment='nope' not found.*available: .*bo"):
        load_study(study["uri"], experiment="nope")
    with pytest.raises(SelectionError, match="parent_run_id='abc'"):
        load_study(study["uri"], parent_run_id="abc")
    assert load_study(study["uri"], sweep_id="none-such").runs.empty


def test_task_labels_keep_only_the_settings_that_differ_between_a_tasks_runs():
    from hpoflow.report.loading import _task_key

    df = pd.DataFrame({"tags.task": ["branin", "branin", "bbob", "bbob", "bbob", "zdt1", "ridge", "ridge"],
                       "params.task.dim": ["2", "2", "2", "2", "4", "30", None, "3"],
                       "params.task.function": [None, None, "1", "15", "1", None, None, None],
                       "params.task.noise_std": ["0.0"] * 8})
    assert _task_key(df).tolist() == ["branin", "branin", "bbob dim=2 function=1", "bbob dim=2 function=15",
                                      "bbob dim=4 function=1", "zdt1", "ridge", "ridge dim=3"]


def test_an_algorithm_setting_swept_on_one_task_and_seed_labels_its_runs():
    """An ablation (algo.steps=5,10 on the same tasks and seeds) gets one row per setting; a setting that only
    differs between tasks (resolved per task, e.g. a minimum fidelity) does not split the algorithm."""
    df = pd.DataFrame({
        "tags.task": ["a", "a", "b", "b", "a", "b"],
        "tags.seed": ["0", "0", "0", "0", "0", "0"],
        "params.algo.steps": ["10", "5", "10", "5", None, None],
        "params.algo.min_fidelity": ["1", "1", "3", "3", "1", "3"],
    })
    names = pd.Series(["ft", "ft", "ft", "ft", "random", "random"])
    labels = loading._algo_key(df, names, df["tags.task"] + " seed=" + df["tags.seed"])
    assert list(labels) == ["ft steps=10", "ft steps=5", "ft steps=10", "ft steps=5", "random", "random"]
