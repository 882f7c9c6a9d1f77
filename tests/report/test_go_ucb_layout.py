"""The GO-UCB study table: classifier regret against the best accuracy any run found, Wald bars, row order."""
from __future__ import annotations

import math

import pandas as pd

from hpoflow.report.papers import LAYOUTS, go_ucb_regret


def _run(cell: str, model: str, seed: int, cum: float, best: float, status: str = "FINISHED") -> dict:
    return {"params.task.name": "breast_cancer", "params.task.model": model, "params.seed": str(seed),
            "params.sweep.cell": cell, "params.budget.rounds": "10", "metrics.cumulative_regret": cum,
            "metrics.best_value": best, "status": status}


def test_classifier_regret_is_taken_against_the_best_accuracy_of_the_study_per_model_and_seed():
    # the runs logged regret against the bound 1: R_T(f*) = cumulative_regret - T (1 - f*)
    runs = pd.DataFrame([_run("random", "mlp", 0, 1.0, 0.95), _run("GO-UCB", "mlp", 0, 0.6, 0.97),
                         _run("random", "mlp", 1, 2.0, 0.90), _run("GO-UCB", "mlp", 1, 1.5, 0.92),
                         _run("GO-UCB", "rf", 0, 0.5, 0.96, status="FAILED")])
    text = go_ucb_regret(runs)
    lines = {line.split()[0]: line for line in text.splitlines()[2:]}
    assert list(lines) == ["GO-UCB", "random"]  # the paper's row order
    go = [0.6 - 10 * (1 - 0.97), 1.5 - 10 * (1 - 0.92)]  # 0.3, 0.7
    rnd = [1.0 - 10 * (1 - 0.97), 2.0 - 10 * (1 - 0.92)]  # 0.7, 1.2
    half = 1.96 * pd.Series(go).std() / math.sqrt(2)
    assert f"{sum(go) / 2:.3g} ± {half:.2g} [2]" in lines["GO-UCB"]
    assert f"{sum(rnd) / 2:.3g} ±" in lines["random"]
    assert "1 failed" in lines["GO-UCB"] and "breast_cancer-rf" in text.splitlines()[1]


def test_synthetic_regret_is_the_logged_one_and_the_studies_have_the_layout():
    runs = pd.DataFrame([{"params.task.name": "go_ucb_f1", "params.seed": "0", "params.sweep.cell": "GO-UCB",
                          "params.budget.rounds": "25", "metrics.cumulative_regret": 42.0,
                          "metrics.best_value": 26.0, "status": "FINISHED"}])
    assert "42 ± 0 [1]" in go_ucb_regret(runs)
    assert all(LAYOUTS[name] is go_ucb_regret for name in ("go_ucb_classifiers", "go_ucb_synthetic", "go_ucb_f1"))
