import numpy as np
import pytest
import torch

from hpoflow.tasks.sklearn_hpo import ClassifierTask, model_space


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
