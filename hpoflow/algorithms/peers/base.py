"""What every peer adapter shares: a library's proposal -> hpoflow Suggestion, and the loss it minimises."""
from __future__ import annotations

from typing import Any

from hpoflow.algorithms.base import AskTellAlgorithm, BuildContext
from hpoflow.core.records import Evaluation, Suggestion
from hpoflow.core.space import Float, Int


class PeerAlgorithm(AskTellAlgorithm):
    """Ask/tell adapter around a library that keeps its own history; one pending proposal at a time."""

    def __init__(self, ctx: BuildContext) -> None:
        super().__init__(ctx.task)
        self.space, self.dtype = ctx.task.space, ctx.dtype

    def suggestion(self, config: dict[str, Any]) -> Suggestion:
        """The library's proposal as plain Python values, with its encoded point (shape ``d``)."""
        plain = {}
        for p in self.space.parameters:
            v = config[p.name]
            v = v.item() if hasattr(v, "item") else v  # numpy scalars -> Python
            plain[p.name] = int(v) if isinstance(p, Int) else float(v) if isinstance(p, Float) else v
        return Suggestion(plain, self.space.encode(plain, self.dtype))

    def adopt(self, suggestion: Suggestion) -> Suggestion | None:
        """None: the library keeps its own object per running trial (an Optuna trial, a DEHB job, a SMAC trial
        info), which a checkpoint does not hold, so a trial running at the checkpoint is asked anew on resume."""
        return None

    def loss(self, evaluation: Evaluation) -> float:
        """The value as a loss (smaller is better) whatever the task's direction: Nevergrad minimises it,
        BoTorch maximises its negative."""
        return -self.task.direction.sign * float(evaluation.value)
