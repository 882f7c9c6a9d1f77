"""Config dataclasses of the peer adapters (no peer library imported: Hydra composes them at start-up)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import algorithm
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


SMAC_FACADES = ("hpo", "blackbox")


@dataclass(frozen=True)
class SMACConfig:
    """A SMAC3 facade (random forest + log EI by default) told ``n_trials=budget.rounds``."""

    name: str = "smac_hpo"
    facade: str = "hpo"        # hpo: HyperparameterOptimizationFacade (RF); blackbox: BlackBoxFacade (GP)
    n_init: int | None = None  # null: the facade's Sobol design (hpo: min(10 x d, rounds / 4) configurations)

    def __post_init__(self) -> None:
        if self.facade not in SMAC_FACADES:
            raise ValueError(f"algo.facade='{self.facade}' is not a SMAC facade; allowed: {', '.join(SMAC_FACADES)}")
        check_auto_int("algo.n_init", self.n_init, "the facade's own initial design")


# the field's standard optimizers (optional extra `peers`: listed without it, selecting one names the install)
_PEERS = "hpoflow.algorithms.peers"
_OPTUNA = {"requires": ("optuna",), "extra": "peers"}
BUILTINS = [
    algorithm("optuna_tpe", f"{_PEERS}.optuna_samplers:OptunaTPE", OptunaConfig,
              "Optuna TPESampler via Study.ask/tell (extra: peers)", **_OPTUNA),
    algorithm("optuna_gp", f"{_PEERS}.optuna_samplers:OptunaGP", OptunaConfig,
              "Optuna GPSampler via Study.ask/tell (extra: peers)", **_OPTUNA),
    algorithm("optuna_cmaes", f"{_PEERS}.optuna_samplers:OptunaCmaEs", OptunaConfig,
              "Optuna CmaEsSampler via Study.ask/tell (extra: peers)", requires=("optuna", "cmaes"), extra="peers",
              n_startup_trials=1),
    algorithm("optuna_random", f"{_PEERS}.optuna_samplers:OptunaRandom", OptunaRandomConfig,
              "Optuna RandomSampler via Study.ask/tell (extra: peers)", **_OPTUNA),
    algorithm("botorch_logei", f"{_PEERS}.botorch_logei:BoTorchLogEI", BoTorchConfig,
              "BoTorch SingleTaskGP + LogExpectedImprovement + optimize_acqf (extra: peers)",
              requires=("botorch",), extra="peers"),
    algorithm("nevergrad_ngopt", f"{_PEERS}.nevergrad_ngopt:NevergradOptimizer", NevergradConfig,
              "Nevergrad NGOpt (algo.optimizer: any Nevergrad optimizer) told budget.rounds (extra: peers)",
              requires=("nevergrad",), extra="peers"),
    algorithm("smac_hpo", f"{_PEERS}.smac_hpo:SMACOptimizer", SMACConfig,
              "SMAC3's HPO facade (random forest + log EI; algo.facade=blackbox: GP) via ask/tell (extra: peers)",
              requires=("smac", "ConfigSpace"), extra="peers"),
]
