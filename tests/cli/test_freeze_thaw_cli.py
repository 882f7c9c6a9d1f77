"""algo=freeze_thaw through the real CLI on replayed curves, read back with MLflow's client: one worker and four
simulated asynchronous workers; every trial climbs the ladder one level per job and each curve step is logged once."""
from __future__ import annotations

import pytest
from mlflow.tracking import MlflowClient

from hpoflow.core.fidelity import Fidelity, rung_levels
from tests.conftest import mlflow_runs

LADDER = rung_levels(Fidelity("n_estimators", 2, 9), 2.0)  # digits_gb cut at 9 rounds: [2, 4, 8, 9]


@pytest.mark.parametrize("workers", [1, 4])
def test_freeze_thaw_on_cut_replayed_curves(run_cli, store, workers):
    run_cli("algo=freeze_thaw", "task=lc_replay", "task.benchmark=digits_gb", "task.max_fidelity=9",
            "budget.rounds=1000", "budget.cost=90", f"budget.workers={workers}", "budget.executor=simulated",
            f"tracking.uri={store}")
    (run,) = mlflow_runs(store, "lc_replay")
    assert run.info.status == "FINISHED"
    client = MlflowClient(tracking_uri=store)
    fidelity = sorted(client.get_metric_history(run.info.run_id, "fidelity"), key=lambda m: m.step)
    assert {m.value for m in fidelity} <= set(LADDER) and LADDER[-1] in {m.value for m in fidelity}
    cost = sorted(client.get_metric_history(run.info.run_id, "query_cost"), key=lambda m: m.step)
    assert 90 - 9 < cost[-1].value <= 90  # the budget holds: no job starts that does not fit in what remains
    curves = [k for k in run.data.metrics if k.startswith("lc/config_")]
    continued = 0
    for key in curves:
        steps = [m.step for m in client.get_metric_history(run.info.run_id, key)]
        assert len(steps) == len(set(steps))  # a continued trial trains (and logs) each step once
        assert sorted(steps) == list(range(1, int(max(steps)) + 1))  # every unit up to where it paused
        continued += max(steps) > LADDER[0]
    assert continued >= 3
    assert cost[-1].value == sum(len(client.get_metric_history(run.info.run_id, k)) for k in curves)
