"""Configs of the local derivative-free methods (no scipy import: composed by Hydra at start-up)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import algorithm


@dataclass(frozen=True)
class LocalDFOConfig:
    """scipy's COBYQA (quadratic models) or COBYLA (linear models) from the centre of the space."""

    name: str = "cobyqa"
    radius: float = 1 / 6    # first trust-region radius in the unit cube (NGOpt's Cobyla: one sixth of each range)

    def __post_init__(self) -> None:
        if not (isinstance(self.radius, (int, float)) and 0 < self.radius <= 0.5):
            raise ValueError(f"algo.radius={self.radius!r} is not allowed; allowed: a number in (0, 0.5]")


@dataclass(frozen=True)
class CobylaConfig(LocalDFOConfig):
    name: str = "cobyla"


_TARGET = "hpoflow.algorithms.local_dfo:LocalDFO"
BUILTINS = [
    algorithm("cobyqa", _TARGET, LocalDFOConfig,
              "scipy's COBYQA (Powell's derivative-free trust region, quadratic models) from the centre; restarts "
              "from the best point when it converges", smoke=("task=branin", "budget.rounds=8")),
    algorithm("cobyla", _TARGET, CobylaConfig,
              "scipy's COBYLA (linear models; what NGOpt runs at small budgets) from the centre; restarts from the "
              "best point when it converges", smoke=("task=branin", "budget.rounds=8")),
]
