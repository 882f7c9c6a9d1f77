"""Differentiable bilevel HPO tasks of paper 001: ``min_λ L_V(w*(λ))``, ``w*(λ) = argmin_w L_T(w, λ)``.

- ``ridge``:  ``L_T = 1/(2N_T) Σ (y - wᵀx)² + e^(λ+c) ||w||²``, ``L_V = 1/(2N_V) Σ (y - wᵀx)²``
- ``logreg``: ``L_T = 1/N_T Σ log(1 + exp(-y wᵀx)) + e^(λ+c) ||w||²``, ``L_V`` the plain logistic loss.

``c = lambda_offset`` (0 in the paper) scales the penalty. The task knows its exact optimum λ* =
argmin_λ L_V(w*(λ)) over [lambda_low, lambda_high] (:meth:`BilevelTask.lambda_star`: closed-form w*(λ)
for ridge, L-BFGS solves on a dense grid for logreg) and the largest eigenvalues of the data-fit
Hessians (:attr:`BilevelTask.curvature`), from which the gradient algorithms derive their step sizes.

Gradient algorithms (``sho``, ``my_hpo``) use the torch losses directly. For black-box algorithms the
task is also a plain 1-d Task over λ ∈ [lambda_low, lambda_high]: ``evaluate`` trains w by ``n_T``
gradient steps from w = 0 and returns the validation loss at cost ``n_T`` gradient computations, so
every method can be given the same number of gradient computations.

``task.fidelity=true`` (opt-in, so that every run without it is as before) declares those steps the fidelity
``inner_steps`` in ``[min_inner_steps, n_T]``; gradient descent from w = 0 is deterministic, so a promoted trial
continues from the w it reached (:mod:`hpoflow.tasks.continuation`) and equals a run straight to that level.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from hpoflow.core.fidelity import Fidelity
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Float, SearchSpace
from hpoflow.tasks.base import unobserved
from hpoflow.tasks.bilevel_config import BilevelConfig
from hpoflow.tasks.continuation import Continuable
from hpoflow.tasks.datasets import Split, load_split
from hpoflow.tasks.trial_states import TrialStates

LAMBDA = "log_lambda"
RIDGE_GRID = 3001     # λ grid points of the closed-form ridge path (then refined by bounded Brent)
LOGREG_STEP = 0.05    # λ spacing of the logreg grid of exact (L-BFGS) solutions


@dataclass(frozen=True)
class LambdaStar:
    """The exact optimum of the outer problem over the task's λ range, and the losses of w*(λ*)."""

    lam: float
    val_loss: float
    test_loss: float
    train_loss: float
    resolution: float  # ± on lam (grid spacing for logreg, Brent tolerance for ridge)


@dataclass(frozen=True)
class Curvature:
    """Largest Hessian eigenvalues of the data-fit losses (w-independent; an upper bound for logreg).

    The training loss' Hessian adds ``2 e^(λ+c)`` for the penalty.
    """

    train: float
    val: float


