"""Config dataclasses of the surrogates (no torch import)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import surrogate
from hpoflow.core.config_values import Period, check_period

KERNELS = ("matern12", "matern32", "matern52", "rbf")
OUTPUT_TRANSFORMS = ("none", "power")


@dataclass(frozen=True)
class GPConfig:
    """Exact GP: kernel, how hyperparameters are set, and how often they are refitted."""

    name: str = "gp"
    kernel: str = "matern52"         # matern12 | matern32 | matern52 | rbf
    ard: bool = True
    fit: str = "mll"                 # mll (type-II maximum likelihood with priors) | fixed
    lengthscale: float | None = None  # initial (mll) or fixed value on the unit cube; None: the prior's mode
    noise: float = 1e-3              # initial (mll) or fixed noise variance of standardised outputs
    outputscale: float = 1.0         # initial or fixed signal variance of standardised outputs
    learn_outputscale: bool = False  # standardised outputs make a unit signal variance a good default
    min_noise: float = 1e-6
    max_iter: int = 100
    fit_ftol: float = 1e-7           # L-BFGS-B relative tolerance on the per-point marginal likelihood
    refit_every: Period = None       # null: auto schedule (growth + surprise) | never | k >= 1: every k updates
    refit_growth: float = 0.1        # auto: refit once n has grown by this fraction since the last fit
    refit_surprise: float = 5.0      # auto: refit when a new point's standardised residual exceeds this
    standardize: bool = True
    output_transform: str | None = None  # null: the algorithm's (gp_ei: power, others: none) | none | power
    warp: bool = False               # learn a per-dimension Kumaraswamy CDF warp of the inputs (Snoek et al., 2014)

    def __post_init__(self) -> None:
        if self.kernel not in KERNELS:
            raise ValueError(f"surrogate.kernel='{self.kernel}' is unknown; allowed: {', '.join(KERNELS)}")
        if self.output_transform is not None and self.output_transform not in OUTPUT_TRANSFORMS:
            raise ValueError(f"surrogate.output_transform='{self.output_transform}' is unknown; allowed: "
                             f"{', '.join(OUTPUT_TRANSFORMS)} (or null: the algorithm's choice)")
        if self.fit not in ("mll", "fixed"):
            raise ValueError(f"surrogate.fit='{self.fit}' is unknown; allowed: mll, fixed")
        for key in ("lengthscale", "noise", "outputscale", "min_noise"):
            if getattr(self, key) is not None and getattr(self, key) <= 0:
                raise ValueError(f"surrogate.{key}={getattr(self, key)} must be > 0")
        check_period("surrogate.refit_every", self.refit_every, "auto schedule: growth + surprise")
        if self.refit_growth < 0 or self.refit_surprise <= 0:
            raise ValueError(f"surrogate.refit_growth={self.refit_growth} must be >= 0 and "
                             f"surrogate.refit_surprise={self.refit_surprise} > 0")
        if not 0 < self.fit_ftol < 1:
            raise ValueError(f"surrogate.fit_ftol={self.fit_ftol} must be in (0, 1)")
        if self.max_iter < 1:
            raise ValueError(f"surrogate.max_iter={self.max_iter} must be >= 1")


# what ExactGP provides (hpoflow.surrogates.base), declared so that validating a pair imports no torch/gpytorch
GP_PROTOCOLS = ("Surrogate", "StandardizedSurrogate", "ExtendableSurrogate", "LengthscaleSurrogate",
                "ConfiguredSurrogate", "KernelSurrogate")

BUILTINS = [
    surrogate("gp", "hpoflow.surrogates.gp:build", GPConfig, "exact GP (gpytorch), ARD Matérn/RBF",
              model_class="ExactGP", model_provides=GP_PROTOCOLS),
    surrogate("skopt_gp", "hpoflow.surrogates.gp:build", GPConfig,
              "exact GP as scikit-optimize's: constant x Matérn-5/2 ARD + white noise (learned output scale)",
              model_class="ExactGP", model_provides=GP_PROTOCOLS, learn_outputscale=True),
]
