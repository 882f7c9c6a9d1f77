"""Data profiles (COCO-style ECDFs of run lengths) on hand-made cases."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from hpoflow.report import profiles as pr
from hpoflow.report.build import build
from hpoflow.report.loading import load_study
from tests.report.study_store import add_run

INF = math.inf


def test_targets_are_cocos_51_log_spaced_values_from_1e2_to_1e_minus_8():
    assert len(pr.TARGETS) == 51
    assert pr.TARGETS[0] == pytest.approx(1e2) and pr.TARGETS[-1] == pytest.approx(1e-8)
    assert np.allclose(np.diff(np.log10(pr.TARGETS)), -0.2)


def test_run_lengths_are_the_first_evaluation_reaching_each_target():
    nr = np.array([[5.0, 2.0, 0.5, 0.5],
                   [np.nan, 3.0, 3.0, 0.01]])
    got = pr.runtimes(nr, np.array([10.0, 1.0, 0.1, 0.001]))
    assert got.tolist() == [[1, 3, INF, INF], [2, 4, 4, INF]]


def test_a_target_equal_to_the_value_is_reached():
    assert pr.runtimes(np.array([[2.0, 1.0]]), np.array([1.0])).tolist() == [[2.0]]


def test_ecdf_counts_pairs_within_each_budget():
    lengths = np.array([[1, 3, INF, INF], [2, 4, 4, INF]])
    got = pr.ecdf(lengths, np.array([0, 1, 2, 3, 4, 10, INF]))
    assert got.tolist() == [0, 1 / 8, 2 / 8, 3 / 8, 5 / 8, 5 / 8, 5 / 8]   # never-reached pairs never count
    assert np.isnan(pr.ecdf(np.array([]), np.array([1.0]))).all()


@pytest.mark.parametrize("f, group", [(1, "separable (f1-f5)"), (5, "separable (f1-f5)"),
                                      (6, "low/moderate conditioning (f6-f9)"),
                                      (14, "high conditioning, unimodal (f10-f14)"),
                                      (15, "multimodal, adequate structure (f15-f19)"),
                                      (24, "multimodal, weak structure (f20-f24)")])
def test_bbob_groups(f, group):
    assert pr.bbob_group(f) == group


def test_bbob_group_outside_1_24_is_an_error():
    with pytest.raises(ValueError, match="25"):
        pr.bbob_group(25)


def _bbob_study() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two algorithms on f1 d=2, f15 d=2 and f1 d=4 (one run each), 4 rounds; nr curves chosen by hand."""
    tasks = {"bbob dim=2 function=1": (2, 1), "bbob dim=2 function=15": (2, 15), "bbob dim=4 function=1": (4, 1)}
    nr = {("a", "bbob dim=2 function=1"): [50, 0.5, 0.5, 1e-3],
          ("a", "bbob dim=2 function=15"): [200, 200, 20, 20],
          ("a", "bbob dim=4 function=1"): [5, 5, 5, 5],
          ("b", "bbob dim=2 function=1"): [200, 200, 200, 200],
          ("b", "bbob dim=2 function=15"): [1e-9, 1e-9, 1e-9, 1e-9],
          ("b", "bbob dim=4 function=1"): [0.5, 0.5, 0.5, 0.5]}
    runs = pd.DataFrame([{"run_id": f"{algo}|{task}", "algo": algo, "task": "bbob", "task_key": task, "seed": "0",
                          "params.task.dim": str(tasks[task][0]), "params.task.function": str(tasks[task][1])}
                         for algo, task in nr])
    curves = pd.DataFrame([{"task": task, "algo": algo, "seed": "0", "run_id": f"{algo}|{task}", "step": t + 1,
                            "nr": v} for (algo, task), vals in nr.items() for t, v in enumerate(vals)])
    return runs, curves


def test_profiles_per_dimension_over_all_functions_and_per_group():
    runs, curves = _bbob_study()
    prof = pr.data_profiles(curves, runs, targets=np.array([100.0, 1.0, 0.01]))
    assert prof.per_dimension
    final = prof.final.set_index(["dim", "algo"])["fraction"]
    # d=2, a: f1 reaches 100, 1, 0.01 (3 targets); f15 reaches 100 only -> 4 of 6 pairs
    assert final[(2.0, "a")] == pytest.approx(4 / 6)
    assert final[(2.0, "b")] == pytest.approx(3 / 6)   # f15 all three, f1 none
    assert final[(4.0, "a")] == pytest.approx(1 / 3) and final[(4.0, "b")] == pytest.approx(2 / 3)
    d2a = prof.curves[(prof.curves["dim"] == 2) & (prof.curves["algo"] == "a") & (prof.curves["panel"] == pr.ALL)]
    # x is evaluations / dimension: a's f1 run reaches 1 at evaluation 2 (x = 1), 0.01 at evaluation 4 (x = 2)
    at = dict(zip(d2a["x"].round(6), d2a["fraction"]))
    assert at[0.5] == pytest.approx(1 / 6)          # evaluation 1: only f1's 100
    assert at[2.0] == pytest.approx(4 / 6)
    assert np.all(np.diff(d2a["fraction"].to_numpy()) >= 0)
    groups = set(prof.curves.loc[prof.curves["dim"] == 2, "panel"])
    assert groups == {pr.ALL, "separable (f1-f5)", "multimodal, adequate structure (f15-f19)"}
    sep_b = prof.curves[(prof.curves["panel"] == "separable (f1-f5)") & (prof.curves["dim"] == 2)
                        & (prof.curves["algo"] == "b")]
    assert sep_b["fraction"].max() == 0.0 and (sep_b["pairs"] == 3).all()
    table = pr.final_table(prof)
    assert list(table.columns) == ["algorithm", "d=2", "d=4"]
    assert table["algorithm"].tolist() == ["b", "a"]   # mean over dims (3/6 + 2/3) / 2 > (4/6 + 1/3) / 2


def test_tasks_without_dimension_are_one_panel_against_evaluations():
    runs, curves = _bbob_study()
    runs = runs.drop(columns=["params.task.dim", "params.task.function"]).assign(task="synthetic")
    prof = pr.data_profiles(curves, runs, targets=np.array([100.0, 1.0, 0.01]))
    assert not prof.per_dimension and set(prof.curves["panel"]) == {pr.ALL}
    assert set(prof.final["dim"]) == {pr.ALL}
    assert prof.final.set_index("algo").at["a", "fraction"] == pytest.approx(5 / 9)
    assert pr.final_table(prof).columns.tolist() == ["algorithm", "all tasks"]


def test_report_from_the_store_writes_the_data_profile_figures_and_section(store, tmp_path):
    client = MlflowClient(tracking_uri=store)
    exp = client.create_experiment("bbob")
    for f in (1, 15):
        for algo, start in (("random", 40.0), ("gp_ei", 20.0)):
            for seed in (0, 1):
                add_run(client, exp, algo=algo, task="bbob", seed=seed, optimum=0.0, rounds=5,
                        values=[start / t ** (2 + seed) for t in range(1, 6)], task_params={"dim": 2, "function": f})
    built = build(load_study(store, experiment="bbob"), tmp_path, best_configs=False)
    names = {p.name for p in built.figures}
    assert {"data_profile.png", "data_profile_groups.png", "data_profile.svg"} <= names
    html = built.html.read_text()
    assert "Data profiles" in html and "51 targets log-spaced from 1e2 to 1e-8" in html
    assert "Data profiles:" in built.text and "| gp_ei |" in built.text
