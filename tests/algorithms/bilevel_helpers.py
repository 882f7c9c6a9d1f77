"""A small ridge problem whose best response moves along a fixed zero-mean direction (exact λ* known)."""
from __future__ import annotations

import math

import numpy as np

from hpoflow.tasks.bilevel import BilevelTask
from hpoflow.tasks.datasets import Split


def orthogonal_ridge(c_target: float = 0.8, n: int = 12, d: int = 4, seed: int = 0,
                     lambda_low: float = -10.0) -> tuple[BilevelTask, float]:
    """Ridge task with ``XᵀX/N = I`` and ``b = Xᵀy/N`` of zero mean, so ``w*(λ) = b / (1 + 2e^λ)``.

    Validation targets are ``X_val (c_target b)``, hence ``λ* = log((1/c_target - 1) / 2)`` (-inf for
    ``c_target >= 1``: L_V then falls all the way as λ → -inf, so the best λ in range is ``lambda_low``).
    """
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((n, d)))
    X = math.sqrt(n) * q                      # XᵀX / n = I
    b = rng.standard_normal(d)
    b -= b.mean()                             # zero-mean best-response direction
    y = X @ b + (np.eye(n) - q @ q.T) @ rng.standard_normal(n)  # Xᵀy / n = b
    X_val, X_test = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    split = Split(X, y, X_val, X_val @ (c_target * b), X_test, X_test @ (c_target * b), "regression")
    lam_star = math.log((1 / c_target - 1) / 2) if c_target < 1 else -math.inf
    return BilevelTask("ridge", split, inner_steps=50, inner_lr=0.1, lambda_low=lambda_low), lam_star
