"""Standard two-objective test problems with known Pareto fronts: ZDT1, ZDT2, ZDT3 (Zitzler, Deb, Thiele 2000) and
DTLZ2 (Deb, Thiele, Laumanns, Zitzler 2002) with two objectives, on ``[0, 1]^d``, both objectives minimised.

By formula (a few lines each; pymoo has them but would add a compiled dependency, BoTorch's are an optional extra).
Each task reports its named values ``{"f1", "f2"}``; ``value`` is ``f1``. The hypervolume reference point is
BoTorch's for these problems: ``(11, 11)`` for ZDT, ``(1.1, 1.1)`` for DTLZ2; each task reports the hypervolume of
its true front against it (tag ``task.hypervolume``), so hypervolume regret is ``task.hypervolume - hypervolume``.

Fronts (``g = 1`` on the optimal set): ZDT1 ``f2 = 1 - sqrt(f1)``; ZDT2 ``f2 = 1 - f1^2``; ZDT3 ``f2 = 1 - sqrt(f1) -
f1 sin(10 pi f1)`` restricted to its non-dominated pieces; DTLZ2 the quarter of the unit circle.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from hpoflow.core.objectives import Objectives
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Float, SearchSpace
from hpoflow.tasks.base import Task, unobserved

ZDT_REFERENCE = (11.0, 11.0)
DTLZ2_REFERENCE = (1.1, 1.1)
# Hypervolume of the true front against the reference point: ZDT1 = 121 - int_0^1 (1 - sqrt f) df - ... = 120 + 2/3,
# ZDT2 = 120 + 1/3 (closed forms), ZDT3 from its front (BoTorch's ZDT3._max_hv), DTLZ2 = 1.1^2 - pi/4.
MAX_HYPERVOLUME = {"zdt1": 120.0 + 2.0 / 3.0, "zdt2": 120.0 + 1.0 / 3.0, "zdt3": 128.77811613069076,
                   "dtlz2": 1.1**2 - math.pi / 4}


def _g_zdt(x: np.ndarray) -> float:
    return float(1.0 + 9.0 * np.sum(x[1:]) / (len(x) - 1))


def zdt1(x: np.ndarray) -> tuple[float, float]:
    f1, g = float(x[0]), _g_zdt(x)
    return f1, g * (1.0 - math.sqrt(f1 / g))


def zdt2(x: np.ndarray) -> tuple[float, float]:
    f1, g = float(x[0]), _g_zdt(x)
    return f1, g * (1.0 - (f1 / g) ** 2)


def zdt3(x: np.ndarray) -> tuple[float, float]:
    f1, g = float(x[0]), _g_zdt(x)
    return f1, g * (1.0 - math.sqrt(f1 / g) - f1 / g * math.sin(10.0 * math.pi * f1))


def dtlz2(x: np.ndarray) -> tuple[float, float]:
    """Two objectives: ``x[0]`` is the position on the front, ``x[1:]`` the distance ``g`` from it."""
    g = float(np.sum((x[1:] - 0.5) ** 2))
    angle = float(x[0]) * math.pi / 2
    return (1.0 + g) * math.cos(angle), (1.0 + g) * math.sin(angle)


PROBLEMS: dict[str, tuple[Callable[[np.ndarray], tuple[float, float]], tuple[float, float]]] = {
    "zdt1": (zdt1, ZDT_REFERENCE), "zdt2": (zdt2, ZDT_REFERENCE), "zdt3": (zdt3, ZDT_REFERENCE),
    "dtlz2": (dtlz2, DTLZ2_REFERENCE)}


class MultiObjectiveFunction(Task):
    """A two-objective closed-form problem on ``[0, 1]^dim``; ``values = {"f1", "f2"}``, ``value = f1``."""

    def __init__(self, name: str, dim: int) -> None:
        if name not in PROBLEMS:
            raise ValueError(f"task.name='{name}' is unknown; allowed: {', '.join(PROBLEMS)}")
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 2:
            raise ValueError(f"task.dim={dim!r} must be an integer >= 2 (one position and one distance variable)")
        self.name, self.direction = name, Direction.MINIMIZE
        self.fn, reference = PROBLEMS[name]
        self.space = SearchSpace(tuple(Float(f"x{i}", 0.0, 1.0) for i in range(dim)))
        self.objectives = Objectives({"f1": "min", "f2": "min"}, {}, reference)

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        if not observe:
            return unobserved()
        f1, f2 = self.fn(np.array([config[n] for n in self.space.names], dtype=float))
        return Evaluation(value=f1, values={"f1": f1, "f2": f2})

    def reference_values(self) -> dict[str, float]:
        """The true front's hypervolume and the reference point it is measured against (tags ``task.*``)."""
        assert self.objectives is not None and self.objectives.reference is not None
        ref = self.objectives.reference
        return {"hypervolume": MAX_HYPERVOLUME[self.name], "reference_f1": ref[0], "reference_f2": ref[1]}


def make_multi_objective(name: str = "zdt1", dim: int = 30, **_: object) -> MultiObjectiveFunction:
    return MultiObjectiveFunction(name, dim)
