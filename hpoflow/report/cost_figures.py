"""Figures of the comparison against compute: anytime normalised regret per task and data profiles over cost,
with one colour per method that is the same in every figure of the section."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from hpoflow.report.figures import _finish, _pyplot, _slug
from hpoflow.report.statistics import normal_band


def colours(algos) -> dict[str, str]:
    """One colour per method, from its place in the sorted list of all the report's methods (tab10, then tab20)."""
    names = sorted(set(map(str, algos)))
    plt = _pyplot()
    cmap = plt.get_cmap("tab10" if len(names) <= 10 else "tab20")
    return {a: cmap(i % cmap.N) for i, a in enumerate(names)}


def plot_task_cost(task: str, grid: pd.DataFrame, palette: dict[str, str], out: Path) -> list[Path]:
    """``nr_vs_cost_<task>``: mean normalised regret (95% band over runs) against the fraction of the task's
    budget, log axes; ``grid`` is ``compute.on_grid`` for this task."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for algo, g in grid.groupby("algo", sort=True):
        wide = g.pivot_table(index="run_id", columns="fraction", values="nr", aggfunc="first")
        mean, half = normal_band(wide.to_numpy(), axis=0)
        x = wide.columns.to_numpy(float)
        ax.step(x, mean, where="post", color=palette[algo], label=f"{algo} (n={len(wide)})")
        ax.fill_between(x, np.maximum(mean - half, 0), mean + half, step="post", color=palette[algo], alpha=0.15)
    ax.set_xscale("log")
    ax.set_yscale("log", nonpositive="clip")
    ax.set_xlabel("fraction of the task's cost budget")
    ax.set_ylabel("normalised regret")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _finish(fig, f"{task}: normalised regret vs cost (95% bands)", out, f"nr_vs_cost_{_slug(task)}")


def plot_cost_profile(curves: pd.DataFrame, palette: dict[str, str], pairs: int, out: Path) -> list[Path]:
    """``data_profile_cost``: the ECDF of (run, target) pairs against the fraction of the budget (log x)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for algo, g in curves[curves["panel"] == "all"].groupby("algo", sort=True):
        ax.step(g["x"], g["fraction"], where="post", color=palette[algo], label=algo)
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("fraction of the task's cost budget")
    ax.set_ylabel("fraction of (run, target) pairs")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _finish(fig, f"Data profiles over cost, all tasks ({pairs} pairs/algo)", out, "data_profile_cost")
