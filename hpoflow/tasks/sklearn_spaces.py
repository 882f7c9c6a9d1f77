"""Search spaces of the scikit-learn tuning suite.

``bayesmark``: the ranges of Bayesmark's ``sklearn_funcs`` (Uber, 2019), the field's standard sklearn-tuning
spaces; Bayesmark's logit-scaled reals are linear here, and settings removed from scikit-learn since
(``normalize``, ``multi_class``) are dropped. Bayesmark has no gradient boosting; ``gb`` gets a space of the
same style. ``go_ucb``: paper 004's Appendix D.2 spaces (rf, mlp, gb on classification data), which the
``breast_cancer|wine|digits`` tasks keep.
"""
from __future__ import annotations

from hpoflow.core.space import Bool, Categorical, Float, Int, SearchSpace

SPACES = ("bayesmark", "go_ucb")

_KNN = (Int("n_neighbors", 1, 25), Int("p", 1, 4))
_SVM = (Float("C", 1.0, 1e3, log=True), Float("gamma", 1e-4, 1e-3, log=True), Float("tol", 1e-5, 1e-1, log=True))
_TREE = (Int("max_depth", 1, 15), Float("min_samples_split", 0.01, 0.99), Float("min_samples_leaf", 0.01, 0.49),
         Float("min_weight_fraction_leaf", 0.01, 0.49), Float("max_features", 0.01, 0.99),
         Float("min_impurity_decrease", 0.0, 0.5))
_MLP = (Int("hidden_layer_sizes", 50, 200), Float("alpha", 1e-5, 1e1, log=True), Int("batch_size", 10, 250),
        Float("learning_rate_init", 1e-5, 1e-1, log=True), Float("tol", 1e-5, 1e-1, log=True),
        Float("validation_fraction", 0.1, 0.9), Float("beta_1", 0.5, 0.99), Float("beta_2", 0.9, 1.0 - 1e-6),
        Float("epsilon", 1e-9, 1e-6, log=True))
_ADA = (Int("n_estimators", 10, 100), Float("learning_rate", 1e-4, 1e1, log=True))
_GB = (Int("n_estimators", 10, 100), Float("learning_rate", 1e-3, 1.0, log=True), Int("max_depth", 1, 8),
       Float("subsample", 0.1, 1.0), Float("max_features", 0.01, 1.0), Float("min_samples_leaf", 0.01, 0.49))
_LOGISTIC = (Float("C", 1e-2, 1e2, log=True), Float("intercept_scaling", 1e-2, 1e2, log=True))
_RIDGE = (Float("alpha", 1e-2, 1e2, log=True), Bool("fit_intercept"), Int("max_iter", 10, 5000, log=True),
          Float("tol", 1e-4, 1e-1, log=True))
_LASSO = (Float("alpha", 1e-2, 1e2, log=True), Bool("fit_intercept"), Int("max_iter", 10, 5000, log=True),
          Float("tol", 1e-5, 1e-1, log=True), Bool("positive"))

BAYESMARK = {"knn": _KNN, "svm": _SVM, "dt": _TREE, "rf": _TREE, "mlp": _MLP, "ada": _ADA, "gb": _GB,
             "linear": _LOGISTIC, "lasso": _LOGISTIC}
BAYESMARK_REGRESSION = {**BAYESMARK, "linear": _RIDGE, "lasso": _LASSO}
MODELS = tuple(BAYESMARK)


def go_ucb_space(model: str) -> SearchSpace:
    """The hyperparameters and ranges of paper 004, Appendix D.2 (rf, mlp, gb)."""
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
    raise ValueError(f"task.model='{model}' has no task.space=go_ucb space; allowed: rf, mlp, gb")


def suite_space(model: str, space: str = "bayesmark", regression: bool = False) -> SearchSpace:
    """The search space of ``model`` under ``space`` (bayesmark | go_ucb)."""
    if space == "go_ucb":
        if regression:
            raise ValueError("task.space=go_ucb is defined for classification datasets only; use task.space=bayesmark")
        return go_ucb_space(model)
    if space != "bayesmark":
        raise ValueError(f"task.space='{space}' is unknown; allowed: {', '.join(SPACES)}")
    table = BAYESMARK_REGRESSION if regression else BAYESMARK
    if model not in table:
        raise ValueError(f"task.model='{model}' is unknown; allowed: {', '.join(MODELS)}")
    return SearchSpace(table[model])
