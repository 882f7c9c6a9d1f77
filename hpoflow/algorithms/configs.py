"""Config dataclasses of the built-in algorithms (no torch import: they are composed by Hydra at start-up)."""
from __future__ import annotations

from dataclasses import dataclass, field


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


@dataclass(frozen=True)
class RandomConfig:
    name: str = "random"


@dataclass(frozen=True)
class GridConfig:
    name: str = "grid"
    points_per_dim: int = 0  # 0: the largest k with k^d <= rounds (at least 2)
    shuffle: bool = True     # visit the grid in a seeded random order, so a short budget still spreads out

    def __post_init__(self) -> None:
        if self.points_per_dim < 0:
            raise ValueError(f"algo.points_per_dim={self.points_per_dim} must be >= 0")


@dataclass(frozen=True)
class GPBOConfig:
    """Shared settings of the GP-BO family (gp_ucb, gp_ei, gp_pi)."""

    name: str = "gp_ei"
    n_init: int = 0                  # 0: max(2, min(d + 1, rounds // 2)) scrambled-Sobol points
    beta: float = 2.0                # UCB: constant beta (mu + sqrt(beta) sigma)
    beta_schedule: str = "constant"  # constant | srinivas
    delta: float = 0.1               # confidence parameter of the Srinivas schedule
    xi: float = 0.0                  # PI: improvement margin (standardised units)
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)

    def __post_init__(self) -> None:
        if self.n_init < 0:
            raise ValueError(f"algo.n_init={self.n_init} must be >= 0")
        if self.beta_schedule not in ("constant", "srinivas"):
            raise ValueError(f"algo.beta_schedule='{self.beta_schedule}' is unknown; allowed: constant, srinivas")
        if self.beta < 0:
            raise ValueError(f"algo.beta={self.beta} must be >= 0")
        if not 0 < self.delta < 1:
            raise ValueError(f"algo.delta={self.delta} must be in (0, 1)")
