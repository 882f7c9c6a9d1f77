import numpy as np
import pytest
import torch

from hpoflow.config.settings import ConfigError, validate
from hpoflow.tasks.configs import SKLEARN_DATASETS, SKLEARN_MODELS
from hpoflow.tasks.sklearn_hpo import ClassifierTask, SklearnTask, model_space
from hpoflow.tasks.sklearn_spaces import BAYESMARK, BAYESMARK_REGRESSION, suite_space
from tests.conftest import mlflow_runs


@pytest.mark.parametrize("model,dim", [("rf", 7), ("mlp", 8), ("gb", 11)])
def test_spaces_follow_paper_004_appendix_d2(model, dim):
    space = model_space(model)
    assert space.dim == dim
    cfg = space.decode(torch.full((dim,), 0.5, dtype=torch.float64))
    assert set(cfg) == set(space.names)


def test_rf_accuracy_is_cross_validated_and_deterministic():
    task = ClassifierTask("breast_cancer", "rf", seed=0)
    cfg = {"n_estimators": 20, "criterion": "gini", "max_depth": 3, "min_samples_split": 2,
           "min_samples_leaf": 1, "max_features": "sqrt", "bootstrap": True}
    a, b = task.evaluate(cfg, round=1), task.evaluate(cfg, round=2)
    assert 0.85 < a.value <= 1.0 and a.value == b.value
    assert task.bound == 1.0 and task.optimum is None and task.direction.value == "maximize"


def test_gb_exponential_loss_on_multiclass_data_falls_back_to_log_loss():
    task = ClassifierTask("wine", "gb", seed=0)
    cfg = task.space.decode(torch.zeros(11, dtype=torch.float64))
    cfg.update(loss="exponential", n_estimators=20)
    assert 0.0 < task.evaluate(cfg, round=1).value <= 1.0


def test_unknown_model_and_dataset_are_rejected():
    with pytest.raises(ValueError, match="task.model='svm'"):
        model_space("svm")
    with pytest.raises(ValueError, match="iris"):
        ClassifierTask("iris")
    assert np.isnan(ClassifierTask("wine", "rf").evaluate({}, round=1, observe=False).value)


# -- the Bayesmark-style suite (task=sklearn) ------------------------------------------------------------------

def test_aliases_evaluate_exactly_what_they_did_before_the_suite():
    """task=wine task.model=gb|rf == paper 004's estimator under the seed's folds, computed by hand here."""
    from sklearn.datasets import load_wine
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    task = ClassifierTask("wine", "gb", seed=4)
    cfg = task.space.decode(torch.linspace(0.05, 0.95, 11, dtype=torch.float64))
    X, y = load_wine(return_X_y=True)
    params = {**cfg, "loss": "log_loss"}  # multi-class: exponential maps to log_loss
    expected = cross_val_score(GradientBoostingClassifier(**params, random_state=4), X.astype(np.float64), y,
                               cv=StratifiedKFold(5, shuffle=True, random_state=4), scoring="accuracy").mean()
    assert task.evaluate(cfg, round=1).value == pytest.approx(expected, abs=1e-12)
    alias = SklearnTask("wine", "gb", seed=4, space="go_ucb")
    assert alias.space == task.space and alias.evaluate(cfg, round=1).value == task.evaluate(cfg, round=1).value
    assert task.name == "wine" and alias.name == "sklearn"


@pytest.mark.parametrize("model", SKLEARN_MODELS)
@pytest.mark.parametrize("dataset", ["iris", "diabetes"])
def test_every_suite_model_evaluates_deterministically(model, dataset):
    task = SklearnTask(dataset, model, folds=3, seed=1)
    if model in ("mlp", "gb", "ada"):  # keep the smoke cheap: fewest units / estimators
        cfg = task.space.decode(torch.full((task.space.dim,), 0.3, dtype=torch.float64))
    else:
        cfg = task.space.decode(torch.full((task.space.dim,), 0.6, dtype=torch.float64))
    a, b = task.evaluate(cfg, round=1), task.evaluate(cfg, round=2)
    assert np.isfinite(a.value) and a.value == b.value and a.value <= 1.0
    assert task.direction.value == "maximize" and task.bound == 1.0
    if dataset == "iris":
        assert 0.0 <= a.value


def test_bayesmark_spaces_keep_bayesmark_ranges_and_regression_swaps_the_linear_models():
    knn, svm = suite_space("knn"), suite_space("svm")
    assert [(p.name, p.low, p.high) for p in knn.parameters] == [("n_neighbors", 1, 25), ("p", 1, 4)]
    assert all(p.log for p in svm.parameters) and (svm.parameters[0].low, svm.parameters[0].high) == (1.0, 1e3)
    assert suite_space("linear").names == ["C", "intercept_scaling"]
    assert suite_space("linear", regression=True).names == ["alpha", "fit_intercept", "max_iter", "tol"]
    assert set(BAYESMARK) == set(BAYESMARK_REGRESSION) == set(SKLEARN_MODELS)
    assert suite_space("rf", "go_ucb") == model_space("rf")


def test_regression_dataset_is_scored_by_r2_with_kfold():
    task = SklearnTask("diabetes", "linear", seed=0)
    good = task.evaluate({"alpha": 0.1, "fit_intercept": True, "max_iter": 1000, "tol": 1e-4}, round=1).value
    no_intercept = task.evaluate({"alpha": 0.1, "fit_intercept": False, "max_iter": 1000, "tol": 1e-4}, round=1).value
    assert 0.3 < good < 0.6 and no_intercept < 0  # diabetes' targets are far from 0: R² punishes no intercept


@pytest.mark.parametrize("settings,fragment", [
    ({"model": "xgb"}, "task.model='xgb'"), ({"dataset": "mnist"}, "task.dataset='mnist'"),
    ({"space": "hebo"}, "task.space='hebo'"), ({"space": "go_ucb", "model": "svm"}, "task.space=go_ucb"),
    ({"space": "go_ucb", "dataset": "diabetes"}, "task.space=go_ucb"), ({"folds": 1}, "task.folds=1")])
def test_bad_suite_settings_are_config_errors(settings, fragment):
    raw = {"algo": {"name": "random"}, "surrogate": {"name": "gp"}, "task": {"name": "sklearn", **settings}}
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(")):
        validate(raw)
    assert set(SKLEARN_DATASETS) == {"breast_cancer", "wine", "digits", "iris", "diabetes"}


def test_cli_sklearn_suite_run(run_cli, store):
    run_cli("algo=random", "task=sklearn", "task.model=knn", "task.dataset=iris", "budget.rounds=3",
            f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "sklearn")
    assert run.info.status == "FINISHED" and run.data.params["task.model"] == "knn"
    assert run.data.params["task.dataset"] == "iris" and 0.5 < run.data.metrics["best_value"] <= 1.0
