"""A plain Python function (or a training loop the caller owns) as a task of the common loop."""
from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable
from typing import Any

from hpoflow.core.fidelity import Fidelity
from hpoflow.core.objectives import Objectives
from hpoflow.core.records import Direction, Evaluation, as_evaluation
from hpoflow.core.space import SearchSpace, describe_space
from hpoflow.tasks.base import Task

__all__ = ["FunctionTask", "Objective", "as_evaluation"]

Objective = Callable[[dict[str, Any]], "float | Evaluation"]


def takes_keyword(fn: Callable[..., Any], name: str) -> bool:
    """``fn`` can be called with the keyword ``name`` (a parameter of that name, or ``**kwargs``)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: let the call decide
        return True
    return any(p.kind is p.VAR_KEYWORD or (p.name == name and p.kind is not p.POSITIONAL_ONLY) for p in params)


class FunctionTask(Task):
    """``fn(config) -> float | Evaluation`` over ``space``; ``fn=None`` when the caller evaluates (``Study``).

    A float is the observed value (cost 1); an :class:`Evaluation` may add a noise-free value, a cost and
    metrics. Anything else, or an exception, is a failed evaluation (the loop's ``on_error`` policy applies).

    With a ``fidelity`` (``Fidelity("epochs", 1, 27)``) the function takes it as a keyword, ``fn(config,
    epochs=9)``, and trains from scratch to that level: a float then costs the level in fidelity units (an
    Evaluation's own ``cost`` is taken as it is). ``evaluate`` is the full fidelity's.

    With ``objectives`` (:class:`~hpoflow.core.objectives.Objectives`) ``fn`` returns a dict of named values: the
    Evaluation's ``values`` is that dict and its ``value`` the first objective in minimisation form (the direction
    is then MINIMIZE).
    """

    def __init__(self, space: SearchSpace, fn: Objective | None = None, direction: Direction = Direction.MINIMIZE,
                 name: str | None = None, optimum: float | None = None, fidelity: Fidelity | None = None,
                 objectives: Objectives | None = None) -> None:
        self.space, self.fn, self.direction, self.optimum = space, fn, Direction(direction), optimum
        self.objectives = objectives
        if objectives is not None:
            self.direction = Direction.MINIMIZE  # value = the first objective in minimisation form
        fn_name = getattr(fn, "__name__", "") if fn is not None else ""
        self.name = name or (fn_name if fn_name.isidentifier() else "objective")
        self.fidelity = fidelity
        if fn is not None and fidelity is not None and not takes_keyword(fn, fidelity.name):
            shown = fn_name if fn_name.isidentifier() else "fn"
            raise TypeError(f"the objective {shown} takes no keyword '{fidelity.name}' (the fidelity): define it as "
                            f"def {shown}(config, {fidelity.name}): ...")

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        if self.fidelity is not None:
            return self.evaluate_at(config, fidelity=self.fidelity.max, config_id=None, round=round, observe=observe)
        if not observe:
            return Evaluation(value=math.nan, cost=0.0)
        if self.fn is None:
            raise RuntimeError(f"task '{self.name}' is evaluated by its caller (Study.tell), not by the loop")
        out = self.fn(dict(config))
        return self.objectives.evaluation(out) if self.objectives is not None else as_evaluation(out)

    def evaluate_at(self, config: dict[str, Any], *, fidelity: float, config_id: int | None, round: int,
                    observe: bool = True) -> Evaluation:
        assert self.fidelity is not None, "evaluate_at needs a task with a fidelity"
        level = self.fidelity.check(fidelity)
        if not observe:
            return Evaluation(value=math.nan, cost=0.0, fidelity=level)
        if self.fn is None:
            raise RuntimeError(f"task '{self.name}' is evaluated by its caller (Study.tell), not by the loop")
        out = self.fn(dict(config), **{self.fidelity.name: level})
        if self.objectives is not None:
            ev = self.objectives.evaluation(out)
            if isinstance(out, Evaluation):
                return ev if ev.fidelity is not None else dataclasses.replace(ev, fidelity=level)
            return dataclasses.replace(ev, cost=float(level), fidelity=level, curve=[[float(level), ev.value]])
        if isinstance(out, Evaluation):
            return out if out.fidelity is not None else dataclasses.replace(out, fidelity=level)
        ev = as_evaluation(out)
        return dataclasses.replace(ev, cost=float(level), fidelity=level, curve=[[float(level), ev.value]])

    def description(self) -> dict[str, Any]:
        """What the run records as its ``task`` config: name, direction, space (and optimum when known)."""
        out: dict[str, Any] = {"name": self.name, "direction": self.direction.value,
                               "space": describe_space(self.space)}
        if self.optimum is not None:
            out["optimum"] = self.optimum
        if self.fidelity is not None:
            out["fidelity"] = self.fidelity.describe()
        if self.objectives is not None:
            out.update(self.objectives.describe())
        return out
