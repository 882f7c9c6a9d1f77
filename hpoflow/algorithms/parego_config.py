"""Config of ParEGO (Knowles, 2006) on our GP-EI (no torch import: composed by Hydra at start-up)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from hpoflow.algorithms.configs import GPEIConfig
from hpoflow.core.component import algorithm


@dataclass(frozen=True)
class ParEGOConfig(GPEIConfig):
    """GP-EI on a random augmented-Chebyshev scalarisation of the objectives, drawn anew each round."""

    name: str = "parego"
    rho: float = 0.05  # weight of the augmenting sum (Knowles 2006: 0.05)

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.rho, bool) or not isinstance(self.rho, (int, float)) or not (
                math.isfinite(self.rho) and self.rho >= 0):
            raise ValueError(f"algo.rho={self.rho!r} must be a number >= 0")


BUILTINS = [
    algorithm("parego", "hpoflow.algorithms.parego:ParEGO", ParEGOConfig,
              "ParEGO: GP-EI on a random augmented-Chebyshev scalarisation of the objectives per round (tasks with "
              "several objectives)", smoke=("task=zdt1", "task.dim=3", "budget.rounds=6"),
              tasks=("zdt1", "dtlz2")),
]
