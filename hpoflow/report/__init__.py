"""Comparison reports from MLflow runs: the papers' tables and figures, regenerated from the store.

Usage (same ``key=value`` override syntax as the main CLI)::

    python -m hpoflow.report tracking.uri=sqlite:///outputs/mlflow.db tracking.experiment=branin report.out=figs

Modules: ``loading`` (select runs and read their curves with MLflow's client), ``aggregate`` (regret against
f*, means and 95% intervals per task and algorithm), ``tables`` (Markdown and CSV), ``figures`` (regret vs
round and vs query cost with confidence bands, PNG and SVG), ``cli`` (the command, optional summary run).
"""
from __future__ import annotations

from hpoflow.report.aggregate import Summary, mean_ci, summarise
from hpoflow.report.figures import plot_task
from hpoflow.report.loading import RunCurve, load_curves
from hpoflow.report.tables import format_table

__all__ = ["RunCurve", "Summary", "format_table", "load_curves", "main", "mean_ci", "plot_task", "summarise"]


def main(argv: list[str] | None = None) -> int:
    """The ``python -m hpoflow.report`` command."""
    from hpoflow.report.cli import main as _main

    return _main(argv)
