"""Config dataclasses of the built-in tasks (no torch import)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class SyntheticConfig:
    """Closed-form test functions; ``dim`` is used by the dimension-free ones."""

    name: str = "branin"
    dim: int = 20
    noise_std: float = 0.0
    low: Optional[float] = None   # box [low, high]^dim for the dimension-free functions (default: paper's)
    high: Optional[float] = None

    def __post_init__(self) -> None:
        if self.low is not None and self.high is not None and not self.low < self.high:
            raise ValueError(f"task.low={self.low} must be < task.high={self.high}")
        if self.dim < 1:
            raise ValueError(f"task.dim={self.dim} must be >= 1")
        if self.noise_std < 0:
            raise ValueError(f"task.noise_std={self.noise_std} must be >= 0")


@dataclass(frozen=True)
class ClassifierConfig:
    """Classifier tuning by k-fold CV accuracy on a dataset bundled with scikit-learn."""

    name: str = "breast_cancer"
    model: str = "rf"  # rf | mlp | gb
    folds: int = 5
    noise_std: float = 0.0

    def __post_init__(self) -> None:
        if self.model not in ("rf", "mlp", "gb"):
            raise ValueError(f"task.model='{self.model}' is unknown; allowed: rf, mlp, gb")
        if self.folds < 2:
            raise ValueError(f"task.folds={self.folds} must be >= 2")
        if self.noise_std < 0:
            raise ValueError(f"task.noise_std={self.noise_std} must be >= 0")
