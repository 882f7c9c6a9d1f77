"""Synthetic test functions with known optima (noise-free value is the regret reference)."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Float, SearchSpace
from hpoflow.tasks.base import Task, unobserved


def branin(x: np.ndarray) -> float:
    x1, x2 = x
    b, c, r, s, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 6.0, 10.0, 1 / (8 * math.pi)
    return float((x2 - b * x1**2 + c * x1 - r) ** 2 + s * (1 - t) * math.cos(x1) + s)


def styblinski_tang(x: np.ndarray) -> float:
    return float(0.5 * np.sum(x**4 - 16 * x**2 + 5 * x))


def rastrigin(x: np.ndarray) -> float:
    return float(10 * len(x) + np.sum(x**2 - 10 * np.cos(2 * math.pi * x)))


_HARTMANN6_A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
                         [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
_HARTMANN6_P = 1e-4 * np.array([[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
                                [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]])
_HARTMANN6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann6(x: np.ndarray) -> float:
    inner = np.sum(_HARTMANN6_A * (x[None, :] - _HARTMANN6_P) ** 2, axis=1)
    return float(-np.sum(_HARTMANN6_ALPHA * np.exp(-inner)))


def go_ucb_f1(x: np.ndarray, hidden: int = 25) -> float:
    """The realizable network of GO-UCB (SPEC §4): linear2(sigmoid(linear1(x))), every weight and bias 1."""
    return float(hidden / (1 + math.exp(-(np.sum(x) + 1))) + 1)


class SyntheticTask(Task):
    """A closed-form function on a box, with optional Gaussian observation noise."""

    def __init__(self, name: str, fn: Callable[[np.ndarray], float], bounds: list[tuple[float, float]],
                 direction: Direction, optimum: float, noise_std: float = 0.0, seed: int = 0) -> None:
        if noise_std < 0:
            raise ValueError(f"task.noise_std={noise_std} must be >= 0")
        self.name, self.fn, self.direction, self.optimum = name, fn, direction, optimum
        self.space = SearchSpace(tuple(Float(f"x{i}", lo, hi) for i, (lo, hi) in enumerate(bounds)))
        self.noise_std = noise_std
        self._rng = np.random.default_rng(seed + 7919)

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        x = np.array([config[n] for n in self.space.names], dtype=float)
        f = self.fn(x)
        if not observe:
            return unobserved(true_value=f)
        noise = self.noise_std * self._rng.standard_normal() if self.noise_std > 0 else 0.0
        return Evaluation(value=f + noise, true_value=f, cost=1.0)


def _check_dim(dim: int) -> None:
    if dim < 1:
        raise ValueError(f"task.dim={dim} must be >= 1")


def make_branin(noise_std: float = 0.0, seed: int = 0, **_: object) -> SyntheticTask:
    return SyntheticTask("branin", branin, [(-5.0, 10.0), (0.0, 15.0)], Direction.MINIMIZE,
                         0.39788735772973816, noise_std, seed)


def _separable_min(g: Callable[[np.ndarray], np.ndarray], low: float, high: float) -> float:
    """Minimum of a 1-d function on [low, high]: dense grid, then bounded refinement (scipy)."""
    from scipy.optimize import minimize_scalar

    grid = np.linspace(low, high, 20001)
    i = int(np.argmin(g(grid)))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    res = minimize_scalar(lambda v: float(g(np.array([v]))[0]), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-12})
    return float(min(res.fun, g(grid[i:i + 1])[0]))


def _box(low: float | None, high: float | None) -> tuple[float, float]:
    low, high = (-5.0 if low is None else low), (5.0 if high is None else high)
    if not low < high:
        raise ValueError(f"task.low={low} must be < task.high={high}")
    return low, high


def make_styblinski_tang(dim: int = 20, noise_std: float = 0.0, seed: int = 0, low: float | None = None,
                         high: float | None = None, **_: object) -> SyntheticTask:
    _check_dim(dim)
    lo, hi = _box(low, high)
    f_star = dim * _separable_min(lambda v: 0.5 * (v**4 - 16 * v**2 + 5 * v), lo, hi)
    return SyntheticTask("styblinski_tang", styblinski_tang, [(lo, hi)] * dim, Direction.MINIMIZE, f_star,
                         noise_std, seed)


def make_rastrigin(dim: int = 20, noise_std: float = 0.0, seed: int = 0, low: float | None = None,
                   high: float | None = None, **_: object) -> SyntheticTask:
    _check_dim(dim)
    lo, hi = _box(low, high)
    f_star = dim * _separable_min(lambda v: 10 + v**2 - 10 * np.cos(2 * math.pi * v), lo, hi)
    return SyntheticTask("rastrigin", rastrigin, [(lo, hi)] * dim, Direction.MINIMIZE, f_star, noise_std, seed)


def make_hartmann6(noise_std: float = 0.0, seed: int = 0, **_: object) -> SyntheticTask:
    return SyntheticTask("hartmann6", hartmann6, [(0.0, 1.0)] * 6, Direction.MINIMIZE, -3.322368011415515,
                         noise_std, seed)


def make_go_ucb_f1(dim: int = 20, noise_std: float = 0.0, seed: int = 0, low: float | None = None,
                   high: float | None = None, **_: object) -> SyntheticTask:
    _check_dim(dim)
    lo, hi = _box(low, high)
    return SyntheticTask("go_ucb_f1", go_ucb_f1, [(lo, hi)] * dim, Direction.MAXIMIZE,
                         go_ucb_f1(np.full(dim, hi)), noise_std, seed)
