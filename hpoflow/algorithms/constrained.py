"""Constrained acquisition for our GP methods: one GP per constraint and the probability of feasibility.

Each constraint value of the task's spec (``{"mem_mb": ("<=", 512)}``) gets its own GP from the same surrogate
factory as the objective's. A point's probability of feasibility is the product over the constraints of
``P(c_j(x) op_j b_j)`` (independent GPs, Gardner et al. 2014; Schonlau et al. 1998); GP-EI/PI multiply their
improvement by it (log EI + log PoF) over the best *feasible* observation, and before any feasible observation they
maximise the probability of feasibility alone.

The bound is compared in the GP's own standardised units (``model.standardize(bound)``): the output transform is
monotone increasing (Yeo-Johnson, or none), so ``P(c <= b) = P(z <= standardize(b))`` exactly.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor

from hpoflow.acquisition.functions import log_probability_of_feasibility
from hpoflow.core.objectives import Objectives


class ConstraintModels:
    """The constraint values seen at each observed point, one GP per constraint, and their log PoF.

    Rows are aligned with the algorithm's observed points ``X`` (``n x d``): a failed evaluation's row is None (it
    is left out of every constraint GP and counts as infeasible).
    """

    def __init__(self, spec: Objectives, make_model: Callable[[], Any], dtype: torch.dtype) -> None:
        self.spec, self.dtype = spec, dtype
        self.names = list(spec.constraints)
        self.models = [make_model() for _ in self.names]
        self.rows: list[dict[str, float] | None] = []

    def observe(self, values: Mapping[str, float] | None) -> None:
        """One more observed point's values (None: the evaluation failed)."""
        self.rows.append(None if values is None else {n: float(values[n]) for n in self.names if n in values})

    def feasible(self) -> list[bool]:
        """Whether each observed point satisfied every constraint (a failed one did not)."""
        return [row is not None and self.spec.feasible(row) for row in self.rows]

    def fit(self, X: Tensor) -> None:
        """Refit every constraint's GP on the points (``n x d``) where that value is finite."""
        for name, model in zip(self.names, self.models):
            keep = [i for i, row in enumerate(self.rows)
                    if row is not None and name in row and math.isfinite(row[name])]
            if len(keep) >= 2:
                model.fit(X[keep], torch.tensor([self.rows[i][name] for i in keep], dtype=self.dtype))  # type: ignore[index]

    def log_pof(self, X: Tensor) -> Tensor:
        """log P(every constraint holds at ``X``) (``m x d`` -> ``m``), the sum over the independent GPs (a GP with
        fewer than two observations adds nothing)."""
        total = torch.zeros(X.shape[0], dtype=self.dtype)
        for name, model in zip(self.names, self.models):
            if model.n < 2:
                continue
            op, bound = self.spec.constraints[name]
            mean, var = model.posterior(X, standardized=True)
            b = model.standardize(torch.tensor(bound, dtype=self.dtype))
            total = total + log_probability_of_feasibility(mean, var, op, b)
        return total
