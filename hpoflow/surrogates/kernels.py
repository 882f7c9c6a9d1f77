"""Stationary covariances in closed form, one implementation for every surrogate that predicts by hand.

Used by the exact GP's prediction path (its marginal-likelihood fit uses gpytorch's own kernel, with which
``tests/surrogates/test_gp.py`` cross-checks this) and by the time-varying GP (fit and prediction). Written out
rather than called through gpytorch: the acquisition optimiser evaluates and differentiates the prediction
hundreds of times per round, and gpytorch's call (input centring, ``cdist`` and its backward) costs about twice
as much. Gradients come from autograd; the distance is clamped away from 0 so they stay finite at data points.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

KERNELS = ("matern12", "matern32", "matern52", "rbf")


def stationary(
    name: str, A: Tensor, B: Tensor, lengthscale: float | Tensor, outputscale: float | Tensor = 1.0
) -> Tensor:
    """``outputscale * k(|A - B| / lengthscale)`` for ``A`` (``m x d``) and ``B`` (``n x d``): shape ``m x n``.

    Args:
        name: ``matern12`` | ``matern32`` | ``matern52`` | ``rbf``, or ``identity`` (1 where the points coincide).
        lengthscale: one value, or one per dimension (shape ``d``: ARD).

    Raises:
        ValueError: an unknown kernel name.
    """
    diff = A.unsqueeze(-2) - B.unsqueeze(-3)
    if name == "identity":
        return outputscale * (diff.pow(2).sum(-1) < 1e-18).to(A.dtype)
    sq = (diff / (lengthscale.reshape(-1) if isinstance(lengthscale, Tensor) else lengthscale)).pow(2).sum(-1)
    if name == "rbf":
        return outputscale * torch.exp(-0.5 * sq)
    r = sq.clamp_min(1e-30).sqrt()  # the clamp keeps the gradient finite at coincident points
    if name == "matern12":
        k = torch.exp(-r)
    elif name == "matern32":
        r = math.sqrt(3) * r
        k = (1 + r) * torch.exp(-r)
    elif name == "matern52":
        r = math.sqrt(5) * r
        k = (1 + r + r * r / 3) * torch.exp(-r)
    else:
        raise ValueError(f"surrogate.kernel='{name}' is unknown; allowed: {', '.join(KERNELS)}, identity")
    return outputscale * k
