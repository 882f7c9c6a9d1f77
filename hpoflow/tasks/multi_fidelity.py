"""Synthetic multi-fidelity functions with known optima and a documented fidelity bias.

The augmented Branin and Hartmann-6 of the multi-fidelity BO literature (as BoTorch's ``AugmentedBranin`` and
``AugmentedHartmann``; Kandasamy et al., ICML 2017; Wu et al., UAI 2019): a fidelity ``s`` in ``[0, 1]`` shifts
one coefficient, and ``s = 1`` is the plain function with its known optimum.

- Branin: ``(x2 - (5.1/(4 pi^2) - 0.1 (1 - s)) x1^2 + 5/pi x1 - 6)^2 + 10 (1 - 1/(8 pi)) cos x1 + 10``.
- Hartmann-6: ``alpha_1 = 1 - 0.1 (1 - s)`` (the others 1.2, 3.0, 3.2).

Here the fidelity is a resource ``r`` in ``[1, max_resource]`` (integer, like epochs) with ``s = r / max_resource``,
and a configuration is *continued* when promoted, as a training run would be: an evaluation at ``r`` after the
same configuration reached ``r0`` costs ``r - r0`` units. The value is ``f(x, s)`` (biased below full fidelity);
``true_value`` is ``f(x, 1)``, what the configuration is worth at full fidelity, so regret measures that.
The trial states (the level each configuration reached) are :class:`~hpoflow.tasks.continuation.Continuable`'s,
mirrored beside a checkpoint like a training task's, so a run killed mid-bracket resumes with every unit counted once.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hpoflow.core.fidelity import Fidelity
from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Float, SearchSpace
from hpoflow.tasks.base import Task, unobserved
from hpoflow.tasks.continuation import Continuable
from hpoflow.tasks.synthetic import _HARTMANN6_A, _HARTMANN6_P
from hpoflow.tasks.trial_states import TrialStates

BRANIN_OPTIMUM = 0.39788735772973816
HARTMANN6_OPTIMUM = -3.322368011391339


def augmented_branin(x: np.ndarray, s: float) -> float:
    """Branin with fidelity ``s`` in [0, 1] (``s = 1``: Branin)."""
    x1, x2 = x
    b = 5.1 / (4 * math.pi**2) - 0.1 * (1 - s)
    return float((x2 - b * x1**2 + 5 / math.pi * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10)


def augmented_hartmann6(x: np.ndarray, s: float) -> float:
    """Hartmann-6 with fidelity ``s`` in [0, 1]: the first alpha is ``1 - 0.1 (1 - s)``."""
    alpha = np.array([1.0 - 0.1 * (1 - s), 1.2, 3.0, 3.2])
    inner = np.sum(_HARTMANN6_A * (x[None, :] - _HARTMANN6_P) ** 2, axis=1)
    return float(-np.sum(alpha * np.exp(-inner)))


@dataclass
class Reached:
    """A trial of a closed-form function: the resource it reached (all a continuation needs)."""

    level: float = 0.0


class MultiFidelityFunction(Continuable):
    """A closed-form ``f(x, s)`` on a box with a resource fidelity ``r`` (``s = r / max_resource``), minimised."""

    def __init__(self, name: str, fn: Callable[[np.ndarray, float], float], bounds: list[tuple[float, float]],
                 optimum: float, max_resource: int = 81, min_resource: int = 1, noise_std: float = 0.0,
                 seed: int = 0, sleep_per_unit: float = 0.0) -> None:
        self.name, self.fn, self.optimum, self.direction = name, fn, optimum, Direction.MINIMIZE
        self.space = SearchSpace(tuple(Float(f"x{i}", lo, hi) for i, (lo, hi) in enumerate(bounds)))
        self.fidelity = Fidelity("resource", min_resource, max_resource, integer=True)
        if noise_std < 0:
            raise ValueError(f"task.noise_std={noise_std} must be >= 0")
        self.noise_std, self.sleep_per_unit, self.seed = noise_std, sleep_per_unit, seed
        self._rng = np.random.default_rng(seed + 7919)  # the checkpoint saves and restores it (a task's ``_rng``)
        self.states = TrialStates()  # config id -> Kept(Reached): what a promotion continues from

    def _x(self, config: dict[str, Any]) -> np.ndarray:
        return np.array([config[n] for n in self.space.names], dtype=float)

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        return self.evaluate_at(config, fidelity=self.fidelity.max, config_id=None, round=round,  # type: ignore[union-attr]
                                observe=observe)

    def evaluate_at(self, config: dict[str, Any], *, fidelity: float, config_id: int | None, round: int,
                    observe: bool = True) -> Evaluation:
        assert self.fidelity is not None
        self.fidelity.check(fidelity)
        truth = self.fn(self._x(config), 1.0)
        if not observe:
            return unobserved(true_value=truth)
        return replace(super().evaluate_at(config, fidelity=fidelity, config_id=config_id, round=round),
                       true_value=truth)

    def fresh_state(self, config: dict[str, Any], seed: int) -> Reached:
        return Reached()

    def advance(self, state: Reached, config: dict[str, Any], start: float, stop: float) -> list[list[float]]:
        """One point at ``stop``: ``f(x, stop / max)`` (a closed form has no per-unit curve worth logging)."""
        assert self.fidelity is not None
        if self.sleep_per_unit > 0:  # a training run's wall time, for benchmarks of k workers
            time.sleep((stop - start) * self.sleep_per_unit)
        state.level = stop
        return [[float(stop), self.fn(self._x(config), stop / self.fidelity.max)]]

    def score(self, state: Reached, config: dict[str, Any], curve: list[list[float]]) -> tuple[float, dict[str, float]]:
        return curve[-1][1], {}

    def noisy(self, value: float) -> tuple[float, float | None]:
        if self.noise_std <= 0:
            return value, None
        return value + self.noise_std * float(self._rng.standard_normal()), None  # truth: f(x, 1), set above


def make_branin_mf(noise_std: float = 0.0, seed: int = 0, max_resource: int = 81, sleep_per_unit: float = 0.0,
                   **_: object) -> Task:
    return MultiFidelityFunction("branin_mf", augmented_branin, [(-5.0, 10.0), (0.0, 15.0)], BRANIN_OPTIMUM,
                                 max_resource, noise_std=noise_std, seed=seed, sleep_per_unit=sleep_per_unit)


def make_hartmann6_mf(noise_std: float = 0.0, seed: int = 0, max_resource: int = 81, sleep_per_unit: float = 0.0,
                      **_: object) -> Task:
    return MultiFidelityFunction("hartmann6_mf", augmented_hartmann6, [(0.0, 1.0)] * 6, HARTMANN6_OPTIMUM,
                                 max_resource, noise_std=noise_std, seed=seed, sleep_per_unit=sleep_per_unit)
