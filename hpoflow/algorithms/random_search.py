"""Baselines that ignore what they observe: uniform random search and grid search."""
from __future__ import annotations

import math
import random

import torch

from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.algorithms.configs import GridConfig, RandomConfig
from hpoflow.core.records import Evaluation, Failure, Suggestion


class RandomSearch(AskTellAlgorithm):
    """Uniform sampling of the unit cube (or of the task's finite candidate set)."""

    name = "random"

    def __init__(self, config: RandomConfig, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        self.generator, self.dtype = ctx.generator(11), ctx.dtype

    def ask(self, round: int) -> Suggestion:
        cands = self.task.candidates
        if cands is not None:
            x = cands[int(torch.randint(cands.shape[0], (1,), generator=self.generator))]
        else:
            x = self.task.space.sample(1, self.generator, self.dtype)[0]
        return Suggestion(self.task.space.decode(x), x)

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        pass


class GridSearch(AskTellAlgorithm):
    """Full factorial grid of cell centres, indexed lazily; wraps around when the budget exceeds it."""

    name = "grid"

    def __init__(self, config: GridConfig, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        space, self.dtype = ctx.task.space, ctx.dtype
        k = config.points_per_dim
        if k is None:
            k = max(2, math.floor(ctx.rounds ** (1 / space.dim) + 1e-9))
        self.candidates = ctx.task.candidates
        self.axes = [p.grid(k) for p in space.parameters]
        self.size = self.candidates.shape[0] if self.candidates is not None else math.prod(len(a) for a in self.axes)
        n = min(self.size, max(ctx.rounds, 1))
        if config.shuffle:  # distinct random cells; range.sample never materialises a huge grid
            self.order = random.Random(ctx.seed * 1_000_003 + 13).sample(range(self.size), n)
        else:
            self.order = list(range(n))

    def _point(self, index: int) -> torch.Tensor:
        if self.candidates is not None:
            return self.candidates[index]
        coords = []
        for axis in reversed(self.axes):
            index, r = divmod(index, len(axis))
            coords.append(axis[r])
        return torch.tensor(coords[::-1], dtype=self.dtype)

    def ask(self, round: int) -> Suggestion:
        x = self._point(self.order[(round - 1) % len(self.order)])
        return Suggestion(self.task.space.decode(x), x)

    def tell(self, suggestion: Suggestion, outcome: Evaluation | Failure) -> None:
        pass

