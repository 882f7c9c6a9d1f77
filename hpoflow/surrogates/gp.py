"""Exact GP surrogate on gpytorch: ARD Matérn/RBF kernels, marginal-likelihood fitting, cheap updates.

gpytorch supplies the kernels, priors, constraints and the marginal likelihood. The predictive
equations are written out over our own Cholesky factor because gpytorch's prediction cache cannot be
extended by a rank-one update, and its per-call overhead dominates when an acquisition optimiser
calls the posterior hundreds of times per round.
"""
from __future__ import annotations

import logging
import math
import warnings

import gpytorch
import numpy as np
import torch
from gpytorch.constraints import GreaterThan, Interval
from gpytorch.priors import LogNormalPrior
from linear_operator.utils.errors import NotPSDError
from linear_operator.utils.warnings import NumericalWarning
from torch import Tensor

from hpoflow.core.config_values import NEVER
from hpoflow.core.threads import one_blas_thread
from hpoflow.surrogates.configs import GPConfig
from hpoflow.surrogates.kernels import stationary
from hpoflow.surrogates.output_transform import YeoJohnson
from hpoflow.surrogates.warp import KumaraswamyWarp

logger = logging.getLogger(__name__)
# upper end of the log-space search of a positive hyperparameter without one (lengthscales on the unit cube, noise of
# standardised outputs): 1e6 is far past any value with a meaning, and keeps L-BFGS-B's trial steps inside exp's range
# (unbounded, a wild quasi-Newton step on a flat likelihood -- duplicated points -- reached log values of 1e4)
MAX_LOG_POSITIVE = math.log(1e6)

def lengthscale_prior(dim: int) -> LogNormalPrior:
    """BoTorch's dimension-scaled log-normal lengthscale prior (Hvarfner et al., 2024)."""
    return LogNormalPrior(loc=math.sqrt(2) + math.log(dim) / 2, scale=math.sqrt(3))


def prior_mode(dim: int) -> float:
    """Mode of :func:`lengthscale_prior`: exp(loc - scale^2); the default initial lengthscale."""
    return math.exp(math.sqrt(2) + math.log(dim) / 2 - 3.0)


def make_kernel(name: str, dim: int, ard: bool) -> gpytorch.kernels.Kernel:
    """A stationary kernel with the dimension-scaled log-normal lengthscale prior."""
    ard_dims = dim if ard else None
    prior = lengthscale_prior(dim)
    constraint = GreaterThan(2.5e-2, transform=None, initial_value=0.2)
    if name == "rbf":
        return gpytorch.kernels.RBFKernel(ard_num_dims=ard_dims, lengthscale_prior=prior,
                                          lengthscale_constraint=constraint)
    nu = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}[name]
    return gpytorch.kernels.MaternKernel(nu=nu, ard_num_dims=ard_dims, lengthscale_prior=prior,
                                         lengthscale_constraint=constraint)


class _ExactGPModel(gpytorch.models.ExactGP):
    """Constant mean and ``covar``; with ``warp`` the kernel sees the warped inputs (``m x d`` either way)."""

    def __init__(self, X: Tensor, y: Tensor, likelihood: gpytorch.likelihoods.Likelihood,
                 covar: gpytorch.kernels.Kernel, warp: KumaraswamyWarp | None = None) -> None:
        super().__init__(X, y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = covar
        if warp is not None:  # registered only when on: without it the parameters (and fits) are the old ones
            self.warp = warp

    def forward(self, x: Tensor) -> gpytorch.distributions.MultivariateNormal:
        warp = getattr(self, "warp", None)
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x),
                                                         self.covar_module(x if warp is None else warp(x)))


