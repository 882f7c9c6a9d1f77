"""Tuning scikit-learn models on the datasets bundled with scikit-learn (no download): a Bayesmark-style suite.

``task=sklearn``: ``task.model`` (rf, mlp, gb, svm, knn, linear, lasso, dt, ada) x ``task.dataset``
(breast_cancer, wine, digits, iris: classification by CV accuracy; diabetes: regression by CV R²), with
Bayesmark's search spaces (``task.space=bayesmark``) or paper 004's (``task.space=go_ucb``: rf, mlp, gb).
``task=breast_cancer|wine|digits`` are aliases of ``task=sklearn task.dataset=<name> task.space=go_ucb``
(paper 004, Appendix D.2). Objective: mean k-fold cross-validated score (maximise). Folds and model seeds come
from ``seed``, so the objective is a deterministic function of the configuration for a given seed.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from hpoflow.core.objectives import Objectives
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import SearchSpace
from hpoflow.tasks.base import unobserved
from hpoflow.tasks.continuation import Continuable
from hpoflow.tasks.sklearn_spaces import MODELS, go_ucb_space, suite_space
from hpoflow.tasks.trial_states import TrialStates

CLASSIFICATION = ("breast_cancer", "wine", "digits", "iris")
REGRESSION = ("diabetes",)
DATASETS = CLASSIFICATION + REGRESSION


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and targets of a dataset bundled with scikit-learn (no download)."""
    from sklearn import datasets

    loaders: dict[str, Callable[..., Any]] = {
        "breast_cancer": datasets.load_breast_cancer, "wine": datasets.load_wine, "digits": datasets.load_digits,
        "iris": datasets.load_iris, "diabetes": datasets.load_diabetes}
    if name not in loaders:
        raise ValueError(f"task.dataset='{name}' is unknown; allowed: {', '.join(loaders)}")
    X, y = loaders[name](return_X_y=True)
    return X.astype(np.float64), y


def model_space(model: str) -> SearchSpace:
    """Paper 004's space of ``model`` (rf, mlp, gb): what ``task=breast_cancer|wine|digits`` tune."""
    return go_ucb_space(model)


def _suite_estimator(model: str, config: dict[str, Any], seed: int, regression: bool) -> Any:
    """Bayesmark's estimator for ``model`` with its fixed settings; scale-sensitive models get a StandardScaler."""
    from sklearn import ensemble, linear_model, neighbors, neural_network, svm, tree
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    params = dict(config)
    if model == "mlp":
        params["hidden_layer_sizes"] = (int(params["hidden_layer_sizes"]),)
    seeded = {"random_state": seed}
    if regression:
        regressors: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
            "rf": (ensemble.RandomForestRegressor, {"n_estimators": 10, "n_jobs": 1, **seeded}),
            "dt": (tree.DecisionTreeRegressor, seeded), "gb": (ensemble.GradientBoostingRegressor, seeded),
            "ada": (ensemble.AdaBoostRegressor, seeded), "knn": (neighbors.KNeighborsRegressor, {}),
            "svm": (svm.SVR, {"kernel": "rbf"}), "linear": (linear_model.Ridge, seeded),
            "lasso": (linear_model.Lasso, seeded),
            "mlp": (neural_network.MLPRegressor, {"solver": "adam", "early_stopping": True, **seeded}),
        }
        cls, fixed = regressors[model]
        est = cls(**fixed, **params)
    elif model in ("linear", "lasso"):  # Bayesmark: liblinear one-vs-rest logistic regression, l2 or l1
        est = OneVsRestClassifier(linear_model.LogisticRegression(
            solver="liblinear", l1_ratio=1.0 if model == "lasso" else 0.0, random_state=seed, **params))
    else:
        classifiers: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
            "rf": (ensemble.RandomForestClassifier, {"n_estimators": 10, "n_jobs": 1, **seeded}),
            "dt": (tree.DecisionTreeClassifier, seeded), "gb": (ensemble.GradientBoostingClassifier, seeded),
            "ada": (ensemble.AdaBoostClassifier, seeded), "knn": (neighbors.KNeighborsClassifier, {}),
            "svm": (svm.SVC, {"kernel": "rbf", **seeded}),
            "mlp": (neural_network.MLPClassifier, {"solver": "adam", "early_stopping": True, **seeded}),
        }
        cls, fixed = classifiers[model]
        est = cls(**fixed, **params)
    return make_pipeline(StandardScaler(), est) if model in ("svm", "knn", "mlp", "linear", "lasso") else est


