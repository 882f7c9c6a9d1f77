"""The fidelity of the scikit-learn tasks (``task.fidelity=true``): boosting rounds, trees or epochs, continued.

- gradient boosting, random forest: ``n_estimators``; a trial's k fold models are continued with
  ``warm_start=True`` and a larger ``n_estimators``. scikit-learn keeps (GB: ``_rng``) or replays (RF: draws the
  seeds of the trees it has) the random stream, so a continued model is the one trained straight to that level.
- MLP: ``epochs``, one ``partial_fit`` pass each (Adam's state is kept between passes; a ``RandomState`` instance
  as ``random_state`` keeps the shuffling stream going, so a continued model equals one trained straight with the
  same passes). ``fit``'s convergence stop (``tol``/``n_iter_no_change``) does not apply to passes: the fidelity
  is the number of epochs, and ``max_iter`` and ``n_iter_no_change`` leave the search space.

The learning curve is the mean validation score (accuracy; R² for regression) over the folds after every unit
(staged predictions for GB, running means of the trees' probabilities for RF, a score after every pass for the MLP).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpoflow.core.fidelity import Fidelity

# (space, model) -> (the hyperparameter the fidelity replaces, the fidelity's name, the default full level)
RESOURCES: dict[tuple[str, str], tuple[str, str, int]] = {
    ("go_ucb", "gb"): ("n_estimators", "n_estimators", 162), ("go_ucb", "rf"): ("n_estimators", "n_estimators", 162),
    ("go_ucb", "mlp"): ("max_iter", "epochs", 243), ("bayesmark", "gb"): ("n_estimators", "n_estimators", 81)}
DROPPED = {"mlp": ("n_iter_no_change",)}  # meaningless once the fidelity fixes the number of passes
RUNGS = 81  # default min = max / 81: five rungs at eta = 3


def sklearn_fidelity(space: str, model: str, min_resource: int = 0, max_resource: int = 0) -> tuple[str, Fidelity]:
    """``(hyperparameter replaced, Fidelity)`` of ``model`` in ``space``; 0 picks the default bounds.

    Raises:
        ValueError: the model has no fidelity here, or bad bounds (one line).
    """
    if (space, model) not in RESOURCES:
        allowed = ", ".join(f"task.space={s} task.model={m}" for s, m in RESOURCES)
        raise ValueError(f"task.fidelity=true: task.model={model} (task.space={space}) has no fidelity; "
                         f"allowed: {allowed}")
    param, name, default = RESOURCES[(space, model)]
    hi = max_resource or default
    lo = min_resource or max(1, hi // RUNGS)
    return param, Fidelity(name, lo, hi, integer=True)


@dataclass
class FoldModels:
    """One trial: a fitted model per CV fold (and, for the MLP, its fold's fitted scaler)."""

    models: list[Any]
    scalers: list[Any]


def fresh_models(task: Any, config: dict[str, Any]) -> FoldModels:
    """Untrained fold models of ``config`` (continuable: warm start, or a RandomState instance for the MLP)."""
    models, scalers = [], []
    for _ in task.fold_indices():
        est = task.estimator({**config, task.resource: 1})
        if task.model == "mlp":

            scaler, mlp = est.steps[0][1], est.steps[-1][1]
            mlp.set_params(random_state=np.random.RandomState(task.seed))
            models.append(mlp)
            scalers.append(scaler)
        else:
            est.set_params(warm_start=True)
            models.append(est)
            scalers.append(None)
    return FoldModels(models, scalers)


def advance_models(task: Any, state: FoldModels, start: int, stop: int) -> list[list[float]]:
    """Train every fold model from ``start`` to ``stop`` units; the mean validation score after each unit."""
    per_fold = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # convergence warnings, as the full-fidelity task
        for i, (train, val) in enumerate(task.fold_indices()):
            per_fold.append(_advance_one(task, state, i, task.X[train], task.y[train], task.X[val], task.y[val],
                                         start, stop))
    acc = np.mean(np.array(per_fold), axis=0)  # (stop - start,)
    return [[float(start + 1 + k), float(a)] for k, a in enumerate(acc)]


def _advance_one(task: Any, state: FoldModels, i: int, Xt: np.ndarray, yt: np.ndarray, Xv: np.ndarray,
                 yv: np.ndarray, start: int, stop: int) -> list[float]:
    model = state.models[i]
    if task.model == "mlp":
        scaler = state.scalers[i]
        if start == 0:
            scaler.fit(Xt)
        Xt, Xv = scaler.transform(Xt), scaler.transform(Xv)
        classes = np.unique(task.y)
        out = []
        for _ in range(start, stop):
            model.partial_fit(Xt, yt, classes=classes)
            out.append(task.metric(yv, model.predict(Xv)))
        return out
    model.set_params(n_estimators=stop)
    model.fit(Xt, yt)
    if task.model == "gb":
        staged = list(model.staged_predict(Xv))[start:stop]
        return [task.metric(yv, p) for p in staged]
    probs = np.cumsum([t.predict_proba(Xv) for t in model.estimators_[:stop]], axis=0)[start:stop]  # RF: k x n x c
    return [task.metric(yv, model.classes_[np.argmax(p, axis=1)]) for p in probs]
