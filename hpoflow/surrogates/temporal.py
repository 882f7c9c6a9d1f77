"""Time-varying GP: space kernel x temporal kernel (1-eps)^{|t-t'|/2}, with O(n^2) incremental updates.

With observations (x_i, y_i, h_i) the posterior of f_t is the usual GP posterior with Gram matrix
``K_s(X, X) o D + noise I`` (``D_ij = a^{|h_i - h_j|}``, ``a = sqrt(1 - eps)``) and cross-covariance
``k_s(x, x_i) a^{|t - h_i|}`` (paper 002 §3.1). Nothing is refitted when a round passes without an
observation: the cross-covariance simply decays, so the posterior variance grows back towards the prior.

Updates: the Gram entry of an old pair depends only on |h_i - h_j|, so a new observation appends one row
to the Cholesky factor (O(n^2)). For a fixed candidate set (finite or quantised domains) we also keep
``V = L^{-1} K~(X, C)`` at the time of the last observation: since every cross-covariance shrinks by the
same factor a^{dt} as time passes, the posterior over all m candidates at any later round is an O(m)
rescaling, and a new observation adds one row to V in O(nm). A 500-round run therefore does no cubic
work at all unless ``fit=epsilon`` asks for periodic maximum-likelihood refits of eps (over
[epsilon_min, 0.5], at the first observation at least ``refit_every`` rounds after the last fit).
"""
from __future__ import annotations

import math

import numpy as np
import torch
from scipy.optimize import minimize_scalar
from torch import Tensor

from hpoflow.surrogates.kernels import stationary
from hpoflow.surrogates.temporal_config import TemporalGPConfig


def space_kernel(name: str, A: Tensor, B: Tensor, lengthscale: float, outputscale: float) -> Tensor:
    """``outputscale * k(A, B)`` for ``A`` (``m x d``) and ``B`` (``n x d``), shape ``m x n`` (see :mod:`.kernels`):
    one function serves the posterior, differentiable in ``A``, and the likelihood."""
    return stationary(name, A, B, lengthscale, outputscale)


def _cholesky(K: Tensor) -> Tensor:
    eye = torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
    jitter = 0.0
    for attempt in range(6):
        L, info = torch.linalg.cholesky_ex(K + jitter * eye)
        if int(info) == 0:
            return L
        jitter = 1e-9 * 10**attempt
    raise RuntimeError(f"temporal Gram matrix not positive definite even with jitter {jitter:.1e}")


