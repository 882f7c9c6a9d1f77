"""One figure per run with all its learning curves overlaid (``learning_curves.png``, logged at finish).

MLflow's UI draws each ``lc/config_NNNN`` metric as its own small chart (a single dot for a configuration that
stopped at its first rung); this figure puts every curve of the run on one axis: step (the fidelity) on the x
axis, the curves that reached the run's highest step drawn strong, the others faint."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

FILENAME = "learning_curves.png"


def plot_learning_curves(curves: Mapping[int, Sequence[Sequence[float]]], path: Path,
                         title: str | None = None) -> Path | None:
    """Draw ``{config_id: [[step, value], ...]}`` into ``path``; None (nothing written) without a curve.

    Args:
        curves: each configuration's curve, steps in any order (a continued trial's later calls appended).
        path: the PNG to write.
        title: the figure's title (default: how many curves, and how many reached the top step).
    """
    points = {cid: sorted((float(s), float(v)) for s, v in curve) for cid, curve in curves.items() if curve}
    if not points:
        return None
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, a third less import time

    top = max(c[-1][0] for c in points.values())
    full = [cid for cid, c in points.items() if c[-1][0] >= top]
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    for cid, curve in points.items():
        steps, values = zip(*curve)
        strong = cid in full
        ax.plot(steps, values, "-" if len(steps) > 1 else ".", color="C0" if strong else "0.55",
                alpha=0.9 if strong else 0.35, linewidth=1.6 if strong else 0.8, zorder=3 if strong else 2)
    ax.set_xlabel("step (fidelity)")
    ax.set_ylabel("value")
    ax.grid(alpha=0.3)
    ax.set_title(title or f"{len(points)} learning curves; {len(full)} reached step {top:g} (strong)", fontsize=10)
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.13, top=0.91)
    fig.savefig(path, dpi=100)
    return path
