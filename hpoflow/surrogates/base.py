"""The Surrogate protocols: what an algorithm may call on a model of the objective over the unit cube.

``Surrogate`` (fit / update / posterior) is implemented by :class:`~hpoflow.surrogates.gp.ExactGP`,
:class:`~hpoflow.surrogates.temporal.TemporalGP` and :class:`~hpoflow.surrogates.parametric.NeuralSurrogate`.
Two extensions say what else a model offers: ``StandardizedSurrogate`` (ExactGP, NeuralSurrogate: outputs
standardised, which GP-BO's acquisitions work in) and ``CandidateSurrogate`` (TemporalGP: a posterior over a
fixed candidate set at any time). Algorithms check a built model against the protocol they need
(``isinstance(model, StandardizedSurrogate)``) instead of probing single methods.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # no torch import: surrogate_plot and the algorithms check models without loading more
    from torch import Tensor


@runtime_checkable
class Surrogate(Protocol):
    """A model of ``y = f(x)`` on ``[0, 1]^d`` with a Gaussian posterior.

    Shapes: ``X`` is ``n x d`` and ``y`` is ``n``; ``update`` takes one point (``x`` of shape ``d`` or
    ``1 x d``, ``y`` a scalar tensor); ``posterior`` of ``m x d`` inputs returns the mean and the variance,
    each of shape ``m``, in the units of ``y``.
    """

    @property
    def n(self) -> int:
        """How many observations the model holds."""
        ...

    def fit(self, X: Tensor, y: Tensor) -> None:
        """Replace the data with ``(X, y)`` and fit the model (hyperparameters where it learns them)."""
        ...

    def update(self, x: Tensor, y: Tensor) -> None:
        """Add one observation; incremental (a rank-one Cholesky extension) where the model allows."""
        ...

    def posterior(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """Posterior mean and variance at ``X`` (``m x d``), each of shape ``m``."""
        ...


@runtime_checkable
class StandardizedSurrogate(Surrogate, Protocol):
    """A surrogate that models standardised outputs ``(y - mean) / std`` (the exact GP, the network)."""

    def posterior(self, X: Tensor, standardized: bool = False) -> tuple[Tensor, Tensor]:
        """Mean and variance at ``X`` (``m x d``), each of shape ``m``: in ``y``'s units, or standardised."""
        ...

    def standardize(self, y: Tensor) -> Tensor:
        """``y`` (any shape) in the standardised units the model works in."""
        ...


@runtime_checkable
class CandidateSurrogate(Surrogate, Protocol):
    """A surrogate over a finite candidate set that it can predict at once (the time-varying GP).

    Its beliefs are about ``f_t``: ``posterior(X, t)`` and ``candidate_posterior(t)`` take the round ``t``.
    """

    config: Any  # its settings; TV-GP-UCB reads ``config.kernel`` (identity: independent arms)

    def set_candidates(self, C: Tensor | None) -> None:
        """Fix the candidate set ``C`` (``m x d``) that ``candidate_posterior`` predicts at (None: no set)."""
        ...

    def posterior(self, X: Tensor, t: float | None = None) -> tuple[Tensor, Tensor]:
        """Mean and variance of ``f_t`` at ``X`` (``m x d``), each of shape ``m``."""
        ...

    def candidate_posterior(self, t: float | None = None) -> tuple[Tensor, Tensor]:
        """Mean and variance at every candidate (at time ``t``), each of shape ``m``."""
        ...
