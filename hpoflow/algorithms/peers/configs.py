"""Config dataclasses of the peer adapters (no peer library imported: Hydra composes them at start-up)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.config_values import check_auto_int


@dataclass(frozen=True)
class OptunaConfig:
    """An Optuna sampler driven through ``Study.ask``/``Study.tell``."""

    name: str = "optuna_tpe"
    n_startup_trials: int = 10  # independent random trials before the sampler's model (Optuna's default)

    def __post_init__(self) -> None:
        if self.n_startup_trials < 0:
            raise ValueError(f"algo.n_startup_trials={self.n_startup_trials} must be >= 0")


@dataclass(frozen=True)
class OptunaRandomConfig:
    """Optuna's RandomSampler (seeded): the peers' own random baseline."""

    name: str = "optuna_random"


@dataclass(frozen=True)
class BoTorchConfig:
    """SingleTaskGP (MixedSingleTaskGP with categoricals) + LogExpectedImprovement, maximised by optimize_acqf."""

    name: str = "botorch_logei"
    n_init: int | None = None  # null: max(2, min(d + 1, rounds // 2)) scrambled-Sobol points (as gp_ei)
    num_restarts: int = 10   # optimize_acqf's multi-start L-BFGS-B restarts (BoTorch tutorials' value)
    raw_samples: int = 512   # raw samples for the restarts' initialisation (BoTorch tutorials' value)

    def __post_init__(self) -> None:
        check_auto_int("algo.n_init", self.n_init, "max(2, min(d + 1, rounds // 2))")
        if self.num_restarts < 1 or self.raw_samples < 1:
            raise ValueError(f"algo.num_restarts={self.num_restarts} and algo.raw_samples={self.raw_samples} "
                             "must be >= 1")


@dataclass(frozen=True)
class NevergradConfig:
    """A Nevergrad optimizer (NGOpt by default) told the budget ``budget.rounds``."""

    name: str = "nevergrad_ngopt"
    optimizer: str = "NGOpt"  # any name of nevergrad.optimizers.registry (NGOpt picks one from budget and space)
