"""When to pay for feedback (paper 002 §3.2, App. B-C): always, Bernoulli, cost-efficient (CE), LCB-UCB.

Also the local optima of a UCB that the CE / LCB-UCB rules compare the chosen point with on continuous
or finely quantised domains: local ascent from many starts that stops where the slope falls below a
tolerance, then flat-kernel mean shift to merge end points closer than a bandwidth.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from scipy.optimize import minimize
from torch import Tensor

from hpoflow.algorithms.ce_gp_ucb_config import CE_SCALES

_SQRT2 = math.sqrt(2.0)


def ce_probability(mean_t: Tensor | float, var_t: Tensor | float, mean: Tensor, var: Tensor,
                   scale: str = "std") -> Tensor:
    """P(ŷ(x_t) > ŷ(x)) for independent Gaussian beliefs ŷ(x) ~ N(μ(x), s(x)²): Φ((μ_t - μ) / sqrt(s_t² + s²)).

    ``scale="std"`` (main text, §3.2: ŷ ~ N(μ̃, σ̃²)): s = σ̃, the posterior standard deviation.
    ``scale="variance"`` (App. B read literally: ŷ ~ N(μ̃, σ̃), so its σ̃ is the main text's σ̃², and eq. 3
    then takes sqrt(σ̃_t² + σ̃²)): s = σ̃², the posterior variance in the place of the standard deviation.
    Below unit variance this narrows the beliefs, so the rule is more confident and queries less.
    ``var_t`` / ``var`` are posterior variances in both cases.
    """
    if scale not in CE_SCALES:
        raise ValueError(f"algo.ce_scale='{scale}' is unknown; allowed: {', '.join(CE_SCALES)}")
    mean_t, var_t = torch.as_tensor(mean_t, dtype=mean.dtype), torch.as_tensor(var_t, dtype=mean.dtype)
    if scale == "variance":
        var_t, var = var_t * var_t, var * var
    z = (mean_t - mean) / torch.sqrt((var_t + var).clamp_min(1e-24))
    return 0.5 * torch.erfc(-z / _SQRT2)


def ce_rule(mean_t: float, var_t: float, mean: Tensor, var: Tensor, kappa: float,
            scale: str = "std") -> tuple[bool, float]:
    """Query iff some compared x has P(ŷ(x_t) > ŷ(x)) < kappa; returns (query, smallest probability)."""
    if mean.numel() == 0:
        return False, 1.0
    p = float(ce_probability(mean_t, var_t, mean, var, scale).min())
    return p < kappa, p


def lcb_ucb_rule(mean_t: float, var_t: float, mean: Tensor, var: Tensor, beta: float) -> tuple[bool, float]:
    """Query unless every compared x has ucb(x) <= lcb(x_t) (Lemma 1); returns (query, max ucb - lcb_t)."""
    if mean.numel() == 0:
        return False, -math.inf
    root = math.sqrt(beta)
    gap = float((mean + root * var.clamp_min(0).sqrt()).max()) - (mean_t - root * math.sqrt(max(var_t, 0.0)))
    return gap > 0, gap


def knn_graph(C: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """Indices and distances of the ``k`` nearest other candidates of each candidate (``m x k``)."""
    D = torch.cdist(C, C)
    D.fill_diagonal_(math.inf)
    k = min(k, C.shape[0] - 1)
    dist, idx = torch.topk(D, k, largest=False)
    return idx, dist


def discrete_ascent(values: Tensor, nbr: Tensor, nbr_dist: Tensor, starts: Tensor, slope_tol: float,
                    max_steps: int = 10_000) -> Tensor:
    """Hill climbing on a candidate graph from ``starts`` (indices): each walker moves to its best-valued
    neighbour among those reached with slope > ``slope_tol`` and stops where there is none (as L-BFGS
    stops where the gradient is below its tolerance, e.g. on a flat plateau). Returns end indices.

    Runs in NumPy: dozens of tiny steps per round, where torch's per-op overhead would dominate.
    """
    v, nb, nd = values.detach().cpu().numpy(), nbr.cpu().numpy(), nbr_dist.cpu().numpy()
    cur = starts.cpu().numpy().copy()
    rows = np.arange(cur.shape[0])
    for _ in range(max_steps):
        nv = v[nb[cur]]
        ok = (nv - v[cur][:, None]) / nd[cur] > slope_tol
        moving = ok.any(-1)
        if not moving.any():
            break
        best = np.where(ok, nv, -np.inf).argmax(-1)
        cur = np.where(moving, nb[cur][rows, best], cur)
    return torch.from_numpy(cur)


def continuous_ascent(fn: Callable[[Tensor], Tensor], starts: Tensor, slope_tol: float,
                      max_iter: int = 200) -> Tensor:
    """Joint L-BFGS-B ascent of ``fn`` on [0,1]^d from every start (separable objectives); end points."""
    k, dim = starts.shape

    def objective(flat: np.ndarray) -> tuple[float, np.ndarray]:
        x = torch.tensor(flat, dtype=starts.dtype).reshape(k, dim).requires_grad_(True)
        total = -fn(x).sum()
        (grad,) = torch.autograd.grad(total, x)
        return float(total.detach()), grad.reshape(-1).numpy().astype(np.float64)

    res = minimize(objective, starts.reshape(-1).detach().numpy(), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, 1.0)] * (k * dim), options={"maxiter": max_iter, "gtol": slope_tol})
    return torch.tensor(res.x, dtype=starts.dtype).reshape(k, dim)


def mean_shift(points: Tensor, bandwidth: float, max_iter: int = 100) -> Tensor:
    """Flat-kernel mean shift; returns a cluster label per point (modes closer than ``bandwidth`` merge).

    Hand-written (a dozen lines) because it runs every round on ~50 points, where sklearn's per-call
    overhead would dominate the round.
    """
    modes = points.clone()
    for _ in range(max_iter):
        W = (torch.cdist(modes, points) <= bandwidth).to(points.dtype)
        new = (W @ points) / W.sum(-1, keepdim=True)
        done = bool(torch.allclose(new, modes, atol=1e-6 * bandwidth))
        modes = new
        if done:
            break
    labels = torch.full((points.shape[0],), -1, dtype=torch.long)
    centres: list[Tensor] = []
    for i in range(points.shape[0]):
        for j, c in enumerate(centres):
            if float(torch.linalg.norm(modes[i] - c)) <= bandwidth:
                labels[i] = j
                break
        else:
            labels[i] = len(centres)
            centres.append(modes[i])
    return labels


def compared_optima(points: Tensor, values: Tensor, anchor: Tensor, bandwidth: float,
                    pool: Tensor | None = None, pool_values: Tensor | None = None) -> tuple[Tensor, bool]:
    """Which local-ascent end points the CE / LCB-UCB rules compare x_t (``anchor``) with.

    End points within ``bandwidth`` of x_t are dropped first (same mode as x_t), then the rest are merged
    by mean shift and the best-valued point of each cluster is kept. Dropping before clustering matters:
    on a flat UCB plateau (unexplored prior region) the ascents stop where they start, mean shift merges
    the whole plateau, and its best point may be x_t itself, which left nothing to compare and the rule
    skipped for good. If no end point lies outside the bandwidth (a single-mode UCB), fall back to the
    best-valued point of ``pool`` (e.g. the ascent starts or all candidates) outside the bandwidth.
    Returns (indices, from_pool): indices into ``points``, or into ``pool`` when ``from_pool``.
    """
    far = torch.linalg.norm(points - anchor, dim=-1) > bandwidth
    idx = torch.nonzero(far).squeeze(-1)
    if idx.numel():
        return idx[cluster_representatives(points[idx], values[idx], bandwidth)], False
    if pool is None or pool_values is None:
        return idx, False
    far = torch.linalg.norm(pool - anchor, dim=-1) > bandwidth
    if not bool(far.any()):
        return torch.empty(0, dtype=torch.long), True
    masked = torch.where(far, pool_values, torch.full_like(pool_values, -math.inf))
    return torch.argmax(masked).reshape(1), True


def cluster_representatives(points: Tensor, values: Tensor, bandwidth: float) -> Tensor:
    """Indices (into ``points``) of the best-valued point of each mean-shift cluster."""
    labels = mean_shift(points, bandwidth)
    reps = []
    for j in range(int(labels.max()) + 1):
        members = torch.nonzero(labels == j).squeeze(-1)
        reps.append(int(members[values[members].argmax()]))
    return torch.tensor(reps, dtype=torch.long)
