"""ParEGO (Knowles, IEEE TEC 2006) on our GP-EI: several objectives through one random scalarisation per round.

Each round after the initial design draws weights ``lambda`` uniformly on the simplex, normalises every objective
(minimisation form) to ``[0, 1]`` by the range observed so far, scalarises each observed point as
``max_j lambda_j f_j + rho * sum_j lambda_j f_j`` (augmented Chebyshev: every Pareto-optimal point is the minimiser of
some weights, also on non-convex fronts), refits the GP on the negated scalar and maximises log-EI as GP-EI does.
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.gp_bo import GPEI
from hpoflow.algorithms.parego_config import ParEGOConfig
from hpoflow.core.records import Evaluation, Failure, Suggestion


def chebyshev(F: Tensor, weights: Tensor, rho: float) -> Tensor:
    """Augmented Chebyshev scalarisation of ``F`` (``n x m``, minimised, normalised) with ``weights`` (``m``): ``n``."""
    weighted = F * weights
    return weighted.max(dim=-1).values + rho * weighted.sum(dim=-1)


def normalise(F: Tensor) -> Tensor:
    """Each column of ``F`` (``n x m``) scaled to ``[0, 1]`` by its observed range (a constant column: 0)."""
    low, high = F.min(dim=0).values, F.max(dim=0).values
    return (F - low) / torch.where(high > low, high - low, torch.ones_like(high))


class ParEGO(GPEI):
    """GP-EI on a fresh random augmented-Chebyshev scalarisation of the task's objectives each round."""

    name = "parego"
    config: ParEGOConfig
    pending_rule = None  # type: ignore[assignment]  # rescalarised each round: no pending points (yet)
    pending_refusal = "it rescalarises every round"
    uses_fantasies = False

    def __init__(self, config: ParEGOConfig, ctx: BuildContext) -> None:
        if ctx.task.objectives is None:
            raise ValueError(f"algo=parego needs a task with several objectives; task '{ctx.task.name}' has one: use "
                             "algo=gp_ei, or a multi-objective task (task=zdt1|zdt2|zdt3|dtlz2, objectives=...)")
        super().__init__(config, ctx)
        self.objectives = ctx.task.objectives
        self.F: list[tuple[float, ...] | None] = []  # per observed point (aligned with self.X): minimised objectives
        self.weights: Tensor | None = None

    def ask(self, round: int) -> Suggestion:
        if len(self.y) >= max(self.n_init, 2):
            self._rescalarise()
        suggestion = super().ask(round)
        if self.weights is not None and suggestion.info.get("phase") == 1.0:
            suggestion.info.update({f"weight_{i}": float(w) for i, w in enumerate(self.weights)})
        return suggestion

    def _rescalarise(self) -> None:
        """Draw new weights, rescalarise every observation and refit the GP on them."""
        m = len(self.objectives.names)
        e = -torch.log(torch.rand(m, generator=self.generator, dtype=self.dtype).clamp_min(1e-12))
        self.weights = e / e.sum()  # uniform on the simplex (Dirichlet(1, ..., 1))
        ok = [i for i, f in enumerate(self.F) if f is not None]
        if not ok:
            return
        F = torch.tensor([self.F[i] for i in ok], dtype=self.dtype)
        reward = -chebyshev(normalise(F), self.weights, self.config.rho)
        y = torch.full((len(self.F),), float(reward.min()), dtype=self.dtype)  # a failure: the worst reward
        y[ok] = reward
        self.y = y.tolist()
        self._refit()

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        if not suggestion.observe:
            return
        failed = isinstance(outcome, Failure) or not math.isfinite(outcome.value)
        if failed and not self.y:
            super().tell(suggestion, outcome)  # GP-EI keeps no point for a failure before any observation
            return
        point = None
        if not failed:
            assert isinstance(outcome, Evaluation)
            f = self.objectives.minimised(outcome.values)
            point = f if all(math.isfinite(v) for v in f) else None
        self.F.append(point)
        super().tell(suggestion, outcome)  # the first objective for now; the next ask rescalarises everything
