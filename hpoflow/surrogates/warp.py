"""Per-dimension Kumaraswamy input warping of the unit cube (Snoek et al., 2014; BoTorch's ``Warp``).

``w(x) = 1 - (1 - x^a)^b`` with learned concentrations ``a, b > 0`` per dimension: a monotone bijection of
[0, 1] that is the identity at ``a = b = 1``. It lets a stationary kernel model a function whose length scale
changes along an axis (a learning rate, say). Written here rather than taken from BoTorch because BoTorch is
an optional extra (``peers``) and its ``Warp`` is an ``InputTransform`` of BoTorch models, not a gpytorch module.
"""
from __future__ import annotations

import math

import gpytorch
import torch
from gpytorch.constraints import Interval
from gpytorch.priors import LogNormalPrior
from torch import Tensor

EPS = 1e-7  # inputs are squeezed into [EPS, 1 - EPS] first, so x^(a - 1) and its gradient stay finite at 0 and 1
LOWER, UPPER = 0.1, 10.0  # BoTorch's bounds on the concentrations


def kumaraswamy_cdf(x: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """``1 - (1 - x^a)^b`` elementwise: ``x`` (``... x d``) in [0, 1], ``a`` and ``b`` of shape ``d``."""
    x = x * (1 - 2 * EPS) + EPS
    return 1 - (1 - x.pow(a)).clamp_min(1e-12).pow(b)  # the clamp keeps the gradient finite for b < 1


class KumaraswamyWarp(gpytorch.Module):
    """Learned warp ``x -> w(x)`` of ``m x d`` unit-cube inputs, same shape out.

    The concentrations are the raw parameters (the constraint carries no transform, so the marginal-likelihood
    fit gives its bounds to L-BFGS-B and searches their logarithms); they start at 1 (the identity) under
    BoTorch's LogNormal(0, 0.75^0.5) prior, which keeps the warp near the identity unless the data ask otherwise.
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        for name in ("concentration1", "concentration0"):  # a, b: BoTorch's names
            self.register_parameter(f"raw_{name}", torch.nn.Parameter(torch.ones(dim)))
            self.register_constraint(f"raw_{name}", Interval(LOWER, UPPER, transform=None, initial_value=1.0))
            self.register_prior(f"{name}_prior", LogNormalPrior(0.0, math.sqrt(0.75)), f"raw_{name}")

    @property
    def a(self) -> Tensor:
        return self.raw_concentration1

    @property
    def b(self) -> Tensor:
        return self.raw_concentration0

    def forward(self, x: Tensor) -> Tensor:
        return kumaraswamy_cdf(x, self.a, self.b)
