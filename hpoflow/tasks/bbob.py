"""COCO's noiseless BBOB functions (24 functions x instances x dimensions), from ``cocoex`` (coco-experiment).

The functions are COCO's own C implementation (``cocoex.BareProblem``: no observer, nothing written to disk);
f* comes from the problem, so regret is exact. Values are checked against IOHprofiler's implementation in
``tests/tasks/test_bbob.py``. Search domain: COCO's [-5, 5]^dim; minimise.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Float, SearchSpace
from hpoflow.tasks.base import Task, unobserved
from hpoflow.tasks.configs import BBOBConfig

LOW, HIGH = -5.0, 5.0


class BBOBTask(Task):
    """``bbob_f{function}_i{instance}_d{dim}``: one COCO problem; ``values`` evaluates many points at once."""

    name = "bbob"
    direction = Direction.MINIMIZE

    def __init__(self, function: int = 1, instance: int = 1, dim: int = 5, noise_std: float = 0.0,
                 seed: int = 0) -> None:
        BBOBConfig(function=function, instance=instance, dim=dim, noise_std=noise_std)  # validates the ranges
        import cocoex

        self.problem = cocoex.BareProblem("bbob", function, dim, instance)
        self.function, self.instance, self.noise_std = function, instance, noise_std
        self.optimum = float(self.problem.best_value())
        self.space = SearchSpace(tuple(Float(f"x{i}", LOW, HIGH) for i in range(dim)))
        self._rng = np.random.default_rng(seed + 7919)

    def values(self, X: np.ndarray) -> np.ndarray:
        """Noise-free values of ``n`` points (shape ``n x dim`` -> ``n``), vectorised by cocoex."""
        return np.asarray(self.problem(np.atleast_2d(np.asarray(X, dtype=np.float64))), dtype=np.float64)

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        f = float(self.values(np.array([[config[n] for n in self.space.names]]))[0])
        if not observe:
            return unobserved(true_value=f)
        noise = self.noise_std * self._rng.standard_normal() if self.noise_std > 0 else 0.0
        return Evaluation(value=f + noise, true_value=f, cost=1.0)


def make_bbob(function: int = 1, instance: int = 1, dim: int = 5, noise_std: float = 0.0, seed: int = 0,
              **_: object) -> BBOBTask:
    return BBOBTask(function, instance, dim, noise_std, seed)
