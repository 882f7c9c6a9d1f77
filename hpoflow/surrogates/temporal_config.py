"""Config of the time-varying GP surrogate (no torch import)."""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import surrogate

SPACE_KERNELS = ("matern12", "matern32", "matern52", "rbf", "identity")


@dataclass(frozen=True)
class TemporalGPConfig:
    """Space kernel x temporal kernel (1-eps)^{|t-t'|/2} (Bogunovic et al., 2016; paper 002 §3.1).

    Outputs are not standardised: the model is a zero-mean (or ``prior_mean``) GP with signal
    variance ``outputscale`` and Gaussian noise variance ``noise``, as in the paper's setting.

    ``fit=epsilon`` with a cost-efficient query rule can deadlock: on a stretch where f barely moves the
    ML eps goes to its lower bound, the model then believes f static and stops querying, and a refit that
    waits for new observations never comes. Two guards: eps never goes below ``epsilon_min`` (so a skipped
    round still adds uncertainty and queries resume), and refits are scheduled in rounds, not observations.
    """

    name: str = "tv_gp"
    kernel: str = "matern32"    # matern12 | matern32 | matern52 | rbf | identity (independent arms)
    lengthscale: float = 0.2    # on the unit cube (ignored by identity)
    outputscale: float = 1.0
    noise: float = 0.01         # observation noise variance
    prior_mean: float = 0.0
    epsilon: float = 0.03       # forgetting rate in [0, 1)
    fit: str = "fixed"          # fixed | epsilon (maximum marginal likelihood over epsilon, then O(n^3) refit)
    refit_every: int = 25       # with fit=epsilon: refit at the first observation >= k rounds after the last fit
    epsilon_min: float = 1e-3   # with fit=epsilon: floor of the fitted epsilon (keeps uncertainty growing)

    def __post_init__(self) -> None:
        if self.kernel not in SPACE_KERNELS:
            raise ValueError(f"surrogate.kernel='{self.kernel}' is unknown; allowed: {', '.join(SPACE_KERNELS)}")
        for key in ("lengthscale", "outputscale", "noise"):
            if getattr(self, key) <= 0:
                raise ValueError(f"surrogate.{key}={getattr(self, key)} must be > 0")
        if not 0 <= self.epsilon < 1:
            raise ValueError(f"surrogate.epsilon={self.epsilon} must be in [0, 1)")
        if self.fit not in ("fixed", "epsilon"):
            raise ValueError(f"surrogate.fit='{self.fit}' is unknown; allowed: fixed, epsilon")
        if not 0 < self.epsilon_min < 0.5:
            raise ValueError(f"surrogate.epsilon_min={self.epsilon_min} must be in (0, 0.5)")
        if self.refit_every < 1:
            raise ValueError(f"surrogate.refit_every={self.refit_every} must be >= 1")


BUILTINS = [
    surrogate("tv_gp", "hpoflow.surrogates.temporal:build", TemporalGPConfig,
              "time-varying GP: space kernel x (1-eps)^{|t-t'|/2}, incremental updates", model_class="TemporalGP",
              model_provides=("Surrogate", "ConfiguredSurrogate", "CandidateSurrogate", "TimeVaryingSurrogate")),
]
