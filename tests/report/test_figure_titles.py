"""A figure's title is wrapped to fit its width: no title clipped at the edge of the figure."""
from __future__ import annotations

import pandas as pd

from hpoflow.report.figures import fitted_title


def test_a_long_title_is_wrapped_at_spaces_and_a_short_one_is_kept():
    long = "in_mf max_resource=81 sleep_per_unit=0.0: normalised regret vs cost (95% bands)"
    wrapped = fitted_title(long, 6.5 * 0.96, 12)
    assert wrapped.replace("\n", " ") == long and "\n" in wrapped
    assert fitted_title("branin: regret", 6.5, 12) == "branin: regret"


def test_the_saved_figure_holds_its_whole_title(tmp_path, monkeypatch):
    from hpoflow.report import cost_figures, figures

    kept = {}
    original = figures._save

    def save(fig, out, stem):  # the laid-out figure, measured where it is saved
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        kept["title"] = fig._suptitle.get_window_extent(renderer)
        kept["axes"] = max(ax.get_tightbbox(renderer).y1 for ax in fig.axes)
        kept["figure"] = fig.bbox
        return original(fig, out, stem)

    monkeypatch.setattr(figures, "_save", save)
    grid = pd.DataFrame({"algo": ["a", "a", "b", "b"], "run_id": ["r1", "r1", "r2", "r2"],
                         "fraction": [0.5, 1.0, 0.5, 1.0], "nr": [0.5, 0.1, 0.4, 0.2]})
    task = "in_mf max_resource=81 sleep_per_unit=0.0 noise_std=0.1 seed_offset=3"
    paths = cost_figures.plot_task_cost(task, grid, {"a": "C0", "b": "C1"}, tmp_path)
    assert paths and all(p.is_file() for p in paths)
    title, fig = kept["title"], kept["figure"]
    assert fig.x0 <= title.x0 and title.x1 <= fig.x1 and title.y1 <= fig.y1  # inside the figure
    assert kept["axes"] <= title.y0 + 1  # and above the axes, not over them
