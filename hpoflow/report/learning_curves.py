"""The report's learning-curve figure per task: each method's trials, step (the fidelity) on the x axis.

For a task whose runs logged learning curves (a task with a fidelity: ``lc/config_NNNN`` metrics, or the
``learning_curves.csv`` artifact of a compact run), one panel per method shows every trial of one of its runs (the
lowest seed); the curves that reached the task's full fidelity are drawn strong, the others faint, so a reader sees
at once how many trials each method stopped early, and where. Geometric rungs get a log step axis; the value axis
shows the bulk of the values (up to their 95th percentile) where a few early ones are far worse.
"""
from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

import pandas as pd

from hpoflow.report.figures import _colors, _slug

__all__ = ["first_runs", "per_task_curve_figures", "plot_task_curves", "read_learning_curves"]

LC_PREFIX = "lc/"  # hpoflow.core.fidelity.curve_key: lc/config_NNNN
MAX_PANELS = 12  # methods drawn per task figure (more: the first 12 by name)


def read_learning_curves(uri: str, runs: pd.DataFrame) -> pd.DataFrame:
    """The learning curves of ``runs`` (report run rows: ``run_id``, ``artifact_uri``, ``tags.*``).

    Returns:
        Long rows ``run_id, config_id, step, value`` (empty where no run logged a curve).
    """
    from mlflow.tracking import MlflowClient

    from hpoflow.report.loading import _col, _read_sql, _sql_store
    from hpoflow.store.mlflow_tracker import COMPACT_TAG

    columns = ["run_id", "config_id", "step", "value"]
    if runs.empty:
        return pd.DataFrame(columns=columns)
    compact = _col(runs, "tags." + COMPACT_TAG) == "true"
    parts = [_compact_curves(uri, runs[compact])]
    plain = runs[~compact]
    if len(plain):
        client = MlflowClient(tracking_uri=uri)
        store = _sql_store(client)
        if store is not None:
            long = _read_sql(store, "SELECT run_uuid, key, step, value FROM metrics WHERE run_uuid IN :ids "
                             "AND key LIKE 'lc/%'", ids=list(plain["run_id"]))
        else:
            rows = []
            for _, run in plain.iterrows():
                keys = [c.removeprefix("metrics.") for c in plain.columns
                        if c.startswith("metrics." + LC_PREFIX) and not pd.isna(run[c])]
                rows += [(run["run_id"], k, m.step, m.value) for k in keys for m in client.get_metric_history(
                    run["run_id"], k)]
            long = pd.DataFrame(rows, columns=["run_uuid", "key", "step", "value"])
        if len(long):
            parts.append(pd.DataFrame({"run_id": long["run_uuid"],
                                       "config_id": long["key"].str.removeprefix(LC_PREFIX + "config_").astype(int),
                                       "step": long["step"].astype(float), "value": long["value"].astype(float)}))
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def _compact_curves(uri: str, runs: pd.DataFrame) -> pd.DataFrame:
    """Curves of compact runs, from their ``learning_curves.csv`` artifact (read in place where local)."""
    from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

    from hpoflow.store.mlflow_tracker import CURVES_TABLE

    tables = []
    with tempfile.TemporaryDirectory() as tmp:
        for run_id, artifact_uri in zip(runs["run_id"], runs.get("artifact_uri", pd.Series(dtype=object)),
                                        strict=False):
            repo = get_artifact_repository(str(artifact_uri), tracking_uri=uri)
            local = getattr(repo, "artifact_dir", None)
            path = os.path.join(local, CURVES_TABLE) if local else None
            try:
                if path is None or not os.path.isfile(path):
                    path = repo.download_artifacts(CURVES_TABLE, os.path.join(tmp, str(run_id)))
                table = pd.read_csv(path)
            except Exception:  # noqa: BLE001 - a run without curves (or cut short before its artifacts)
                continue
            tables.append(table.assign(run_id=run_id)[["run_id", "config_id", "step", "value"]])
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def first_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """One run per (task, method): the one of the lowest seed (numeric order where seeds are numbers)."""
    if runs.empty:
        return runs
    order = pd.to_numeric(runs["seed"], errors="coerce").fillna(math.inf)
    return runs.assign(_order=order).sort_values(["_order", "seed", "run_id"], kind="stable").groupby(
        ["task_key", "algo"], sort=True).head(1).drop(columns="_order")


