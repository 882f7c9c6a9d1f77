"""Data sets of the bilevel tasks (paper 001, Table 1 stand-ins), split by seed and standardised.

- ``nir``: chemotools' bundled fermentation NIR spectra (21 spectra x 1047 wavenumbers, glucose
  concentration), the small-n, large-d, ill-conditioned case that the paper's Cookie data represents;
  split 50/25/25.
- ``digits_regression``: scikit-learn digits (8x8), regress the label; 100 per digit for training
  (Table 1), the rest split evenly into validation and test.
- ``digits_01`` / ``digits_38``: digits 0 vs 1 and 3 vs 8, labels in {-1, +1}; split 50/25/25.

Features (``features``): ``standardised`` (default) with training statistics (constant pixels keep
scale 1), ``centred`` (training mean removed, raw scale), or ``raw``. The choice moves the optimum λ*:
scaling X by c shifts λ* by about -2 ln c, and paper 001 does not state its preprocessing. Regression
targets are always centred and scaled by the training mean and standard deviation, so a regression
loss is reported in units of Var(y_train) (the fraction of unexplained variance the paper reports).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from hpoflow.tasks.bilevel_config import FEATURES


@dataclass(frozen=True)
class Split:
    """Train/validation/test arrays; ``kind`` is ``regression`` or ``classification``."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    kind: str


@cache
def _raw(dataset: str) -> tuple[np.ndarray, np.ndarray, str]:
    if dataset == "nir":
        from chemotools.datasets import load_fermentation_train

        X, y = load_fermentation_train()
        return X.to_numpy(float), y["glucose"].to_numpy(float), "regression"
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X.astype(float)
    if dataset == "digits_regression":
        return X, y.astype(float), "regression"
    pairs = {"digits_01": (0, 1), "digits_38": (3, 8)}
    if dataset not in pairs:
        raise ValueError(f"task.dataset='{dataset}' is unknown; allowed: nir, digits_regression, digits_01, digits_38")
    neg, pos = pairs[dataset]
    keep = (y == neg) | (y == pos)
    return X[keep], np.where(y[keep] == pos, 1.0, -1.0), "classification"


def _fractions(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A 50/25/25 random split of ``range(n)``."""
    perm = rng.permutation(n)
    n_train, n_val = round(0.5 * n), round(0.25 * n)
    return perm[:n_train], perm[n_train:n_train + n_val], perm[n_train + n_val:]


def _per_digit(y: np.ndarray, per_class: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``per_class`` training samples of each label (fewer if absent), the rest halved into val/test."""
    train = np.concatenate([rng.permutation(np.flatnonzero(y == c))[:per_class] for c in np.unique(y)])
    rest = rng.permutation(np.setdiff1d(np.arange(len(y)), train))
    half = len(rest) // 2
    return rng.permutation(train), rest[:half], rest[half:]


def load_split(dataset: str, seed: int = 0, features: str = "standardised") -> Split:
    """The split of ``dataset`` drawn with ``seed`` (a new seed resamples the split), features preprocessed."""
    if features not in FEATURES:
        raise ValueError(f"task.features='{features}' is unknown; allowed: {', '.join(FEATURES)}")
    X, y, kind = _raw(dataset)
    rng = np.random.default_rng(seed)
    if dataset == "digits_regression":
        tr, va, te = _per_digit(y, 100, rng)
    else:
        tr, va, te = _fractions(len(y), rng)
    mean, std = X[tr].mean(0), X[tr].std(0)
    std = np.where(std > 1e-12, std, 1.0)
    Z = {"standardised": (X - mean) / std, "centred": X - mean, "raw": X}[features]
    if kind == "regression":
        y = (y - y[tr].mean()) / y[tr].std()
    return Split(Z[tr], y[tr], Z[va], y[va], Z[te], y[te], kind)
