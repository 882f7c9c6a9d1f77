"""Config dataclasses and registry entries of the multi-fidelity peers (no peer library imported).

Each is a library's own multi-fidelity method driven through its own ask/tell (or scheduler) API, one evaluation
at one fidelity level per round, on a task that declares a fidelity (``task=branin_mf|hartmann6_mf``).
"""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import algorithm

MF_TASKS = ("branin_mf", "hartmann6_mf")  # --help and the registry-wide test run them on these


def _check(eta: object, min_fidelity: object) -> None:
    if isinstance(eta, bool) or not isinstance(eta, int) or eta < 2:
        raise ValueError(f"algo.eta={eta!r} must be an integer >= 2 (the libraries' reduction factor)")
    if min_fidelity is not None and (isinstance(min_fidelity, bool) or not isinstance(min_fidelity, (int, float))
                                     or not min_fidelity > 0):
        raise ValueError(f"algo.min_fidelity={min_fidelity!r} must be > 0 or null (the task's minimum)")


@dataclass(frozen=True)
class MFPeerConfig:
    """A library's multi-fidelity method over the task's fidelity from ``min_fidelity`` to its maximum."""

    name: str = "smac_hyperband"
    eta: int = 3                       # reduction factor (an integer: SMAC's and Optuna's Hyperband need one)
    min_fidelity: float | None = None  # null: the task's fidelity minimum (the lowest budget)

    def __post_init__(self) -> None:
        _check(self.eta, self.min_fidelity)


@dataclass(frozen=True)
class OptunaHyperbandConfig:
    """Optuna's TPESampler with its HyperbandPruner."""

    name: str = "optuna_tpe_hyperband"
    eta: int = 3                       # HyperbandPruner's reduction_factor
    min_fidelity: float | None = None  # HyperbandPruner's min_resource (null: the task's fidelity minimum)
    n_startup_trials: int = 10         # TPE's independent random trials before its model (Optuna's default)

    def __post_init__(self) -> None:
        _check(self.eta, self.min_fidelity)
        if self.n_startup_trials < 0:
            raise ValueError(f"algo.n_startup_trials={self.n_startup_trials} must be >= 0")


DE_STRATEGIES = ("rand1_bin", "rand2_bin", "best1_bin", "best2_bin", "currenttobest1_bin", "randtobest1_bin")


@dataclass(frozen=True)
class DEHBConfig:
    """DEHB: differential evolution in Hyperband's brackets."""

    name: str = "dehb"
    eta: int = 3
    min_fidelity: float | None = None
    mutation_factor: float = 0.5       # DE's F (DEHB's default)
    crossover_prob: float = 0.5        # DE's CR (DEHB's default)
    strategy: str = "rand1_bin"        # DE's mutation + crossover strategy (DEHB's default)

    def __post_init__(self) -> None:
        _check(self.eta, self.min_fidelity)
        if not 0 < self.mutation_factor <= 2 or not 0 <= self.crossover_prob <= 1:
            raise ValueError(f"algo.mutation_factor={self.mutation_factor} must be in (0, 2] and "
                             f"algo.crossover_prob={self.crossover_prob} in [0, 1]")
        if self.strategy not in DE_STRATEGIES:
            raise ValueError(f"algo.strategy='{self.strategy}' is unknown; allowed: {', '.join(DE_STRATEGIES)}")


@dataclass(frozen=True)
class RayASHAConfig:
    """Ray Tune's ASHAScheduler deciding, result by result, which trial stops (random search proposes)."""

    name: str = "raytune_asha"
    eta: int = 3                       # ASHAScheduler's reduction_factor
    min_fidelity: float | None = None  # its grace_period (null: the task's fidelity minimum)
    brackets: int = 1                  # its number of brackets (Ray's default 1)

    def __post_init__(self) -> None:
        _check(self.eta, self.min_fidelity)
        if isinstance(self.brackets, bool) or not isinstance(self.brackets, int) or self.brackets < 1:
            raise ValueError(f"algo.brackets={self.brackets!r} must be an integer >= 1")


@dataclass(frozen=True)
class SyneTuneConfig:
    """Syne Tune's ASHA family (AsynchronousSuccessiveHalving with its searcher) deciding, result by result, which
    trial stops."""

    name: str = "synetune_asha"
    eta: int = 3                       # the scheduler's reduction_factor
    min_fidelity: float | None = None  # its grace_period (null: the task's fidelity minimum)
    brackets: int = 1                  # its number of brackets (Syne Tune's default 1)

    def __post_init__(self) -> None:
        _check(self.eta, self.min_fidelity)
        if isinstance(self.brackets, bool) or not isinstance(self.brackets, int) or self.brackets < 1:
            raise ValueError(f"algo.brackets={self.brackets!r} must be an integer >= 1")


