"""learning_curves.png: every learning curve of a run on one axis, logged as an artifact at finish."""
from __future__ import annotations

from mlflow.tracking import MlflowClient

from hpoflow.core.records import Record, RunStatus
from hpoflow.store.curve_figure import FILENAME, plot_learning_curves
from hpoflow.store.mlflow_tracker import MlflowTracker


def test_the_figure_overlays_every_curve_and_says_how_many_reached_the_top(tmp_path):
    from matplotlib.image import imread

    path = plot_learning_curves({0: [[1, 0.5], [2, 0.4], [3, 0.3]], 1: [[1, 0.6]], 2: [[3, 0.2], [1, 0.9], [2, 0.5]]},
                                tmp_path / FILENAME)
    assert path == tmp_path / FILENAME and imread(path).shape[:2] == (400, 700)
    assert plot_learning_curves({}, tmp_path / "none.png") is None and not (tmp_path / "none.png").exists()
    assert plot_learning_curves({3: []}, tmp_path / "none.png") is None


def test_the_tracker_logs_the_figure_for_a_run_with_curves_and_not_without(store):
    client = MlflowClient(tracking_uri=store)
    for name, curves in (("curves", True), ("plain", False)):
        tracker = MlflowTracker(store, name)
        tracker.start({"algo": {"name": "x"}}, {})
        for i in range(4):  # configuration i % 2, continued: each call adds its new steps
            curve = [[float(i + 1), 1.0 / (i + 1)]] if curves else []
            tracker.log(Record(round=i + 1, config={"x": i % 2}, value=1.0 / (i + 1), cost=1.0, config_id=i % 2,
                               curve=curve, fidelity=float(i + 1) if curves else None), {"value": 1.0 / (i + 1)})
        tracker.finish(RunStatus.FINISHED, {"best_value": 0.25})
        names = {a.path for a in client.list_artifacts(tracker.run_id)}
        assert (FILENAME in names) == curves, names
        if curves:
            assert tracker._curves == {0: [[1.0, 1.0], [3.0, 1 / 3]], 1: [[2.0, 0.5], [4.0, 0.25]]}
