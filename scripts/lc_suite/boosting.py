"""Gradient-boosted trees' learning curves: scikit-learn's ``HistGradientBoostingClassifier`` fitted once to the
full number of boosting rounds, read back after every round with ``staged_predict_proba``.

A round's seconds are the fit's seconds shared equally over its rounds (a histogram-boosting round costs about
the same at every round: the trees have the same size bounds); prediction time is not counted.
"""
from __future__ import annotations

import time
import warnings

import numpy as np


def curves(config: dict, x_train: np.ndarray, y_train: np.ndarray, x_val: np.ndarray, y_val: np.ndarray,
           x_test: np.ndarray, y_test: np.ndarray, classes: int, rounds: int,
           seed: int) -> dict[str, np.ndarray]:
    """One configuration's curves over ``rounds`` rounds: ``val_error``, ``val_logloss``, ``test_error`` and
    ``seconds``, each ``[rounds]``."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(max_iter=rounds, early_stopping=False, random_state=seed, **config)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(x_train, y_train)
    seconds = time.perf_counter() - start
    out = {k: np.zeros(rounds) for k in ("val_error", "val_logloss", "test_error")}
    for r, (pv, pt) in enumerate(zip(model.staged_predict_proba(x_val), model.staged_predict_proba(x_test),
                                     strict=True)):
        out["val_error"][r] = balanced_error(pv, y_val, classes)
        out["val_logloss"][r] = logloss(pv, y_val)
        out["test_error"][r] = balanced_error(pt, y_test, classes)
    out["seconds"] = np.full(rounds, seconds / rounds)
    return out


def balanced_error(proba: np.ndarray, y: np.ndarray, classes: int) -> float:
    """``1 -`` mean recall over the classes present in ``y``; ``proba [n, C]``."""
    pred = proba.argmax(1)
    recalls = [float((pred[y == c] == c).mean()) for c in range(classes) if (y == c).any()]
    return 1.0 - float(np.mean(recalls))


def logloss(proba: np.ndarray, y: np.ndarray, cap: float = 10.0) -> float:
    """Mean cross-entropy in nats, held at ``cap``."""
    p = np.clip(proba[np.arange(len(y)), y], np.exp(-cap), 1.0)
    return float(-np.log(p).mean())
