"""SGD-training tasks: stratified seeded split, SGD-step cost, determinism, divergence, MNIST failures."""
from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import RandomConfig
from hpoflow.algorithms.random_search import RandomSearch
from hpoflow.runner.loop import Budget, run
from hpoflow.tasks import training
from hpoflow.tasks.training import load_mnist_split, make_digits_task, stratified_split
from hpoflow.tasks.training_config import TrainingConfig


def _labels() -> np.ndarray:
    from sklearn.datasets import load_digits

    return load_digits(return_X_y=True)[1]


def test_split_is_stratified_disjoint_and_fixed_by_the_seed():
    y = _labels()
    tr, va, te = stratified_split(np.zeros((len(y), 1)), y, 0.2, 0.2, seed=3)
    assert len(set(tr) | set(va) | set(te)) == len(y) == len(tr) + len(va) + len(te)
    overall = np.bincount(y) / len(y)
    for part in (tr, va, te):
        counts = np.bincount(y[part], minlength=10)
        assert np.all(np.abs(counts - overall * len(part)) <= 1.0), counts   # each class within one sample
    again = stratified_split(np.zeros((len(y), 1)), y, 0.2, 0.2, seed=3)
    other = stratified_split(np.zeros((len(y), 1)), y, 0.2, 0.2, seed=4)
    assert all(np.array_equal(a, b) for a, b in zip((tr, va, te), again))
    assert not np.array_equal(np.sort(va), np.sort(other[1]))


def test_task_split_follows_the_seed():
    a, b = make_digits_task("digits_cnn", inner_steps=1, seed=0), make_digits_task("digits_cnn", inner_steps=1, seed=1)
    assert a.split.x_train.shape == (1077, 1, 8, 8) and a.split.x_val.shape[0] == a.split.x_test.shape[0] == 360
    assert not torch.equal(a.split.y_val, b.split.y_val)


def test_cost_is_the_number_of_sgd_steps(monkeypatch):
    calls = []
    original = torch.optim.SGD.step
    monkeypatch.setattr(torch.optim.SGD, "step", lambda self, *a, **k: (calls.append(1), original(self, *a, **k))[1])
    task = make_digits_task("digits_mlp", inner_steps=7, batch_size=4)
    ev = task.evaluate({"lr": 0.1}, round=1)
    assert ev.cost == 7 == len(calls)
    assert {"test_loss", "test_accuracy", "val_accuracy"} <= set(ev.metrics)
    assert 0 <= ev.metrics["test_accuracy"] <= 1 and ev.value > 0


def test_loop_query_cost_counts_sgd_steps():
    task = make_digits_task("digits_mlp", inner_steps=5, batch_size=8)
    algo = RandomSearch(RandomConfig(), BuildContext(task=task, rounds=4))
    result = run(task, algo, budget=Budget(4))
    assert [m["query_cost"] for m in result.metrics] == [5, 10, 15, 20]


def test_evaluation_is_deterministic_in_config_seed_and_round():
    task = make_digits_task("digits_cnn", inner_steps=15, batch_size=8, width=4, seed=2)
    a = task.evaluate({"lr": 0.3}, round=1).value
    assert task.evaluate({"lr": 0.3}, round=1).value == a
    assert task.evaluate({"lr": 0.3}, round=2).value != a            # SGD noise varies between rounds
    assert make_digits_task("digits_cnn", inner_steps=15, batch_size=8, width=4, seed=2).evaluate(
        {"lr": 0.3}, round=1).value == a


def test_more_sgd_steps_lower_the_validation_loss():
    short = make_digits_task("digits_mlp", inner_steps=5).evaluate({"lr": 0.3}, round=1).value
    long = make_digits_task("digits_mlp", inner_steps=300).evaluate({"lr": 0.3}, round=1).value
    assert long < short - 0.5


def test_tune_selects_the_space_and_fixed_values_apply():
    task = make_digits_task("digits_cnn", inner_steps=3, tune=["lr", "momentum", "weight_decay", "width"])
    assert task.space.names == ["lr", "momentum", "weight_decay", "width"]
    centre = task.space.decode(torch.full((4,), 0.5, dtype=torch.float64))
    assert 2 <= centre["width"] <= 32 and 1e-3 < centre["lr"] < 1
    fixed = make_digits_task("digits_cnn", inner_steps=3, tune=["momentum"], lr=0.05, width=3)
    assert fixed.hyperparameters({"momentum": 0.5}) == {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.0, "width": 3}


def test_divergence_reports_max_loss():
    task = make_digits_task("digits_mlp", inner_steps=30, tune=["momentum"], lr=1e4, max_loss=7.0)
    ev = task.evaluate({"momentum": 0.9}, round=1)
    assert ev.value == 7.0 and ev.metrics["diverged"] == 1.0


def test_auto_inner_steps_needs_resolution():
    task = make_digits_task("digits_mlp", inner_steps="auto")
    with pytest.raises(ValueError, match="inner_steps=auto"):
        task.evaluate({"lr": 0.1}, round=1)
    task.resolve_inner_steps(3)
    assert task.evaluate({"lr": 0.1}, round=1).cost == 3


@pytest.mark.parametrize("kwargs,fragment", [({"inner_steps": 0}, "task.inner_steps=0"),
                                             ({"inner_steps": "many"}, "task.inner_steps='many'"),
                                             ({"tune": ["lr", "depth"]}, "task.tune="),
                                             ({"batch_size": 0}, "task.batch_size=0")])
def test_config_errors_name_the_key(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment.replace("[", r"\[")):
        TrainingConfig(**kwargs)


def test_mnist_without_a_folder_fails_clearly(tmp_path):
    with pytest.raises(FileNotFoundError, match="task.path='.*nope'.*never downloads"):
        load_mnist_split(str(tmp_path / "nope"), seed=0)


def test_mnist_without_torchvision_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torchvision", None)
    monkeypatch.setitem(sys.modules, "torchvision.datasets", None)
    with pytest.raises(ValueError, match="needs torchvision"):
        training.load_mnist_split(str(tmp_path), seed=0)


def test_cli_mnist_missing_path_is_a_one_line_error(run_cli, store):
    proc = run_cli("algo=bbo_ei", "task=mnist_cnn", "task.path=/does/not/exist", f"tracking.uri={store}", check=False)
    assert proc.returncode != 0
    assert "task.path='/does/not/exist'" in proc.stderr and "Traceback" not in proc.stderr


def test_width_defaults_per_architecture():
    assert make_digits_task("digits_mlp", inner_steps=1).fixed["width"] == 32
    assert make_digits_task("digits_cnn", inner_steps=1).fixed["width"] == 8
    assert make_digits_task("digits_cnn", inner_steps=1, width=3).fixed["width"] == 3
