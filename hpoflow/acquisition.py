"""Acquisition functions (EI, UCB/LCB, PI) and their maximiser.

All functions *maximise* and take the posterior mean/variance of a reward (``sign * y``), usually in
standardised units. The maximiser follows BoTorch's recipe: score a random raw set, start L-BFGS-B
from the best few, optimise all starts jointly in one scipy call (their objectives are separable).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch
from scipy.optimize import minimize
from torch import Tensor

from hpoflow.algorithms.configs import OptimizerConfig

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _std_normal_pdf(z: Tensor) -> Tensor:
    return torch.exp(-0.5 * z * z - _LOG_SQRT_2PI)


def _std_normal_cdf(z: Tensor) -> Tensor:
    return 0.5 * torch.erfc(-z / _SQRT2)


def expected_improvement(mean: Tensor, var: Tensor, incumbent: Tensor | float) -> Tensor:
    """EI(x) = (mu - f+) Phi(z) + sigma phi(z), z = (mu - f+)/sigma; 0 where sigma = 0."""
    sigma = var.clamp_min(0).sqrt()
    diff = mean - incumbent
    z = diff / sigma.clamp_min(1e-300)
    ei = diff * _std_normal_cdf(z) + sigma * _std_normal_pdf(z)
    return torch.where(sigma > 0, ei, diff.clamp_min(0))


def log_expected_improvement(mean: Tensor, var: Tensor, incumbent: Tensor | float) -> Tensor:
    """log EI, numerically stable far into the tail (Ament et al., 2023), for gradient-based search."""
    sigma = var.clamp_min(1e-24).sqrt()
    z = (mean - incumbent) / sigma
    return _log_h(z) + torch.log(sigma)


def _log_h(z: Tensor) -> Tensor:
    """log(phi(z) + z Phi(z)), using erfcx where the direct form underflows or cancels."""
    direct = torch.log((_std_normal_pdf(z) + z * _std_normal_cdf(z)).clamp_min(1e-300))
    zt = torch.clamp(z, max=-1.0)
    r = math.sqrt(math.pi / 2) * torch.special.erfcx(-zt / _SQRT2)  # Phi(z)/phi(z)
    tail = -0.5 * zt * zt - _LOG_SQRT_2PI + torch.log1p((zt * r).clamp(min=-1 + 1e-15))
    return torch.where(z > -1.0, direct, tail)


def probability_of_improvement(mean: Tensor, var: Tensor, incumbent: Tensor | float, xi: float = 0.0) -> Tensor:
    sigma = var.clamp_min(1e-24).sqrt()
    return _std_normal_cdf((mean - incumbent - xi) / sigma)


def log_probability_of_improvement(mean: Tensor, var: Tensor, incumbent: Tensor | float,
                                   xi: float = 0.0) -> Tensor:
    sigma = var.clamp_min(1e-24).sqrt()
    return torch.special.log_ndtr((mean - incumbent - xi) / sigma)


def upper_confidence_bound(mean: Tensor, var: Tensor, beta: float) -> Tensor:
    """mu + sqrt(beta) sigma (Srinivas et al. parametrisation)."""
    return mean + math.sqrt(beta) * var.clamp_min(0).sqrt()


def srinivas_beta(t: int, dim: int, delta: float = 0.1) -> float:
    """beta_t = 2 log(t^(d/2+2) pi^2 / (3 delta)), Srinivas et al. (2010), Thm 2 as popularised by Brochu et al."""
    t = max(t, 1)
    return 2.0 * ((dim / 2 + 2) * math.log(t) + math.log(math.pi**2 / (3 * delta)))


def maximize(acq: Callable[[Tensor], Tensor], dim: int, generator: torch.Generator,
             config: OptimizerConfig = OptimizerConfig(), candidates: Tensor | None = None,
             dtype: torch.dtype = torch.float64, extra_starts: Tensor | None = None) -> tuple[Tensor, float]:
    """Return ``(x*, acq(x*))`` over ``[0, 1]^dim``, or over ``candidates`` (``m x dim``) when given.

    ``acq`` maps ``n x dim`` to ``n`` values and must be differentiable for the continuous case.
    """
    if candidates is not None:
        with torch.no_grad():
            values = _batched(acq, candidates)
        i = int(torch.argmax(values))
        return candidates[i].clone(), float(values[i])
    raw = torch.rand(config.raw_samples, dim, generator=generator, dtype=dtype)
    if extra_starts is not None:
        raw = torch.cat([raw, extra_starts.to(dtype).reshape(-1, dim)])
    with torch.no_grad():
        values = _batched(acq, raw)
    k = min(config.num_restarts, raw.shape[0])
    starts = raw[torch.topk(values, k).indices]
    best_x, best_v = starts[0].clone(), float(values.max())

    def objective(flat: np.ndarray) -> tuple[float, np.ndarray]:
        x = torch.tensor(flat, dtype=dtype).reshape(k, dim).requires_grad_(True)
        v = acq(x)
        total = -v.sum()
        (grad,) = torch.autograd.grad(total, x)
        return float(total.detach()), grad.reshape(-1).numpy().astype(np.float64)

    res = minimize(objective, starts.reshape(-1).numpy(), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, 1.0)] * (k * dim), options={"maxiter": config.max_iter})
    final = torch.tensor(res.x, dtype=dtype).reshape(k, dim).clamp(0, 1)
    with torch.no_grad():
        fv = acq(final)
    j = int(torch.argmax(fv))
    if float(fv[j]) >= best_v:
        best_x, best_v = final[j], float(fv[j])
    return best_x, best_v


def _batched(acq: Callable[[Tensor], Tensor], X: Tensor, batch: int = 4096) -> Tensor:
    return torch.cat([acq(X[i:i + batch]) for i in range(0, X.shape[0], batch)])
