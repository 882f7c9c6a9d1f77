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


def extra_design_point(dim: int, generator: torch.Generator, dtype: torch.dtype) -> Tensor:
    """A uniform point (shape ``d``) for a trial asked while the initial design is used up but not yet observed."""
    return torch.rand(dim, generator=generator, dtype=dtype)

