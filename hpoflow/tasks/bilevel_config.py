"""Config of the differentiable bilevel tasks ``ridge`` and ``logreg`` (no torch import)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from hpoflow.core.component import task

DATASETS = ("nir", "digits_regression", "digits_01", "digits_38")
FEATURES = ("standardised", "centred", "raw")  # X preprocessing of hpoflow.tasks.datasets.load_split

# Paper 001, Appendix D: black-box inner training n_T and step alpha_train per dataset.
PAPER_INNER = {"nir": (2500, 1e-3), "digits_regression": (3000, 1e-3), "digits_01": (500, 0.5),
               "digits_38": (500, 0.5)}


@dataclass(frozen=True)
class BilevelConfig:
    """``L_T(w, λ) = loss_train(w) + e^(λ + lambda_offset) ||w||²``, ``L_V = loss_val(w)``; λ ∈ [low, high].

    ``inner_steps``/``inner_lr`` are what a black-box ``evaluate`` spends training w at a given λ
    (gradient descent from w = 0); 0 means the paper's value for the dataset (Appendix D).
    ``lambda_offset`` scales the penalty by e^offset, which moves the optimum to λ* - offset (e.g. below
    0, where MY-HPO's hypernetwork model has the right slope); ``features`` preprocesses X
    (standardised | centred | raw). ``fidelity=true`` makes the inner steps the fidelity ``inner_steps`` in
    [min_inner_steps, n_T] (0: n_T / 81) for multi-fidelity methods, each trial continued from the w it reached.
    """

    name: str = "ridge"
    dataset: str = "nir"
    inner_steps: int = 0
    inner_lr: float = 0.0
    lambda_low: float = -10.0
    lambda_high: float = 5.0
    lambda_offset: float = 0.0       # penalty e^(λ + offset) ||w||²: shifts λ* by -offset
    features: str = "standardised"   # standardised | centred | raw (X preprocessing)
    fidelity: bool = False           # opt-in: inner steps as the fidelity (without it, evaluations are as before)
    min_inner_steps: int = 0         # lowest fidelity with fidelity=true (0: n_T / 81)

    def __post_init__(self) -> None:
        if self.dataset not in DATASETS:
            raise ValueError(f"task.dataset='{self.dataset}' is unknown; allowed: {', '.join(DATASETS)}")
        if self.inner_steps < 0:
            raise ValueError(f"task.inner_steps={self.inner_steps} must be >= 0 (0: paper value)")
        if self.inner_lr < 0:
            raise ValueError(f"task.inner_lr={self.inner_lr} must be >= 0 (0: paper value)")
        if self.features not in FEATURES:
            raise ValueError(f"task.features='{self.features}' is unknown; allowed: {', '.join(FEATURES)}")
        if not math.isfinite(self.lambda_offset):
            raise ValueError(f"task.lambda_offset={self.lambda_offset} must be finite")
        if not isinstance(self.fidelity, bool):
            raise ValueError(f"task.fidelity={self.fidelity!r} must be true or false")
        if isinstance(self.min_inner_steps, bool) or not isinstance(self.min_inner_steps, int) or \
                self.min_inner_steps < 0:
            raise ValueError(f"task.min_inner_steps={self.min_inner_steps!r} must be a whole number >= 0 (0: n_T/81)")
        if self.min_inner_steps and self.min_inner_steps > self.resolved_inner[0]:
            raise ValueError(f"task.min_inner_steps={self.min_inner_steps} > the inner steps "
                             f"{self.resolved_inner[0]}; allowed: 1 to {self.resolved_inner[0]}")
        if not self.lambda_low < self.lambda_high:
            raise ValueError(f"task.lambda_low={self.lambda_low} must be < task.lambda_high={self.lambda_high}")

    @property
    def resolved_inner(self) -> tuple[int, float]:
        steps, lr = PAPER_INNER[self.dataset]
        return self.inner_steps or steps, self.inner_lr or lr


BUILTINS = [
    task("ridge", "hpoflow.tasks.bilevel:make_bilevel", BilevelConfig,
         "bilevel ridge: least squares + e^(λ+offset)||w||² (task.dataset=nir|digits_regression), minimise L_V; "
         "task.fidelity=true: inner steps as a fidelity"),
    task("logreg", "hpoflow.tasks.bilevel:make_bilevel", BilevelConfig,
         "bilevel logistic + e^(λ+offset)||w||² (task.dataset=digits_01|digits_38), minimise L_V; "
         "task.fidelity=true: inner steps as a fidelity",
         dataset="digits_01"),
]
