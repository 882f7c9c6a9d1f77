"""Comparison reports from MLflow runs: cross-task statistics, per-task tables and figures, from the store.

Usage (same ``key=value`` override syntax as the main CLI)::

    python -m hpoflow.report tracking.uri=sqlite:///outputs/mlflow.db tracking.experiment=branin report.out=figs

Modules: ``loading`` (``load_study``: the selected runs and their curves, read in bulk), ``statistics``
(normalised regret, ranks, Friedman/Wilcoxon–Holm/Nemenyi, bootstrap intervals, seed adequacy),
``aggregate`` (per-task regret means), ``tables`` (Markdown/CSV cells and captions), ``figures`` (PNG and SVG),
``html`` (report.md and the self-contained report.html), ``build`` (the whole report), ``cli`` (the command);
several objectives (issue 40): ``pareto`` (reference fronts, normalised hypervolume regret, attainment surfaces),
``pareto_section`` and ``pareto_figures`` (the section for runs with an ``objectives`` tag), ``cost_regret``
(regret against query cost as two objectives, for runs that choose when to query).

May import: :mod:`hpoflow.core`, the components, :mod:`hpoflow.config`, :mod:`hpoflow.store` (reads only).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hpoflow.report.aggregate import Summary, mean_ci, summarise
    from hpoflow.report.figures import plot_task
    from hpoflow.report.loading import RunCurve, StudyData, load_curves, load_study
    from hpoflow.report.tables import format_table

# the public names, imported on first use: `python -m hpoflow.report` answers a bad key or a missing experiment
# without pandas, SciPy or MLflow
_EXPORTS = {"Summary": "aggregate", "mean_ci": "aggregate", "summarise": "aggregate", "plot_task": "figures",
            "RunCurve": "loading", "StudyData": "loading", "load_curves": "loading", "load_study": "loading",
            "format_table": "tables"}

__all__ = ["RunCurve", "StudyData", "Summary", "format_table", "load_curves", "load_study", "main", "mean_ci",
           "plot_task", "summarise"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hpoflow.report' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"hpoflow.report.{module}"), name)
    globals()[name] = value
    return value


def main(argv: list[str] | None = None) -> int:
    """The ``python -m hpoflow.report`` command."""
    from hpoflow.report.cli import main as _main

    return _main(argv)
