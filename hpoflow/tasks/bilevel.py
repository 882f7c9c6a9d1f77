"""Differentiable bilevel HPO tasks of paper 001: ``min_λ L_V(w*(λ))``, ``w*(λ) = argmin_w L_T(w, λ)``.

- ``ridge``:  ``L_T = 1/(2N_T) Σ (y - wᵀx)² + e^λ ||w||²``, ``L_V = 1/(2N_V) Σ (y - wᵀx)²``
- ``logreg``: ``L_T = 1/N_T Σ log(1 + exp(-y wᵀx)) + e^λ ||w||²``, ``L_V`` the plain logistic loss.

Gradient algorithms (``sho``, ``my_hpo``) use the torch losses directly. For black-box algorithms the
task is also a plain 1-d Task over λ ∈ [lambda_low, lambda_high]: ``evaluate`` trains w by ``n_T``
gradient steps from w = 0 and returns the validation loss at cost ``n_T`` gradient computations, so
every method can be given the same number of gradient computations.
"""
from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from hpoflow.records import Direction, Evaluation
from hpoflow.space import Float, SearchSpace
from hpoflow.tasks.base import Task, unobserved
from hpoflow.tasks.bilevel_config import BilevelConfig
from hpoflow.tasks.datasets import Split, load_split

LAMBDA = "log_lambda"


class BilevelTask(Task):
    """A differentiable bilevel problem with one log-regularisation hyperparameter λ."""

    direction = Direction.MINIMIZE
    differentiable = True

    def __init__(self, loss: str, split: Split, dataset: str = "custom", inner_steps: int = 2500,
                 inner_lr: float = 1e-3, lambda_low: float = -10.0, lambda_high: float = 5.0,
                 dtype: torch.dtype = torch.float64) -> None:
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
        self.inner_steps, self.inner_lr = inner_steps, inner_lr

        def t(a: Any) -> Tensor:
            return torch.as_tensor(a, dtype=dtype)

        self.X_train, self.y_train = t(split.X_train), t(split.y_train)
        self.X_val, self.y_val = t(split.X_val), t(split.y_val)
        self.X_test, self.y_test = t(split.X_test), t(split.y_test)
        self.dim, self.dtype = self.X_train.shape[1], dtype

    # -- differentiable interface ----------------------------------------------------------------
    def data_loss(self, w: Tensor, X: Tensor, y: Tensor) -> Tensor:
        """Mean data-fit loss of the linear model ``w`` on ``(X, y)`` (no penalty)."""
        z = X @ w
        if self.loss == "ridge":
            return 0.5 * torch.mean((y - z) ** 2)
        return torch.mean(F.softplus(-y * z))

    def train_loss(self, w: Tensor, lam: Tensor | float) -> Tensor:
        """``L_T(w, λ)``: training data fit plus ``e^λ ||w||²``."""
        lam = torch.as_tensor(lam, dtype=w.dtype)
        return self.data_loss(w, self.X_train, self.y_train) + torch.exp(lam) * torch.sum(w * w)

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

    # -- black-box interface ---------------------------------------------------------------------
    def fit(self, lam: float, steps: int | None = None, lr: float | None = None) -> Tensor:
        """w after ``steps`` gradient-descent steps of rate ``lr`` on ``L_T(·, λ)`` from ``init_w``."""
        w = self.init_w()
        for _ in range(self.inner_steps if steps is None else steps):
            _, g = self.train_grad(w, lam)
            w = w - (self.inner_lr if lr is None else lr) * g
        return w.detach()

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        if not observe:
            return unobserved()
        lam = float(config[LAMBDA])
        losses = self.losses(self.fit(lam))
        value = losses["val_loss"]
        return Evaluation(value=value if math.isfinite(value) else math.nan, cost=float(self.inner_steps),
                          metrics={"lambda": lam, **losses})


def make_bilevel(name: str = "ridge", dataset: str = "nir", inner_steps: int = 0, inner_lr: float = 0.0,
                 lambda_low: float = -10.0, lambda_high: float = 5.0, seed: int = 0, **_: object) -> BilevelTask:
    """Registry factory for ``ridge`` and ``logreg`` (``task.dataset`` picks the data)."""
    cfg = BilevelConfig(name, dataset, inner_steps, inner_lr, lambda_low, lambda_high)
    steps, lr = cfg.resolved_inner
    return BilevelTask(name, load_split(dataset, seed), dataset, steps, lr, lambda_low, lambda_high)
