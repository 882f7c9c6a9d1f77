"""A user's own task and algorithm, plugged into hpoflow from a config folder with ``_target_``."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Float, SearchSpace
from hpoflow.tasks.base import Task


class Quadratic(Task):
    """f(x) = sum_i (x_i - centre)^2 on [-1, 1]^dim, minimised; f* = 0."""

    name = "quadratic"
    direction = Direction.MINIMIZE
    optimum = 0.0

    def __init__(self, dim: int = 3, centre: float = 0.3, seed: int = 0) -> None:
        self.space = SearchSpace(tuple(Float(f"x{i}", -1.0, 1.0) for i in range(dim)))
        self.centre = centre

    def evaluate(self, config, *, round, observe=True):
        value = sum((v - self.centre) ** 2 for v in config.values())
        return Evaluation(value=value, true_value=value)


class CoordinateSearch(AskTellAlgorithm):
    """Perturb the best point found so far along one random coordinate."""

    @dataclass(frozen=True)
    class Config:
        step: float = 0.25

    def __init__(self, config: Config, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        self.step, self.generator = config.step, ctx.generator(1)
        self.best_x = torch.full((ctx.task.space.dim,), 0.5, dtype=torch.float64)
        self.best = float("inf")
        self.sign = ctx.task.direction.sign

    def ask(self, round):
        x = self.best_x.clone()
        i = int(torch.randint(x.numel(), (1,), generator=self.generator))
        x[i] = (x[i] + self.step * torch.randn((), generator=self.generator, dtype=x.dtype)).clamp(0, 1)
        from hpoflow.core.records import Suggestion

        return Suggestion(self.task.space.decode(x), x)

    def tell(self, suggestion, outcome):
        if isinstance(outcome, Evaluation) and -self.sign * outcome.value < self.best:
            self.best, self.best_x = -self.sign * outcome.value, suggestion.x
