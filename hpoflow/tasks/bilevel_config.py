"""Config of the differentiable bilevel tasks ``ridge`` and ``logreg`` (no torch import)."""
from __future__ import annotations

from dataclasses import dataclass

DATASETS = ("nir", "digits_regression", "digits_01", "digits_38")

# Paper 001, Appendix D: black-box inner training n_T and step alpha_train per dataset.
PAPER_INNER = {"nir": (2500, 1e-3), "digits_regression": (3000, 1e-3), "digits_01": (500, 0.5),
               "digits_38": (500, 0.5)}


@dataclass(frozen=True)
class BilevelConfig:
    """``L_T(w, λ) = loss_train(w) + e^λ ||w||²``, ``L_V = loss_val(w)``; one hyperparameter λ ∈ [low, high].

    ``inner_steps``/``inner_lr`` are what a black-box ``evaluate`` spends training w at a given λ
    (gradient descent from w = 0); 0 means the paper's value for the dataset (Appendix D).
    """

    name: str = "ridge"
    dataset: str = "nir"
    inner_steps: int = 0
    inner_lr: float = 0.0
    lambda_low: float = -10.0
    lambda_high: float = 5.0

    def __post_init__(self) -> None:
        if self.dataset not in DATASETS:
            raise ValueError(f"task.dataset='{self.dataset}' is unknown; allowed: {', '.join(DATASETS)}")
        if self.inner_steps < 0:
            raise ValueError(f"task.inner_steps={self.inner_steps} must be >= 0 (0: paper value)")
        if self.inner_lr < 0:
            raise ValueError(f"task.inner_lr={self.inner_lr} must be >= 0 (0: paper value)")
        if not self.lambda_low < self.lambda_high:
            raise ValueError(f"task.lambda_low={self.lambda_low} must be < task.lambda_high={self.lambda_high}")

    @property
    def resolved_inner(self) -> tuple[int, float]:
        steps, lr = PAPER_INNER[self.dataset]
        return self.inner_steps or steps, self.inner_lr or lr
