"""The acquisition optimiser's settings (no torch import: composed by Hydra at start-up as ``algo.optimizer``)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OptimizerConfig:
    """How acquisition functions are maximised over the unit cube."""

    raw_samples: int = 512
    num_restarts: int = 10
    max_iter: int = 200

    def __post_init__(self) -> None:
        if self.raw_samples < 1 or self.num_restarts < 1 or self.max_iter < 1:
            raise ValueError(f"algo.optimizer needs raw_samples, num_restarts, max_iter >= 1, got "
                             f"{self.raw_samples}, {self.num_restarts}, {self.max_iter}")
