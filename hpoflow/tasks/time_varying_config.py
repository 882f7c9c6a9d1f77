"""Configs of the time-varying tasks (paper 002); no torch import."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import task

SHAPES = ("sine", "gaussian", "piecewise")


@dataclass(frozen=True)
class TVSyntheticConfig:
    """f_{t+1} = sqrt(1-eps) f_t + sqrt(eps) g_{t+1}, g ~ GP(0, Matérn-3/2) on ``n_points`` of [0, 1]."""

    name: str = "tv_synthetic"
    epsilon: float = 0.03
    n_points: int = 1000
    lengthscale: float = 0.2
    noise_std: float = 0.1  # noise variance 0.01

    def __post_init__(self) -> None:
        if not 0 <= self.epsilon <= 1:
            raise ValueError(f"task.epsilon={self.epsilon} must be in [0, 1]")
        if self.n_points < 2:
            raise ValueError(f"task.n_points={self.n_points} must be >= 2")
        if self.lengthscale <= 0 or self.noise_std < 0:
            raise ValueError(
                f"task.lengthscale={self.lengthscale} must be > 0 and task.noise_std={self.noise_std} >= 0"
            )


@dataclass(frozen=True)
class TVBanditConfig:
    """Three arms whose mean rewards drift with time along a sine, Gaussian bumps or steps."""

    name: str = "tv_bandit"
    shape: str = "sine"     # sine | gaussian | piecewise
    horizon: int = 2000     # time scale of the drift (the paper's T)
    noise_std: float = 0.1  # noise variance 0.01

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ValueError(f"task.shape='{self.shape}' is unknown; allowed: {', '.join(SHAPES)}")
        if self.horizon < 3:
            raise ValueError(f"task.horizon={self.horizon} must be >= 3")
        if self.noise_std < 0:
            raise ValueError(f"task.noise_std={self.noise_std} must be >= 0")


@dataclass(frozen=True)
class OnlineDigitsConfig:
    """One SGD training run on sklearn digits; each round the algorithm sets the learning-rate multiplier
    of the next ``steps_per_round`` steps and may pay for a validation pass (reward = accuracy gain)."""

    name: str = "online_digits"
    steps_per_round: int = 20
    batch_size: int = 32
    base_lr: float = 0.05
    lr_mult_low: float = 0.05
    lr_mult_high: float = 20.0
    hidden: int = 32
    n_multipliers: int = 0  # > 0: a finite set of log-spaced multipliers (task.candidates); 0: continuous

    def __post_init__(self) -> None:
        if self.steps_per_round < 1 or self.batch_size < 1 or self.hidden < 1:
            raise ValueError(f"task.steps_per_round={self.steps_per_round}, task.batch_size={self.batch_size}, "
                             f"task.hidden={self.hidden} must all be >= 1")
        if self.base_lr <= 0 or not 0 < self.lr_mult_low < self.lr_mult_high:
            raise ValueError(f"task.base_lr={self.base_lr} must be > 0 and 0 < task.lr_mult_low < task.lr_mult_high")
        if self.n_multipliers < 0 or self.n_multipliers == 1:
            raise ValueError(f"task.n_multipliers={self.n_multipliers} must be 0 (continuous) or >= 2")


_TV = "hpoflow.tasks.time_varying"
BUILTINS = [
    task("tv_synthetic", f"{_TV}:make_tv_synthetic", TVSyntheticConfig,
         "drifting GP sample on 1000 points of [0,1] (paper 002 Table A2), maximise"),
    task("tv_bandit", f"{_TV}:make_tv_bandit", TVBanditConfig,
         "3-armed bandit with sine / gaussian / piecewise drift (paper 002 Table A1), maximise"),
    task("online_digits", "hpoflow.tasks.online_hpo:make_online_digits", OnlineDigitsConfig,
         "online HPO: learning-rate multiplier of each k SGD steps on digits; reward = val-accuracy gain"),
]
