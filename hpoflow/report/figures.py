"""Regret-vs-round and regret-vs-cost figures with 95% confidence bands, one line per algorithm."""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from hpoflow.report.aggregate import Summary, band, on_cost_grid

FORMATS = ("png", "svg")


def _slug(task: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", task.replace("=", "-")).strip("_")


def _pyplot():
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def palette(algos) -> dict[str, str]:
    """One colour per algorithm, the same in every figure of a report (line plots, data profiles and the CD
    diagram): matplotlib's tab10 in the algorithms' sorted order, then tab20b and tab20c for more than ten."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    colors = [to_hex(colormaps[name](i)) for name, n in (("tab10", 10), ("tab20b", 20), ("tab20c", 20))
              for i in range(n)]
    return {algo: colors[i % len(colors)] for i, algo in enumerate(sorted({str(a) for a in algos}))}


def _colors(colors: dict[str, str] | None, algos) -> dict[str, str]:
    """``colors`` where given (the report's palette), else this figure's own."""
    return colors if colors is not None and set(map(str, algos)) <= set(colors) else palette(algos)


def _thin(x, *ys) -> tuple[np.ndarray, ...]:
    """``x`` and ``ys`` without the inner points of runs where every ``y`` stays the same: the same lines, drawn
    from fewer vertices. Curves are held flat after a run's last round up to the longest run of its task (before
    the arrays ended there, a cost-budgeted run's went on to its ``budget.rounds`` = 1,000,000: drawn point by
    point, a 6-run report took 112 s, with 300 MB SVGs)."""
    x = np.asarray(x)
    cols = [np.asarray(y, dtype=float) for y in ys]
    if x.size < 3:
        return (x, *cols)
    same = np.ones(x.size - 1, dtype=bool)
    for y in cols:
        same &= (y[1:] == y[:-1]) | (np.isnan(y[1:]) & np.isnan(y[:-1]))
    keep = np.ones(x.size, dtype=bool)
    keep[1:-1] = ~(same[:-1] & same[1:])  # an inner point equal to both neighbours adds nothing to the line
    return (x[keep], *(y[keep] for y in cols))


def _draw(ax, x: np.ndarray, curves: np.ndarray, label: str, color: str | None = None) -> None:
    x, mean, half = _thin(x, *band(curves))
    ax.plot(x, mean, label=label, color=color)
    ax.fill_between(x, mean - half, mean + half, alpha=0.2, color=color)


def fitted_title(title: str, width_in: float, fontsize: float) -> str:
    """``title`` wrapped at spaces into lines that fit ``width_in`` inches at ``fontsize`` points (an average
    character of matplotlib's default font is about 0.55 em wide), so no title is clipped at the figure's edge."""
    import textwrap

    per_line = max(20, int(width_in * 72 / (0.55 * fontsize)))
    return textwrap.fill(title, per_line, break_long_words=False, break_on_hyphens=False)


def _finish(fig, title: str, out: Path, stem: str) -> list[Path]:
    """Title (wrapped to the figure's width), lay out, save in every format and close a figure; the paths."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    size = FontProperties(size=rcParams["figure.titlesize"]).get_size_in_points()
    text = fitted_title(title, fig.get_figwidth() * 0.96, size)
    fig.suptitle(text, fontsize=size)
    lines = text.count("\n") + 1
    fig.tight_layout(rect=(0, 0, 1, 1 - lines * 1.45 * size / 72 / fig.get_figheight()))  # room for the title
    paths = _save(fig, out, stem)
    _pyplot().close(fig)
    return paths


def _save(fig, out: Path, stem: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in FORMATS:
        path = out / f"{stem}.{fmt}"
        fig.savefig(path, dpi=110)
        paths.append(path)
    return paths


def plot_task(task: str, rows: list[Summary], out: Path, colors: dict[str, str] | None = None) -> list[Path]:
    """Write ``regret_vs_round_<task>`` and ``regret_vs_cost_<task>`` as PNG and SVG; return the paths.

    Each has two panels, cumulative and simple regret, with mean ± 1.96·std/√n bands over seeds; ``colors``:
    the report's :func:`palette`.
    """
    colors = _colors(colors, [s.algo for s in rows])

    def by_round(ax_c, ax_s) -> None:
        for s in rows:
            x = np.arange(1, s.curves.shape[1] + 1)
            _draw(ax_c, x, s.curves, f"{s.algo} (n={s.n})", colors[s.algo])
            if s.simple_curves.size:
                _draw(ax_s, x, s.simple_curves, f"{s.algo} (n={s.n})", colors[s.algo])

    def by_cost(ax_c, ax_s) -> None:
        for s in rows:
            if not s.cost_curves.size or np.all(np.isnan(s.cost_curves)):
                continue
            grid, cum = on_cost_grid(s)
            _draw(ax_c, grid, cum, f"{s.algo} (n={s.n})", colors[s.algo])
            simple = Summary(s.task, s.algo, s.n, s.cumulative, s.simple, s.query_cost, s.wall_time,
                             s.simple_curves, cost_curves=s.cost_curves)
            grid, sim = on_cost_grid(simple)
            _draw(ax_s, grid, sim, f"{s.algo} (n={s.n})", colors[s.algo])

    return (_two_panels(by_round, "round", f"{task}: regret vs round (95% bands)", out,
                        f"regret_vs_round_{_slug(task)}")
            + _two_panels(by_cost, "cumulative query cost", f"{task}: regret vs query cost (95% bands)", out,
                          f"regret_vs_cost_{_slug(task)}"))


def _two_panels(draw, xlabel: str, title: str, out: Path, stem: str) -> list[Path]:
    """Cumulative (left) and simple regret (right, log scale) panels filled by ``draw``; saved as PNG and SVG."""
    plt = _pyplot()
    fig, (ax_c, ax_s) = plt.subplots(1, 2, figsize=(10, 4))
    draw(ax_c, ax_s)
    ax_c.set_ylabel("cumulative regret")
    ax_s.set_ylabel("simple regret")
    ax_s.set_yscale("log", nonpositive="clip")
    for ax in (ax_c, ax_s):
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    ax_c.legend(fontsize=8)
    return _finish(fig, title, out, stem)


# -- cross-task figures ------------------------------------------------------------------------------------
def plot_anytime(by_round, by_cost, ylabel: str, title: str, out: Path, stem: str, *, log: bool = False,
                 invert: bool = False, colors: dict[str, str] | None = None) -> list[Path]:
    """Two panels, against round and against the fraction of the budget's query cost, one line per algorithm
    with its 95% band; ``by_*`` are tables with columns algo, <x>, mean, half (``statistics.*_over``)."""
    plt = _pyplot()
    colors = _colors(colors, [*by_round["algo"], *by_cost["algo"]])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, table, x, xlabel in ((axes[0], by_round, "step", "round"),
                                 (axes[1], by_cost, "cost_fraction", "fraction of the budget's query cost")):
        for algo, g in table.groupby("algo", sort=True):
            xs, mean, half = _thin(g[x].to_numpy(), g["mean"].to_numpy(), g["half"].to_numpy())
            ax.plot(xs, mean, label=algo, color=colors[str(algo)])
            ax.fill_between(xs, mean - half, mean + half, alpha=0.2, color=colors[str(algo)])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        if log:
            ax.set_yscale("log", nonpositive="clip")
        if invert:
            ax.invert_yaxis()
    axes[0].legend(fontsize=8)
    return _finish(fig, title, out, stem)


def plot_cd(mean_ranks, pvalues, title: str, out: Path, stem: str = "cd_diagram",
            colors: dict[str, str] | None = None) -> list[Path]:
    """Critical-difference diagram (scikit-posthocs): average ranks on an axis, bars over non-significant
    groups at α = 0.05; each algorithm in its colour of the line plots (``colors``: the report's palette)."""
    import scikit_posthocs as sp

    plt = _pyplot()
    colors = _colors(colors, list(mean_ranks.index))
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.35 * len(mean_ranks)))
    sp.critical_difference_diagram(mean_ranks, pvalues, ax=ax, alpha=0.05, label_fmt_left="{label} ({rank:.2f})",
                                   label_fmt_right="({rank:.2f}) {label}",
                                   color_palette={str(a): colors[str(a)] for a in mean_ranks.index})
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    paths = _save(fig, out, stem)
    plt.close(fig)
    return paths


# -- paper figures -------------------------------------------------------------------------------------------
def plot_arm_means(means: dict[str, np.ndarray], title: str, out: Path, stem: str) -> list[Path]:
    """One panel per reward shape: each arm's mean reward against the round (``means[shape]``: ``T x arms``)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(means), figsize=(4 * len(means), 3.2), squeeze=False)
    for ax, (shape, m) in zip(axes[0], means.items()):
        for arm in range(m.shape[1]):
            ax.plot(np.arange(1, len(m) + 1), m[:, arm], label=f"arm {arm}")
        ax.set_title(shape)
        ax.set_xlabel("round t")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("mean reward")
    axes[0][0].legend(fontsize=8)
    return _finish(fig, title, out, stem)


def plot_cost_regret(curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]],
                     points: dict[str, dict[str, tuple[float, float]]], title: str, out: Path, stem: str
                     ) -> list[Path]:
    """One panel per task: query cost (x) against average regret (y); ``curves[task][label] = (costs, regrets)``
    drawn as lines (e.g. Bernoulli rates), ``points[task][label] = (cost, regret)`` as labelled markers."""
    plt = _pyplot()
    tasks = list(curves)
    fig, axes = plt.subplots(1, len(tasks), figsize=(5 * len(tasks), 4), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for label, (x, y) in curves[task].items():
            ax.plot(x, y, marker=".", label=label)
        for label, (px, py) in points.get(task, {}).items():
            ax.scatter([px], [py], marker="x", color="black", s=18)
            ax.annotate(label, (px, py), fontsize=6, xytext=(2, 2), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_title(task)
        ax.set_xlabel("query cost C_T")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("R_T / T")
    if curves[tasks[0]]:
        axes[0][0].legend(fontsize=7)
    return _finish(fig, title, out, stem)


def plot_profiles(curves, per_dimension: bool, title: str, out: Path, stem: str, panels: list[str],
                  colors: dict[str, str] | None = None) -> list[Path]:
    """Data profiles (``profiles.Profiles.curves``): one row of panels per dimension, one column per entry of
    ``panels`` (BBOB groups), or one row with a panel per dimension when ``panels`` is just ``["all"]``; in
    each, one ECDF per algorithm against evaluations (/ dimension), log x axis as in COCO."""
    plt = _pyplot()
    from matplotlib import ticker

    colors = _colors(colors, curves["algo"])
    dims = list(dict.fromkeys(curves["dim"]))
    cells = [(dim, panel) for dim in dims for panel in panels]
    rows, cols = (len(dims), len(panels)) if len(panels) > 1 else (1, len(dims))
    width = 3.6 * cols + 1.5
    fig, axes = plt.subplots(rows, cols, figsize=(width, 2.9 * rows), squeeze=False, sharey=True)
    for ax, (dim, panel) in zip(axes.ravel(), cells):
        sub = curves[(curves["dim"] == dim) & (curves["panel"] == panel)]
        for algo, g in sub.groupby("algo", sort=True):
            ax.step(g["x"], g["fraction"], where="post", label=algo, color=colors[str(algo)])
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        n = int(sub["pairs"].max()) if len(sub) else 0
        where = f"d={int(dim)}" if per_dimension else "all tasks"
        ax.set_title(f"{panel}, {where} ({n} pairs/algo)" if panel != "all" else f"{where} ({n} pairs/algo)",
                     fontsize=8)
        ax.set_xlabel("evaluations / dimension" if per_dimension else "evaluations", fontsize=8)
    for r in range(rows):
        axes[r][0].set_ylabel("fraction of (run, target) pairs", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=7)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1 - 1.5 / width, 1))
    paths = _save(fig, out, stem)
    plt.close(fig)
    return paths
