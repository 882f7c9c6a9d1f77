"""Config of TuRBO-1 (Eriksson et al., 2019) (no torch import: composed by Hydra at start-up)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import algorithm
from hpoflow.core.config_values import check_auto_int


@dataclass(frozen=True)
class TuRBOConfig:
    """One trust region, Thompson sampling inside it; the region's rules are the paper's
    (``hpoflow.algorithms.turbo``)."""

    name: str = "turbo"
    n_init: int | None = None       # initial design per (re)start; null: min(2 d, max(2, rounds // 4))
    init_center: bool = False       # the first start's first design point is the space's centre (as NGOpt starts)

    def __post_init__(self) -> None:
        check_auto_int("algo.n_init", self.n_init, "min(2 d, max(2, rounds // 4))")
        if not isinstance(self.init_center, bool):
            raise ValueError(f"algo.init_center={self.init_center!r} is not allowed; allowed: true, false")


BUILTINS = [
    algorithm("turbo", "hpoflow.algorithms.turbo:TuRBO", TuRBOConfig,
              "TuRBO-1: trust-region BO with Thompson sampling on the exact GP",
              smoke=("task=branin", "budget.rounds=8")),
]
