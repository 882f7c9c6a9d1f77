"""Figures of the several-objectives section: hypervolume regret over rounds, the Pareto fronts and 50% attainment
surfaces per task, and the (query cost, regret) trade-off; one colour per method, the report's palette."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from hpoflow.report.figures import _colors, _finish, _pyplot, _slug
from hpoflow.report.statistics import normal_band


def plot_hv_regret(curves: pd.DataFrame, out: Path, colors: dict[str, str] | None = None) -> list[Path]:
    """``hv_regret``: one panel per task, mean normalised hypervolume regret over rounds (95% band over seeds, log
    y); ``curves`` has columns task, algo, run_id, step, nr."""
    plt = _pyplot()
    tasks = sorted(curves["task"].unique())
    colors = _colors(colors, curves["algo"].unique())
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.2 * len(tasks) + 1, 3.8), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for algo, g in curves[curves["task"] == task].groupby("algo", sort=True):
            wide = g.pivot_table(index="run_id", columns="step", values="nr", aggfunc="first")
            mean, half = normal_band(wide.to_numpy(), axis=0)
            x = wide.columns.to_numpy(float)
            ax.plot(x, mean, color=colors[str(algo)], label=f"{algo} (n={len(wide)})")
            ax.fill_between(x, np.maximum(mean - half, 1e-12), mean + half, color=colors[str(algo)], alpha=0.15)
        ax.set_yscale("log", nonpositive="clip")
        ax.set_title(task, fontsize=10)
        ax.set_xlabel("round")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("normalised hypervolume regret")
    axes[0][0].legend(fontsize=8)
    return _finish(fig, "Hypervolume regret over rounds (mean, 95% bands)", out, "hv_regret")


def _staircase(ax, pts: np.ndarray, signs: np.ndarray, color, label: str, *, dashed: bool = False,
               lw: float = 1.2, alpha: float = 1.0) -> np.ndarray:
    """A front ``pts`` (p, 2, minimisation form) as its points joined by the boundary of the region it dominates,
    drawn in raw units (``signs``: +1 min, -1 max). Returns the corners drawn (2p - 1, 2), raw units."""
    if not len(pts):
        return np.zeros((0, 2))
    p = pts[np.argsort(pts[:, 0], kind="stable")]
    corners = np.empty((2 * len(p) - 1, 2))
    corners[0::2] = p
    corners[1::2] = np.column_stack([p[1:, 0], p[:-1, 1]])  # along f1 at the last f2, then down to the next point
    ax.plot(*(corners * signs).T, color=color, lw=lw, alpha=alpha, ls="--" if dashed else "-", label=label)
    ax.plot(*(p * signs).T, "o", color=color, ms=4, alpha=alpha)
    return corners * signs


def plot_pareto(task: str, names: list[str], signs: np.ndarray, fronts: dict[str, np.ndarray],
                surfaces: dict[str, np.ndarray], reference: np.ndarray | None, reference_label: str, out: Path,
                colors: dict[str, str] | None = None) -> list[Path]:
    """``pareto_<task>``: left, each method's final front of its median seed; right, each method's 50% attainment
    surface; both with the reference front (grey). Arrays are (p, 2) in minimisation form; drawn in raw units
    (``signs``: +1 min, -1 max), the first two objectives."""
    plt = _pyplot()
    colors = _colors(colors, list(fronts))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharex=True, sharey=True)
    s = signs[:2]
    for ax, sets, title in ((axes[0], fronts, "final front of the median seed"),
                            (axes[1], surfaces, "50% attainment surface")):
        if reference is not None and len(reference) and reference_label == "known front":  # a sampled curve
            r = reference[np.argsort(reference[:, 0], kind="stable"), :2] * s
            ax.plot(r[:, 0], r[:, 1], color="0.45", lw=2.5, alpha=0.6, label=reference_label)
        elif reference is not None and len(reference):  # found points: the region they dominate, as the methods'
            _staircase(ax, reference[:, :2], s, "0.45", reference_label, lw=2.5, alpha=0.6)
        for algo in sorted(sets):
            _staircase(ax, sets[algo][:, :2], s, colors[algo], algo, dashed=ax is axes[1])
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(f"{names[0]} ({'min' if s[0] > 0 else 'max'})")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"{names[1]} ({'min' if s[1] > 0 else 'max'})")
    axes[0].legend(fontsize=8)
    return _finish(fig, f"{task}: Pareto fronts", out, f"pareto_{_slug(task)}")


def plot_cost_regret(task: str, paths: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], finals: pd.DataFrame,
                     out: Path, colors: dict[str, str] | None = None) -> list[Path]:
    """``cost_regret_<task>``: per method, its (mean cumulative query cost, mean average regret R_t/t) over rounds
    (thin), the non-dominated ones (indices, third of each triple) as a thick step line, and its final point (mean
    C_T, R_T/T; filled where no other method's final point dominates it)."""
    plt = _pyplot()
    colors = _colors(colors, list(paths))
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for algo in sorted(paths):
        c, r, keep = paths[algo]
        ax.plot(c, r, color=colors[algo], lw=0.8, alpha=0.35)
        ax.step(c[keep], r[keep], where="post", color=colors[algo], lw=1.8)
    for row in finals.itertuples():
        color = colors[str(row.algo)]
        named = row.front or len(finals) <= 10  # many methods (a paper table's rows): name the front's only
        ax.plot(row.cost, row.regret, "o", ms=7, color=color, mfc=color if row.front else "white",
                label=f"{row.algo}{' (front)' if row.front else ''}" if named else None)
    ax.set_xlabel("cumulative query cost")
    ax.set_ylabel("average regret R_t / t")
    ax.set_yscale("log", nonpositive="clip")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return _finish(fig, f"{task}: regret vs query cost", out, f"cost_regret_{_slug(task)}")
