"""Configs of the gradient-based bilevel HPO algorithms ``sho`` and ``my_hpo`` (no torch import).

Defaults follow paper 001 (Appendix D) — SHO σ = 1e-4; MY-HPO ρ = 1; both start at λ = -1 — except the
step sizes: null (the default) means 1/L, with L the largest Hessian eigenvalue of that step's objective at the
current iterate (from the task's data curvature), so the defaults run on any dataset. The paper's fixed
steps diverge where the data are ill-conditioned (NIR: L ≈ 400 for the training loss, so α = 0.01 > 2/L).
"""
from __future__ import annotations

from dataclasses import dataclass

from hpoflow.core.component import algorithm
from hpoflow.core.config_values import check_auto_positive

VARIANTS = ("constant", "backtracking", "full")


def _step(name: str, value: float | None) -> None:
    check_auto_positive(f"algo.{name}", value, "1/L from the data's curvature")


@dataclass(frozen=True)
class SHOConfig:
    """Local SHO (Lorraine & Duvenaud 2018): hypernetwork w = λφ1 + φ0, λ̂ ~ N(λ, σ²)."""

    name: str = "sho"
    alpha: float | None = None  # step on the hypernetwork φ (training loss); null: 1/((1+λ̂²) L_T(λ̂))
    beta: float | None = None   # step on λ (validation loss); null: 1/(L_V ||φ1||²); the paper uses 0.01
    sigma: float = 1e-4      # perturbation std of λ̂
    init_lambda: float = -1.0  # start; λ stays in [task.lambda_low, task.lambda_high]

    def __post_init__(self) -> None:
        for key in ("alpha", "beta"):
            _step(key, getattr(self, key))
        if self.sigma < 0:
            raise ValueError(f"algo.sigma={self.sigma} must be >= 0")


@dataclass(frozen=True)
class MYHPOConfig:
    """MY-HPO: Algorithm 1 with constant (C) or backtracking (BT) steps, or Algorithm 3 (full).

    Step sizes (``alpha``, ``beta``, ``delta``): a positive value is used as given (``constant``) or as the
    first trial of the line search (``backtracking``); null derives it each iteration as 1/L of that step's
    objective (Lipschitz constant of its gradient from the task's curvature and the current λ, φ1).
    The line search's and the full variant's solver constants live in ``hpoflow.algorithms.bilevel``.
    """

    name: str = "my_hpo"
    variant: str = "backtracking"  # constant (Alg. 1) | backtracking (Alg. 1, line search) | full (Alg. 3)
    alpha: float | None = None  # v-step (training loss); null: 1/L_T(λ), L_T the Hessian's top eigenvalue
    beta: float | None = None   # w-step (MY-regularised training loss); null: 1/(L_T(λ) + ρ)
    delta: float | None = None  # λ-step (MY-regularised validation loss); null: 1/((L_V + ρ) ||φ1||²)
    rho: float = 1.0
    init_lambda: float = -1.0  # start; λ stays in [task.lambda_low, task.lambda_high]

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"algo.variant='{self.variant}' is unknown; allowed: {', '.join(VARIANTS)}")
        for key in ("alpha", "beta", "delta"):
            _step(key, getattr(self, key))
        if self.rho < 0:
            raise ValueError(f"algo.rho={self.rho} must be >= 0")
        if self.init_lambda == 0:
            raise ValueError("algo.init_lambda=0 is not allowed: MY-HPO divides by λ (φ1 = (v - v̄)/λ)")


_SMALL = {"smoke": ("task=ridge", "task.dataset=digits_regression", "task.inner_steps=5"), "tasks": ("ridge", "logreg")}
BUILTINS = [
    algorithm("sho", "hpoflow.algorithms.bilevel:SHO", SHOConfig,
              "local SHO hypernetwork HPO (paper 001, App. B); needs task=ridge|logreg", **_SMALL),
    algorithm("my_hpo", "hpoflow.algorithms.bilevel:MYHPO", MYHPOConfig,
              "MY-HPO (paper 001; algo.variant=constant|backtracking|full); needs task=ridge|logreg", **_SMALL),
]
