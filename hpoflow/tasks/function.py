"""A plain Python function (or a training loop the caller owns) as a task of the common loop."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import SearchSpace, describe_space
from hpoflow.tasks.base import Task

Objective = Callable[[dict[str, Any]], "float | Evaluation"]


class FunctionTask(Task):
    """``fn(config) -> float | Evaluation`` over ``space``; ``fn=None`` when the caller evaluates (``Study``).

    A float is the observed value (cost 1); an :class:`Evaluation` may add a noise-free value, a cost and
    metrics. Anything else, or an exception, is a failed evaluation (the loop's ``on_error`` policy applies).
    """

    def __init__(self, space: SearchSpace, fn: Objective | None = None, direction: Direction = Direction.MINIMIZE,
                 name: str | None = None, optimum: float | None = None) -> None:
        self.space, self.fn, self.direction, self.optimum = space, fn, Direction(direction), optimum
        fn_name = getattr(fn, "__name__", "") if fn is not None else ""
        self.name = name or (fn_name if fn_name.isidentifier() else "objective")

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        if not observe:
            return Evaluation(value=math.nan, cost=0.0)
        if self.fn is None:
            raise RuntimeError(f"task '{self.name}' is evaluated by its caller (Study.tell), not by the loop")
        return as_evaluation(self.fn(dict(config)))

    def description(self) -> dict[str, Any]:
        """What the run records as its ``task`` config: name, direction, space (and optimum when known)."""
        out: dict[str, Any] = {"name": self.name, "direction": self.direction.value,
                               "space": describe_space(self.space)}
        if self.optimum is not None:
            out["optimum"] = self.optimum
        return out


def as_evaluation(value: Any) -> Evaluation:
    """A float (or an int, a 0-d tensor / NumPy scalar) or an Evaluation, as an Evaluation.

    Raises:
        TypeError: anything else (a dict, a string, a tensor with several elements).
    """
    if isinstance(value, Evaluation):
        return value
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise TypeError(f"the objective returned {value!r}; expected a float or an Evaluation")
    try:
        return Evaluation(value=float(value))
    except (TypeError, ValueError):
        raise TypeError(f"the objective returned {type(value).__name__} {value!r:.80}; expected a float or an "
                        "Evaluation") from None