class ExactGP:
    """Exact GP regression on the unit cube with standardised outputs.

    ``fit`` (re)sets the data and fits hyperparameters; ``update`` appends points and either refits
    (on the auto schedule, or every ``refit_every`` updates; warm-started) or extends the Cholesky factor in
    O(n^2); ``refit_every=never`` keeps the hyperparameters of the first fit with two or more points.
    ``posterior`` returns the latent mean and variance in the original output units (with ``output_transform=power``:
    the transformed Gaussian's median, and the variance by the delta method); it is
    differentiable in its input so acquisition functions can be optimised by gradient.
    """

    config: GPConfig  # its settings (GP-EI completes a null output_transform: ConfiguredSurrogate)
    X: Tensor       # n x d: the inputs held
    y: Tensor       # n: their outputs, in y's units
    y_mean: Tensor  # scalar: the standardisation's shift
    y_std: Tensor   # scalar: its scale
    L: Tensor       # n x n: lower Cholesky factor of k(X, X) + noise I (standardised units)
    alpha: Tensor   # n: K^{-1} (z - prior_mean), z the standardised outputs

    def __init__(self, dim: int, config: GPConfig | None = None, dtype: torch.dtype = torch.float64,
                 device: torch.device | str = "cpu") -> None:
        self.config = config or GPConfig()
        self.dim, self.dtype, self.device = dim, dtype, torch.device(device)
        self.X = torch.empty(0, dim, dtype=dtype, device=self.device)
        self.y = torch.empty(0, dtype=dtype, device=self.device)
        self.y_mean = torch.zeros((), dtype=dtype, device=self.device)  # set by every fit; the identity before
        self.y_std = torch.ones((), dtype=dtype, device=self.device)
        self.z = torch.empty(0, dtype=dtype, device=self.device)
        self._transform: YeoJohnson | None = None  # output_transform=power: fitted with the standardisation
        self.L = torch.empty(0, 0, dtype=dtype, device=self.device)
        self.alpha = torch.empty(0, dtype=dtype, device=self.device)
        self._updates_since_fit = 0
        self._n_at_fit = 0
        self._fits = 0
        # the gpytorch model is built on first use (the first fit, or a property read): building gpytorch's first
        # kernel imports sympy through torch (~0.35 CPU s), which a run's initial design does not need
        self._built_from = self.config
        self._warp = KumaraswamyWarp(self.dim) if self.config.warp else None
        self._initial_lengthscale = self.config.lengthscale if self.config.lengthscale is not None else prior_mode(dim)
        self._parts: tuple[_ExactGPModel, gpytorch.kernels.Kernel] | None = None

    @property
    def model(self) -> _ExactGPModel:
        """gpytorch's model (constant mean, scaled kernel, Gaussian likelihood), built on first use."""
        if self._parts is None:
            self._parts = self._build()
        return self._parts[0]

    @property
    def _base_kernel(self) -> gpytorch.kernels.Kernel:
        if self._parts is None:
            self._parts = self._build()
        return self._parts[1]

    # -- model construction -------------------------------------------------------------------
    def _build(self) -> tuple[_ExactGPModel, gpytorch.kernels.Kernel]:
        c = self._built_from  # the config at construction, as when the model was built there
        base = make_kernel(c.kernel, self.dim, c.ard)
        kernel = gpytorch.kernels.ScaleKernel(base, outputscale_constraint=Interval(0.01, 100.0))
        likelihood = gpytorch.likelihoods.GaussianLikelihood(
            noise_prior=LogNormalPrior(loc=-4.0, scale=1.0) if c.fit == "mll" else None,
            noise_constraint=GreaterThan(c.min_noise, transform=None, initial_value=max(c.noise, 2 * c.min_noise)))
        dummy_x = torch.zeros(1, self.dim, dtype=self.dtype)
        model = _ExactGPModel(dummy_x, torch.zeros(1, dtype=self.dtype), likelihood, kernel, self._warp)
        model.to(device=self.device, dtype=self.dtype)
        base.lengthscale = torch.full_like(base.lengthscale, self._initial_lengthscale)
        kernel.outputscale = c.outputscale
        kernel.raw_outputscale.requires_grad_(c.learn_outputscale)
        likelihood.noise = max(c.noise, 2 * c.min_noise)
        for p in model.parameters():
            p.requires_grad_(False)  # only the marginal-likelihood fit differentiates in them
        return model, base

    @property
    def kernel(self) -> gpytorch.kernels.Kernel:
        return self.model.covar_module

    @property
    def outputscale(self) -> float:
        return float(self.model.covar_module.outputscale)

    @property
    def noise(self) -> float:
        return float(self.model.likelihood.noise)

    @property
    def lengthscale(self) -> Tensor:
        if self._parts is None:  # the initial one, as the model will be built with (an isinstance check reads it)
            size = self.dim if self._built_from.ard else 1
            return torch.full((size,), self._initial_lengthscale, dtype=self.dtype, device=self.device)
        return self._base_kernel.lengthscale.detach().reshape(-1)

    @property
    def prior_mean(self) -> float:
        """The learned constant prior mean, in standardised units."""
        return float(self.model.mean_module.constant)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    # -- data ---------------------------------------------------------------------------------
    def fit(self, X: Tensor, y: Tensor) -> None:
        """Replace the data by ``X`` (``n x d``) and ``y`` (``n``) and fit the hyperparameters."""
        self.X = X.detach().to(self.device, self.dtype).reshape(-1, self.dim)
        self.y = y.detach().to(self.device, self.dtype).reshape(-1)
        self._standardise()
        if self.config.fit == "mll" and self.n >= 2:
            self._fit_hyperparameters()
        self._factorise()
        self._updates_since_fit = 0
        self._n_at_fit = self.n

    def update(self, x: Tensor, y: Tensor) -> None:
        """Append points ``x`` (``k x d``) with values ``y`` (``k``).

        Hyperparameters are refitted (warm-started) when the schedule says so; otherwise the Cholesky
        factor is extended in O(n^2) per point with the current hyperparameters.
        """
        x = x.detach().to(self.device, self.dtype).reshape(-1, self.dim)
        y = y.detach().to(self.device, self.dtype).reshape(-1)
        self._updates_since_fit += 1
        if self.n < 2 or self._refit_due(x, y):
            self.fit(torch.cat([self.X, x]), torch.cat([self.y, y]))
            return
        for xi, yi in zip(x, y):
            self.extend(xi, yi)

    def _refit_due(self, x: Tensor, y: Tensor) -> bool:
        c = self.config
        if c.fit != "mll" or c.refit_every == NEVER:
            return False
        if isinstance(c.refit_every, int):  # else null: the auto schedule (validation allows nothing more)
            return self._updates_since_fit >= c.refit_every
        if self.n + x.shape[0] >= (1 + c.refit_growth) * self._n_at_fit:
            return True
        with torch.no_grad():
            mean, var = self.posterior(x, standardized=True)
            resid = (self.standardize(y) - mean).abs() / (var + self.noise).sqrt()
        return bool((resid > c.refit_surprise).any())

    def _standardise(self) -> None:
        """Fit the output transform (``output_transform=power``) and the standardisation to ``self.y``."""
        self._transform = YeoJohnson.fit(self.y) if self.config.output_transform == "power" else None
        t = self.y if self._transform is None else self._transform(self.y)
        if self.config.standardize and self.n >= 2:
            self.y_mean, self.y_std = t.mean(), t.std().clamp_min(1e-9)
        elif self.config.standardize and self.n == 1:
            self.y_mean, self.y_std = t.mean(), torch.ones((), dtype=self.dtype, device=self.device)
        else:
            self.y_mean = torch.zeros((), dtype=self.dtype, device=self.device)
            self.y_std = torch.ones((), dtype=self.dtype, device=self.device)
        self.z = (t - self.y_mean) / self.y_std

    # -- hyperparameters ----------------------------------------------------------------------
    def _fit_hyperparameters(self) -> None:
        """Maximise the marginal likelihood (plus priors) with scipy's L-BFGS-B, warm-started."""
        model, likelihood = self.model, self.model.likelihood
        model.set_train_data(self.X, self.z, strict=False)
        model.train()
        mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
        named = [(name, p, c) for name, p, c in model.named_parameters_and_constraints()
                 if self.config.learn_outputscale or not name.endswith("raw_outputscale")]
        params = [p for _, p, _ in named]
        bounds, positive = [], []  # constraints without a transform act on the raw value: give them to L-BFGS-B
        for _, p, c in named:
            lo = float(c.lower_bound.min()) if c is not None and not c.enforced and torch.isfinite(
                c.lower_bound).all() else None
            hi = float(c.upper_bound.max()) if c is not None and not c.enforced and torch.isfinite(
                c.upper_bound).all() else None
            log_scale = lo is not None and lo > 0  # lengthscales and noise: search log values (better conditioned)
            if lo is not None and log_scale:
                bound: tuple[float | None, float | None] = (
                    math.log(lo), math.log(hi) if hi is not None else max(MAX_LOG_POSITIVE, math.log(lo) + 1.0))
            else:
                bound = (lo, hi)
            bounds += [bound] * p.numel()
            positive += [log_scale] * p.numel()
        mask = np.array(positive, dtype=bool)
        for p in params:
            p.requires_grad_(True)
        shapes = [p.shape for p in params]

        def to_search(raw: np.ndarray) -> np.ndarray:
            return np.where(mask, np.log(np.maximum(raw, 1e-300)), raw)

        def from_search(vec: np.ndarray) -> np.ndarray:
            return np.where(mask, np.exp(np.where(mask, vec, 0.0)), vec)

        def assign(raw: np.ndarray) -> None:
            offset = 0
            for p, shape in zip(params, shapes):
                size = int(np.prod(shape)) if len(shape) else 1
                p.data.copy_(torch.as_tensor(raw[offset:offset + size], dtype=p.dtype).reshape(shape))
                offset += size

        def objective(vec: np.ndarray) -> tuple[float, np.ndarray]:
            raw = from_search(vec)
            assign(raw)
            for p in params:
                p.grad = None
            with gpytorch.settings.fast_computations(False, False, False):
                loss = -mll(model(self.X), self.z)
            loss.backward()
            grad = torch.cat([p.grad.reshape(-1) if p.grad is not None else torch.zeros(p.numel(), dtype=p.dtype)
                              for p in params]).cpu().numpy().astype(np.float64)
            return float(loss.detach()), np.where(mask, grad * raw, grad)  # chain rule through exp

        x0 = torch.cat([p.detach().reshape(-1) for p in params]).cpu().numpy()
        starts = [to_search(x0)]
        if self._fits % 4 == 3:  # every 4th refit also starts from the prior's mode: no local optimum is kept forever
            raw = self._base_kernel.raw_lengthscale
            raw_init = self._base_kernel.raw_lengthscale_constraint.inverse_transform(
                torch.full_like(raw, self._initial_lengthscale))
            identity = [] if self._warp is None else [self._warp.raw_concentration1, self._warp.raw_concentration0]
            fresh = x0.copy()
            offset = 0
            for p, shape in zip(params, shapes):
                size = int(np.prod(shape)) if len(shape) else 1
                if p is raw:
                    fresh[offset:offset + size] = raw_init.reshape(-1).cpu().numpy()
                elif any(p is q for q in identity):  # and from the identity warp
                    fresh[offset:offset + size] = 1.0
                offset += size
            starts.append(to_search(fresh))
        with warnings.catch_warnings(), one_blas_thread():
            warnings.simplefilter("ignore", NumericalWarning)
            best = min((self._minimise(objective, s, bounds) for s in starts), key=lambda r: r[0])
        self._fits += 1
        assign(from_search(best[1]))
        for p in params:
            p.requires_grad_(False)  # the posterior differentiates in X only
        model.eval()

    def _minimise(self, objective, x0: np.ndarray, bounds: list) -> tuple[float, np.ndarray]:
        x0 = np.clip(x0, [b[0] if b[0] is not None else -np.inf for b in bounds],
                     [b[1] if b[1] is not None else np.inf for b in bounds])
        from scipy.optimize import minimize  # here: ~0.3 CPU s to import, first needed at the first fit

        best = (objective(x0)[0], x0)
        try:
            res = minimize(objective, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": self.config.max_iter, "ftol": self.config.fit_ftol})
            if np.isfinite(res.fun) and res.fun <= best[0]:
                best = (float(res.fun), res.x)
        except (RuntimeError, ValueError, np.linalg.LinAlgError, NotPSDError) as exc:
            # keep the start point: an ill-conditioned step must not abort the optimisation run
            logger.warning("GP hyperparameter fit failed (%s: %s); keeping the previous values",
                           type(exc).__name__, exc)
        return best

    # -- factorisation and posterior ----------------------------------------------------------
    def _k(self, A: Tensor, B: Tensor) -> Tensor:
        """Covariance matrix between ``A`` and ``B`` with the fitted kernel (:mod:`hpoflow.surrogates.kernels`)."""
        if self._warp is not None:
            A, B = self._warp(A), self._warp(B)
        return stationary(self.config.kernel, A, B, self._base_kernel.lengthscale, self.model.covar_module.outputscale)

    def _factorise(self) -> None:
        with torch.no_grad():
            K = self._k(self.X, self.X) + self.noise * torch.eye(self.n, dtype=self.dtype, device=self.device)
            self.L = _robust_cholesky(K)
            self.alpha = torch.cholesky_solve((self.z - self.prior_mean).unsqueeze(-1), self.L).squeeze(-1)

    def extend(self, x: Tensor, y: Tensor) -> None:
        """Condition on ``x`` (``d``) observed as ``y`` (scalar): a rank-one extension of the Cholesky factor,
        O(n^2); hyperparameters and the output standardisation stay as they are (:class:`ExtendableSurrogate`)."""
        with torch.no_grad():
            k = self._k(self.X, x.unsqueeze(0)).squeeze(-1)
            kss = self._k(x.unsqueeze(0), x.unsqueeze(0)).reshape(()) + self.noise
            l12 = torch.linalg.solve_triangular(self.L, k.unsqueeze(-1), upper=False).squeeze(-1)
            d = torch.sqrt(torch.clamp(kss - l12 @ l12, min=1e-12))
            n = self.n
            L = torch.zeros(n + 1, n + 1, dtype=self.dtype, device=self.device)
            L[:n, :n], L[n, :n], L[n, n] = self.L, l12, d
            self.L = L
            self.X = torch.cat([self.X, x.unsqueeze(0)])
            self.y = torch.cat([self.y, y.reshape(1)])
            self.z = self.standardize(self.y)
            self.alpha = torch.cholesky_solve((self.z - self.prior_mean).unsqueeze(-1), self.L).squeeze(-1)

    def posterior(self, X: Tensor, standardized: bool = False) -> tuple[Tensor, Tensor]:
        """Latent mean and variance at ``X`` (``m x d``), each of shape ``m``.

        Args:
            X: points of the unit cube.
            standardized: return values in standardised output units instead of the original ones.
        """
        X = X.to(self.device, self.dtype).reshape(-1, self.dim)
        if self.n == 0:
            mean = torch.full((X.shape[0],), self.prior_mean, dtype=self.dtype, device=self.device)
            var = torch.full_like(mean, self.outputscale)
        else:
            Kxs = self._k(X, self.X)
            mean = self.prior_mean + Kxs @ self.alpha
            v = torch.linalg.solve_triangular(self.L, Kxs.transpose(-1, -2), upper=False)
            var = (self.outputscale - (v * v).sum(0)).clamp_min(1e-12)
        if standardized:
            return mean, var
        mean, var = mean * self.y_std + self.y_mean, var * self.y_std**2
        if self._transform is None:
            return mean, var
        y = self._transform.inverse(mean)  # the median of the transformed Gaussian; variance by the delta method
        return y, var / self._transform.derivative(y) ** 2

    def standardize(self, y: Tensor) -> Tensor:
        """``y`` (any shape) in the model's units: transformed (``output_transform``), then standardised."""
        return ((y if self._transform is None else self._transform(y)) - self.y_mean) / self.y_std


def _robust_cholesky(K: Tensor, max_tries: int = 6) -> Tensor:
    """Cholesky with growing diagonal jitter (float64 rarely needs it; float32 sometimes does)."""
    jitter = 0.0
    eye = torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
    for attempt in range(max_tries):
        L, info = torch.linalg.cholesky_ex(K + jitter * eye)
        if int(info) == 0:
            return L
        jitter = 1e-8 * 10**attempt if jitter == 0 else jitter * 10
    raise NotPSDError(f"kernel matrix not positive definite even with jitter {jitter:.1e}")


def build(config: GPConfig, dim: int, dtype: torch.dtype, device: torch.device) -> ExactGP:
    """Registry factory."""
    return ExactGP(dim, config, dtype, device)
