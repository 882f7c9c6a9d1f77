"""A constrained single-objective test problem whose unconstrained optimum is infeasible: Gramacy et al.'s toy.

Gramacy, Gray, Le Digabel, Lee, Ranjan, Wells, Wild (2016), "Modeling an augmented Lagrangian for blackbox
constrained optimization", Technometrics 58(1), Sec. 4.1: on ``[0, 1]^2`` minimise ``f = x1 + x2`` subject to

    c1 = 1.5 - x1 - 2 x2 - 0.5 sin(2 pi (x1^2 - 2 x2)) <= 0,    c2 = x1^2 + x2^2 - 1.5 <= 0.

The unconstrained minimum ``(0, 0)`` violates ``c1``; the feasible region is disconnected and its best point is
``x ~ (0.1951, 0.4047)``, ``f* = 0.59979`` (the paper's 0.5998; SLSQP from 300 starts, tested in
tests/tasks/test_constrained_task.py). The task returns ``{"f", "c1", "c2"}`` as named values and declares the two
constraints in its ``objectives``; ``value`` is ``f``. Its tag ``task.constrained_optimum`` is ``f*``.
"""
from __future__ import annotations

import math
from typing import Any

from hpoflow.core.objectives import Objectives
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Float, SearchSpace
from hpoflow.tasks.base import Task, unobserved

GRAMACY_OPTIMUM = 0.5997880520077804  # f at the best feasible point (0.195123, 0.404665)
GRAMACY_ARGMIN = (0.19512269, 0.40466536)


def gramacy(x1: float, x2: float) -> dict[str, float]:
    """The objective and both constraint values at ``(x1, x2)``."""
    c1 = 1.5 - x1 - 2.0 * x2 - 0.5 * math.sin(2.0 * math.pi * (x1 * x1 - 2.0 * x2))
    return {"f": x1 + x2, "c1": c1, "c2": x1 * x1 + x2 * x2 - 1.5}


class GramacyToy(Task):
    """``task=gramacy``: minimise ``f`` subject to ``c1 <= 0`` and ``c2 <= 0`` on ``[0, 1]^2``."""

    name = "gramacy"
    direction = Direction.MINIMIZE

    def __init__(self) -> None:
        self.space = SearchSpace((Float("x1", 0.0, 1.0), Float("x2", 0.0, 1.0)))
        self.objectives = Objectives({"f": "min"}, {"c1": ("<=", 0.0), "c2": ("<=", 0.0)})

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        if not observe:
            return unobserved()
        values = gramacy(float(config["x1"]), float(config["x2"]))
        return Evaluation(value=values["f"], values=values)

    def reference_values(self) -> dict[str, float]:
        return {"constrained_optimum": GRAMACY_OPTIMUM}


def make_gramacy(**_: object) -> GramacyToy:
    return GramacyToy()
