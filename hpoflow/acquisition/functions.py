"""Acquisition functions (EI, UCB/LCB, PI) and their maximiser.

All functions *maximise* and take the posterior mean/variance of a reward (``sign * y``), usually in
standardised units. The maximiser follows BoTorch's recipe: score a random raw set, start L-BFGS-B
from the best few; each start runs its own L-BFGS-B, and all starts are evaluated in one batched call.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from hpoflow.acquisition.config import OptimizerConfig
from hpoflow.core.threads import one_blas_thread

try:
    import greenlet
except ImportError:  # optional speed-up: without it the restarts run one after the other
    greenlet = None

LBFGS_GTOL = 1e-5  # projected-gradient tolerance of each restart (scipy's default)

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


def log_probability_of_feasibility(mean: Tensor, var: Tensor, op: str, bound: Tensor | float) -> Tensor:
    """log P(c(x) op bound) for c(x) ~ N(mean, var) (Schonlau et al. 1998; Gardner et al. 2014): log Phi((bound -
    mu) / sigma) for ``<=``/``<``, log Phi((mu - bound) / sigma) for ``>=``/``>`` (a continuous c: strict = not)."""
    if op not in ("<=", "<", ">=", ">"):
        raise ValueError(f"constraint op {op!r} is unknown; allowed: <=, <, >=, >")
    sigma = var.clamp_min(1e-24).sqrt()
    z = (bound - mean) / sigma if op in ("<=", "<") else (mean - bound) / sigma
    return torch.special.log_ndtr(z)


def upper_confidence_bound(mean: Tensor, var: Tensor, beta: float) -> Tensor:
    """mu + sqrt(beta) sigma (Srinivas et al. parametrisation)."""
    return mean + math.sqrt(beta) * var.clamp_min(0).sqrt()


def srinivas_beta(t: int, dim: int, delta: float = 0.1) -> float:
    """beta_t = 2 log(t^(d/2+2) pi^2 / (3 delta)), Srinivas et al. (2010), Thm 2 as popularised by Brochu et al."""
    t = max(t, 1)
    return 2.0 * ((dim / 2 + 2) * math.log(t) + math.log(math.pi**2 / (3 * delta)))


def maximize(acq: Callable[[Tensor], Tensor], dim: int, generator: torch.Generator,
             config: OptimizerConfig | None = None, candidates: Tensor | None = None,
             dtype: torch.dtype = torch.float64, extra_starts: Tensor | None = None,
             scale: Tensor | None = None) -> tuple[Tensor, float]:
    """Return ``(x*, acq(x*))`` over ``[0, 1]^dim``, or over ``candidates`` (``m x dim``) when given.

    ``acq`` maps ``n x dim`` to ``n`` values and must be differentiable for the continuous case.
    ``scale`` (``dim``, e.g. the GP's lengthscales) preconditions the local search: it runs in ``z = x / scale``,
    where a stationary kernel's acquisition is equally curved in every direction (as Optuna's GPSampler does).
    """
    config = config or OptimizerConfig()
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
    top = torch.topk(values, k)
    starts, start_values = raw[top.indices], top.values
    s = np.ones(dim) if scale is None else scale.detach().cpu().double().reshape(-1).expand(dim).numpy()

    def neg_acq(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``b x dim`` points of the scaled cube -> negated values (``b``) and gradients (``b x dim``)."""
        x = torch.tensor(z * s, dtype=dtype).requires_grad_(True)
        v = acq(x)
        (grad,) = torch.autograd.grad(v.sum(), x)
        return -v.detach().double().numpy(), -grad.double().numpy() * s

    z_opt, _ = batched_lbfgsb(neg_acq, starts.double().numpy() / s, [(0.0, 1.0 / si) for si in s],
                              config.max_iter, LBFGS_GTOL)
    final = torch.tensor(z_opt * s, dtype=dtype).clamp(0, 1)
    with torch.no_grad():
        fv = acq(final)
    j = int(torch.argmax(fv))
    if float(fv[j]) >= float(start_values[0]):
        return final[j], float(fv[j])
    return starts[0].clone(), float(start_values[0])


def batched_lbfgsb(fun: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], x0: np.ndarray,
                   bounds: list[tuple[float, float]], max_iter: int,
                   gtol: float = LBFGS_GTOL) -> tuple[np.ndarray, np.ndarray]:
    """Minimise from each row of ``x0`` (``b x d``) independently with L-BFGS-B; evaluate all starts in one call.

    ``fun`` maps ``m x d`` points to values (``m``) and gradients (``m x d``). Each start is a separate scipy
    L-BFGS-B run with its own curvature memory and stopping rule, suspended in a greenlet while the others
    reach their next evaluation, so that every iteration costs one batched call (the recipe of Optuna's
    GPSampler; scipy has no batched L-BFGS-B, and Optuna's is private). Without greenlet the starts run one
    after the other. Returns the minimisers (``b x d``) and their values (``b``).
    """
    with one_blas_thread():
        return _batched_lbfgsb(fun, x0, bounds, {"maxiter": max_iter, "gtol": gtol})


def _batched_lbfgsb(fun: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], x0: np.ndarray,
                    bounds: list[tuple[float, float]], options: dict) -> tuple[np.ndarray, np.ndarray]:
    from scipy.optimize import minimize  # here: ~0.3 CPU s to import, first needed after the initial design

    b = x0.shape[0]
    xs, fs = x0.copy(), np.full(b, np.inf)
    if greenlet is None or b == 1:
        for i in range(b):
            res = minimize(lambda x: _first(fun(x[None])), x0[i], jac=True, method="L-BFGS-B", bounds=bounds,
                           options=options)
            xs[i], fs[i] = res.x, res.fun
        return xs, fs

    def solve(i: int) -> None:
        def one(x: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = greenlet.getcurrent().parent.switch(x)
            return float(value), grad.copy()

        res = minimize(one, x0[i], jac=True, method="L-BFGS-B", bounds=bounds, options=options)
        xs[i], fs[i] = res.x, res.fun

    workers = [greenlet.greenlet(solve) for _ in range(b)]
    pending = [(w, w.switch(i)) for i, w in enumerate(workers)]
    pending = [(w, x) for w, x in pending if x is not None]
    while pending:
        values, grads = fun(np.stack([x for _, x in pending]))
        pending = [(w, w.switch((values[i], grads[i]))) for i, (w, _) in enumerate(pending)]
        pending = [(w, x) for w, x in pending if x is not None]
    return xs, fs


def _first(result: tuple[np.ndarray, np.ndarray]) -> tuple[float, np.ndarray]:
    values, grads = result
    return float(values[0]), grads[0]


def _batched(acq: Callable[[Tensor], Tensor], X: Tensor, batch: int = 4096) -> Tensor:
    return torch.cat([acq(X[i:i + batch]) for i in range(0, X.shape[0], batch)])
