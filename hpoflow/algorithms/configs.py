"""Config dataclasses of the built-in algorithms (no torch import: they are composed by Hydra at start-up)."""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from hpoflow.acquisition.config import OptimizerConfig  # re-exported: the algorithms' configs nest it
from hpoflow.core.component import algorithm
from hpoflow.core.config_values import check_auto_int


@dataclass(frozen=True)
class RandomConfig:
    name: str = "random"


@dataclass(frozen=True)
class GridConfig:
    name: str = "grid"
    points_per_dim: int | None = None  # null: the largest k with k^d <= rounds (at least 2)
    shuffle: bool = True     # visit the grid in a seeded random order, so a short budget still spreads out

    def __post_init__(self) -> None:
        check_auto_int("algo.points_per_dim", self.points_per_dim, "the largest k with k^d <= rounds")


# algo.preset=skopt: scikit-optimize's gp_minimize defaults, the GO-UCB paper's baselines (paper 004, Sec. 6:
# "sklearn package (Head et al., 2021) with default parameter settings"): 10 uniform random initial points,
# xi = 0.01 on raw objective values (EI and PI), LCB kappa = 1.96 (beta = kappa^2). Its kernel,
# ConstantKernel * Matern(nu=2.5, ARD) + WhiteKernel on normalised y, is our surrogate=gp (Matern-5/2 ARD,
# learned noise, standardised y) with surrogate.learn_outputscale=true; our GP keeps its lengthscale and
# noise priors where skopt has box bounds (0.01..100 on lengthscales). Settings left at their default take these.
SKOPT = {"n_init": 10, "init": "random", "xi": 0.01, "xi_units": "raw", "beta": 3.8416}


DISCRETE = ("relax", "snap")  # how GP-BO treats integer and categorical parameters (gp_bo.GPBO.ask)


@dataclass(frozen=True)
class GPBOConfig:
    """Shared settings of the GP-BO family: preset, initial design, acquisition optimiser."""

    name: str = "gp_bo"
    preset: str = "default"          # default (ours) | skopt (scikit-optimize's gp_minimize defaults: SKOPT)
    n_init: int | None = None        # null: max(2, min(d + 1, rounds // 2)) initial points
    init: str = "sobol"              # initial design: sobol (scrambled) | random (uniform)
    init_center: bool = False        # the design's first point is the space's centre (as NGOpt starts)
    discrete: str = "relax"          # integers/categoricals: relax (continuous, as proposed) | snap (cell centres)
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)

    def __post_init__(self) -> None:
        if self.preset not in ("default", "skopt"):
            raise ValueError(f"algo.preset='{self.preset}' is unknown; allowed: default, skopt")
        if self.preset == "skopt":  # the preset's values this algorithm has, where the user left the default
            defaults = {f.name: f.default for f in fields(self)}
            for key, value in SKOPT.items():
                if key in defaults and getattr(self, key) == defaults[key]:
                    object.__setattr__(self, key, value)
        if self.init not in ("sobol", "random"):
            raise ValueError(f"algo.init='{self.init}' is unknown; allowed: sobol, random")
        if not isinstance(self.init_center, bool):
            raise ValueError(f"algo.init_center={self.init_center!r} is not allowed; allowed: true, false")
        if self.discrete not in DISCRETE:
            raise ValueError(f"algo.discrete='{self.discrete}' is unknown; allowed: {', '.join(DISCRETE)}")
        check_auto_int("algo.n_init", self.n_init, "max(2, min(d + 1, rounds // 2))")


@dataclass(frozen=True)
class GPUCBConfig(GPBOConfig):
    """GP-UCB: mu + sqrt(beta_t) sigma."""

    name: str = "gp_ucb"
    beta: float = 2.0                # constant beta_t (mu + sqrt(beta_t) sigma)
    beta_schedule: str = "constant"  # constant | srinivas
    delta: float = 0.1               # confidence parameter of the Srinivas schedule

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.beta_schedule not in ("constant", "srinivas"):
            raise ValueError(f"algo.beta_schedule='{self.beta_schedule}' is unknown; allowed: constant, srinivas")
        if self.beta < 0:
            raise ValueError(f"algo.beta={self.beta} must be >= 0")
        if not 0 < self.delta < 1:
            raise ValueError(f"algo.delta={self.delta} must be in (0, 1)")


@dataclass(frozen=True)
class GPEIConfig(GPBOConfig):
    """GP-EI and GP-PI: the improvement margin over the best observed value."""

    name: str = "gp_ei"
    xi: float = 0.0                  # improvement margin over the best observed value
    xi_units: str = "standardized"   # xi in standardised reward units | raw (objective units, as skopt)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.xi_units not in ("standardized", "raw"):
            raise ValueError(f"algo.xi_units='{self.xi_units}' is unknown; allowed: standardized, raw")
        if self.xi < 0:
            raise ValueError(f"algo.xi={self.xi} must be >= 0")


_GP_BO = "hpoflow.algorithms.gp_bo"
BUILTINS = [
    algorithm("random", "hpoflow.algorithms.random_search:RandomSearch", RandomConfig, "uniform random search"),
    algorithm("grid", "hpoflow.algorithms.random_search:GridSearch", GridConfig, "grid search (seeded order)"),
    algorithm("gp_ucb", f"{_GP_BO}:GPUCB", GPUCBConfig, "GP-UCB (constant or Srinivas beta)"),
    algorithm("gp_ei", f"{_GP_BO}:GPEI", GPEIConfig, "GP-EI (log-EI, best-observed incumbent)"),
    algorithm("gp_pi", f"{_GP_BO}:GPPI", GPEIConfig, "GP-PI (probability of improvement)"),
    *(algorithm(f"skopt_gp_{acq}", f"{_GP_BO}:{cls}", config,  # the GO-UCB paper's baselines
                f"GP-{acq.upper()} at scikit-optimize's gp_minimize defaults (algo.preset=skopt; selects "
                "surrogate=skopt_gp)", surrogate="skopt_gp", preset="skopt")
      for acq, cls, config in (("ucb", "GPUCB", GPUCBConfig), ("ei", "GPEI", GPEIConfig), ("pi", "GPPI", GPEIConfig))),
]
