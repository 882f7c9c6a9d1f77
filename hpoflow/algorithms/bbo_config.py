"""Config of the Bayesian bilevel optimisation algorithms bbo_ei / bbo_ucb (paper 000; no torch import)."""
from __future__ import annotations

from dataclasses import dataclass, field

from hpoflow.algorithms.configs import OptimizerConfig
from hpoflow.core.component import algorithm
from hpoflow.core.config_values import check_auto_int

BETA_SCHEDULES = ("paper", "srinivas", "constant")
RETURNED = ("auto", "mean", "queried")


@dataclass(frozen=True)
class BBOConfig:
    """Outer GP-BO of Bayesian bilevel optimisation.

    The UCB variant minimises the lower confidence bound ``mu - beta_t sigma``; ``beta_t`` multiplies
    sigma directly (it is not under a square root). Schedules:

    * ``paper``: ``beta_t = sqrt(B^2 + t phi(N)^2 / (noise_sigma^2 N))``, ``phi(N) = phi_c log N``;
    * ``srinivas``: ``beta_t = sqrt(2 log(t^(d/2+2) pi^2 / (3 delta)))`` (Srinivas et al., for comparison);
    * ``constant``: ``beta_t = beta``.

    ``N`` is read from the task's ``inner_steps`` (SGD steps per evaluation); tasks without one use
    ``hpoflow.algorithms.bbo.DEFAULT_INNER_STEPS``. When the task was built with ``task.inner_steps=auto``, the
    algorithm sets it to
    ``steps_per_round * budget.rounds`` (the paper's N proportional to T).

    ``returned``: the point reported each round: ``mean`` = argmin over observed (and the current query)
    of the posterior mean (Algorithm 1), ``queried`` = the current query (Algorithm 2), ``auto`` = the
    paper's choice for the variant (bbo_ei: mean, bbo_ucb: queried).
    """

    name: str = "bbo_ei"
    n_init: int | None = None    # null: max(2, min(d + 1, rounds // 2)) scrambled-Sobol points
    beta_schedule: str = "paper"    # paper | srinivas | constant (UCB only)
    B: float = 1.0                  # RKHS-norm bound of the paper's beta_t
    noise_sigma: float = 1.0        # sigma of the paper's beta_t (noise std of the standardised loss)
    phi_c: float = 1.0              # phi(N) = phi_c * log(N)
    beta: float = 2.0               # constant schedule: the multiplier of sigma
    delta: float = 0.1              # Srinivas schedule: confidence parameter
    steps_per_round: int = 50       # task.inner_steps=auto: N = steps_per_round * budget.rounds
    returned: str = "auto"          # auto | mean (Algorithm 1) | queried (Algorithm 2)
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)

    def __post_init__(self) -> None:
        check_auto_int("algo.n_init", self.n_init, "max(2, min(d + 1, rounds // 2))")
        if self.beta_schedule not in BETA_SCHEDULES:
            raise ValueError(f"algo.beta_schedule='{self.beta_schedule}' is unknown; allowed: "
                             f"{', '.join(BETA_SCHEDULES)}")
        if self.returned not in RETURNED:
            raise ValueError(f"algo.returned='{self.returned}' is unknown; allowed: {', '.join(RETURNED)}")
        for key in ("B", "beta", "phi_c"):
            if getattr(self, key) < 0:
                raise ValueError(f"algo.{key}={getattr(self, key)} must be >= 0")
        if self.noise_sigma <= 0:
            raise ValueError(f"algo.noise_sigma={self.noise_sigma} must be > 0")
        if not 0 < self.delta < 1:
            raise ValueError(f"algo.delta={self.delta} must be in (0, 1)")
        if self.steps_per_round < 1:
            raise ValueError(f"algo.steps_per_round={self.steps_per_round} must be >= 1")


_TASKS = ("digits_mlp", "digits_cnn")
BUILTINS = [
    algorithm("bbo_ei", "hpoflow.algorithms.bbo:BBOEI", BBOConfig,
              "Bayesian bilevel optimisation, EI with posterior-mean incumbent (paper 000, Alg. 1)", tasks=_TASKS),
    algorithm("bbo_ucb", "hpoflow.algorithms.bbo:BBOUCB", BBOConfig,
              "Bayesian bilevel optimisation, LCB with the paper's adaptive beta_t (paper 000, Alg. 2)", tasks=_TASKS),
]
