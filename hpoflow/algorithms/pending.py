"""Proposing a point while earlier suggestions are still being evaluated (asynchronous parallel BO).

Kriging believer (Ginsbourger et al., 2010): the GP is told its own posterior mean at every pending point, so
its mean is unchanged while its variance there collapses; an acquisition maximised on that "believing" model
steers away from the pending points. Hand-written because the exact GP here is the project's own (BoTorch's
fantasies need a BoTorch model); it is a copy of the model extended by rank-one updates, O(k n^2) for k pending.
"""
from __future__ import annotations

import copy
from typing import Any

import torch
from torch import Tensor

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