def _go_ucb_estimator(model: str, config: dict[str, Any], seed: int) -> Any:
    """Paper 004's estimators (unchanged: what the GO-UCB reproduction tunes)."""
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if model == "rf":
        return RandomForestClassifier(**config, random_state=seed, n_jobs=1)
    if model == "mlp":
        return make_pipeline(StandardScaler(), MLPClassifier(**config, solver="adam", random_state=seed))
    if _criterion_deprecated(GradientBoostingClassifier):  # scikit-learn >= 1.9: no effect, and a FutureWarning
        config = {k: v for k, v in config.items() if k != "criterion"}
    return GradientBoostingClassifier(**config, random_state=seed)


def _criterion_deprecated(cls: type) -> bool:
    """The estimator's ``criterion`` defaults to ``"deprecated"`` (gradient boosting since scikit-learn 1.9: both
    of the space's choices build the same trees, so the parameter stays in the space and is not passed)."""
    import inspect

    param = inspect.signature(cls).parameters.get("criterion")
    return param is not None and param.default == "deprecated"


def model_size(est: Any) -> float:
    """A fitted model's size: leaves of its trees (forests, boosting: summed over trees), weights and biases of an
    MLP, support vectors of an SVM, non-zero coefficients of a linear model, stored samples of k-NN; NaN otherwise."""
    if hasattr(est, "steps"):  # a Pipeline: its final estimator
        est = est.steps[-1][1]
    if hasattr(est, "tree_"):
        return float(est.tree_.n_leaves)
    if hasattr(est, "estimators_"):  # forests, boosting (an array of trees), one-vs-rest
        return float(sum(model_size(e) for e in np.asarray(est.estimators_, dtype=object).ravel()))
    if hasattr(est, "coefs_"):
        return float(sum(w.size for w in est.coefs_) + sum(b.size for b in est.intercepts_))
    if hasattr(est, "n_support_"):
        return float(np.sum(est.n_support_))
    if hasattr(est, "coef_"):
        return float(np.count_nonzero(est.coef_))
    if hasattr(est, "n_samples_fit_"):
        return float(est.n_samples_fit_)
    return math.nan


CLASSIFIER_OBJECTIVES = ("accuracy", "accuracy+fit_s", "accuracy+size")
REFERENCE_FIT_S = 10.0  # seconds of fitting summed over the folds: the fit_s reference point (slower adds no volume)


def size_bound(model: str, n_classes: int, n_train: int) -> float:
    """The largest ``size`` of paper 004's rf/gb spaces (the reference point of ``accuracy+size``): gb 200 stages x
    10 leaves (x classes beyond two), rf 200 trees x min(2^10, training samples) leaves."""
    if model == "gb":
        return 200.0 * 10 * (n_classes if n_classes > 2 else 1)
    if model == "rf":
        return 200.0 * min(2**10, n_train)
    raise ValueError(f"task.objectives=accuracy+size: task.model={model} has a fixed size in this space (one "
                     "hidden layer of 100); allowed: task.model=rf|gb, or task.objectives=accuracy+fit_s")


def check_folds(folds: int, dataset: str, y: Any, regression: bool) -> None:
    """Refuse more CV folds than the data can split: samples (regression), or the smallest class (stratified)."""
    n = len(y)
    most = n if regression else int(np.unique(y, return_counts=True)[1].min())
    if folds > most:
        what = f"{n} samples" if regression else f"{n} samples, smallest class {most}"
        raise ValueError(f"task.folds={folds} is more than dataset '{dataset}' can split ({what}); "
                         f"allowed: 2 to {most}")


