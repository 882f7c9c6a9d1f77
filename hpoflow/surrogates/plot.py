"""A per-run picture of the surrogate (mean and uncertainty) with the queried points, for 1-d and 2-d tasks.

The hook: an algorithm may define ``surrogate_snapshot() -> SurrogateSnapshot | None``. Without it, any
algorithm shaped like ``GPBO`` (a ``model`` with ``posterior(X)`` on the unit cube, its inputs ``X``, rewards
``y`` and the task's ``sign``) is snapshotted automatically. Anything else gets no picture.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpoflow.surrogates.base import Surrogate

GRID_1D, GRID_2D = 200, 60


@dataclass
class SurrogateSnapshot:
    """What the figure needs: a predictor on the unit cube and the queried points, in the task's units.

    Attributes:
        predict: ``(m x d)`` unit-cube points -> (mean, std), each of length ``m``, in task-value units.
        X: ``n x d`` queried unit-cube points, in query order.
        y: ``n`` observed values (task units, the task's own direction).
        label: model name for the title.
    """

    predict: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    X: np.ndarray
    y: np.ndarray
    label: str = "surrogate"


def snapshot_of(algorithm: Any) -> SurrogateSnapshot | None:
    """The algorithm's own snapshot, or the GP-BO duck-typed one, or None."""
    hook = getattr(algorithm, "surrogate_snapshot", None)
    if callable(hook):
        return hook()
    model = getattr(algorithm, "model", None)
    X, y = getattr(algorithm, "X", None), getattr(algorithm, "y", None)
    if not isinstance(model, Surrogate) or not X or model.n == 0:
        return None
    import torch

    sign = float(getattr(algorithm, "sign", 1.0))

    def predict(U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with torch.no_grad():
            mean, var = model.posterior(torch.as_tensor(U, dtype=torch.float64))
        # the model is fitted to rewards sign * value: map the mean back to the task's units
        return sign * mean.detach().cpu().double().numpy(), var.detach().cpu().double().clamp_min(0).sqrt().numpy()

    Xn = torch.stack([x.detach().cpu().double() for x in X]).numpy()
    return SurrogateSnapshot(predict, Xn, sign * np.asarray(y, dtype=float), type(model).__name__)


def _axis(param: Any, u: np.ndarray) -> tuple[np.ndarray, str]:
    """Unit-cube coordinates mapped to the parameter's numeric values when it has them."""
    try:
        return np.array([float(param.decode(float(v))) for v in u]), param.name
    except (TypeError, ValueError):
        return u, f"{param.name} (unit scale)"


def plot_surrogate(snapshot: SurrogateSnapshot, space: Any, path: Path, title: str = "") -> Path | None:
    """Write the picture for a 1-d or 2-d space; return its path (None for higher dimensions)."""
    dim = snapshot.X.shape[1]
    if dim not in (1, 2):
        return None
    from matplotlib.figure import Figure  # no pyplot: a third of its import time, and no GUI backend

    params = list(space.parameters)
    order = np.arange(1, len(snapshot.y) + 1)
    if dim == 1:
        u = np.linspace(0.0, 1.0, GRID_1D)
        mean, std = snapshot.predict(u[:, None])
        x, name = _axis(params[0], u)
        xq, _ = _axis(params[0], snapshot.X[:, 0])
        fig = Figure(figsize=(7, 4))
        ax = fig.subplots()
        ax.plot(x, mean, color="C0", label=f"{snapshot.label} mean")
        ax.fill_between(x, mean - 2 * std, mean + 2 * std, color="C0", alpha=0.2, label="±2 std")
        sc = ax.scatter(xq, snapshot.y, c=order, cmap="viridis", zorder=3, edgecolor="k", label="queried")
        fig.colorbar(sc, ax=ax, label="round of query")
        ax.set_xlabel(name)
        ax.set_ylabel("value")
        ax.legend(loc="best", fontsize=8)
        ax.grid(alpha=0.3)
    else:
        g = np.linspace(0.0, 1.0, GRID_2D)
        U1, U2 = np.meshgrid(g, g)
        mean, std = snapshot.predict(np.column_stack([U1.ravel(), U2.ravel()]))
        x1, n1 = _axis(params[0], g)
        x2, n2 = _axis(params[1], g)
        q1, _ = _axis(params[0], snapshot.X[:, 0])
        q2, _ = _axis(params[1], snapshot.X[:, 1])
        fig = Figure(figsize=(11, 4.2))
        axes = fig.subplots(1, 2)
        for ax, field, label in ((axes[0], mean, f"{snapshot.label} mean"), (axes[1], std, "std")):
            cs = ax.contourf(x1, x2, field.reshape(U1.shape), levels=20, cmap="viridis")
            fig.colorbar(cs, ax=ax, label=label)
            ax.scatter(q1, q2, c="white", edgecolor="k", s=22, label="queried")
            ax.set_xlabel(n1)
            ax.set_ylabel(n2)
            ax.set_title(label)
        axes[0].legend(loc="upper right", fontsize=8)
    fig.suptitle(title or f"surrogate after {len(snapshot.y)} queries")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def surrogate_artifact_writer(algorithm: Any, task: Any) -> Callable[[Path], list[Path]]:
    """A callable for the tracker's artifact hook: writes ``surrogate.png`` into a folder when possible."""

    def write(folder: Path) -> list[Path]:
        if task.space.dim not in (1, 2):
            return []
        snap = snapshot_of(algorithm)
        if snap is None or len(snap.y) == 0:
            return []
        path = plot_surrogate(snap, task.space, folder / "surrogate.png",
                              f"{task.name}: {snap.label} after {len(snap.y)} queries")
        return [path] if path else []

    return write
