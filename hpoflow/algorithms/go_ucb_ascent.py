"""GO-UCB's Step 5 solver: projected gradient ascent from several starts at once, keeping the best point each
start visits, and stopping once no start has improved for ``patience`` steps.

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

from hpoflow.surrogates.steppers import Stepper

# objective(params) -> (values (k), gradients): the values of the k starts and a function that returns the
# gradients of -values.sum() with respect to each parameter tensor (called only when a step is taken)
Objective = Callable[[list[Tensor]], tuple[Tensor, Callable[[], list[Tensor]]]]


def projected_ascent(objective: Objective, starts: list[Tensor], rates: list[float],
                     projections: list[Callable[[Tensor], None]], steps: int, optimizer: str = "adam",
                     patience: int = 0) -> tuple[list[Tensor], Tensor, int]:
    """Maximise ``objective`` over the parameter tensors ``starts`` (each ``k x ...``, row ``i`` = start ``i``).

    Each step is a ``Stepper`` step (``optimizer``: adam | sgd, one rate per tensor) followed by the in-place
    ``projections`` (one per tensor, e.g. onto a box or a ball). ``patience > 0`` stops after ``patience``
    evaluations in a row in which no start beat its best value; 0 runs all ``steps``.

    Returns the best point each start visited (one ``k x ...`` tensor per parameter), its value (``k``) and
    the number of steps taken.
    """
    params = [s.detach().clone() for s in starts]
    stepper = Stepper(optimizer, list(zip(params, rates)))
    best = [p.clone() for p in params]
    best_v = torch.full((params[0].shape[0],), -math.inf, dtype=params[0].dtype, device=params[0].device)
    stalled = 0
    for step in range(steps + 1):
        values, gradients = objective(params)
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
