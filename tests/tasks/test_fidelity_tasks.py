"""The real training tasks with a fidelity (task.fidelity=true): a continued trial equals one trained straight to
the same level, costs only the units added, and the tasks without the option are unchanged."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from hpoflow.config.settings import ConfigError, validate
from hpoflow.tasks.bilevel import make_bilevel
from hpoflow.tasks.configs import SKLEARN_FIDELITY
from hpoflow.tasks.sklearn_fidelity import RESOURCES
from hpoflow.tasks.sklearn_hpo import ClassifierTask, SklearnTask
from hpoflow.tasks.training import make_digits_task


def _centre(task) -> dict:
    return task.space.decode(torch.full((task.space.dim,), 0.5, dtype=torch.float64))


def _ladder(task, levels, cfg=None, cid=7):
    cfg = _centre(task) if cfg is None else cfg
    return [task.evaluate_at(cfg, fidelity=r, config_id=cid, round=i) for i, r in enumerate(levels, 1)]


@pytest.mark.parametrize("model,levels", [("gb", (2, 6, 18)), ("rf", (2, 6, 18)), ("mlp", (3, 9, 27))])
def test_a_continued_sklearn_trial_equals_one_trained_straight(model, levels):
    """GB: warm_start keeps its RNG; RF: warm_start replays its trees' seeds; MLP: partial_fit passes with Adam's
    state and the shuffling RandomState kept. Value and whole curve equal, cost = units added."""
    task = ClassifierTask("breast_cancer", model, fidelity=True, seed=1)
    evs = _ladder(task, levels)
    straight = ClassifierTask("breast_cancer", model, fidelity=True, seed=1).evaluate_at(
        _centre(task), fidelity=levels[-1], config_id=7, round=1)
    assert [e.cost for e in evs] == [levels[0], levels[1] - levels[0], levels[2] - levels[1]]
    assert straight.cost == levels[-1] and straight.value == evs[-1].value
    assert [p for e in evs for p in e.curve] == straight.curve
    assert [p[0] for p in straight.curve] == list(range(1, levels[-1] + 1))
    assert 0.5 < straight.value <= 1.0


@pytest.mark.parametrize("model", ["gb", "rf"])
def test_full_fidelity_ensemble_is_the_plain_task_with_that_many_estimators(model):
    """Without a fidelity the task is untouched; with one, evaluate() = max rounds/trees = the plain task's
    cross-validated score with n_estimators = max (the same folds and model seed)."""
    fid = ClassifierTask("wine", model, fidelity=True, max_resource=30, seed=2)
    plain = ClassifierTask("wine", model, seed=2)
    cfg = _centre(fid)
    assert "n_estimators" in plain.space.names and "n_estimators" not in fid.space.names
    assert plain.fidelity is None and fid.fidelity.max == 30 and fid.fidelity.min == 1
    ev = fid.evaluate(cfg, round=1)
    assert ev.cost == 30 and ev.fidelity == 30
    assert ev.value == pytest.approx(plain.evaluate({**cfg, "n_estimators": 30}, round=1).value, abs=1e-12)


def test_mlp_fidelity_drops_the_epoch_settings_and_defaults_give_five_rungs():
    task = ClassifierTask("digits", "mlp", fidelity=True)
    assert {"max_iter", "n_iter_no_change"}.isdisjoint(task.space.names) and task.space.dim == 6
    assert (task.fidelity.name, task.fidelity.min, task.fidelity.max) == ("epochs", 3, 243)
    gb = SklearnTask("diabetes", "gb", fidelity=True, seed=0)  # bayesmark gb, regression: R² per round
    ev = gb.evaluate_at(_centre(gb), fidelity=3, config_id=1, round=1)
    assert ev.cost == 3 and len(ev.curve) == 3 and ev.value < 1.0
    assert set(RESOURCES) == set(SKLEARN_FIDELITY)


@pytest.mark.parametrize("task,settings,fragment", [
    ("sklearn", {"model": "knn", "fidelity": True}, "task.model=knn"),
    ("sklearn", {"model": "mlp", "fidelity": True}, "task.model=mlp with task.space=bayesmark"),
    ("wine", {"model": "gb", "fidelity": True, "min_resource": 9, "max_resource": 3}, "task.min_resource=9"),
    ("wine", {"model": "gb", "max_resource": 9}, "task.fidelity=true only"),
    ("digits_cnn", {"fidelity": True, "min_epochs": 5, "epochs": 3}, "task.min_epochs=5"),
    ("digits_cnn", {"fidelity": True, "epochs": 0}, "task.epochs=0"),
    ("ridge", {"fidelity": True, "min_inner_steps": 10**6}, "task.min_inner_steps=1000000")])
def test_bad_fidelity_settings_are_one_line_config_errors(task, settings, fragment):
    raw = {"algo": {"name": "random"}, "surrogate": {"name": "gp"}, "task": {"name": task, **settings}}
    with pytest.raises(ConfigError, match=fragment):
        validate(raw)


def test_digits_cnn_epochs_continue_the_network_and_its_momentum():
    kw = {"fidelity": True, "epochs": 4, "batch_size": 64, "width": 4, "momentum": 0.9, "seed": 3}
    task = make_digits_task("digits_cnn", **kw)
    evs = _ladder(task, (1, 2, 4), {"lr": 0.1})
    straight = make_digits_task("digits_cnn", **kw).evaluate_at({"lr": 0.1}, fidelity=4, config_id=7, round=9)
    assert [e.cost for e in evs] == [1, 1, 2] and straight.cost == 4
    assert straight.value == evs[-1].value and [p for e in evs for p in e.curve] == straight.curve
    assert straight.curve[0][1] > straight.curve[-1][1]  # the validation loss falls with the epochs
    assert task.evaluate({"lr": 0.1}, round=1).cost == 4  # full fidelity: the epochs, from scratch
    plain = make_digits_task("digits_cnn", inner_steps=7)
    assert plain.fidelity is None and plain.evaluate({"lr": 0.1}, round=1).cost == 7


def test_bilevel_inner_steps_continue_w_and_full_fidelity_is_the_plain_evaluation():
    task = make_bilevel("ridge", dataset="digits_regression", inner_steps=90, inner_lr=1e-3, fidelity=True)
    plain = make_bilevel("ridge", dataset="digits_regression", inner_steps=90, inner_lr=1e-3)
    assert task.fidelity.min == 1 and task.fidelity.max == 90 and plain.fidelity is None
    cfg = {"log_lambda": -2.0}
    evs = [task.evaluate_at(cfg, fidelity=r, config_id=1, round=i) for i, r in enumerate((10, 30, 90), 1)]
    assert [e.cost for e in evs] == [10, 20, 60] and [e.curve[-1][0] for e in evs] == [10, 30, 90]
    reference = plain.evaluate(cfg, round=1)
    assert evs[-1].value == pytest.approx(reference.value, rel=1e-12) and reference.cost == 90
    assert np.isclose(task.evaluate(cfg, round=2).value, reference.value, rtol=1e-12)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_mlp_epochs_without_shuffling_are_scikit_learns_own_fit_with_that_many_iterations():
    """The anchor of the MLP's passes: with shuffle=false, k partial_fit passes are fit(max_iter=k) with the
    convergence stop off (with shuffling the orders differ: fit reshuffles its shuffled index array, a pass shuffles
    0..n-1; both are seeded random orders)."""
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    task = ClassifierTask("breast_cancer", "mlp", fidelity=True, seed=5)
    cfg = {**_centre(task), "shuffle": False}
    ev = task.evaluate_at(cfg, fidelity=6, config_id=1, round=1)
    scores = []
    for train, val in task.fold_indices():
        scaler = StandardScaler().fit(task.X[train])
        mlp = MLPClassifier(**cfg, solver="adam", random_state=5, max_iter=6, n_iter_no_change=10**6, tol=0.0)
        mlp.fit(scaler.transform(task.X[train]), task.y[train])
        scores.append(np.mean(mlp.predict(scaler.transform(task.X[val])) == task.y[val]))
    assert ev.value == pytest.approx(float(np.mean(scores)), abs=1e-12)
