"""Config of TuRBO-1 (Eriksson et al., 2019) (no torch import: composed by Hydra at start-up)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.config_values import check_auto_int


@dataclass(frozen=True)
class TuRBOConfig:
    """One trust region, Thompson sampling inside it; defaults are the paper's (batch size 1)."""

    name: str = "turbo"
    n_init: int | None = None    # initial design per (re)start; null: min(2 d, max(2, rounds // 4))
    length_init: float = 0.8
    length_min: float = 0.5**7
    length_max: float = 1.6
    success_tolerance: int = 3
    failure_tolerance: int | None = None  # null: max(4, d) (the paper's ceil(max(4/q, d/q)) with q = 1)
    n_candidates: int | None = None  # Thompson-sampling candidates; null: min(100 d, 2000)
    improvement: float = 1e-3       # success iff y > best + improvement * |best|

    def __post_init__(self) -> None:
        if not 0 < self.length_min <= self.length_init <= self.length_max:
            raise ValueError(f"algo.length_min={self.length_min} <= algo.length_init={self.length_init} <= "
                             f"algo.length_max={self.length_max} must hold with length_min > 0")
        if self.success_tolerance < 1:
            raise ValueError(f"algo.success_tolerance={self.success_tolerance} must be >= 1")
        check_auto_int("algo.n_init", self.n_init, "min(2 d, max(2, rounds // 4))")
        check_auto_int("algo.failure_tolerance", self.failure_tolerance, "max(4, d)")
        check_auto_int("algo.n_candidates", self.n_candidates, "min(100 d, 2000)")
        if self.improvement < 0:
            raise ValueError(f"algo.improvement={self.improvement} must be >= 0")