def plot_task_curves(task: str, curves: pd.DataFrame, runs: pd.DataFrame, out: Path,
                     colors: dict[str, str] | None = None) -> Path | None:
    """Write ``learning_curves_<task>.png``: one panel per method, every trial of its run in ``runs``.

    Args:
        task: the task's label (the figure's title and file name).
        curves: :func:`read_learning_curves` rows of ``runs``.
        runs: one run per method (``run_id``, ``algo``, ``seed``).
        out: the report's folder.
        colors: the report's palette (one colour per method).

    Returns:
        The PNG's path, or None when no run of the task logged a curve.
    """
    curves = curves[curves["run_id"].isin(runs["run_id"])]
    if curves.empty:
        return None
    from matplotlib.figure import Figure  # no pyplot: no GUI backend

    top = float(curves["step"].max())
    methods = runs[runs["run_id"].isin(curves["run_id"])].sort_values("algo").head(MAX_PANELS)
    colors = _colors(colors, list(methods["algo"]))
    cols = min(3, len(methods))
    rows = math.ceil(len(methods) / cols)
    fig = Figure(figsize=(4.2 * cols, 3.0 * rows + 0.6))
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
    for ax, (_, run) in zip(axes.flat, methods.iterrows(), strict=False):
        mine = curves[curves["run_id"] == run["run_id"]]
        full = 0
        for _, c in mine.sort_values("step").groupby("config_id", sort=True):
            strong = float(c["step"].iloc[-1]) >= top
            full += strong
            ax.plot(c["step"], c["value"], "-" if len(c) > 1 else ".", color=colors[run["algo"]] if strong else "0.6",
                    alpha=0.9 if strong else 0.35, linewidth=1.5 if strong else 0.7, zorder=3 if strong else 2)
        trials = mine["config_id"].nunique()
        ax.set_title(f"{run['algo']} (seed {run['seed']}): {trials} trials, {full} at step {top:g}", fontsize=9)
        ax.grid(alpha=0.3)
    low = float(curves.loc[curves["step"] > 0, "step"].min()) if (curves["step"] > 0).any() else 0.0
    if low > 0 and top / low >= 10:  # geometric rungs (1, 3, 9, 27, ...): a log axis spaces them evenly
        axes.flat[0].set_xscale("log")
    values = curves["value"].dropna()
    if len(values) >= 20:  # a few huge early values would flatten every curve: show the bulk
        lo_v, hi_v = float(values.quantile(0.0)), float(values.quantile(0.95))
        if hi_v > lo_v:
            axes.flat[0].set_ylim(lo_v - 0.05 * (hi_v - lo_v), hi_v + 0.05 * (hi_v - lo_v))
    for ax in axes.flat[len(methods):]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("step (fidelity)")
    for ax in axes[:, 0]:
        ax.set_ylabel("value")
    fig.suptitle(_fit(f"{task}: learning curves (strong: reached the full fidelity)", 95), fontsize=10)
    fig.tight_layout()
    path = out / f"learning_curves_{_slug(task)}.png"
    fig.savefig(path, dpi=100)
    return path


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis (a title that fits its figure)."""
    return text if len(text) <= width else text[:width - 1] + "…"


def per_task_curve_figures(uri: str, runs: pd.DataFrame, out: Path,
                           colors: dict[str, str] | None = None) -> dict[str, Path]:
    """``{task label: figure}`` for every task of ``runs`` (report run rows) whose runs logged curves."""
    chosen = first_runs(runs)
    curves = read_learning_curves(uri, chosen)
    figures: dict[str, Path] = {}
    if curves.empty:
        return figures
    for task_key, group in chosen.groupby("task_key", sort=True):
        path = plot_task_curves(str(task_key), curves, group, out, colors)
        if path is not None:
            figures[str(task_key)] = path
    return figures