class TemporalGP:
    """Exact time-varying GP regression with fixed (or periodically fitted eps) hyperparameters.

    Times are loop rounds. ``posterior(X, t)`` is the belief about ``f_t``; by default ``t`` is the round
    after the last observation. ``n_factorisations`` counts the cubic (re)factorisations done so far.
    """

    config: TemporalGPConfig
    epsilon: float     # the forgetting rate in use (fitted when fit_epsilon)
    fit_epsilon: bool
    X: Tensor          # n x d
    y: Tensor          # n
    L: Tensor          # n x n

    def __init__(self, dim: int, config: TemporalGPConfig | None = None, dtype: torch.dtype = torch.float64,
                 device: torch.device | str = "cpu") -> None:
        self.config = config or TemporalGPConfig()
        self.dim, self.dtype, self.device = dim, dtype, torch.device(device)
        self.epsilon = self.config.epsilon
        self.fit_epsilon = self.config.fit == "epsilon"
        self.n_factorisations = 0
        self._candidates: Tensor | None = None
        self.clear()

    # -- state --------------------------------------------------------------------------------
    def clear(self) -> None:
        """Forget every observation (used by R-GP-UCB's resets)."""
        self.X = torch.empty(0, self.dim, dtype=self.dtype, device=self.device)
        self.y = torch.empty(0, dtype=self.dtype, device=self.device)
        self.h = torch.empty(0, dtype=self.dtype, device=self.device)
        self.L = torch.empty(0, 0, dtype=self.dtype, device=self.device)
        self.w = torch.empty(0, dtype=self.dtype, device=self.device)  # L^{-1} (y - prior_mean)
        self._fit_time = -math.inf  # round of the last eps fit: the next observation refits
        self._reset_cache()

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def decay(self) -> float:
        """a = sqrt(1 - eps): the per-round factor of the temporal kernel."""
        return math.sqrt(1.0 - self.epsilon)

    @property
    def last_time(self) -> float | None:
        return float(self.h[-1]) if self.n else None

    def set_epsilon(self, epsilon: float) -> None:
        """Change the forgetting rate (refactorises if there is data)."""
        if not 0 <= epsilon < 1:
            raise ValueError(f"epsilon={epsilon} must be in [0, 1)")
        self.epsilon = float(epsilon)
        if self.n:
            self._factorise()

    def set_candidates(self, C: Tensor | None) -> None:
        """Keep the posterior over the fixed set ``C`` (``m x d``) up to date incrementally."""
        self._candidates = None if C is None else C.detach().to(self.device, self.dtype).reshape(-1, self.dim)
        self._reset_cache()
        if self.n and self._candidates is not None:
            self._factorise()

    # -- kernels ------------------------------------------------------------------------------
    def k_space(self, A: Tensor, B: Tensor) -> Tensor:
        c = self.config
        return space_kernel(c.kernel, A, B, c.lengthscale, c.outputscale)

    def k_time(self, s: Tensor, t: Tensor | float) -> Tensor:
        """a^{|s - t|} elementwise."""
        return torch.pow(torch.as_tensor(self.decay, dtype=self.dtype), (s - t).abs())

    def _gram(self, epsilon: float | None = None) -> Tensor:
        a = math.sqrt(1.0 - (self.epsilon if epsilon is None else epsilon))
        D = torch.pow(torch.as_tensor(a, dtype=self.dtype), (self.h[:, None] - self.h[None, :]).abs())
        eye = torch.eye(self.n, dtype=self.dtype, device=self.device)
        return self.k_space(self.X, self.X) * D + self.config.noise * eye

    # -- data ---------------------------------------------------------------------------------
    def fit(self, X: Tensor, y: Tensor, times: Tensor | None = None) -> None:
        """Replace the data (times default to 1..n), fit eps if configured, and factorise (O(n^3))."""
        self.X = X.detach().to(self.device, self.dtype).reshape(-1, self.dim)
        self.y = y.detach().to(self.device, self.dtype).reshape(-1)
        n = self.n
        self.h = (torch.arange(1, n + 1, dtype=self.dtype) if times is None
                  else times.detach().to(self.device, self.dtype).reshape(-1))
        if n and bool((self.h[1:] < self.h[:-1]).any()):
            raise ValueError("observation times must be non-decreasing")
        if self.fit_epsilon and n >= 3:
            self._fit_epsilon()
            self._fit_time = float(self.h[-1])
        self._factorise()

    def update(self, x: Tensor, y: Tensor, t: float | None = None) -> None:
        """Append observations ``x`` (``k x d``), ``y`` (``k``) made at round ``t`` (default: last + 1)."""
        x = x.detach().to(self.device, self.dtype).reshape(-1, self.dim)
        y = y.detach().to(self.device, self.dtype).reshape(-1)
        for xi, yi in zip(x, y):
            self.add(xi, float(yi), (self.last_time or 0.0) + 1 if t is None else t)

    def add(self, x: Tensor, y: float, t: float) -> None:
        """Append one observation made at round ``t``: O(n^2), plus O(nm) for the candidate cache."""
        x = x.detach().to(self.device, self.dtype).reshape(1, self.dim)
        last = self.last_time
        if last is not None and t < last:
            raise ValueError(f"observation at round {t} is older than the last one ({last})")
        if self.fit_epsilon and t - self._fit_time >= self.config.refit_every:
            self.fit(torch.cat([self.X, x]), torch.cat([self.y, torch.tensor([y], dtype=self.dtype)]),
                     torch.cat([self.h, torch.tensor([t], dtype=self.dtype)]))
            return
        with torch.no_grad():
            kss = float(self.k_space(x, x)) + self.config.noise
            if self.n:
                k = self.k_space(self.X, x).squeeze(-1) * self.k_time(self.h, t)
                l12 = torch.linalg.solve_triangular(self.L, k.unsqueeze(-1), upper=False).squeeze(-1)
            else:
                l12 = torch.empty(0, dtype=self.dtype, device=self.device)
            d = math.sqrt(max(kss - float(l12 @ l12), 1e-12))
            w_new = (y - self.config.prior_mean - float(l12 @ self.w)) / d
            n = self.n
            L = torch.zeros(n + 1, n + 1, dtype=self.dtype, device=self.device)
            L[:n, :n], L[n, :n], L[n, n] = self.L, l12, d
            self.L = L
            self.w = torch.cat([self.w, torch.tensor([w_new], dtype=self.dtype, device=self.device)])
            self.X = torch.cat([self.X, x])
            self.y = torch.cat([self.y, torch.tensor([y], dtype=self.dtype, device=self.device)])
            self.h = torch.cat([self.h, torch.tensor([t], dtype=self.dtype, device=self.device)])
            if self._candidates is not None:
                self._extend_cache(x, self._candidates, l12, d, w_new, t)

    # -- hyperparameters ----------------------------------------------------------------------
    def negative_log_likelihood(self, epsilon: float) -> float:
        """-log p(y | eps) of the observed data (up to the constant n/2 log 2 pi)."""
        with torch.no_grad():
            L = _cholesky(self._gram(epsilon))
            z = torch.linalg.solve_triangular(L, (self.y - self.config.prior_mean).unsqueeze(-1), upper=False)
            return float(0.5 * (z * z).sum() + torch.log(torch.diagonal(L)).sum())

    def _fit_epsilon(self) -> None:
        """Type-II maximum likelihood over log10(eps) in [log10(epsilon_min), log10(0.5)] (bounded Brent)."""
        res = minimize_scalar(lambda u: self.negative_log_likelihood(10.0**u),
                              bounds=(math.log10(self.config.epsilon_min), math.log10(0.5)),
                              method="bounded", options={"xatol": 1e-2})
        if np.isfinite(res.fun):
            self.epsilon = float(10.0**res.x)

    # -- factorisation and caches ---------------------------------------------------------------
    def _factorise(self) -> None:
        self.n_factorisations += 1
        with torch.no_grad():
            if not self.n:
                self.L = torch.empty(0, 0, dtype=self.dtype, device=self.device)
                self.w = torch.empty(0, dtype=self.dtype, device=self.device)
                self._reset_cache()
                return
            self.L = _cholesky(self._gram())
            self.w = torch.linalg.solve_triangular(self.L, (self.y - self.config.prior_mean).unsqueeze(-1),
                                                   upper=False).squeeze(-1)
            self._reset_cache()
            if self._candidates is not None:
                t_ref = float(self.h[-1])
                K = self.k_space(self.X, self._candidates) * self.k_time(self.h, t_ref).unsqueeze(-1)
                self._V = torch.linalg.solve_triangular(self.L, K, upper=False)
                self._m_ref = self._V.T @ self.w
                self._q_ref = (self._V * self._V).sum(0)
                self._t_ref = t_ref

    def _reset_cache(self) -> None:
        m = 0 if self._candidates is None else self._candidates.shape[0]
        self._V = torch.empty(0, m, dtype=self.dtype, device=self.device)
        self._m_ref = torch.zeros(m, dtype=self.dtype, device=self.device)
        self._q_ref = torch.zeros(m, dtype=self.dtype, device=self.device)
        self._t_ref = 0.0
        if self._candidates is not None:
            self._prior_var = torch.diagonal(self.k_space(self._candidates[:1], self._candidates[:1])).expand(m)

    def _extend_cache(self, x: Tensor, candidates: Tensor, l12: Tensor, d: float, w_new: float, t: float) -> None:
        s = self.decay ** (t - self._t_ref) if self._V.shape[0] else 1.0
        self._V.mul_(s)
        self._m_ref.mul_(s)
        self._q_ref.mul_(s * s)
        r = (self.k_space(x, candidates).squeeze(0) - l12 @ self._V) / d
        self._V = torch.cat([self._V, r.unsqueeze(0)])
        self._m_ref.add_(r * w_new)
        self._q_ref.add_(r * r)
        self._t_ref = t

    # -- posterior ----------------------------------------------------------------------------
    def _default_time(self, t: float | None) -> float:
        if t is not None:
            return float(t)
        return (self.last_time or 0.0) + 1.0

    def posterior(self, X: Tensor, t: float | None = None) -> tuple[Tensor, Tensor]:
        """Latent mean and variance of ``f_t`` at ``X`` (``m x d``), each of shape ``m``; differentiable in X."""
        X = X.to(self.device, self.dtype).reshape(-1, self.dim)
        prior = torch.diagonal(self.k_space(X[:1], X[:1])).expand(X.shape[0]) if X.shape[0] else X.new_zeros(0)
        if not self.n:
            return torch.full((X.shape[0],), self.config.prior_mean, dtype=self.dtype, device=self.device), prior
        t = self._default_time(t)
        K = self.k_space(X, self.X) * self.k_time(self.h, t)  # m x n
        v = torch.linalg.solve_triangular(self.L, K.T, upper=False)
        mean = self.config.prior_mean + v.T @ self.w
        var = (prior - (v * v).sum(0)).clamp_min(1e-12)
        return mean, var

    def candidate_posterior(self, t: float | None = None) -> tuple[Tensor, Tensor]:
        """Mean and variance of ``f_t`` over the candidate set, O(m) from the cache."""
        if self._candidates is None:
            raise ValueError("no candidate set: call set_candidates first")
        t = self._default_time(t)
        if not self.n:
            return torch.full_like(self._prior_var, self.config.prior_mean), self._prior_var.clone()
        if t < self._t_ref:
            return self.posterior(self._candidates, t)
        s = self.decay ** (t - self._t_ref)
        mean = self.config.prior_mean + s * self._m_ref
        var = (self._prior_var - (s * s) * self._q_ref).clamp_min(1e-12)
        return mean, var


def build(config: TemporalGPConfig, dim: int, dtype: torch.dtype, device: torch.device) -> TemporalGP:
    """Registry factory."""
    return TemporalGP(dim, config, dtype, device)