class BilevelTask(Continuable):
    """A differentiable bilevel problem with one log-regularisation hyperparameter λ."""

    direction = Direction.MINIMIZE
    differentiable = True

    def __init__(self, loss: str, split: Split, dataset: str = "custom", inner_steps: int = 2500,
                 inner_lr: float = 1e-3, lambda_low: float = -10.0, lambda_high: float = 5.0,
                 dtype: torch.dtype = torch.float64, lambda_offset: float = 0.0,
                 min_inner_steps: int | None = None) -> None:
        if loss not in ("ridge", "logreg"):
            raise ValueError(f"task.name='{loss}' is unknown for a bilevel task; allowed: ridge, logreg")
        if loss == "logreg" and split.kind != "classification":
            raise ValueError(f"task=logreg needs a classification dataset (digits_01, digits_38), got '{dataset}'")
        if loss == "ridge" and split.kind != "regression":
            raise ValueError(f"task=ridge needs a regression dataset (nir, digits_regression), got '{dataset}'")
        if inner_steps < 1 or inner_lr <= 0:
            raise ValueError(f"task.inner_steps={inner_steps} must be >= 1 and task.inner_lr={inner_lr} > 0")
        self.name, self.loss, self.dataset = loss, loss, dataset
        self.space = SearchSpace.of(Float(LAMBDA, lambda_low, lambda_high))
        self.inner_steps, self.inner_lr, self.lambda_offset = inner_steps, inner_lr, float(lambda_offset)
        self.lambda_low, self.lambda_high = float(lambda_low), float(lambda_high)

        def t(a: Any) -> Tensor:
            return torch.as_tensor(a, dtype=dtype)

        self.X_train, self.y_train = t(split.X_train), t(split.y_train)
        self.X_val, self.y_val = t(split.X_val), t(split.y_val)
        self.X_test, self.y_test = t(split.X_test), t(split.y_test)
        self.dim, self.dtype = self.X_train.shape[1], dtype
        self.fidelity = None if min_inner_steps is None else Fidelity("inner_steps", min_inner_steps, inner_steps)
        self.states = TrialStates()

    # -- differentiable interface ----------------------------------------------------------------
    def data_loss(self, w: Tensor, X: Tensor, y: Tensor) -> Tensor:
        """Mean data-fit loss of the linear model ``w`` on ``(X, y)`` (no penalty)."""
        z = X @ w
        if self.loss == "ridge":
            return 0.5 * torch.mean((y - z) ** 2)
        return torch.mean(F.softplus(-y * z))

    def penalty(self, lam: Tensor | float) -> Tensor:
        """The penalty weight ``e^(λ + lambda_offset)``."""
        return torch.exp(torch.as_tensor(lam, dtype=self.dtype) + self.lambda_offset)

    def train_loss(self, w: Tensor, lam: Tensor | float) -> Tensor:
        """``L_T(w, λ)``: training data fit plus ``e^(λ+c) ||w||²``."""
        return self.data_loss(w, self.X_train, self.y_train) + self.penalty(lam) * torch.sum(w * w)

    def train_fit(self, w: Tensor) -> Tensor:
        """Training data-fit loss without the penalty (what the tables report as train loss)."""
        return self.data_loss(w, self.X_train, self.y_train)

    def val_loss(self, w: Tensor) -> Tensor:
        """``L_V(w)``."""
        return self.data_loss(w, self.X_val, self.y_val)

    def test_loss(self, w: Tensor) -> Tensor:
        return self.data_loss(w, self.X_test, self.y_test)

    def init_w(self) -> Tensor:
        """The initial model parameters (zeros, as in paper 001)."""
        return torch.zeros(self.dim, dtype=self.dtype)

    def losses(self, w: Tensor) -> dict[str, float]:
        """Train (data fit), validation and test loss of ``w`` as floats."""
        with torch.no_grad():
            return {"train_loss": float(self.train_fit(w)), "val_loss": float(self.val_loss(w)),
                    "test_loss": float(self.test_loss(w))}

    def train_grad(self, w: Tensor, lam: Tensor | float) -> tuple[Tensor, Tensor]:
        """``(L_T(w, λ), ∇_w L_T(w, λ))`` by autograd: one gradient computation."""
        w = w.detach().requires_grad_(True)
        value = self.train_loss(w, lam)
        (grad,) = torch.autograd.grad(value, w)
        return value.detach(), grad

    # -- conditioning and the exact optimum ----------------------------------------------------------
    @cached_property
    def curvature(self) -> Curvature:
        """``σ_max(X)² / N`` per split (ridge), a quarter of it for logreg (the logistic loss' sup)."""
        scale = 1.0 if self.loss == "ridge" else 0.25

        def top(X: Tensor) -> float:
            return scale * float(torch.linalg.matrix_norm(X, ord=2)) ** 2 / X.shape[0]

        return Curvature(top(self.X_train), top(self.X_val))

    def exact_fit(self, lam: float) -> Tensor:
        """w*(λ) = argmin_w L_T(w, λ): closed form for ridge, L-BFGS to tight tolerance for logreg."""
        if self.loss == "ridge":
            return self._ridge_path(np.array([lam]))[0]
        return torch.as_tensor(self._logreg_path(np.array([lam]))[0], dtype=self.dtype)

    def _ridge_path(self, lams: np.ndarray) -> Tensor:
        """w*(λ) for each λ (``G x d``): ``V diag(s / (s² + 2N e^(λ+c))) Uᵀ y`` from one SVD of X_train."""
        U, S, Vh = torch.linalg.svd(self.X_train, full_matrices=False)
        n = self.X_train.shape[0]
        p = torch.exp(torch.as_tensor(lams, dtype=self.dtype) + self.lambda_offset)
        coef = (S / (S**2 + 2 * n * p[:, None])) * (U.T @ self.y_train)  # G x r
        return coef @ Vh

    def _logreg_path(self, lams: np.ndarray) -> np.ndarray:
        """w*(λ) for each λ (``G x d``), L-BFGS (scipy) warm-started from the next larger λ."""
        from scipy.optimize import minimize
        from scipy.special import expit

        X, y = self.X_train.numpy(), self.y_train.numpy()
        n = X.shape[0]
        out, w = np.zeros((len(lams), X.shape[1])), np.zeros(X.shape[1])
        for i in np.argsort(-lams):
            p = math.exp(float(lams[i]) + self.lambda_offset)

            def f(w: np.ndarray, p: float = p) -> tuple[float, np.ndarray]:
                m = y * (X @ w)
                return (float(np.mean(np.logaddexp(0.0, -m)) + p * w @ w),
                        -X.T @ (y * expit(-m)) / n + 2 * p * w)

            w = minimize(f, w, jac=True, method="L-BFGS-B",
                         options={"gtol": 1e-10, "ftol": 0.0, "maxiter": 20_000}).x
            out[i] = w
        return out

    @cached_property
    def lambda_star(self) -> LambdaStar:
        """argmin over [lambda_low, lambda_high] of L_V(w*(λ)): the exact optimum of this split."""
        lo, hi = self.lambda_low, self.lambda_high
        if self.loss == "ridge":
            from scipy.optimize import minimize_scalar

            grid = np.linspace(lo, hi, RIDGE_GRID)
            vals = [float(self.val_loss(w)) for w in self._ridge_path(grid)]
            i, step = int(np.argmin(vals)), (hi - lo) / (RIDGE_GRID - 1)
            res = minimize_scalar(lambda g: float(self.val_loss(self._ridge_path(np.array([g]))[0])),
                                  bounds=(max(lo, grid[i] - step), min(hi, grid[i] + step)), method="bounded",
                                  options={"xatol": 1e-6})
            lam, resolution = (float(res.x), 1e-6) if res.fun <= vals[i] else (float(grid[i]), step)
            w = self.exact_fit(lam)
        else:
            grid = np.arange(lo, hi + 0.5 * LOGREG_STEP, LOGREG_STEP)
            W = torch.as_tensor(self._logreg_path(grid), dtype=self.dtype)
            i = int(np.argmin([float(self.val_loss(w)) for w in W]))
            lam, resolution, w = float(grid[i]), LOGREG_STEP / 2, W[i]
        losses = self.losses(w)
        return LambdaStar(lam, losses["val_loss"], losses["test_loss"], losses["train_loss"], resolution)

    def reference_values(self) -> dict[str, float]:
        """λ* and the losses of w*(λ*), recorded with each run (tags ``task.lambda_star`` etc.)."""
        ls = self.lambda_star
        return {"lambda_star": ls.lam, "val_loss_at_lambda_star": ls.val_loss,
                "test_loss_at_lambda_star": ls.test_loss, "curvature_train": self.curvature.train}

    # -- black-box interface ---------------------------------------------------------------------
    def fit(self, lam: float, steps: int | None = None, lr: float | None = None) -> Tensor:
        """w after ``steps`` gradient-descent steps of rate ``lr`` on ``L_T(·, λ)`` from ``init_w``."""
        w = self.init_w()
        for _ in range(self.inner_steps if steps is None else steps):
            _, g = self.train_grad(w, lam)
            w = w - (self.inner_lr if lr is None else lr) * g
        return w.detach()

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        if self.fidelity is not None:
            return self.evaluate_full(config, round=round, observe=observe)
        if not observe:
            return unobserved()
        lam = float(config[LAMBDA])
        losses = self.losses(self.fit(lam))
        value = losses["val_loss"]
        return Evaluation(value=value if math.isfinite(value) else math.nan, cost=float(self.inner_steps),
                          metrics={"lambda": lam, **losses})


    # -- the fidelity: gradient steps, continued (hpoflow.tasks.continuation) ----------------------------------------
    def fresh_state(self, config: dict[str, Any], seed: int) -> dict[str, Tensor]:
        return {"w": self.init_w()}

    def advance(self, state: Any, config: dict[str, Any], start: float, stop: float) -> list[list[float]]:
        """``stop - start`` more gradient steps on ``w``; the curve is the validation loss where they end (one point:
        a point per step would be thousands of metrics)."""
        lam, w = float(config[LAMBDA]), state["w"]
        for _ in range(int(start), int(stop)):
            _, g = self.train_grad(w, lam)
            w = w - self.inner_lr * g
        state["w"] = w.detach()
        value = float(self.val_loss(state["w"]))
        return [[float(stop), value if math.isfinite(value) else math.nan]]

    def score(self, state: Any, config: dict[str, Any], curve: list[list[float]]) -> tuple[float, dict[str, float]]:
        return curve[-1][1], {"lambda": float(config[LAMBDA]), **self.losses(state["w"])}


def make_bilevel(name: str = "ridge", dataset: str = "nir", inner_steps: int = 0, inner_lr: float = 0.0,
                 lambda_low: float = -10.0, lambda_high: float = 5.0, lambda_offset: float = 0.0,
                 features: str = "standardised", fidelity: bool = False, min_inner_steps: int = 0, seed: int = 0,
                 **_: object) -> BilevelTask:
    """Registry factory for ``ridge`` and ``logreg`` (``task.dataset`` picks the data)."""
    cfg = BilevelConfig(name, dataset, inner_steps, inner_lr, lambda_low, lambda_high, lambda_offset, features,
                        fidelity, min_inner_steps)
    steps, lr = cfg.resolved_inner
    low = (min_inner_steps or max(1, steps // 81)) if fidelity else None
    return BilevelTask(name, load_split(dataset, seed, features), dataset, steps, lr, lambda_low, lambda_high,
                       lambda_offset=lambda_offset, min_inner_steps=low)
