"""The report's learning-curve figure per task: one run per method, its trials on a step axis."""
from __future__ import annotations

import pandas as pd

from hpoflow.report.learning_curves import first_runs, plot_task_curves


def _runs() -> pd.DataFrame:
    return pd.DataFrame({"run_id": ["a10", "a2", "b0"], "algo": ["asha", "asha", "hyperband"],
                         "seed": ["10", "2", "0"], "task_key": ["t", "t", "t"]})


def test_one_run_per_method_the_lowest_seed_in_numeric_order():
    chosen = first_runs(_runs())
    assert sorted(chosen["run_id"]) == ["a2", "b0"]  # seed 2 before seed 10


def test_the_figure_counts_each_methods_trials_and_those_at_the_full_fidelity(tmp_path, monkeypatch):
    curves = pd.DataFrame({"run_id": ["a2"] * 4 + ["b0"] * 3, "config_id": [1, 1, 1, 2, 1, 2, 3],
                           "step": [1.0, 3.0, 9.0, 1.0, 1.0, 1.0, 1.0], "value": [5, 4, 3, 6, 7, 8, 9]})
    path = plot_task_curves("t dim=2", curves, first_runs(_runs()), tmp_path)
    assert path == tmp_path / "learning_curves_t_dim-2.png" and path.stat().st_size > 1000
    fig_titles = _titles(curves, tmp_path, monkeypatch)
    assert fig_titles == ["asha (seed 2): 2 trials, 1 at step 9", "hyperband (seed 0): 3 trials, 0 at step 9"]


def test_no_curve_no_figure(tmp_path):
    empty = pd.DataFrame(columns=["run_id", "config_id", "step", "value"])
    assert plot_task_curves("t", empty, _runs(), tmp_path) is None


def _titles(curves: pd.DataFrame, out, monkeypatch) -> list[str]:
    """The panel titles plot_task_curves draws, read as it saves the figure."""
    import matplotlib.figure

    seen: list[str] = []
    real = matplotlib.figure.Figure.savefig

    def keep(self, *args, **kwargs):
        seen.extend(ax.get_title() for ax in self.axes if ax.get_visible())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", keep)
    plot_task_curves("t", curves, first_runs(_runs()), out)
    return seen
