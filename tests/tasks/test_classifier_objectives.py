"""Classifier tasks' named values (accuracy, fit_s, size) and the two-objective view (task.objectives)."""
from __future__ import annotations

import re

import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from hpoflow.tasks.sklearn_hpo import ClassifierTask, load_dataset, model_size

GB = {"loss": "log_loss", "learning_rate": 0.1, "n_estimators": 20, "subsample": 0.8, "criterion": "friedman_mse",
      "min_samples_split": 2, "min_samples_leaf": 1, "min_weight_fraction_leaf": 0.01, "max_depth": 3,
      "max_features": "sqrt", "max_leaf_nodes": 4}


def test_model_size_counts_leaves_and_weights_by_hand():
    X, y = load_dataset("breast_cancer")
    gb = GradientBoostingClassifier(n_estimators=7, max_leaf_nodes=3, random_state=0).fit(X, y)
    assert model_size(gb) == sum(t.tree_.n_leaves for t in gb.estimators_.ravel()) and model_size(gb) <= 21
    rf = RandomForestClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y)
    assert model_size(rf) == sum(t.tree_.n_leaves for t in rf.estimators_) <= 16
    mlp = make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(5,), max_iter=5, random_state=0)).fit(X, y)
    assert model_size(mlp) == 30 * 5 + 5 + 5 * 1 + 1  # 30 features -> 5 hidden -> 1 output (binary)


def test_default_stays_single_objective_and_reports_the_named_values():
    task = ClassifierTask("breast_cancer", "gb", folds=3)
    ev = task.evaluate(GB, round=1)
    assert task.objectives is None and task.direction.value == "maximize" and task.bound == 1.0
    assert ev.value == ev.values["accuracy"] and 0.9 < ev.value < 1
    assert ev.values["fit_s"] > 0 and 3 <= ev.values["size"] <= 20 * 4  # 20 stages of at most 4 leaves (mean of folds)


def test_two_objective_view_accuracy_and_size():
    task = ClassifierTask("breast_cancer", "gb", folds=3, objectives="accuracy+size")
    ev = task.evaluate(GB, round=1)
    assert task.objectives is not None and task.objectives.directions == {"accuracy": "max", "size": "min"}
    majority = 357 / 569  # breast_cancer's benign share: a constant predictor's accuracy
    assert task.objectives.reference == pytest.approx((majority, 2000.0))  # 200 stages x 10 leaves
    assert ev.value == -ev.values["accuracy"]  # the first objective in minimisation form
    same = ClassifierTask("breast_cancer", "gb", folds=3).evaluate(GB, round=1)
    assert ev.values["accuracy"] == same.values["accuracy"] and ev.values["size"] == same.values["size"]
    fit = ClassifierTask("wine", "rf", folds=3, objectives="accuracy+fit_s")
    assert fit.objectives is not None and fit.objectives.reference[1] == 10.0  # type: ignore[index]


@pytest.mark.parametrize("kwargs, message", [
    ({"model": "mlp", "objectives": "accuracy+size"}, "task.model=mlp has a fixed size in this space"),
    ({"model": "gb", "objectives": "acc"}, "task.objectives='acc' is unknown; allowed: accuracy, accuracy+fit_s"),
    ({"model": "gb", "objectives": "accuracy+fit_s", "fidelity": True}, "goes with task.fidelity=false"),
])
def test_bad_objectives_are_one_line(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        ClassifierTask("breast_cancer", folds=3, **kwargs)


def test_cli_two_objective_classifier_run(run_cli, tmp_path):
    # the command of the user text (docs: classifier objectives)
    proc = run_cli("algo=parego", "task=breast_cancer", "task.model=gb", "task.folds=3",
                   "task.objectives=accuracy+size", "budget.rounds=12", f"tracking.uri=sqlite:///{tmp_path}/m.db")
    assert "pareto front: " in proc.stdout and "hypervolume: " in proc.stdout


def test_gradient_boosting_evaluates_without_a_future_warning():
    """scikit-learn 1.9 deprecates gradient boosting's ``criterion`` (no effect, a FutureWarning per fit): the
    space keeps it, the estimator is built without it where it is deprecated; the fidelity path too."""
    import inspect
    import warnings

    deprecated = inspect.signature(GradientBoostingClassifier).parameters["criterion"].default == "deprecated"
    est = ClassifierTask("breast_cancer", "gb", folds=3).estimator(GB)
    assert ("criterion" in est.get_params() and est.get_params()["criterion"] == "deprecated") == deprecated
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        ClassifierTask("breast_cancer", "gb", folds=3).evaluate(GB, round=1)
        mf = ClassifierTask("breast_cancer", "gb", folds=3, fidelity=True)
        mf.evaluate_at(GB, fidelity=mf.fidelity.min, config_id=0, round=1)
