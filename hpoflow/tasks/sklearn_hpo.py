"""Classifier tuning on scikit-learn's bundled datasets (paper 004, Appendix D.2).

Objective: mean 5-fold cross-validated accuracy (maximise). The folds are fixed by the seed, so the
objective is a deterministic function of the configuration for a given seed.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from hpoflow.records import Direction, Evaluation
from hpoflow.space import Bool, Categorical, Float, Int, SearchSpace
from hpoflow.tasks.base import Task, unobserved

DATASETS = ("breast_cancer", "wine", "digits")
MODELS = ("rf", "mlp", "gb")


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of a dataset bundled with scikit-learn (no download)."""
    from sklearn import datasets

    loaders: dict[str, Callable[..., Any]] = {
        "breast_cancer": datasets.load_breast_cancer, "wine": datasets.load_wine, "digits": datasets.load_digits}
    if name not in loaders:
        raise ValueError(f"task dataset '{name}' is unknown; allowed: {', '.join(loaders)}")
    X, y = loaders[name](return_X_y=True)
    return X.astype(np.float64), y


def model_space(model: str) -> SearchSpace:
    """The hyperparameters and ranges of paper 004, Appendix D.2."""
    open_unit = (1e-3, 1 - 1e-3)  # the paper's open interval (0, 1)
    if model == "rf":
        return SearchSpace.of(
            Int("n_estimators", 20, 200), Categorical("criterion", ("gini", "entropy", "log_loss")),
            Int("max_depth", 1, 10), Int("min_samples_split", 2, 10), Int("min_samples_leaf", 1, 10),
            Categorical("max_features", ("sqrt", "log2")), Bool("bootstrap"))
    if model == "mlp":
        return SearchSpace.of(
            Categorical("activation", ("identity", "logistic", "tanh", "relu")),
            Float("alpha", 1e-6, 1e-2), Float("learning_rate_init", 1e-6, 1e-2), Int("max_iter", 100, 300),
            Bool("shuffle"), Float("beta_1", *open_unit), Float("beta_2", *open_unit),
            Int("n_iter_no_change", 1, 10))
    if model == "gb":
        return SearchSpace.of(
            Categorical("loss", ("log_loss", "exponential")), Float("learning_rate", *open_unit),
            Int("n_estimators", 20, 200), Float("subsample", *open_unit),
            Categorical("criterion", ("friedman_mse", "squared_error")), Int("min_samples_split", 2, 10),
            Int("min_samples_leaf", 1, 10), Float("min_weight_fraction_leaf", 1e-3, 0.5),
            Int("max_depth", 1, 10), Categorical("max_features", ("sqrt", "log2")), Int("max_leaf_nodes", 2, 10))
    raise ValueError(f"task.model='{model}' is unknown; allowed: {', '.join(MODELS)}")


def build_estimator(model: str, config: dict[str, Any], seed: int) -> Any:
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if model == "rf":
        return RandomForestClassifier(**config, random_state=seed, n_jobs=1)
    if model == "mlp":
        return make_pipeline(StandardScaler(), MLPClassifier(**config, solver="adam", random_state=seed))
    return GradientBoostingClassifier(**config, random_state=seed)


class ClassifierTask(Task):
    """Tune a random forest, MLP or gradient-boosting classifier by k-fold CV accuracy."""

    direction = Direction.MAXIMIZE
    optimum = None
    bound = 1.0

    def __init__(self, dataset: str, model: str = "rf", folds: int = 5, noise_std: float = 0.0,
                 seed: int = 0) -> None:
        if folds < 2:
            raise ValueError(f"task.folds={folds} must be >= 2")
        self.name, self.model, self.folds, self.seed = dataset, model, folds, seed
        self.space = model_space(model)
        self.X, self.y = load_dataset(dataset)
        self.noise_std = noise_std
        self._rng = np.random.default_rng(seed + 104729)
        if model == "gb" and len(np.unique(self.y)) > 2:
            # 'exponential' loss is binary-only; keep the space but map it to log_loss on multi-class data.
            self._multiclass = True
        else:
            self._multiclass = False

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        if not observe:
            return unobserved()
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.model_selection import StratifiedKFold, cross_val_score

        params = dict(config)
        if self._multiclass and params.get("loss") == "exponential":
            params["loss"] = "log_loss"
        est = build_estimator(self.model, params, self.seed)
        cv = StratifiedKFold(n_splits=self.folds, shuffle=True, random_state=self.seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            scores = cross_val_score(est, self.X, self.y, cv=cv, scoring="accuracy", error_score="raise")
        acc = float(np.mean(scores))
        noise = self.noise_std * self._rng.standard_normal() if self.noise_std > 0 else 0.0
        return Evaluation(value=acc + noise, true_value=acc if self.noise_std > 0 else None, cost=1.0,
                          metrics={"cv_std": float(np.std(scores))})


def make_classifier_task(name: str, model: str = "rf", folds: int = 5, noise_std: float = 0.0,
                         seed: int = 0) -> ClassifierTask:
    return ClassifierTask(name, model, folds, noise_std, seed)
