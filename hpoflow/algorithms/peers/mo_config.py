"""Configs of the multi-objective peer adapters (no peer library imported: Hydra composes them at start-up)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import algorithm
from hpoflow.core.config_values import check_auto_int


@dataclass(frozen=True)
class OptunaNSGA2Config:
    """Optuna's NSGAIISampler on the task's objectives (constraints through Trial.set_constraint)."""

    name: str = "optuna_nsga2"
    population_size: int = 10  # Optuna's default 50 would make a 50-evaluation run all first (random) generation

    def __post_init__(self) -> None:
        if isinstance(self.population_size, bool) or not isinstance(self.population_size, int) or \
                self.population_size < 2:
            raise ValueError(f"algo.population_size={self.population_size!r} must be an integer >= 2")


@dataclass(frozen=True)
class OptunaMOTPEConfig:
    """Optuna's TPESampler with several directions (multi-objective TPE)."""

    name: str = "optuna_motpe"
    n_startup_trials: int = 10  # Optuna's default

    def __post_init__(self) -> None:
        if isinstance(self.n_startup_trials, bool) or not isinstance(self.n_startup_trials, int) or \
                self.n_startup_trials < 0:
            raise ValueError(f"algo.n_startup_trials={self.n_startup_trials!r} must be an integer >= 0")


@dataclass(frozen=True)
class BoTorchQNEHVIConfig:
    """BoTorch qLogNEHVI on a ModelListGP (one SingleTaskGP per objective and constraint), by optimize_acqf."""

    name: str = "botorch_qnehvi"
    n_init: int | None = None  # null: 2 (d + 1) scrambled-Sobol points (BoTorch's multi-objective tutorials)
    num_restarts: int = 10
    raw_samples: int = 512
    mc_samples: int = 128  # quasi-MC samples of the acquisition (BoTorch's tutorials)

    def __post_init__(self) -> None:
        check_auto_int("algo.n_init", self.n_init, "2 (d + 1)")
        for key in ("num_restarts", "raw_samples", "mc_samples"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"algo.{key}={value!r} must be an integer >= 1")


_PEERS = "hpoflow.algorithms.peers"
_MO_TASKS = ("zdt1", "dtlz2")
BUILTINS = [
    algorithm("optuna_nsga2", f"{_PEERS}.optuna_mo:OptunaNSGA2", OptunaNSGA2Config,
              "Optuna NSGAIISampler on the task's objectives, constraints via Trial.set_constraint (extra: peers)",
              requires=("optuna",), extra="peers", tasks=_MO_TASKS,
              smoke=("task=zdt1", "task.dim=3", "budget.rounds=6", "algo.population_size=4")),
    algorithm("optuna_motpe", f"{_PEERS}.optuna_mo:OptunaMOTPE", OptunaMOTPEConfig,
              "Optuna TPESampler with several directions (multi-objective TPE), constraints via Trial.set_constraint "
              "(extra: peers)", requires=("optuna",), extra="peers", tasks=_MO_TASKS,
              smoke=("task=zdt1", "task.dim=3", "budget.rounds=6")),
    algorithm("botorch_qnehvi", f"{_PEERS}.botorch_qnehvi:BoTorchQNEHVI", BoTorchQNEHVIConfig,
              "BoTorch qLogNEHVI on a ModelListGP of SingleTaskGPs, reference point = the task's, constraints via "
              "constraints= (extra: peers)", requires=("botorch",), extra="peers", tasks=_MO_TASKS,
              smoke=("task=zdt1", "task.dim=3", "budget.rounds=6", "algo.raw_samples=64", "algo.num_restarts=2")),
]
