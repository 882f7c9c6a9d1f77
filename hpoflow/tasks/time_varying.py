"""Drifting objectives for time-varying BO with costly feedback (paper 002, App. C.1).

Both tasks charge regret against the round's own optimum (``Evaluation.optimum``) and reveal the
noise-free value even on rounds the algorithm does not pay for, so regret is charged every round.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from hpoflow.core.records import Direction, Evaluation
from hpoflow.core.space import Categorical, Float, SearchSpace
from hpoflow.tasks.base import Task


@lru_cache(maxsize=4)
def _matern32_factor(n_points: int, lengthscale: float) -> np.ndarray:
    """Cholesky factor of the Matérn-3/2 Gram matrix on ``n_points`` of [0, 1] (cached across trials)."""
    x = np.linspace(0.0, 1.0, n_points)
    s = math.sqrt(3.0) * np.abs(x[:, None] - x[None, :]) / lengthscale
    K = (1 + s) * np.exp(-s)
    for jitter in (1e-10, 1e-8, 1e-6, 1e-4):
        try:
            return np.linalg.cholesky(K + jitter * np.eye(n_points))
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError("Matérn Gram matrix not positive definite")


class TVSynthetic(Task):
    """f_1 ~ GP(0, k), f_{t+1} = sqrt(1-eps) f_t + sqrt(eps) g_{t+1} on a grid of [0, 1]; maximise."""

    name = "tv_synthetic"
    direction = Direction.MAXIMIZE

    def __init__(self, epsilon: float = 0.03, n_points: int = 1000, lengthscale: float = 0.2,
                 noise_std: float = 0.1, seed: int = 0) -> None:
        self.epsilon, self.noise_std, self.n_points = epsilon, noise_std, n_points
        self.space = SearchSpace.of(Float("x", 0.0, 1.0))
        self.grid = np.linspace(0.0, 1.0, n_points)
        self.candidates = torch.tensor(self.grid, dtype=torch.float64).reshape(-1, 1)
        self._factor = _matern32_factor(n_points, float(lengthscale))
        self._f_rng = np.random.default_rng([seed, 1])   # the function sequence: same for every algorithm
        self._noise_rng = np.random.default_rng([seed, 2])
        self._fs: list[np.ndarray] = [self._draw()]

    def _draw(self) -> np.ndarray:
        return self._factor @ self._f_rng.standard_normal(self.n_points)

    def function(self, t: int) -> np.ndarray:
        """f_t on the grid (rounds start at 1), generated lazily and cached."""
        a, b = math.sqrt(1.0 - self.epsilon), math.sqrt(self.epsilon)
        while len(self._fs) < t:
            self._fs.append(a * self._fs[-1] + b * self._draw())
        return self._fs[t - 1]

    def index(self, config: dict[str, Any]) -> int:
        return round(min(1.0, max(0.0, float(config["x"]))) * (self.n_points - 1))

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        f = self.function(max(round, 1))
        true, best = float(f[self.index(config)]), float(f.max())
        if not observe:
            return Evaluation(value=math.nan, true_value=true, cost=0.0, optimum=best)
        return Evaluation(value=true + self.noise_std * float(self._noise_rng.standard_normal()),
                          true_value=true, cost=1.0, optimum=best)


def bandit_means(shape: str, t: int | np.ndarray, horizon: int) -> np.ndarray:
    """Mean rewards of the three arms at round(s) ``t``, shape ``(..., 3)``, all in [0, 1]."""
    t = np.asarray(t, dtype=float)[..., None]
    i = np.arange(3)
    if shape == "sine":  # two periods over the horizon, arms a third of a period apart
        return 0.5 + 0.4 * np.sin(4 * math.pi * t / horizon + 2 * math.pi * i / 3)
    if shape == "gaussian":  # each arm peaks once, at 1/6, 1/2 and 5/6 of the horizon
        centres, width = horizon * (2 * i + 1) / 6, horizon / 10
        return 0.1 + 0.8 * np.exp(-0.5 * ((t - centres) / width) ** 2)
    if shape == "piecewise":  # 8 segments; the best arm rotates, levels 0.8 / 0.5 / 0.2
        seg = np.floor(8 * (t - 1) / horizon).astype(int)
        rank = (i - seg) % 3
        return np.choose(rank, [0.8, 0.5, 0.2]).astype(float)
    raise ValueError(f"task.shape='{shape}' is unknown; allowed: sine, gaussian, piecewise")


class TVBandit(Task):
    """Three-armed bandit with drifting means (sine, Gaussian or piecewise) and Gaussian noise; maximise."""

    name = "tv_bandit"
    direction = Direction.MAXIMIZE

    def __init__(self, shape: str = "sine", horizon: int = 2000, noise_std: float = 0.1, seed: int = 0) -> None:
        bandit_means(shape, 1, horizon)  # validates the shape
        self.shape, self.horizon, self.noise_std = shape, horizon, noise_std
        self.space = SearchSpace.of(Categorical("arm", (0, 1, 2)))
        self.candidates = torch.stack([self.space.encode({"arm": a}) for a in range(3)])
        self._rng = np.random.default_rng([seed, 3])

    def evaluate(self, config: dict[str, Any], *, round: int, observe: bool = True) -> Evaluation:
        means = bandit_means(self.shape, round, self.horizon)
        true, best = float(means[int(config["arm"])]), float(means.max())
        if not observe:
            return Evaluation(value=math.nan, true_value=true, cost=0.0, optimum=best)
        return Evaluation(value=true + self.noise_std * float(self._rng.standard_normal()),
                          true_value=true, cost=1.0, optimum=best)


def make_tv_synthetic(epsilon: float = 0.03, n_points: int = 1000, lengthscale: float = 0.2, noise_std: float = 0.1,
                      seed: int = 0, **_: object) -> TVSynthetic:
    return TVSynthetic(epsilon, n_points, lengthscale, noise_std, seed)


def make_tv_bandit(shape: str = "sine", horizon: int = 2000, noise_std: float = 0.1, seed: int = 0,
                   **_: object) -> TVBandit:
    return TVBandit(shape, horizon, noise_std, seed)
