"""ZDT1-3 and DTLZ2 (hpoflow.tasks.multi_objective) against their published fronts, and a CLI run's hypervolume."""
from __future__ import annotations

import math

import numpy as np
import pytest

from hpoflow.core.objectives import hypervolume, non_dominated
from hpoflow.tasks.multi_objective import MAX_HYPERVOLUME, MultiObjectiveFunction, dtlz2, zdt1, zdt2, zdt3
from tests.conftest import mlflow_runs

# ZDT3's Pareto-optimal f1 intervals (Deb, Multi-Objective Optimization using EAs, 2001; as in pymoo's ZDT3)
ZDT3_PIECES = [(0.0, 0.0830015349), (0.1822287280, 0.2577623634), (0.4093136748, 0.4538821041),
               (0.6183967944, 0.6525117038), (0.8233317983, 0.8518328654)]


def _optimal(dim: int, f1: float) -> np.ndarray:
    return np.concatenate([[f1], np.zeros(dim - 1)])


@pytest.mark.parametrize("f1", [0.0, 0.04, 0.25, 0.81, 1.0])
def test_zdt_fronts_at_g_equal_one(f1: float) -> None:
    x = _optimal(30, f1)
    assert zdt1(x) == pytest.approx((f1, 1 - math.sqrt(f1)))
    assert zdt2(x) == pytest.approx((f1, 1 - f1**2))
    assert zdt3(x) == pytest.approx((f1, 1 - math.sqrt(f1) - f1 * math.sin(10 * math.pi * f1)))


def test_off_front_points_are_worse() -> None:
    x = np.full(30, 0.5)
    assert zdt1(x)[1] > 1 - math.sqrt(0.5)  # g = 5.5 > 1
    f1, f2 = dtlz2(np.array([0.3, 0.9, 0.1, 0.5, 0.5, 0.5]))
    assert f1**2 + f2**2 > 1.0


@pytest.mark.parametrize("t", [0.0, 0.3, 0.5, 1.0])
def test_dtlz2_front_on_the_unit_circle(t: float) -> None:
    f1, f2 = dtlz2(np.array([t, 0.5, 0.5, 0.5, 0.5, 0.5]))
    assert f1**2 + f2**2 == pytest.approx(1.0)
    assert (f1, f2) == pytest.approx((math.cos(t * math.pi / 2), math.sin(t * math.pi / 2)), abs=1e-12)


@pytest.mark.parametrize("name", ["zdt1", "zdt2", "zdt3", "dtlz2"])
def test_known_hypervolume_of_the_true_front(name: str) -> None:
    task = MultiObjectiveFunction(name, 6)
    fn, ref = task.fn, task.objectives.reference  # type: ignore[union-attr]
    xs = np.linspace(0, 1, 5001)
    rest = 0.5 if name == "dtlz2" else 0.0
    pts = [fn(np.concatenate([[t], np.full(5, rest)])) for t in xs]
    front = [pts[i] for i in non_dominated(pts)] if name == "zdt3" else pts
    assert hypervolume(front, ref) == pytest.approx(MAX_HYPERVOLUME[name], rel=1e-3)  # type: ignore[arg-type]
    if name == "zdt3":  # the non-dominated pieces are the published ones
        assert all(any(lo - 1e-4 <= f1 <= hi + 1e-4 for lo, hi in ZDT3_PIECES) for f1, _ in front)
    assert task.reference_values()["hypervolume"] == MAX_HYPERVOLUME[name]


def test_evaluation_reports_both_values_and_f1_as_value() -> None:
    task = MultiObjectiveFunction("zdt1", 3)
    ev = task.evaluate({"x0": 0.25, "x1": 0.0, "x2": 0.0}, round=1)
    assert ev.value == 0.25 and ev.values == pytest.approx({"f1": 0.25, "f2": 0.5})


@pytest.mark.parametrize(("name", "dim", "message"), [
    ("zdt9", 30, "task.name='zdt9' is unknown; allowed: zdt1, zdt2, zdt3, dtlz2"),
    ("zdt1", 1, "task.dim=1 must be an integer >= 2"),
])
def test_bad_task_settings(name: str, dim: int, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}"):
        MultiObjectiveFunction(name, dim)


def test_cli_random_on_zdt1_logs_hypervolume(run_cli, store):
    proc = run_cli("algo=random", "task=zdt1", "budget.rounds=20", f"tracking.uri={store}")
    (run,) = mlflow_runs(store)
    from mlflow.tracking import MlflowClient

    history = MlflowClient(store).get_metric_history(run.info.run_id, "hypervolume")
    assert len(history) == 20
    hv = [m.value for m in sorted(history, key=lambda m: m.step)]
    assert all(b >= a for a, b in zip(hv, hv[1:])) and 0 < hv[-1] < MAX_HYPERVOLUME["zdt1"]
    assert float(run.data.tags["task.hypervolume"]) == pytest.approx(MAX_HYPERVOLUME["zdt1"])
    assert {"f1", "f2"} <= set(run.data.metrics) and "feasible" not in run.data.metrics
    assert float(run.data.tags["final.hypervolume"]) == hv[-1] and int(float(run.data.tags["final.pareto_size"])) > 0
    assert f"hypervolume: {hv[-1]:.6g}" in proc.stdout and "pareto front: " in proc.stdout