class SklearnTask(Continuable):
    """Tune one scikit-learn model on one bundled dataset by k-fold CV accuracy (classification) or R² (regression).

    With ``fidelity=True`` the model's resource (rounds, trees, epochs; ``min_resource``/``max_resource``, 0: the
    defaults of :mod:`hpoflow.tasks.sklearn_fidelity`) is the task's fidelity and leaves the space.
    """

    direction = Direction.MAXIMIZE
    optimum = None
    bound: float | None = 1.0  # accuracy and R² are at most 1

    def __init__(self, dataset: str, model: str = "rf", folds: int = 5, noise_std: float = 0.0, seed: int = 0,
                 space: str = "bayesmark", name: str = "sklearn", fidelity: bool = False, min_resource: int = 0,
                 max_resource: int = 0, capacity: int = 256) -> None:
        if folds < 2:
            raise ValueError(f"task.folds={folds} must be >= 2")
        if model not in MODELS:
            raise ValueError(f"task.model='{model}' is unknown; allowed: {', '.join(MODELS)}")
        self.X, self.y = load_dataset(dataset)
        self.regression = dataset in REGRESSION
        check_folds(folds, dataset, self.y, self.regression)
        self.space = suite_space(model, space, self.regression)
        self.name, self.dataset, self.model, self.space_name = name, dataset, model, space
        self.folds, self.seed, self.noise_std = folds, seed, noise_std
        self._rng = np.random.default_rng(seed + 104729)
        # 'exponential' loss is binary-only; the paper's gb space keeps it, mapped to log_loss on multi-class data
        self._multiclass = not self.regression and len(np.unique(self.y)) > 2
        self.resource: str | None = None
        self.states = TrialStates(capacity)
        self._folds: list[tuple[np.ndarray, np.ndarray]] | None = None
        if fidelity:
            from hpoflow.core.space import SearchSpace
            from hpoflow.tasks.sklearn_fidelity import DROPPED, sklearn_fidelity

            self.resource, self.fidelity = sklearn_fidelity(space, model, min_resource, max_resource)
            gone = {self.resource, *DROPPED.get(model, ())}
            self.space = SearchSpace(tuple(p for p in self.space.parameters if p.name not in gone))

    def estimator(self, config: dict[str, Any]) -> Any:
        """A fresh, seeded estimator for ``config``."""
        if self.space_name == "go_ucb":
            params = dict(config)
            if self._multiclass and params.get("loss") == "exponential":
                params["loss"] = "log_loss"
            return _go_ucb_estimator(self.model, params, self.seed)
        return _suite_estimator(self.model, config, self.seed, self.regression)

    def splitter(self) -> Any:
        """The seed's k-fold splitter (stratified for classification)."""
        from sklearn.model_selection import KFold, StratifiedKFold

        splitter = KFold if self.regression else StratifiedKFold
        return splitter(n_splits=self.folds, shuffle=True, random_state=self.seed)

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        if self.fidelity is not None:
            return self.evaluate_full(config, round=round, observe=observe)
        if not observe:
            return unobserved()
        from sklearn.model_selection import cross_validate

        cv = self.splitter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # convergence, clipped batch size: as Bayesmark does
            out = cross_validate(self.estimator(config), self.X, self.y, cv=cv, return_estimator=True,
                                 scoring="r2" if self.regression else "accuracy", error_score="raise")
        scores = out["test_score"]
        score = float(np.mean(scores))
        noise = self.noise_std * self._rng.standard_normal() if self.noise_std > 0 else 0.0
        values = {"r2" if self.regression else "accuracy": score + noise, "fit_s": float(np.sum(out["fit_time"]))}
        size = float(np.mean([model_size(e) for e in out["estimator"]]))
        if math.isfinite(size):
            values["size"] = size
        ev = Evaluation(value=score + noise, true_value=score if self.noise_std > 0 else None, cost=1.0,
                        metrics={"cv_std": float(np.std(scores))}, values=values)
        if self.objectives is None:
            return ev
        ev = self.objectives.evaluation(ev)  # value = -accuracy (the first objective, minimised)
        return replace(ev, true_value=None if ev.true_value is None else -ev.true_value)

    # -- the fidelity (hpoflow.tasks.sklearn_fidelity) ---------------------------------------------------------------
    def fold_indices(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The (train, validation) indices of the CV folds (those ``cross_val_score`` uses)."""
        if self._folds is None:
            self._folds = list(self.splitter().split(self.X, self.y))
        return self._folds

    def metric(self, y_true: np.ndarray, y_pred: np.ndarray) -> float:
        """Accuracy, or R² for regression."""
        if self.regression:
            from sklearn.metrics import r2_score

            return float(r2_score(y_true, y_pred))
        return float(np.mean(y_pred == y_true))

    def fresh_state(self, config: dict[str, Any], seed: int) -> Any:
        from hpoflow.tasks.sklearn_fidelity import fresh_models

        return fresh_models(self, config)  # the model seed is the task's, as without a fidelity

    def advance(self, state: Any, config: dict[str, Any], start: float, stop: float) -> list[list[float]]:
        from hpoflow.tasks.sklearn_fidelity import advance_models

        return advance_models(self, state, int(start), int(stop))

    def score(self, state: Any, config: dict[str, Any], curve: list[list[float]]) -> tuple[float, dict[str, float]]:
        return curve[-1][1], {}

    def noisy(self, value: float) -> tuple[float, float | None]:
        if self.noise_std <= 0:
            return value, None
        return value + self.noise_std * float(self._rng.standard_normal()), value


class ClassifierTask(SklearnTask):
    """``task=breast_cancer|wine|digits``: paper 004's rf/mlp/gb spaces on one classification dataset."""

    def __init__(self, dataset: str, model: str = "rf", folds: int = 5, noise_std: float = 0.0,
                 seed: int = 0, fidelity: bool = False, min_resource: int = 0, max_resource: int = 0,
                 objectives: str = "accuracy") -> None:
        if model not in ("rf", "mlp", "gb"):
            raise ValueError(f"task.model='{model}' is unknown; allowed: rf, mlp, gb")
        if dataset not in ("breast_cancer", "wine", "digits"):
            raise ValueError(f"task dataset '{dataset}' is unknown; allowed: breast_cancer, wine, digits")
        if objectives not in CLASSIFIER_OBJECTIVES:
            raise ValueError(f"task.objectives='{objectives}' is unknown; allowed: {', '.join(CLASSIFIER_OBJECTIVES)}")
        if objectives != "accuracy" and fidelity:
            raise ValueError(f"task.objectives={objectives} goes with task.fidelity=false (a fidelity's rounds report "
                             "accuracy only)")
        super().__init__(dataset, model, folds, noise_std, seed, space="go_ucb", name=dataset, fidelity=fidelity,
                         min_resource=min_resource, max_resource=max_resource)
        if objectives != "accuracy":
            second = objectives.split("+")[1]
            majority = float(np.unique(self.y, return_counts=True)[1].max() / len(self.y))  # a constant predictor
            n_train = len(self.y) * (folds - 1) // folds
            bound = REFERENCE_FIT_S if second == "fit_s" else size_bound(model, len(np.unique(self.y)), n_train)
            self.objectives = Objectives({"accuracy": "max", second: "min"}, {}, (majority, bound))
            self.direction, self.bound = Direction.MINIMIZE, None  # value = -accuracy (the spec's convention)


def make_classifier_task(name: str, model: str = "rf", folds: int = 5, noise_std: float = 0.0,
                         seed: int = 0, fidelity: bool = False, min_resource: int = 0,
                         max_resource: int = 0, objectives: str = "accuracy") -> ClassifierTask:
    return ClassifierTask(name, model, folds, noise_std, seed, fidelity, min_resource, max_resource, objectives)


def make_sklearn_task(dataset: str = "breast_cancer", model: str = "rf", space: str = "bayesmark", folds: int = 5,
                      noise_std: float = 0.0, seed: int = 0, fidelity: bool = False, min_resource: int = 0,
                      max_resource: int = 0, **_: object) -> SklearnTask:
    return SklearnTask(dataset, model, folds, noise_std, seed, space=space, fidelity=fidelity,
                       min_resource=min_resource, max_resource=max_resource)
