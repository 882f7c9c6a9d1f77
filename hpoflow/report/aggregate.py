"""Regret against f* per run, then means and 95% intervals per (task, algorithm)."""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpoflow.report.loading import FULL_TOL, RunCurve

Z95 = 1.96


@dataclass
class Summary:
    """Aggregated numbers for one (task, algorithm); ``*_curves`` are n x T, one row per run."""

    task: str
    algo: str
    n: int
    cumulative: tuple[float, float]
    simple: tuple[float, float]
    query_cost: tuple[float, float]
    wall_time: tuple[float, float]
    curves: np.ndarray                       # cumulative regret per round
    simple_curves: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    cost_curves: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # cumulative query cost
    best_run: str = ""                       # run id with the best value seen by this algorithm
    best_value: float = math.nan
    best_seed: str = ""
    f_star_known: bool = True                # False: f* is the best value seen across the selected runs
    best_config: dict[str, Any] | None = None
    full_fidelity: float = math.nan          # the level simple regret and the best value count (NaN: every level)


def mean_ci(x: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Mean and the 95% Wald half-width 1.96·std/sqrt(n) (sample std; 0 for one run)."""
    a = np.asarray(x, dtype=float)
    if a.size == 0:
        return math.nan, math.nan
    half = Z95 * a.std(ddof=1) / math.sqrt(a.size) if a.size > 1 else 0.0
    return float(a.mean()), float(half)


def band(curves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise mean and 1.96·std/sqrt(n) over runs (rows), ignoring NaN entries."""
    n = np.sum(~np.isnan(curves), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nanmean(curves, axis=0) if curves.size else np.zeros(0)
        std = np.nanstd(curves, axis=0, ddof=1) if curves.shape[0] > 1 else np.zeros(curves.shape[1])
        half = np.where(n > 1, Z95 * np.nan_to_num(std) / np.sqrt(np.maximum(n, 1)), 0.0)
    return mean, half


def on_cost_grid(s: Summary, points: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative regret as a step function of cumulative query cost, on a grid shared by all runs.

    The grid runs from the largest first-round cost to the smallest final cost over the runs, so every run
    covers it; each value is the cumulative regret after the last round whose cost is within the budget.
    """
    costs = np.array([np.fmax.accumulate(np.nan_to_num(c, nan=0.0)) for c in s.cost_curves])
    if costs.size == 0:
        return np.zeros(0), np.zeros((0, 0))
    lo, hi = float(costs[:, 0].max()), float(costs[:, -1].min())
    grid = np.linspace(lo, hi, points) if hi > lo else np.array([hi])
    out = np.empty((costs.shape[0], grid.size))
    for i, (c, r) in enumerate(zip(costs, s.curves)):
        idx = np.searchsorted(c, grid, side="right") - 1
        out[i] = np.where(idx >= 0, r[np.clip(idx, 0, len(r) - 1)], np.nan)
    return grid, out


def _direction_sign(curves: list[RunCurve]) -> float:
    direction = next((c.direction for c in curves if c.direction), "")
    return 1.0 if direction == "maximize" else -1.0


def _full_level(runs: list[RunCurve], incumbent: str) -> float:
    """The task's full fidelity (its runs' ``full_fidelity``, else the highest level they logged), the only level
    counted with ``incumbent="full"`` (NaN: count every level)."""
    if incumbent != "full":
        return math.nan
    tagged = [c.full_fidelity for c in runs if math.isfinite(c.full_fidelity)]
    if tagged:
        return max(tagged)
    levels = [float(np.nanmax(c.fidelity)) for c in runs if c.fidelity is not None and np.isfinite(c.fidelity).any()]
    return max(levels, default=math.nan)


def _counted(c: RunCurve, x: np.ndarray, top: float) -> np.ndarray:
    """``x`` with NaN where the round was evaluated below ``top`` (a round without a level counts, as the run's own
    incumbent counts it)."""
    if not math.isfinite(top) or c.fidelity is None:
        return x
    level = c.fidelity[:len(x)]
    return np.where(np.isnan(level) | (level >= top - FULL_TOL), x, np.nan)


def summarise(curves: list[RunCurve], incumbent: str = "full") -> dict[tuple[str, ...], list[Summary]]:
    """Per task: one Summary per algorithm, with f* recomputed as the best value seen where unknown.

    Cumulative regret sums every evaluation. Simple regret, the best value and (where unknown) f* count, with
    ``incumbent="full"`` (the default, the rule of a run's own incumbent), only the rounds at the task's full
    fidelity (``RunCurve.full_fidelity``, else the highest level its runs logged); with ``"any"`` (or on a task
    without a fidelity) every round. A run with no counted round has
    no simple regret (NaN), and an algorithm none of whose runs has one no best value (NaN).
    """
    by_task: dict[tuple[str, ...], list[RunCurve]] = defaultdict(list)
    for c in curves:
        by_task[c.task_key].append(c)
    out: dict[tuple[str, ...], list[Summary]] = {}
    for task_key, runs in sorted(by_task.items()):
        sign = _direction_sign(runs)
        top = _full_level(runs, incumbent)
        known = all(c.regret is not None for c in runs)
        f_star = math.nan
        if not known:
            seen = [_counted(c, sign * c.values, top) for c in runs]
            if not any(np.isfinite(v).any() for v in seen):  # no run reached the full level: f* of every level
                seen = [sign * c.values for c in runs]
            f_star = max((float(np.nanmax(v)) for v in seen if np.isfinite(v).any()), default=math.nan)
        by_algo: dict[str, list[tuple[np.ndarray, RunCurve]]] = defaultdict(list)
        for c in runs:
            r = c.regret if known and c.regret is not None else np.abs(f_star - sign * c.values)
            by_algo[c.algo].append((r, c))
        rows = []
        for algo, items in sorted(by_algo.items()):
            T = min(len(r) for r, _ in items)
            cum = np.stack([np.cumsum(np.nan_to_num(r[:T], nan=0.0)) for r, _ in items])
            simple_curves = np.stack([np.minimum.accumulate(np.where(np.isnan(q), np.inf, q))
                                      for q in (_counted(c, r[:T], top) for r, c in items)])
            simple_curves[np.isinf(simple_curves)] = np.nan
            simple = [float(np.nanmin(s)) if not np.all(np.isnan(s)) else math.nan for s in simple_curves]
            costs = [float(np.nanmax(c.query_cost)) if not np.all(np.isnan(c.query_cost)) else math.nan
                     for _, c in items]
            best_value, best_run, best_seed = -math.inf, "", ""
            for _, c in items:
                counted = _counted(c, sign * c.values, top)
                v = np.nanmax(counted) if np.isfinite(counted).any() else -math.inf
                if v > best_value:
                    best_value, best_run, best_seed = float(v), c.run_id, c.seed
            rows.append(Summary(" ".join(task_key), algo, len(items), mean_ci(cum[:, -1]), mean_ci(simple),
                                mean_ci(costs), mean_ci([c.wall_time for _, c in items]), cum,
                                simple_curves=simple_curves,
                                cost_curves=np.stack([c.query_cost[:T] for _, c in items]),
                                best_run=best_run,
                                best_value=sign * best_value if best_run else math.nan, best_seed=best_seed,
                                f_star_known=known, full_fidelity=top))
        out[task_key] = rows
    return out
