"""Proposing a point while earlier suggestions are still being evaluated (asynchronous parallel BO).

Kriging believer (Ginsbourger et al., 2010): the GP is told its own posterior mean at every pending point, so
its mean is unchanged while its variance there collapses; an acquisition maximised on that "believing" model
steers away from the pending points. Hand-written because the exact GP here is the project's own (BoTorch's
fantasies need a BoTorch model); it is a copy of the model extended by rank-one updates, O(k n^2) for k pending.

Fantasies (Snoek et al., 2012, sec. 3.3; BoTorch's ``X_pending``): the pending outcomes are drawn jointly from
the posterior ``M`` times, and EI is averaged over the models conditioned on each draw, incumbent included
(:class:`Fantasies`). Its maximiser is that of BoTorch's ``qEI`` over the point and the pending ones together.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from hpoflow.acquisition.functions import log_expected_improvement
from hpoflow.surrogates.base import ExtendableSurrogate


def believer(model: Any, X_pending: Tensor) -> Any:
    """A copy of ``model`` that has observed its own posterior mean at ``X_pending`` (``k x d``).

    The hyperparameters are the model's (no refit); ``model`` itself is left unchanged.
    """
    with torch.no_grad():
        mean, _ = model.posterior(X_pending)  # in y's units: what update() takes
    if isinstance(model, ExtendableSurrogate) and model.n >= 2:  # the exact GP: rank-one extensions of a copy
        fantasy = copy.copy(model)
        for x, y in zip(X_pending.to(mean.dtype), mean):
            fantasy.extend(x, y)
        return fantasy
    fantasy = copy.deepcopy(model)  # any other surrogate: its own update (which may refit)
    fantasy.update(X_pending, mean)
    return fantasy


def condition(model: Any, x: Tensor, y: Tensor) -> bool:
    """Add observations ``x`` (``k x d``), ``y`` (``k``) to ``model`` without refitting its hyperparameters.

    An :class:`ExtendableSurrogate` (the exact GP: its Cholesky factor, O(n^2) a point); returns False (nothing
    done) for a model without that path, whose caller then updates it as usual. Used while trials are pending:
    a refit on every tell would keep the workers waiting on the decision (:class:`RefitPacer`).
    """
    if not isinstance(model, ExtendableSurrogate) or model.n < 2:
        return False
    dtype = getattr(model, "dtype", x.dtype)
    with torch.no_grad():
        for xi, yi in zip(x.reshape(-1, x.shape[-1]).to(dtype), y.reshape(-1).to(dtype)):
            model.extend(xi, yi)
    return True


N_FANTASIES = 64  # joint draws of the pending outcomes; fixed per ask (common random numbers: a smooth acquisition)


class Fantasies:
    """The posterior of an exact GP conditioned on ``M`` joint draws of its outcomes at ``k`` pending points.

    Conditioning on values does not change the variance (it is the believer's); the mean under draw ``m`` is the
    believer's mean plus ``u(x) . eps_m``, where ``u(x) = L22^{-1} Sigma(X_pending, x)`` is the pending block of
    the believer's triangular solve and ``eps_m ~ N(0, I_k)`` (``L22``: the believer's Cholesky block of the
    pending points, so the drawn outcomes are ``mean_p + L22 eps_m``). All in standardised units.
    """

    def __init__(self, believer: Any, n_observed: int, generator: torch.Generator,
                 n_fantasies: int = N_FANTASIES) -> None:
        self.model, self.n = believer, n_observed
        k = believer.n - n_observed
        self.eps = torch.randn(n_fantasies, k, generator=generator, dtype=believer.L.dtype)  # M x k
        L22 = believer.L[n_observed:, n_observed:]
        self.outcomes = believer.z[n_observed:] + self.eps @ L22.T  # M x k: the drawn standardised outcomes

    def posterior(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """Means (``b x M``, one column per draw) and the shared variance (``b``) at ``X`` (``b x d``)."""
        gp = self.model
        Kxs = gp._k(X.to(gp.dtype).reshape(-1, gp.dim), gp.X)  # b x (n + k)
        v = torch.linalg.solve_triangular(gp.L, Kxs.T, upper=False)  # (n + k) x b
        mean = gp.prior_mean + Kxs @ gp.alpha
        var = (gp.outputscale - (v * v).sum(0)).clamp_min(1e-12)
        return mean.unsqueeze(-1) + v[self.n:].T @ self.eps.T, var

    def log_ei(self, incumbent: Tensor | float, margin: float = 0.0) -> Callable[[Tensor], Tensor]:
        """log of EI averaged over the draws, each against its own incumbent: the best of ``incumbent`` (the
        best observed, standardised) and that draw's pending outcomes, plus ``margin``."""
        best = torch.maximum(torch.as_tensor(incumbent, dtype=self.eps.dtype), self.outcomes.max(-1).values) + margin
        log_m = math.log(self.eps.shape[0])

        def fn(X: Tensor) -> Tensor:
            mean, var = self.posterior(X)
            return torch.logsumexp(log_expected_improvement(mean, var.unsqueeze(-1), best), dim=-1) - log_m

        return fn


def has_fantasies(model: Any) -> bool:
    """The model exposes what :class:`Fantasies` reads (the exact GP's factor and kernel)."""
    return isinstance(model, ExtendableSurrogate) and all(
        hasattr(model, name) for name in ("L", "alpha", "z", "X", "_k", "prior_mean", "outputscale"))


class RefitPacer:
    """When a surrogate's hyperparameters are refitted while trials run concurrently.

    Sequentially (one trial at a time) nothing changes: the surrogate's own schedule applies on every tell.
    Once ``k`` trials have run at once, tells only condition the model on the new point (:func:`condition`)
    and the hyperparameters are refitted, warm-started, once ``k`` new observations have arrived since the last
    refit (about once per "generation" of the workers instead of once per tell), or sooner while the data is
    small: once it has grown by half since the last refit (hyperparameters fitted on 2 points are poor).
    """

    def __init__(self) -> None:
        self.concurrent = 1  # the most trials seen at once (pending + the one being asked)
        self.stale = 0       # observations conditioned on since the last refit
        self.fitted_on = 0   # observations at the last refit

    def saw(self, pending: int) -> None:
        """An ask with ``pending`` trials still running."""
        self.concurrent = max(self.concurrent, pending + 1)

    @property
    def deferring(self) -> bool:
        return self.concurrent > 1

    def refitted(self, n: int) -> None:
        self.stale, self.fitted_on = 0, n

    def due(self) -> bool:
        """Refit now (before proposing): ``concurrent`` observations, or half as many as the last refit saw,
        were conditioned on since it."""
        return self.stale > 0 and self.stale >= min(self.concurrent, max(1, self.fitted_on // 2))


def extra_design_point(dim: int, generator: torch.Generator, dtype: torch.dtype) -> Tensor:
    """A uniform point (shape ``d``) for a trial asked while the initial design is used up but not yet observed."""
    return torch.rand(dim, generator=generator, dtype=dtype)

