"""GO-UCB's Step 5 solver, one routine for both variants: projected gradient ascent from several starts at once,
keeping the best point each start visits (ball variant; stopped once no start has improved for ``patience`` steps)
or the final iterates (bonus variant).

Why the stall stop: on the benchmark tasks (issue 20) the best value of every start stops rising after 0-46 of
the 100 default steps (most Phase II rounds: after 0-2, the start itself is the best point its ascent visits), so
the remaining steps cost time and change nothing. The stop only ends an ascent whose recorded best points can no
longer change unless a start improves again after ``patience`` non-improving steps.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from hpoflow.surrogates.parametric import ParametricModel
from hpoflow.surrogates.steppers import Stepper

# objective(params) -> (values (k), gradients): the values of the k starts and a function that returns the
# gradients of -values.sum() with respect to each parameter tensor (called only when a step is taken)
Objective = Callable[[list[Tensor]], tuple[Tensor, Callable[[], list[Tensor]]]]


def projected_ascent(objective: Objective, starts: list[Tensor], rates: list[float],
                     projections: list[Callable[[Tensor], None]], steps: int, optimizer: str = "adam",
                     patience: int = 0, keep: str = "best") -> tuple[list[Tensor], Tensor, int]:
    """Maximise ``objective`` over the parameter tensors ``starts`` (each ``k x ...``, row ``i`` = start ``i``).

    Each step is a ``Stepper`` step (``optimizer``: adam | sgd, one rate per tensor) followed by the in-place
    ``projections`` (one per tensor, e.g. onto a box or a ball). ``keep``: ``best`` returns the best point each
    start visited and its value; ``patience > 0`` then stops after ``patience`` evaluations in a row in which no
    start beat its best value (0 runs all ``steps``). ``last`` returns the final iterates and their values
    (evaluated without a graph; ``patience`` does not apply).

    Returns the points (one ``k x ...`` tensor per parameter), their values (``k``) and the steps taken.
    """
    if keep not in ("best", "last"):
        raise ValueError(f"keep='{keep}' is unknown; allowed: best, last")
    params = [s.detach().clone() for s in starts]
    stepper = Stepper(optimizer, list(zip(params, rates)))
    best = [p.clone() for p in params]
    best_v = torch.full((params[0].shape[0],), -math.inf, dtype=params[0].dtype, device=params[0].device)
    stalled = 0
    for step in range(steps + 1):
        if keep == "last" and step == steps:
            with torch.no_grad():
                values, _ = objective(params)
            return [p.detach() for p in params], values, step
        values, gradients = objective(params)
        if keep == "best":
            with torch.no_grad():
                better = values > best_v
                best_v = torch.where(better, values, best_v)
                best = [torch.where(better.reshape(-1, *[1] * (p.dim() - 1)), p, b) for p, b in zip(params, best)]
            stalled = 0 if bool(better.any()) else stalled + 1
            if step == steps or (patience and stalled >= patience):
                break
        stepper.step(gradients())
        with torch.no_grad():
            for p, project in zip(params, projections):
                project(p)
    return best, best_v, step


def onto_box(lo: Tensor, hi: Tensor) -> Callable[[Tensor], None]:
    """In-place projection of the rows of a ``k x d`` tensor onto the box ``[lo, hi]`` (``d`` each)."""
    def project(X: Tensor) -> None:
        X.copy_(torch.minimum(torch.maximum(X, lo), hi))
    return project


def onto_unit_ball(Z: Tensor) -> None:
    """In-place projection of each row of ``Z`` onto the unit ball (a radial rescaling of rows outside it)."""
    Z.div_(torch.linalg.norm(Z, dim=1, keepdim=True).clamp_min(1.0))


def x_objective(acquisition: Callable[[Tensor], Tensor]) -> Objective:
    """The objective over ``params = [X]`` (``k x d``) of an acquisition differentiable in its input rows."""
    def objective(params: list[Tensor]) -> tuple[Tensor, Callable[[], list[Tensor]]]:
        X = params[0].requires_grad_(True)
        values = acquisition(X)
        return values.detach(), lambda: list(torch.autograd.grad(-values.sum(), X))
    return objective


def whitened_objective(model: ParametricModel, w_hat: Tensor, whiten: Callable[[Tensor], Tensor],
                       root: float) -> Objective:
    """Step 5's objective over ``params = [X, Z]`` (``k x d``, ``k x d_w``): ``f_{x_i}(w_hat + root A z_i)``.

    ``whiten(M) = M A`` for a symmetric ``A`` with ``A A = Sigma^{-1}`` (rows of ``M``: ``k x d_w``; see
    ``go_ucb_ellipsoid``). Autograd differentiates the net with respect to ``x`` and ``w`` only; the chain rule
    through the whitening is one more ``whiten``, ``grad_z = root A^T grad_w = root grad_w A`` (tested against
    autograd through ``whiten``).
    """
    def objective(params: list[Tensor]) -> tuple[Tensor, Callable[[], list[Tensor]]]:
        X = params[0].requires_grad_(True)
        W = (w_hat + root * whiten(params[1])).requires_grad_(True)
        values = model.value_pairs(W, X)

        def gradients() -> list[Tensor]:
            gX, gW = torch.autograd.grad(-values.sum(), (X, W))
            return [gX, whiten(gW * root)]
        return values.detach(), gradients
    return objective