@dataclass(frozen=True)
class SyneTuneBOHBConfig(SyneTuneConfig):
    """Syne Tune's BOHB: its kernel density estimator proposes (on the last value of every trial), ASHA stops."""

    name: str = "synetune_bohb"
    top_n_percent: int = 15            # the KDE's share of good observations, in percent (Syne Tune's default)
    num_candidates: int = 64           # candidates drawn from the good KDE per proposal (Syne Tune's default)
    random_fraction: float = 0.33      # share of proposals drawn at random (Syne Tune's default)
    bandwidth_factor: int = 3          # widens the good KDE's bandwidth for the candidates (Syne Tune's default)
    min_bandwidth: float = 0.001       # the KDE's smallest bandwidth (Syne Tune's default)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.top_n_percent < 100 or self.num_candidates < 1 or not 0 <= self.random_fraction <= 1:
            raise ValueError(f"algo.top_n_percent={self.top_n_percent} must be in (0, 100), algo.num_candidates="
                             f"{self.num_candidates} >= 1 and algo.random_fraction={self.random_fraction} in [0, 1]")
        if self.bandwidth_factor < 1 or not self.min_bandwidth > 0:
            raise ValueError(f"algo.bandwidth_factor={self.bandwidth_factor} must be >= 1 and algo.min_bandwidth="
                             f"{self.min_bandwidth} > 0")


_PEERS = "hpoflow.algorithms.peers"
_MF = {"tasks": MF_TASKS, "smoke": ("task=branin_mf",)}
BUILTINS = [
    algorithm("optuna_tpe_hyperband", f"{_PEERS}.optuna_hyperband:OptunaTPEHyperband", OptunaHyperbandConfig,
              "Optuna TPESampler + HyperbandPruner via Study.ask/Trial.report/should_prune/Study.tell; a trial "
              "climbs the rung levels until pruned (needs a task with a fidelity; extra: peers)",
              requires=("optuna",), extra="peers", **_MF),
    algorithm("smac_hyperband", f"{_PEERS}.smac_hyperband:SMACHyperband", MFPeerConfig,
              "SMAC3's MultiFidelityFacade (random forest + Hyperband intensifier) via ask/tell, the fidelity = "
              "SMAC's budget (needs a task with a fidelity; extra: peers)",
              requires=("smac", "ConfigSpace"), extra="peers", **_MF),
    algorithm("dehb", f"{_PEERS}.dehb_peer:DEHBOptimizer", DEHBConfig,
              "DEHB (differential evolution in Hyperband's brackets) via DEHB.ask/tell (needs a task with a "
              "fidelity); in no extra: dehb 0.1.2 pins numpy<2, so pip install --no-deps dehb loguru",
              requires=("dehb", "loguru", "ConfigSpace"), install="pip install --no-deps dehb loguru", **_MF),
    algorithm("raytune_asha", f"{_PEERS}.raytune_asha:RayTuneASHA", RayASHAConfig,
              "Ray Tune's ASHAScheduler through its scheduler API (on_trial_add/result/complete): each result "
              "continues or stops its trial; Ray's random sampling proposes (needs a task with a fidelity; "
              "extra: cluster)", requires=("ray",), extra="cluster", **_MF),
    algorithm("synetune_asha", f"{_PEERS}.synetune_peer:SyneTuneASHA", SyneTuneConfig,
              "Syne Tune's ASHA through its scheduler API (suggest/on_trial_add/result/complete): each result "
              "continues or stops its trial; random search proposes (needs a task with a fidelity; extra: synetune)",
              requires=("syne_tune",), extra="synetune", **_MF),
    algorithm("synetune_bohb", f"{_PEERS}.synetune_peer:SyneTuneBOHB", SyneTuneBOHBConfig,
              "Syne Tune's BOHB through its scheduler API: its KDE proposes, asynchronous successive halving stops "
              "(needs a task with a fidelity; extra: synetune)", requires=("syne_tune",), extra="synetune", **_MF),
    algorithm("synetune_ashabore", f"{_PEERS}.synetune_peer:SyneTuneASHABORE", SyneTuneConfig,
              "Syne Tune's ASHABORE through its scheduler API: a BORE classifier (XGBoost) proposes, ASHA stops "
              "(needs a task with a fidelity; extra: synetune)", requires=("syne_tune", "xgboost"),
              extra="synetune", **_MF),
    algorithm("synetune_ashacqr", f"{_PEERS}.synetune_peer:SyneTuneASHACQR", SyneTuneConfig,
              "Syne Tune's ASHACQR through its scheduler API: conformalized quantile regression proposes, ASHA "
              "stops (needs a task with a fidelity; extra: synetune)", requires=("syne_tune",), extra="synetune",
              **_MF),
]
