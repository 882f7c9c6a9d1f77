"""Baselines that ignore what they observe: uniform random search and grid search."""
from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING

from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.algorithms.configs import GridConfig, RandomConfig
from hpoflow.core.records import Evaluation, Failure, PlainSuggestion, Suggestion

if TYPE_CHECKING:
    import torch


class TorchCompatibleRandom:
    """The float64 stream of ``torch.rand(..., generator=torch.Generator().manual_seed(seed))`` without torch.

    torch's CPU generator is MT19937 seeded by the reference ``init_genrand(seed mod 2^32)``; a float64 takes two
    32-bit outputs ``(hi << 32) | lo`` and keeps the low 53 bits, times 2^-53. Python's own ``random.Random`` is
    the same MT19937, so its state is set to that seeding and read 32 bits at a time: random search on a
    continuous space gives bit for bit the points it gave with torch (tests/test_library_start.py checks it)
    and a run that needs no tensors never imports torch (1-2 s). Hand-written: no library reproduces torch's
    stream.
    """

    def __init__(self, seed: int) -> None:
        mt = [seed & 0xFFFFFFFF]
        for j in range(1, 624):
            mt.append((1812433253 * (mt[-1] ^ (mt[-1] >> 30)) + j) & 0xFFFFFFFF)
        self._mt = random.Random()
        self._mt.setstate((3, (*mt, 624), None))  # index 624: the next draw regenerates the state, as torch's
        self.drawn = 0

    def rand(self, n: int) -> list[float]:
        """``n`` uniform floats in ``[0, 1)``: torch.rand(n, dtype=float64)'s values."""
        bits = self._mt.getrandbits
        self.drawn += n
        return [((bits(32) << 32 | bits(32)) & (2**53 - 1)) * 2.0**-53 for _ in range(n)]


class RandomSearch(AskTellAlgorithm):
    """Uniform sampling of the unit cube (or of the task's finite candidate set)."""

    name = "random"
    pending_rule = "independent"  # its points ignore the history: pending ones change nothing

    def __init__(self, config: RandomConfig, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        self.ctx = ctx
        # float64 points without torch on a continuous space (the same values as torch's generator would give)
        self.plain = ctx.task.candidates is None and ctx.dtype_name == "float64"
        self.stream = TorchCompatibleRandom(ctx.generator_seed(11)) if self.plain else None
        self._generator: torch.Generator | None = None

    @property
    def generator(self) -> torch.Generator:
        """The torch generator of the draws (``state_dict``, reseeding: subclasses use it). Read once, it takes
        over from the torch-free stream, advanced past what that stream drew: the draws go on unchanged."""
        if self._generator is None:
            import torch

            self._generator = self.ctx.generator(11)
            if self.stream is not None and self.stream.drawn:
                torch.rand(self.stream.drawn, generator=self._generator, dtype=torch.float64)
            self.stream = None
        return self._generator

    @property
    def dtype(self) -> torch.dtype:
        return self.ctx.dtype

    def ask(self, round: int) -> Suggestion:
        if self.stream is not None:
            u = self.stream.rand(self.task.space.dim)
            return PlainSuggestion(self.task.space.decode(u), u)
        import torch

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
    pending_rule = "independent"  # each round has its own cell: trials asked together are distinct cells

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
        import torch

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

