"""Per-run surrogate picture: the snapshot hook, the GP-BO fallback, and the figure for 1-d/2-d tasks."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from mlflow.tracking import MlflowClient

from hpoflow.algorithms.base import BuildContext
from hpoflow.algorithms.configs import GPEIConfig
from hpoflow.algorithms.gp_bo import GPEI
from hpoflow.algorithms.random_search import RandomSearch
from hpoflow.runner.loop import Budget, run
from hpoflow.surrogates.gp import ExactGP
from hpoflow.surrogates.plot import SurrogateSnapshot, plot_surrogate, snapshot_of, surrogate_artifact_writer
from hpoflow.tasks.synthetic import make_branin, make_rastrigin
from tests.conftest import mlflow_runs

PNG = b"\x89PNG\r\n\x1a\n"


def _gp_run(task, rounds=6):
    torch.manual_seed(0)
    ctx = BuildContext(task=task, rounds=rounds, seed=0, surrogate=lambda dim: ExactGP(dim))
    algo = GPEI(GPEIConfig(), ctx)
    result = run(task, algo, None, Budget(rounds))
    return algo, result


def test_gp_snapshot_is_in_task_units_and_interpolates_the_queries():
    task = make_rastrigin(dim=1)  # minimise: the GP is fitted to -value, the snapshot must undo the sign
    algo, result = _gp_run(task)
    snap = snapshot_of(algo)
    assert snap is not None and snap.X.shape == (6, 1)
    observed = np.array([r.value for r in result.records])
    np.testing.assert_allclose(np.sort(snap.y), np.sort(observed))
    mean, std = snap.predict(snap.X)
    assert np.all(np.abs(mean - snap.y) < 0.15 * np.ptp(snap.y))  # near the data, not at -y (sign undone)
    far = np.array([[u] for u in np.linspace(0, 1, 101)])
    _, std_far = snap.predict(far)
    assert std.max() < std_far.max()  # uncertainty is smallest at the queried points


def test_algorithms_without_a_model_get_no_picture_and_a_hook_wins(tmp_path):
    task = make_branin()
    algo = RandomSearch(None, BuildContext(task=task, rounds=3))
    run(task, algo, None, Budget(3))
    assert snapshot_of(algo) is None
    assert surrogate_artifact_writer(algo, task)(tmp_path) == []

    class Hooked:
        def surrogate_snapshot(self):
            return SurrogateSnapshot(lambda U: (U.sum(1), np.ones(len(U))), np.array([[0.5, 0.5]]), np.array([1.0]),
                                     "toy")

    (path,) = surrogate_artifact_writer(Hooked(), task)(tmp_path)
    assert path.name == "surrogate.png" and path.read_bytes()[:8] == PNG


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_figure_only_for_one_and_two_dimensions(tmp_path, dim):
    task = make_rastrigin(dim=dim)
    snap = SurrogateSnapshot(lambda U: (U.sum(1), 0.1 + U[:, 0]), np.random.default_rng(0).random((4, dim)),
                             np.arange(4.0))
    path = plot_surrogate(snap, task.space, tmp_path / "s.png")
    assert (path is not None) == (dim <= 2)
    if path:
        assert path.read_bytes()[:8] == PNG


def test_cli_logs_surrogate_picture_for_gp_on_2d_task(run_cli, store):
    run_cli("algo=gp_ucb", "task=branin", "budget.rounds=5", f"tracking.uri={store}", "tracking.plots=true")
    (run_,) = mlflow_runs(store, "branin")
    names = {a.path for a in MlflowClient(tracking_uri=store).list_artifacts(run_.info.run_id)}
    assert {"surrogate.png", "regret.png", "trajectory.csv"} <= names
